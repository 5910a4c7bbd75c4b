// What both HTTP/1 readers share or the blocking client relies on: answers
// without a body (HEAD, 204, 304, an asked-for 101), header capture, the
// fault behind each error, and that bytes cut anywhere read as when whole.
#include "core/http1.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace crh::core::http1::http1_framing_test {
namespace {

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Reads `bytes` as one answer and returns how many bytes it took.
std::size_t answer(ResponseReader& reader, std::string_view bytes, Asked asked = {}) {
  reader.reset(true, asked);
  return reader.feed(bytes);
}

TEST(Http1Response, AnAnswerToHeadHasNoBodyWhateverItsHeadersSay) {
  for (std::string_view head :
       {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 99999999999\r\n\r\n"}) {
    const std::string both = std::string(head) + std::string(kOk);
    ResponseReader reader;
    EXPECT_EQ(answer(reader, both, {.head = true}), head.size()) << head;
    ASSERT_EQ(reader.state(), State::done) << head << reader.error();
    EXPECT_EQ(reader.body_size(), 0u);
    EXPECT_TRUE(reader.keep_alive()) << "no close-delimited body: the connection stays";
    // The next answer on the connection is read from where the head ended.
    EXPECT_EQ(answer(reader, std::string_view(both).substr(head.size())), kOk.size());
    EXPECT_EQ(reader.body(), "ok");
  }
  // The same head to a GET has a body.
  ResponseReader reader;
  EXPECT_EQ(answer(reader, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), 43u);
  EXPECT_EQ(reader.body(), "hello");
}

TEST(Http1Response, Answers204And304HaveNoBodyWhateverTheirHeadersSay) {
  for (std::string_view head :
       {"HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\nETag: \"x\"\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n"}) {
    ResponseReader reader;
    EXPECT_EQ(answer(reader, std::string(head) + std::string(kOk)), head.size()) << head;
    ASSERT_EQ(reader.state(), State::done) << head << reader.error();
    EXPECT_EQ(reader.body_size(), 0u);
    EXPECT_TRUE(reader.keep_alive());
  }
}

TEST(Http1Response, ASwitchingProtocolsAskedForEndsTheAnswer) {
  constexpr std::string_view k101 =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
  ResponseReader reader;
  EXPECT_EQ(answer(reader, std::string(k101) + "\x81\x05hello", {.upgrade = true}), k101.size());
  ASSERT_EQ(reader.state(), State::done) << reader.error();
  EXPECT_EQ(reader.status(), 101u);
  EXPECT_FALSE(reader.keep_alive()) << "what follows is no longer HTTP";
  // Interim answers before it are still skipped.
  answer(reader, "HTTP/1.1 100 Continue\r\n\r\n" + std::string(k101), {.upgrade = true});
  EXPECT_EQ(reader.status(), 101u);
  EXPECT_EQ(reader.interim_answers(), 1u);
}

TEST(Http1Response, CapturesTheFinalHeadersAndTrailersOnlyWhenAsked) {
  const std::string bytes =
      "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n"
      "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nServer-Timing: db;dur=5\r\n\r\n";
  ResponseReader off;
  answer(off, bytes);
  ASSERT_EQ(off.state(), State::done) << off.error();
  EXPECT_TRUE(off.headers().empty());
  EXPECT_TRUE(off.trailers().empty());

  ResponseReader on({}, HeaderCapture::on);
  answer(on, bytes);
  ASSERT_EQ(on.state(), State::done) << on.error();
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& h : on.headers()) got.emplace_back(h.name, h.value);
  const std::vector<std::pair<std::string, std::string>> want = {{"Content-Type", "application/json"},
                                                                 {"Set-Cookie", "a=1"},
                                                                 {"Set-Cookie", "b=2"},
                                                                 {"Transfer-Encoding", "chunked"}};
  EXPECT_EQ(got, want) << "the 103's Link is not the answer's";
  ASSERT_EQ(on.trailers().size(), 1u);
  EXPECT_EQ(on.trailers()[0].name, "Server-Timing");
  EXPECT_EQ(on.trailers()[0].value, "db;dur=5");
  EXPECT_EQ(on.body(), "{}");

  answer(on, kOk);
  EXPECT_EQ(on.headers().size(), 1u) << "reset forgets the previous answer's headers";
  EXPECT_TRUE(on.trailers().empty());
}

TEST(Http1Response, NamesTheFaultBehindEachError) {
  const ReaderLimits small{.header_bytes = 128, .body_bytes = 8, .interim_answers = 2};
  const std::pair<std::string, Fault> cases[] = {
      {"HTTP/1.1 2x0 OK\r\n\r\n", Fault::malformed},
      {"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", Fault::malformed},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(200, 'a'), Fault::head_too_large},
      {"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", Fault::body_too_large},
      {"HTTP/1.1 200 OK\r\n\r\n012345678", Fault::body_too_large},
      {"HTTP/1.1 100 A\r\n\r\nHTTP/1.1 100 B\r\n\r\nHTTP/1.1 100 C\r\n\r\n", Fault::too_many_interim},
      {"HTTP/1.1 101 Switching Protocols\r\n\r\n", Fault::unasked_upgrade},
  };
  for (const auto& [bytes, fault] : cases) {
    ResponseReader reader(small);
    answer(reader, bytes);
    EXPECT_EQ(reader.state(), State::error) << bytes;
    EXPECT_EQ(reader.fault(), fault) << bytes << ": " << reader.error();
  }
  ResponseReader reader(small);
  answer(reader, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab");
  reader.eof();
  EXPECT_EQ(reader.fault(), Fault::closed);
  answer(reader, kOk);
  EXPECT_EQ(reader.fault(), Fault::none) << "reset clears the fault";
}

TEST(Http1, IequalsFoldsLettersOnly) {
  EXPECT_TRUE(iequals("Content-Length", "content-length"));
  EXPECT_TRUE(iequals("ETAG", "etag"));
  EXPECT_FALSE(iequals("Content\rLength", "content-length")) << "CR is not a folded '-'";
  EXPECT_FALSE(iequals("[", "{"));
  EXPECT_FALSE(iequals("etag", "etags"));
}

// ---------------------------------------------------------------- cut anywhere, read the same

// Everything a reader says about what it read, to compare two readings.
struct Reading {
  State state;
  Fault fault;
  std::string error, first_line, body;
  std::size_t used, body_size;
  bool keep_alive;
  std::vector<std::pair<std::string, std::string>> headers;
  bool operator==(const Reading&) const = default;
};

template <class Reader>
Reading read(std::string_view bytes, std::size_t piece) {
  const ReaderLimits limits{
      .header_bytes = 256, .body_bytes = 64, .interim_answers = 2, .chunk_line_bytes = 32, .request_line_bytes = 64};
  Reader reader(limits, HeaderCapture::on);
  reader.reset(true);
  std::size_t used = 0;
  for (std::size_t at = 0; at < bytes.size(); at += piece) used += reader.feed(bytes.substr(at, piece));
  reader.eof();
  Reading r{reader.state(), reader.fault(),     reader.error(),      {}, reader.body(),
            used,           reader.body_size(), reader.keep_alive(), {}};
  if constexpr (std::is_same_v<Reader, ResponseReader>) r.first_line = std::to_string(reader.status());
  else r.first_line = reader.method() + " " + reader.target() + " " + std::to_string(reader.version());
  for (const auto& h : reader.headers()) r.headers.emplace_back(h.name, h.value);
  for (const auto& h : reader.trailers()) r.headers.emplace_back(h.name, h.value);
  if (r.state == State::error) r.used = 0;  // how much an error consumed depends on the cuts
  return r;
}

template <class Reader>
void expect_same_in_any_cut(std::string_view bytes) {
  const Reading whole = read<Reader>(bytes, bytes.size());
  for (std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
    const Reading cut = read<Reader>(bytes, piece);
    EXPECT_TRUE(cut == whole) << "in pieces of " << piece << ": " << bytes << "\nwhole: " << whole.error
                              << "\ncut: " << cut.error;
  }
}

TEST(Http1, ResponsesReadTheSameByteByByteAsWhole) {
  const std::vector<std::string> inputs = {
      std::string(kOk),
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: 1\r\n\r\n",
      "HTTP/1.0 200 OK\r\nX: y\r\n\r\nuntil eof",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nA: b\r\n\r\nHTTP/1.1 200 OK\r\n",
      "HTTP/1.1 200 OK\r\nX: " + std::string(300, 'a'),
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;" + std::string(40, 'e') + "\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n",
      "HTTP/1.1 100 A\r\n\r\nHTTP/1.1 100 B\r\n\r\nHTTP/1.1 100 C\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
      "garbage\r\n\r\n",
  };
  for (const auto& bytes : inputs) expect_same_in_any_cut<ResponseReader>(bytes);
}

TEST(Http1, RequestsReadTheSameByteByByteAsWhole) {
  const std::vector<std::string> inputs = {
      "GET /a?b=c HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\n\r\n",
      "\r\nPOST /p HTTP/1.0\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabcdef",
      "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nT: v\r\n\r\n",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
      "GET / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
      "GET /" + std::string(80, 'a') + " HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\nX: " + std::string(300, 'a') + "\r\n\r\n",
      "GET /" + std::string(100, 'b'),
      "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc",
      "GET / HTTP/1.1\r\n",
  };
  for (const auto& bytes : inputs) expect_same_in_any_cut<RequestReader>(bytes);
}

}  // namespace
}  // namespace crh::core::http1::http1_framing_test
