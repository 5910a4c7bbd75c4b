// The reference service's framing rules on their own (RFC 9112 §3.2, §6.1,
// §6.3): which heads are refused, with which status and message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/request_framing.hpp"

namespace crh::test {
namespace {
using reference::check_request_framing;
using reference::FramingProblem;
using reference::HeaderField;
using reference::valid_host;

std::optional<reference::FramingError> check(std::vector<HeaderField> fields, unsigned version = 11) {
  return check_request_framing(version, fields);
}

std::optional<FramingProblem> problem(std::vector<HeaderField> fields, unsigned version = 11) {
  auto err = check(std::move(fields), version);
  if (!err) return std::nullopt;
  return err->problem;
}

std::optional<FramingProblem> te(std::string_view value) {
  return problem({{"Host", "h"}, {"Transfer-Encoding", value}});
}

TEST(ServerFramingRules, AcceptsPlainChunkedInAnyCaseAndWithEmptyListElements) {
  for (const char* v : {"chunked", "Chunked", "CHUNKED", ", chunked", "chunked,", " ,, chunked"})
    EXPECT_EQ(te(v), std::nullopt) << v;
  EXPECT_EQ(problem({{"Host", "h"}}), std::nullopt);
  EXPECT_EQ(problem({{"host", "h"}, {"content-length", "12"}}), std::nullopt);
}

TEST(ServerFramingRules, RefusesEveryFinalCodingButChunked) {
  for (const char* v : {"identity", "chunked, identity", "xchunked", "gzip", "chunked, gzip",
                        "chunked;ext=1", "chunkedx", "chunke"}) {
    auto err = check({{"Host", "h"}, {"Transfer-Encoding", v}});
    ASSERT_TRUE(err) << v;
    EXPECT_EQ(err->problem, FramingProblem::te_final_not_chunked) << v;
    EXPECT_EQ(err->status, 400u) << v;
  }
  auto err = check({{"Host", "h"}, {"Transfer-Encoding", "chunked, identity"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->msg,
            "Transfer-Encoding \"chunked, identity\": the final coding of a request must be chunked "
            "(RFC 9112 §6.3)");
}

TEST(ServerFramingRules, AnswersCodingsItDoesNotImplementWith501) {
  for (const char* v : {"gzip, chunked", "identity, chunked", "x-custom;q=\"a,b\", chunked",
                        "deflate , gzip,chunked"}) {
    auto err = check({{"Host", "h"}, {"Transfer-Encoding", v}});
    ASSERT_TRUE(err) << v;
    EXPECT_EQ(err->problem, FramingProblem::te_unknown_coding) << v;
    EXPECT_EQ(err->status, 501u) << v;
  }
}

TEST(ServerFramingRules, RefusesEmptyMalformedAndRepeatedChunkedLists) {
  for (const char* v : {"", ",", " , ,"}) EXPECT_EQ(te(v), FramingProblem::te_empty) << v;
  for (const char* v : {"chunked, chunked", "Chunked,chunked"})
    EXPECT_EQ(te(v), FramingProblem::te_chunked_twice) << v;
  for (const char* v : {"gzip;=1, chunked", "\"chunked\"", "gzip;q=\"open, chunked", "gz ip, chunked",
                        "chunked/1", "gzip;q, chunked"})
    EXPECT_EQ(te(v), FramingProblem::te_malformed) << v;
}

TEST(ServerFramingRules, CombinesTransferEncodingLinesAsOneList) {
  EXPECT_EQ(problem({{"Host", "h"}, {"Transfer-Encoding", "chunked"}, {"transfer-encoding", "identity"}}),
            FramingProblem::te_final_not_chunked);
  EXPECT_EQ(problem({{"Host", "h"}, {"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}}),
            FramingProblem::te_unknown_coding);
  EXPECT_EQ(problem({{"Host", "h"}, {"Transfer-Encoding", ""}, {"Transfer-Encoding", "chunked"}}),
            std::nullopt);
  auto err = check({{"Host", "h"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "gzip"}});
  ASSERT_TRUE(err);
  EXPECT_NE(err->msg.find("\"chunked, gzip\""), std::string::npos) << err->msg;
}

TEST(ServerFramingRules, RefusesTransferEncodingInHttp10AndWithContentLength) {
  EXPECT_EQ(problem({{"Transfer-Encoding", "chunked"}}, 10), FramingProblem::te_in_http10);
  EXPECT_EQ(problem({{"Host", "h"}, {"Content-Length", "0"}, {"Transfer-Encoding", "chunked"}}),
            FramingProblem::te_with_content_length);
  EXPECT_EQ(problem({{"Host", "h"}, {"Transfer-Encoding", "identity"}, {"Content-Length", "5"}}),
            FramingProblem::te_with_content_length);
}

TEST(ServerFramingRules, RequiresExactlyOneValidHost) {
  EXPECT_EQ(problem({}), FramingProblem::host_missing);
  EXPECT_EQ(problem({{"Content-Length", "3"}}), FramingProblem::host_missing);
  EXPECT_EQ(problem({{"Host", "a"}, {"HOST", "a"}}), FramingProblem::host_repeated);
  EXPECT_EQ(problem({{"Host", "a"}, {"Host", "b"}}, 10), FramingProblem::host_repeated);
  EXPECT_EQ(problem({{"Host", "a b"}}), FramingProblem::host_invalid);
  EXPECT_EQ(problem({{"Host", "a/b"}}, 10), FramingProblem::host_invalid);
  auto err = check({{"Host", "u@h"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->status, 400u);
  EXPECT_NE(err->msg.find("\"u@h\""), std::string::npos) << err->msg;
}

TEST(ServerFramingRules, Http10MayOmitHost) {
  EXPECT_EQ(problem({}, 10), std::nullopt);
  EXPECT_EQ(problem({{"Content-Length", "3"}}, 10), std::nullopt);
}

TEST(ServerFramingRules, HostIsANameOrAddressWithAnOptionalPort) {
  for (const char* v : {"", "h", "example.com", "example.com:8080", "127.0.0.1", "127.0.0.1:1",
                        "[::1]", "[::1]:80", "[v1.fe]", "h:", "caf%C3%A9.example", "a-b_c~d",
                        "sub!$&'()*+,;=delims"})
    EXPECT_TRUE(valid_host(v)) << v;
  for (const char* v : {"a b", "h/x", "u@h", "h:8o", "[::1", "[]", "[::1]x", "h:80:81", ":80",
                        "h%2", "h%zz", "h?", "h#", "h\\x", "\xC3\xA9", "[a b]"})
    EXPECT_FALSE(valid_host(v)) << v;
}

TEST(ServerFramingRules, MessagesShowValuesAsShortPrintableAscii) {
  auto err = check({{"Host", "h"}, {"Transfer-Encoding", "gz\xFFip\x01"}});
  ASSERT_TRUE(err);
  for (char c : err->msg.substr(0, err->msg.find("§")))
    EXPECT_TRUE(c >= 0x20 && c < 0x7F) << err->msg;
  EXPECT_NE(err->msg.find("\\xFF"), std::string::npos) << err->msg;
  auto longer = check({{"Host", std::string(1000, 'h') + " "}});
  ASSERT_TRUE(longer);
  EXPECT_LT(longer->msg.size(), 200u) << longer->msg;
}

}  // namespace
}  // namespace crh::test
