// What the harness puts on the wire and on disk: percent-encoding, the three
// parameter encodings, the call hook's path, UTF-8 repair of target text and
// atomic writes of the --json/--junit files.
#include "core/output_file.hpp"
#include "core/target.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace crh::core {
namespace {

namespace fs = std::filesystem;

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string header_of(const HttpRequest& r, std::string_view name) {
  for (const auto& h : r.headers)
    if (h.name == name) return h.value;
  return {};
}

// --- percent_encode ---------------------------------------------------------

TEST(TargetEncoding, PercentEncodeKeepsUnreservedCharacters) {
  const std::string unreserved = "ABCXYZabcxyz0189-._~";
  EXPECT_EQ(percent_encode(unreserved), unreserved);
  EXPECT_EQ(percent_encode(""), "");
}

TEST(TargetEncoding, PercentEncodeEncodesReservedCharactersAndSpace) {
  EXPECT_EQ(percent_encode("a b"), "a%20b");
  EXPECT_EQ(percent_encode("+"), "%2B");
  EXPECT_EQ(percent_encode("&"), "%26");
  EXPECT_EQ(percent_encode("="), "%3D");
  EXPECT_EQ(percent_encode("%"), "%25");
  EXPECT_EQ(percent_encode("/"), "%2F");
  EXPECT_EQ(percent_encode("?#"), "%3F%23");
  EXPECT_EQ(percent_encode("k=v&x=1+2"), "k%3Dv%26x%3D1%2B2");
}

TEST(TargetEncoding, PercentEncodeEncodesUtf8BytesAsUppercaseHex) {
  EXPECT_EQ(percent_encode("\xC3\xA9"), "%C3%A9");                      // é
  EXPECT_EQ(percent_encode("\xE2\x82\xAC" "1"), "%E2%82%AC1");          // €1
  EXPECT_EQ(percent_encode(std::string("\x00\xFF", 2)), "%00%FF");
}

// --- build_request ----------------------------------------------------------

const std::vector<Param> kTagParams{{"tag", "a b", false}, {"minutes", "5", true}};

TEST(TargetEncoding, BuildRequestFormEncodingPutsAnUrlencodedBodyWithItsContentType) {
  auto r = build_request("POST", "/channels/1/alias-numbers/tag", kTagParams, ParamEncoding::form);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/channels/1/alias-numbers/tag");
  EXPECT_EQ(header_of(r, "Content-Type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(r.body, "tag=a%20b&minutes=5");
}

TEST(TargetEncoding, BuildRequestFormEncodingEscapesNamesAndValues) {
  auto r = build_request("POST", "/database/k", {{"va lue", "x&y=z+1%", false}}, ParamEncoding::form);
  EXPECT_EQ(r.body, "va%20lue=x%26y%3Dz%2B1%25");
}

TEST(TargetEncoding, BuildRequestJsonEncodingWritesNumbersUnquotedAndStringsEscaped) {
  auto r = build_request("POST", "/channels/1/alias-numbers/tag", kTagParams, ParamEncoding::json);
  EXPECT_EQ(header_of(r, "Content-Type"), "application/json");
  EXPECT_EQ(r.body, R"({"tag":"a b","minutes":5})");
  EXPECT_EQ(r.target, "/channels/1/alias-numbers/tag");
}

TEST(TargetEncoding, BuildRequestJsonEncodingEscapesQuotesBackslashesAndKeepsUnicode) {
  auto r = build_request("POST", "/database/k", {{"value", "say \"hi\"\\ caf\xC3\xA9\n", false}},
                         ParamEncoding::json);
  // Quotes, backslash and newline escaped; é kept as UTF-8 or written as \u00e9.
  EXPECT_TRUE(r.body == "{\"value\":\"say \\\"hi\\\"\\\\ caf\xC3\xA9\\n\"}" ||
              r.body == "{\"value\":\"say \\\"hi\\\"\\\\ caf\\u00e9\\n\"}")
      << r.body;
}

TEST(TargetEncoding, BuildRequestQueryEncodingAppendsToTheTargetWithoutABody) {
  auto r = build_request("POST", "/channels/1/alias-numbers/tag", kTagParams, ParamEncoding::query);
  EXPECT_EQ(r.target, "/channels/1/alias-numbers/tag?tag=a%20b&minutes=5");
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(header_of(r, "Content-Type"), "");
}

TEST(TargetEncoding, BuildRequestQueryEncodingExtendsAnExistingQuery) {
  auto r = build_request("GET", "/x?page=2", {{"tag", "a&b", false}}, ParamEncoding::query);
  EXPECT_EQ(r.target, "/x?page=2&tag=a%26b");
}

TEST(TargetEncoding, BuildRequestNoParamsMeansNoBodyAndNoContentType) {
  for (auto e : {ParamEncoding::form, ParamEncoding::json, ParamEncoding::query}) {
    auto r = build_request("DELETE", "/channels/1/alias-numbers/7/tag", {}, e);
    EXPECT_EQ(r.target, "/channels/1/alias-numbers/7/tag") << to_string(e);
    EXPECT_TRUE(r.body.empty()) << to_string(e);
    EXPECT_TRUE(r.headers.empty()) << to_string(e);
  }
}

TEST(TargetEncoding, ParamEncodingNameNamesEachEncoding) {
  EXPECT_EQ(to_string(ParamEncoding::form), "form");
  EXPECT_EQ(to_string(ParamEncoding::json), "json");
  EXPECT_EQ(to_string(ParamEncoding::query), "query");
}

// --- CallHook ---------------------------------------------------------------

TEST(TargetCallHook, DefaultPathTakesChannelAndAliasPercentEncoded) {
  CallHook hook;
  EXPECT_EQ(hook.path_for("1", "42"), "/channels/1/alias-numbers/42/calls");
  EXPECT_EQ(hook.path_for("c 9", "a/b?"), "/channels/c%209/alias-numbers/a%2Fb%3F/calls");
}

TEST(TargetCallHook, CustomPathReplacesEveryPlaceholder) {
  CallHook hook;
  hook.path = "/hook/{alias}/on/{channel}/again/{alias}";
  EXPECT_EQ(hook.path_for("ch&1", "{alias}"), "/hook/%7Balias%7D/on/ch%261/again/%7Balias%7D");
}

// --- valid_utf8 -------------------------------------------------------------

TEST(SipTarget, ReadsHostPortAndTransport) {
  std::string why;
  auto udp = parse_sip_target("127.0.0.1:5070", why);
  ASSERT_TRUE(udp) << why;
  EXPECT_EQ(udp->host, "127.0.0.1");
  EXPECT_EQ(udp->port, 5070);
  EXPECT_FALSE(udp->tcp);
  auto tcp = parse_sip_target("[::1]:5060;transport=TCP", why);
  ASSERT_TRUE(tcp) << why;
  EXPECT_EQ(tcp->host, "::1");
  EXPECT_TRUE(tcp->tcp);
  EXPECT_EQ(tcp->text(), "[::1]:5060;transport=tcp");
  auto again = parse_sip_target(tcp->text(), why);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->text(), tcp->text());
  EXPECT_EQ(parse_sip_target("sip.example.org:5060;transport=udp", why)->host, "sip.example.org");
}

TEST(SipTarget, RefusesWhatIsNotHostAndPort) {
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":5060", "127.0.0.1:0", "127.0.0.1:65536", "host:50x",
                          "::1:5060", "[::1]5060", "127.0.0.1:5060;transport=sctp", "h:5060;lr"}) {
    std::string why;
    EXPECT_FALSE(parse_sip_target(bad, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(OutputFileUtf8, KeepsValidText) {
  const std::string text = "plain ascii, caf\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80, \xF4\x8F\xBF\xBF";
  EXPECT_EQ(valid_utf8(text), text);
  EXPECT_EQ(valid_utf8(""), "");
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(OutputFileUtf8, ReplacesStrayBytes) {
  EXPECT_EQ(valid_utf8("a\xFF" "b"), "a" + kReplacement + "b");
  EXPECT_EQ(valid_utf8("\x80"), kReplacement);             // lone continuation byte
  EXPECT_EQ(valid_utf8("\xF8\x88\x80\x80\x80"), kReplacement + kReplacement + kReplacement + kReplacement +
                                                   kReplacement);  // 5-byte form is not UTF-8
}

TEST(OutputFileUtf8, ReplacesTruncatedSequences) {
  EXPECT_EQ(valid_utf8("ab\xE2\x82"), "ab" + kReplacement + kReplacement);
  EXPECT_EQ(valid_utf8("\xC3" "x"), kReplacement + "x");
  EXPECT_EQ(valid_utf8("\xF0\x9F\x98"), kReplacement + kReplacement + kReplacement);
}

TEST(OutputFileUtf8, ReplacesOverlongEncodings) {
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kReplacement + kReplacement);           // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(valid_utf8("\xF0\x80\x80\xAF"), kReplacement + kReplacement + kReplacement + kReplacement);
}

TEST(OutputFileUtf8, ReplacesSurrogatesAndCodePointsBeyondUnicode) {
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // U+D800
  EXPECT_EQ(valid_utf8("\xED\xBF\xBF"), kReplacement + kReplacement + kReplacement);  // U+DFFF
  EXPECT_EQ(valid_utf8("\xED\x9F\xBF"), "\xED\x9F\xBF");                             // U+D7FF is fine
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kReplacement + kReplacement + kReplacement + kReplacement);
}

TEST(OutputFileUtf8, OutputIsAlwaysValid) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string once = valid_utf8(all);
  EXPECT_EQ(valid_utf8(once), once);
}

// --- write_file_atomically --------------------------------------------------

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "crh_output_file_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    return out;
  }
  fs::path dir_;
};

TEST_F(OutputFile, WritesTheContent) {
  const auto path = (dir_ / "result.json").string();
  const std::string content = std::string("{\"a\":1}\n\0binary\xFF", 16);
  write_file_atomically(path, content);
  EXPECT_EQ(read(path), content);
}

TEST_F(OutputFile, ReplacesAnExistingFileWhole) {
  const auto path = (dir_ / "report.xml").string();
  write_file_atomically(path, std::string(4096, 'x'));
  write_file_atomically(path, "short");
  EXPECT_EQ(read(path), "short");
}

TEST_F(OutputFile, LeavesNoTemporaryFileBehind) {
  const auto path = (dir_ / "out.json").string();
  write_file_atomically(path, "one");
  write_file_atomically(path, "two");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
}

TEST_F(OutputFile, ThrowsNamingThePathWhenTheDirectoryDoesNotExist) {
  const auto path = (dir_ / "no-such-dir" / "out.json").string();
  try {
    write_file_atomically(path, "x");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(OutputFile, ThrowsWhenThePathIsADirectoryAndLeavesNoTemporaryFile) {
  fs::create_directory(dir_ / "taken");
  const auto path = (dir_ / "taken").string();
  EXPECT_THROW(write_file_atomically(path, "x"), std::runtime_error);
  EXPECT_EQ(entries(), std::vector<std::string>{"taken"});
}

}  // namespace
}  // namespace crh::core
