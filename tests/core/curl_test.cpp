// Base URLs, curl reproducers and key redaction.
#include "core/base_url.hpp"
#include "core/curl.hpp"

#include <gtest/gtest.h>

namespace crh::core {
namespace {

TEST(BaseUrl, ParsesHostPortAndPrefix) {
  std::string why;
  auto a = parse_base_url("http://127.0.0.1:8080", why);
  ASSERT_TRUE(a) << why;
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, "8080");
  EXPECT_EQ(a->path_prefix, "");
  auto b = parse_base_url("http://[::1]:9000/stage/", why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->path_prefix, "/stage");
  EXPECT_EQ(b->to_string(), "http://[::1]:9000/stage");
  EXPECT_EQ(b->host_header(), "[::1]:9000");
  auto c = parse_base_url("http://example.test", why);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->port, "80");
  EXPECT_EQ(c->host_header(), "example.test");
}

TEST(BaseUrl, RejectsWhatItCannotUseWithAReason) {
  for (const char* bad : {"127.0.0.1:8080", "https://x", "http://x:0", "http://x?q=1", "http://u:p@x", ""}) {
    std::string why;
    EXPECT_FALSE(parse_base_url(bad, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(Redact, ReplacesEveryOccurrence) {
  EXPECT_EQ(redact("key=s3cret and s3cret", "s3cret"), "key=$CRH_API_KEY and $CRH_API_KEY");
  EXPECT_EQ(redact("nothing here", "s3cret"), "nothing here");
  EXPECT_EQ(redact("abc", ""), "abc");
}

TEST(Curl, ShowsTheKeyAsAnEnvironmentReference) {
  BaseUrl base{"127.0.0.1", "8080", ""};
  HttpRequest req{"POST", "/database/a%20b", {{"Apikey", "s3cret"}, {"Content-Type", "application/x-www-form-urlencoded"}},
                  "value=it's"};
  std::string cmd = to_curl(req, base, "s3cret");
  EXPECT_EQ(cmd.find("s3cret"), std::string::npos) << cmd;
  EXPECT_EQ(cmd,
            "curl -sS -i -X 'POST' 'http://127.0.0.1:8080/database/a%20b' -H 'Apikey: '\"$CRH_API_KEY\" "
            "-H 'Content-Type: application/x-www-form-urlencoded' --data-binary 'value=it'\\''s'");
}

TEST(Curl, GetHasNoMethodFlagAndControlBytesAreEscaped) {
  BaseUrl base{"::1", "80", "/p"};
  EXPECT_EQ(to_curl({"GET", "/x", {}, ""}, base, "k"), "curl -sS -i 'http://[::1]:80/p/x'");
  EXPECT_EQ(shell_word("a\nb"), "$'a\\x0ab'");
  EXPECT_EQ(shell_word("", "k"), "''");
  EXPECT_EQ(shell_word("k", "k"), "\"$CRH_API_KEY\"");
}

}  // namespace
}  // namespace crh::core
