// The request direction: the bytes serialize_request builds for the load
// path, and the incremental request reader (as a server or a capture reads),
// which must refuse what another parser could frame differently.
#include "core/http1.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace crh::core::http1 {
namespace {

using State = RequestReader::State;
using namespace std::string_view_literals;

core::BaseUrl base(std::string port = "8080", std::string prefix = "") {
  return core::BaseUrl{"127.0.0.1", std::move(port), std::move(prefix)};
}

core::HttpRequest request(std::string method, std::string target, std::string body = {}) {
  return core::HttpRequest{std::move(method), std::move(target), {}, std::move(body)};
}

bool has_line(const std::string& text, std::string_view line) {
  return text.find("\r\n" + std::string(line) + "\r\n") != std::string::npos;
}

// ---------------------------------------------------------------- serialize_request

TEST(Http1, SerializesAGetWithThePathPrefix) {
  auto bytes = serialize_request(request("GET", "/channels/5/aliases?x=1"), base("8080", "/api"), "");
  EXPECT_EQ(bytes.rfind("GET /api/channels/5/aliases?x=1 HTTP/1.1\r\n", 0), 0u) << bytes;
  EXPECT_TRUE(has_line(bytes, "Host: 127.0.0.1:8080")) << bytes;
  EXPECT_EQ(bytes.find("Apikey"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("Content-Length"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("Connection"), std::string::npos) << bytes;
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "\r\n\r\n") << bytes;
}

TEST(Http1, SerializesAnEmptyTargetAsTheRoot) {
  auto bytes = serialize_request(request("GET", ""), base("80", "/p"), "");
  EXPECT_EQ(bytes.rfind("GET /p/ HTTP/1.1\r\n", 0), 0u) << bytes;
  EXPECT_TRUE(has_line(bytes, "Host: 127.0.0.1")) << bytes;
}

TEST(Http1, SerializesTheApikeyOnlyWhenGiven) {
  auto with = serialize_request(request("GET", "/x"), base(), "s3cret");
  EXPECT_TRUE(has_line(with, "Apikey: s3cret")) << with;
  auto without = serialize_request(request("GET", "/x"), base(), "");
  EXPECT_EQ(without.find("Apikey"), std::string::npos) << without;
}

TEST(Http1, SerializesAPostWithABody) {
  auto r = request("POST", "/channels/1/alias-numbers/2/tag", R"({"minutes":5})");
  r.headers.push_back({"Content-Type", "application/json"});
  auto bytes = serialize_request(r, base(), "k");
  EXPECT_EQ(bytes.rfind("POST /channels/1/alias-numbers/2/tag HTTP/1.1\r\n", 0), 0u) << bytes;
  EXPECT_TRUE(has_line(bytes, "Content-Type: application/json")) << bytes;
  EXPECT_TRUE(has_line(bytes, "Content-Length: 13")) << bytes;
  EXPECT_EQ(bytes.substr(bytes.size() - 17), "\r\n\r\n{\"minutes\":5}") << bytes;
}

TEST(Http1, SerializesAPostWithoutABodyWithContentLengthZero) {
  auto bytes = serialize_request(request("POST", "/x"), base(), "");
  EXPECT_TRUE(has_line(bytes, "Content-Length: 0")) << bytes;
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "\r\n\r\n") << bytes;
  auto del = serialize_request(request("DELETE", "/x"), base(), "");
  EXPECT_EQ(del.find("Content-Length"), std::string::npos) << del;
}

// ---------------------------------------------------------------- RequestReader

// Feeds `bytes` in one piece to a fresh reader that keeps the body.
RequestReader read(std::string_view bytes, ReaderLimits limits = {}, HeaderCapture capture = HeaderCapture::off) {
  RequestReader reader(limits, capture);
  reader.reset();
  EXPECT_LE(reader.feed(bytes), bytes.size());
  return reader;
}

void expect_refused(std::string_view bytes, Fault fault, std::string_view why = {}, ReaderLimits limits = {}) {
  auto reader = read(bytes, limits);
  EXPECT_EQ(reader.state(), State::error) << "for: " << bytes;
  EXPECT_EQ(reader.fault(), fault) << "for: " << bytes << ": " << reader.error();
  EXPECT_NE(reader.error().find(why), std::string::npos) << reader.error();
  EXPECT_FALSE(reader.keep_alive()) << "for: " << bytes;
}

TEST(Http1Request, ReadsASimpleGet) {
  constexpr std::string_view kGet = "GET /api/v1/local-agents?x=1 HTTP/1.1\r\nHost: a\r\nApikey: k\r\n\r\n";
  RequestReader reader;
  reader.reset();
  EXPECT_EQ(reader.feed(kGet), kGet.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.method(), "GET");
  EXPECT_EQ(reader.target(), "/api/v1/local-agents?x=1");
  EXPECT_EQ(reader.version(), 11u);
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_EQ(reader.body_size(), 0u);
  EXPECT_TRUE(reader.headers().empty()) << "headers are kept only when asked";
}

TEST(Http1Request, ReadsAPostWithContentLength) {
  constexpr std::string_view kPost = "POST /database/k HTTP/1.1\r\nContent-Length: 7\r\n\r\nvalue=v";
  auto reader = read(kPost);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.method(), "POST");
  EXPECT_EQ(reader.body(), "value=v");

  reader.reset(false);
  EXPECT_EQ(reader.feed(kPost), kPost.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "");
  EXPECT_EQ(reader.body_size(), 7u);
}

constexpr std::string_view kChunkedPost =
    "POST /upload HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
    "4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-Sum: 7\r\n\r\n";

TEST(Http1Request, ReadsAChunkedRequestWithTrailers) {
  auto reader = read(kChunkedPost, {}, HeaderCapture::on);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "abcdefg");
  ASSERT_EQ(reader.trailers().size(), 1u);
  EXPECT_EQ(reader.trailers()[0].name, "X-Sum");
  EXPECT_EQ(reader.trailers()[0].value, "7");
}

TEST(Http1Request, ReadsPipelinedRequestsOneAtATime) {
  // A stray CRLF after a body is skipped (RFC 9112 §2.2).
  const std::string get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string post = "POST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi";
  const std::string all = get + post + "\r\n" + std::string(kChunkedPost) + get;
  std::string_view rest = all;
  RequestReader reader;
  for (std::string_view target : {"/a", "/b", "/upload", "/a"}) {
    reader.reset();
    rest.remove_prefix(reader.feed(rest));
    ASSERT_EQ(reader.state(), State::done) << target << ": " << reader.error();
    EXPECT_EQ(reader.target(), target);
  }
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(reader.body_size(), 0u) << "a GET without Content-Length has no body";
}

TEST(Http1Request, ReadsWhatSerializeRequestWrites) {
  auto r = request("POST", "/channels/1/alias-numbers/2/calls", "caller=%2B1555");
  r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  const auto bytes = serialize_request(r, base("8080", "/api"), "k");
  auto reader = read(bytes, {}, HeaderCapture::on);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.method(), "POST");
  EXPECT_EQ(reader.target(), "/api/channels/1/alias-numbers/2/calls");
  EXPECT_EQ(reader.body(), "caller=%2B1555");
  ASSERT_EQ(reader.headers().size(), 5u);  // Host, User-Agent, Apikey, Content-Type, Content-Length
  EXPECT_EQ(reader.headers()[2].name, "Apikey");
  EXPECT_EQ(reader.headers()[2].value, "k");
}

TEST(Http1Request, RefusesTransferEncodingWithContentLength) {
  expect_refused("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                 Fault::malformed, "both Transfer-Encoding and Content-Length");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n", Fault::malformed,
                 "both Transfer-Encoding and Content-Length");
}

TEST(Http1Request, RefusesChunkedThatIsNotTheFinalCoding) {
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", Fault::malformed, "after chunked");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", Fault::malformed,
                 "after chunked");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", Fault::malformed, "after chunked");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", Fault::malformed, "not chunked");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: xchunkedx\r\n\r\n", Fault::malformed, "not chunked");
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", Fault::malformed, "not chunked");
}

TEST(Http1Request, RefusesABadContentLength) {
  for (std::string_view value : {"five", "-1", "+5", "5, 5", "5 5", "", "0x5", "99999999999999999999999"})
    expect_refused("POST / HTTP/1.1\r\nContent-Length: " + std::string(value) + "\r\n\r\nhello", Fault::malformed,
                   "Content-Length");
  expect_refused("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", Fault::malformed,
                 "conflicting");
}

TEST(Http1Request, RefusesABadRequestLine) {
  for (std::string_view line :
       {"garbage", "GET /", "GET  / HTTP/1.1", "GET / HTTP/1.1 ", "GET / HTTP/2.0", "GET / HTTP/1.10", "GET / http/1.1",
        "G(T / HTTP/1.1", " GET / HTTP/1.1", "GET /a\x01 HTTP/1.1", "GET /\x7f HTTP/1.1", "GET\t/ HTTP/1.1"})
    expect_refused(std::string(line) + "\r\nHost: a\r\n\r\n", Fault::malformed);
}

TEST(Http1Request, RefusesHeadersAnotherParserCouldReadOtherwise) {
  expect_refused("GET / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", Fault::malformed, "not a token");
  expect_refused("GET / HTTP/1.1\r\nContent\rLength: 5\r\n\r\nhello", Fault::malformed, "not a token");
  expect_refused("GET / HTTP/1.1\r\nX-A: a\nContent-Length: 5\r\n\r\nhello", Fault::malformed, "control character");
  expect_refused("GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n", Fault::malformed, "control character");
  expect_refused("GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n"sv, Fault::malformed, "control character");
  expect_refused("GET / HTTP/1.1\r\n folded: x\r\n\r\n", Fault::malformed);
  expect_refused("GET / HTTP/1.1\r\n: no name\r\n\r\n", Fault::malformed, "without a name");
}

TEST(Http1Request, KeepAliveFollowsTheVersionAndConnection) {
  EXPECT_FALSE(read("GET / HTTP/1.0\r\n\r\n").keep_alive());
  EXPECT_EQ(read("GET / HTTP/1.0\r\n\r\n").version(), 10u);
  EXPECT_TRUE(read("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive());
  EXPECT_FALSE(read("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive());
  EXPECT_TRUE(read("GET / HTTP/1.1\r\n\r\n").keep_alive());
}

TEST(Http1Request, CapsTheRequestLine) {
  const ReaderLimits small{.request_line_bytes = 32};
  const std::string line = "GET /" + std::string(27, 'a') + " HTTP/1.1";  // 41 bytes
  // Never ended: refused as soon as it is longer than the cap, not at the head's cap.
  auto reader = read("GET /" + std::string(100, 'a'), small);
  EXPECT_EQ(reader.state(), State::error);
  EXPECT_EQ(reader.fault(), Fault::head_too_large);
  EXPECT_NE(reader.error().find("request line beyond 32 bytes"), std::string::npos) << reader.error();
  expect_refused(line + "\r\n\r\n", Fault::head_too_large, "request line beyond 32 bytes", small);
  // Exactly at the cap is fine.
  EXPECT_EQ(read("GET /" + std::string(18, 'a') + " HTTP/1.1\r\n\r\n", small).state(), State::done);
  EXPECT_EQ(read("GET /" + std::string(19, 'a') + " HTTP/1.1\r\n\r\n", small).state(), State::error);
}

TEST(Http1Request, CapsTheHeadTheBodyAndTheChunkLines) {
  const ReaderLimits small{.header_bytes = 64, .body_bytes = 8, .chunk_line_bytes = 16};
  expect_refused("GET / HTTP/1.1\r\nX-Long: " + std::string(60, 'a') + "\r\n\r\n", Fault::head_too_large,
                 "request line and headers beyond 64 bytes", small);
  expect_refused("GET / HTTP/1.1\r\nX-Long: " + std::string(60, 'a'), Fault::head_too_large, "beyond 64 bytes", small);
  expect_refused("POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n012345678", Fault::body_too_large, {}, small);
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n01234\r\n5\r\n01234\r\n0\r\n\r\n",
                 Fault::body_too_large, {}, small);
  expect_refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;" + std::string(20, 'e') + "\r\n",
                 Fault::head_too_large, "chunk line beyond 16 bytes", small);
  EXPECT_EQ(read("POST / HTTP/1.1\r\nContent-Length: 8\r\n\r\n01234567", small).state(), State::done);
}

TEST(Http1Request, CapsBlankLinesBeforeTheRequestLine) {
  const ReaderLimits small{.header_bytes = 64};
  RequestReader reader(small);
  reader.reset();
  for (int i = 0; i < 40 && reader.state() == State::need_more; ++i) reader.feed("\r\n");
  EXPECT_EQ(reader.state(), State::error) << "64 bytes of blank lines and more";
  EXPECT_EQ(reader.fault(), Fault::head_too_large);
  // The ones that fit share the budget with the head.
  EXPECT_EQ(read("\r\n\r\nGET / HTTP/1.1\r\n\r\n", small).state(), State::done);
  EXPECT_EQ(read(std::string(50, '\n') + "GET / HTTP/1.1\r\n\r\n", small).fault(), Fault::head_too_large);
}

TEST(Http1Request, EofBetweenRequestsOrInOne) {
  RequestReader reader;
  reader.reset();
  EXPECT_FALSE(reader.started());
  reader.feed("\r\n");
  EXPECT_FALSE(reader.started()) << "a blank line between requests is part of none";
  reader.eof();
  EXPECT_EQ(reader.fault(), Fault::closed);
  EXPECT_EQ(reader.error(), "connection closed before a request");

  for (std::string_view cut : {"GET / HT", "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nab",
                               "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab"}) {
    reader.reset();
    reader.feed(cut);
    EXPECT_TRUE(reader.started());
    reader.eof();
    EXPECT_EQ(reader.state(), State::error) << cut;
    EXPECT_EQ(reader.error(), "connection closed in the middle of the request") << cut;
  }
}

TEST(Http1Request, CapturesHeadersOnlyWhenAsked) {
  constexpr std::string_view kHead = "PUT /x HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nx-case:  Mixed Value \t\r\n\r\n";
  auto off = read(kHead);
  ASSERT_EQ(off.state(), State::done) << off.error();
  EXPECT_TRUE(off.headers().empty());
  auto on = read(kHead, {}, HeaderCapture::on);
  ASSERT_EQ(on.state(), State::done) << on.error();
  ASSERT_EQ(on.headers().size(), 3u);
  EXPECT_EQ(on.headers()[0].name, "Host");
  EXPECT_EQ(on.headers()[0].value, "a");
  EXPECT_EQ(on.headers()[1].name, "X-Empty");
  EXPECT_EQ(on.headers()[1].value, "");
  EXPECT_EQ(on.headers()[2].name, "x-case") << "names as sent";
  EXPECT_EQ(on.headers()[2].value, "Mixed Value") << "values trimmed";
  on.reset();
  EXPECT_TRUE(on.headers().empty()) << "reset forgets the previous request's headers";
}

}  // namespace
}  // namespace crh::core::http1
