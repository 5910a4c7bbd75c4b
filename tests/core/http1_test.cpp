// The incremental response reader as the load path uses it (body kept or
// not, no headers captured), fed whole, byte by byte, pipelined and broken.
#include "core/http1.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace crh::core::http1 {
namespace {

using State = ResponseReader::State;

// Feeds `bytes` in one piece and checks that all of it was consumed.
void feed_all(ResponseReader& reader, std::string_view bytes) { EXPECT_EQ(reader.feed(bytes), bytes.size()); }

// Feeds `bytes` one at a time; returns how many were consumed.
std::size_t feed_bytewise(ResponseReader& reader, std::string_view bytes) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) used += reader.feed(bytes.substr(i, 1));
  return used;
}

// ---------------------------------------------------------------- ResponseReader: framing

constexpr std::string_view kSimple = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

TEST(Http1, ReadsAContentLengthAnswerInOneFeed) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, kSimple);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "hello");
  EXPECT_EQ(reader.body_size(), 5u);
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_FALSE(reader.retry_after());
}

TEST(Http1, ReadsAContentLengthAnswerByteByByte) {
  ResponseReader reader;
  reader.reset(true);
  for (std::size_t i = 0; i + 1 < kSimple.size(); ++i) {
    EXPECT_EQ(reader.feed(kSimple.substr(i, 1)), 1u) << "at byte " << i;
    ASSERT_EQ(reader.state(), State::need_more) << "at byte " << i << ": " << reader.error();
  }
  EXPECT_EQ(reader.feed(kSimple.substr(kSimple.size() - 1)), 1u);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "hello");
}

constexpr std::string_view kChunked =
    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;name=value\r\nhello\r\n"
    "6 ; x\r\n world\r\n"
    "0;last\r\nX-Checksum: abc\r\nX-Other: d\r\n\r\n";

TEST(Http1, ReadsChunkedWithExtensionsAndTrailers) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, kChunked);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 201u);
  EXPECT_EQ(reader.body(), "hello world");
  EXPECT_EQ(reader.body_size(), 11u);
  EXPECT_TRUE(reader.keep_alive());
}

TEST(Http1, ReadsChunkedByteByByte) {
  ResponseReader reader;
  reader.reset(true);
  EXPECT_EQ(feed_bytewise(reader, kChunked), kChunked.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "hello world");
}

TEST(Http1, ReadsACloseDelimitedBodyUntilEof) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome ");
  feed_all(reader, "bytes");
  EXPECT_EQ(reader.state(), State::need_more);
  EXPECT_FALSE(reader.keep_alive());
  reader.eof();
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "some bytes");
  EXPECT_FALSE(reader.keep_alive());
}

TEST(Http1, Reads204WithoutABody) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n");
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 204u);
  EXPECT_EQ(reader.body_size(), 0u);
  EXPECT_TRUE(reader.keep_alive());
}

TEST(Http1, SkipsAnInterim100Continue) {
  const std::string bytes = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, bytes);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "ok");

  reader.reset(true);
  EXPECT_EQ(feed_bytewise(reader, bytes), bytes.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "ok");
}

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

TEST(Http1, SkipsEarlyHintsAndKeepsNoneOfTheirHeaders) {
  // A 103's headers speak of the final answer to come, not for it: its
  // Connection and Retry-After must not leak into the 200.
  const std::string bytes =
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nConnection: close\r\nRetry-After: 9\r\n\r\n" +
      std::string(kOk);
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, bytes);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "ok");
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_FALSE(reader.retry_after());
}

TEST(Http1, SkipsSeveralInterimAnswersAndLeavesTheNextResponse) {
  const std::string first =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX-A: 1\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: <a>\r\n\r\n" +
      std::string(kOk);
  const std::string both = first + "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
  ResponseReader reader;
  reader.reset(true);
  EXPECT_EQ(reader.feed(both), first.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "ok");

  reader.reset(false);
  EXPECT_EQ(reader.feed(std::string_view(both).substr(first.size())), both.size() - first.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 404u);

  reader.reset(true);
  EXPECT_EQ(feed_bytewise(reader, first), first.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "ok");
}

TEST(Http1, SkipsAnInterimAnswerSplitAnywhereAcrossFeeds) {
  // Every split point, including those inside the blank lines that end each head.
  const std::string bytes = std::string(kContinue) + std::string(kContinue) + std::string(kOk);
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    ResponseReader reader;
    reader.reset(true);
    std::size_t used = reader.feed(std::string_view(bytes).substr(0, cut));
    EXPECT_EQ(used, cut) << "cut at " << cut;
    ASSERT_EQ(reader.state(), State::need_more) << "cut at " << cut << ": " << reader.error();
    used += reader.feed(std::string_view(bytes).substr(cut));
    EXPECT_EQ(used, bytes.size()) << "cut at " << cut;
    ASSERT_EQ(reader.state(), State::done) << "cut at " << cut << ": " << reader.error();
    EXPECT_EQ(reader.status(), 200u);
    EXPECT_EQ(reader.body(), "ok");
  }
}

TEST(Http1, AnEndlessStreamOfInterimAnswersFailsWithTheReason) {
  ResponseReader reader;
  reader.reset(false);
  for (int i = 0; i < 32; ++i) {
    feed_all(reader, kContinue);
    ASSERT_EQ(reader.state(), State::need_more) << "after " << i + 1 << ": " << reader.error();
  }
  reader.feed(kContinue);
  ASSERT_EQ(reader.state(), State::error);
  EXPECT_NE(reader.error().find("more than 32 interim 1xx answers before the final answer"), std::string::npos)
      << reader.error();
  EXPECT_FALSE(reader.keep_alive());

  // In one feed, as a peer that writes them without pause fills the buffer.
  std::string flood;
  for (int i = 0; i < 2000; ++i) flood += kContinue;
  reader.reset(false);
  EXPECT_LE(reader.feed(flood), flood.size());
  EXPECT_EQ(reader.state(), State::error);

  // Interim heads count against the header limit as well.
  ResponseReader small(ReaderLimits{.header_bytes = 256, .interim_answers = 1000});
  small.reset(false);
  small.feed(flood);
  ASSERT_EQ(small.state(), State::error);
  EXPECT_NE(small.error().find("beyond 256 bytes"), std::string::npos) << small.error();
}

TEST(Http1, RejectsSwitchingProtocolsThatWasNeverAskedFor) {
  ResponseReader reader;
  reader.reset(false);
  reader.feed("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" +
              std::string(kOk));
  ASSERT_EQ(reader.state(), State::error);
  EXPECT_NE(reader.error().find("101"), std::string::npos) << reader.error();
  EXPECT_FALSE(reader.keep_alive());
}

TEST(Http1, LeavesAPipelinedSecondResponseUnconsumed) {
  const std::string first = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none";
  const std::string second = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\ntwo";
  const std::string both = first + second;
  ResponseReader reader;
  reader.reset(true);
  EXPECT_EQ(reader.feed(both), first.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "one");
  // Feeding more to a finished reader consumes nothing.
  EXPECT_EQ(reader.feed(std::string_view(both).substr(first.size())), 0u);

  reader.reset(true);
  EXPECT_EQ(reader.feed(std::string_view(both).substr(first.size())), second.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 404u);
  EXPECT_EQ(reader.body(), "two");
}

TEST(Http1, LeavesAResponseAfterAChunkedOneUnconsumed) {
  const std::string second = "HTTP/1.1 204 No Content\r\n\r\n";
  const std::string both = std::string(kChunked) + second;
  ResponseReader reader;
  reader.reset(true);
  EXPECT_EQ(reader.feed(both), kChunked.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "hello world");
}

TEST(Http1, LeavesAResponseAfterA204Unconsumed) {
  const std::string first = "HTTP/1.1 204 No Content\r\n\r\n";
  const std::string both = first + std::string(kSimple);
  ResponseReader reader;
  reader.reset(false);
  EXPECT_EQ(reader.feed(both), first.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 204u);
}

// ---------------------------------------------------------------- ResponseReader: headers

TEST(Http1, ConnectionCloseEndsKeepAlive) {
  ResponseReader reader;
  reader.reset(false);
  feed_all(reader, "HTTP/1.1 200 OK\r\nconnection: Close\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_FALSE(reader.keep_alive());
}

TEST(Http1, Http10IsNotKeptAlive) {
  ResponseReader reader;
  reader.reset(false);
  feed_all(reader, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_FALSE(reader.keep_alive());
}

TEST(Http1, ParsesRetryAfterSeconds) {
  ResponseReader reader;
  reader.reset(false);
  feed_all(reader, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 120\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 429u);
  ASSERT_TRUE(reader.retry_after());
  EXPECT_DOUBLE_EQ(*reader.retry_after(), 120.0);
}

TEST(Http1, IgnoresRetryAfterDates) {
  ResponseReader reader;
  reader.reset(false);
  feed_all(
      reader,
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 503u);
  EXPECT_FALSE(reader.retry_after());
}

TEST(Http1, KeepsTheBodyOnlyWhenAsked) {
  ResponseReader reader;
  reader.reset(false);
  feed_all(reader, kSimple);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "");
  EXPECT_EQ(reader.body_size(), 5u);

  reader.reset(false);
  feed_all(reader, kChunked);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.body(), "");
  EXPECT_EQ(reader.body_size(), 11u);
}

// ---------------------------------------------------------------- ResponseReader: errors

void expect_error(std::string_view bytes, ReaderLimits limits = {}) {
  ResponseReader reader(limits);
  reader.reset(true);
  reader.feed(bytes);
  EXPECT_EQ(reader.state(), State::error) << "for: " << bytes;
  EXPECT_FALSE(reader.error().empty()) << "for: " << bytes;
  EXPECT_FALSE(reader.keep_alive()) << "for: " << bytes;
}

TEST(Http1, RejectsAGarbageStatusLine) {
  expect_error("garbage\r\n\r\n");
  expect_error("SMTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  expect_error("HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n");
  expect_error("HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n");
}

TEST(Http1, RejectsANonNumericStatusCode) {
  expect_error("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
  expect_error("HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n");
}

TEST(Http1, RejectsConflictingContentLengths) {
  expect_error("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!");
  expect_error("HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\nhello");
  // The same length twice is no conflict.
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(reader.state(), State::done) << reader.error();
}

TEST(Http1, RejectsABadChunkSize) {
  expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
  expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n");
  expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n");
}

TEST(Http1, RejectsAHeaderBlockBeyondTheLimit) {
  const ReaderLimits small{64, 1024};
  // Never terminated: the limit is hit while still waiting for the end.
  expect_error("HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a'), small);
  // Terminated in the same feed, but longer than the limit.
  expect_error("HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a') + "\r\nContent-Length: 0\r\n\r\n", small);
  // Byte by byte.
  ResponseReader reader(small);
  reader.reset(false);
  feed_bytewise(reader, "HTTP/1.1 200 OK\r\nX-Long: " + std::string(100, 'a') + "\r\n\r\n");
  EXPECT_EQ(reader.state(), State::error);
  EXPECT_FALSE(reader.error().empty());
}

TEST(Http1, RejectsABodyBeyondTheLimit) {
  const ReaderLimits small{1024, 10};
  expect_error("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789a", small);
  expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n01234567\r\n0\r\n\r\n",
               small);
  expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n", small);
  expect_error("HTTP/1.1 200 OK\r\n\r\n0123456789a", small);
  // Exactly at the limit is fine.
  ResponseReader reader(small);
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789");
  EXPECT_EQ(reader.state(), State::done) << reader.error();
}

TEST(Http1, RejectsEndlessTrailers) {
  std::string bytes = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n";
  for (int i = 0; i < 100; ++i) bytes += "X-Trailer: " + std::string(20, 't') + "\r\n";
  expect_error(bytes, ReaderLimits{.header_bytes = 1024});
}

TEST(Http1, EofInTheHeadIsAnError) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nContent-Le");
  EXPECT_EQ(reader.state(), State::need_more);
  reader.eof();
  EXPECT_EQ(reader.state(), State::error);
  EXPECT_FALSE(reader.error().empty());

  reader.reset(true);
  reader.eof();
  EXPECT_EQ(reader.state(), State::error);
  EXPECT_FALSE(reader.error().empty());
}

TEST(Http1, EofInAContentLengthBodyIsAnError) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_EQ(reader.state(), State::need_more);
  reader.eof();
  EXPECT_EQ(reader.state(), State::error);
  EXPECT_FALSE(reader.error().empty());
  EXPECT_FALSE(reader.keep_alive());
}

TEST(Http1, EofInAChunkedBodyIsAnError) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
  reader.eof();
  EXPECT_EQ(reader.state(), State::error);
}

TEST(Http1, EofAfterDoneChangesNothing) {
  ResponseReader reader;
  reader.reset(true);
  feed_all(reader, kSimple);
  reader.eof();
  EXPECT_EQ(reader.state(), State::done);
}

TEST(Http1, ResetMakesAReaderReusable) {
  ResponseReader reader;
  reader.reset(true);
  reader.feed("garbage\r\n\r\n");
  ASSERT_EQ(reader.state(), State::error);

  reader.reset(true);
  EXPECT_EQ(reader.state(), State::need_more);
  EXPECT_TRUE(reader.error().empty());
  feed_all(reader,
           "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_EQ(reader.state(), State::done) << reader.error();

  reader.reset(true);
  EXPECT_EQ(reader.status(), 0u);
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_FALSE(reader.retry_after());
  EXPECT_EQ(reader.body_size(), 0u);
  feed_all(reader, kSimple);
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 200u);
  EXPECT_EQ(reader.body(), "hello");
  EXPECT_TRUE(reader.keep_alive());
}

}  // namespace
}  // namespace crh::core::http1
