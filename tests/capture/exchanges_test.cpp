// Tests of capture/exchanges: captures built with libpcap's dump functions
// (pcap_builder) for every link type and the TCP situations real traffic
// brings, read back, and the HTTP exchanges found checked field by field.
#include "capture/exchanges.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <signal.h>

#include "pcap_builder.hpp"
#include "support/peer_ready.hpp"
#include "support/scripted_server.hpp"

namespace crh::capture {
namespace {

using testing::Dir;
using testing::LinkKind;
using testing::PcapBuilder;
using testing::http_chunked_response;
using testing::http_request;
using testing::http_response;

constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;  // a fixed capture time, ns
constexpr std::int64_t kMs = 1'000'000;

struct Read {
  std::vector<WireExchange> exchanges;
  ReadSummary summary;
};

std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : test)
    if (c == '/') c = '_';
  return ::testing::TempDir() + "crh_exchanges_" + test + "_" + name;
}

Read read_file(const std::string& path, ReadLimits limits = {}) {
  Read r;
  r.summary = read_capture(path, [&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); }, limits);
  return r;
}

// Feeds the builder's frames straight to an extractor, as the fuzz target does.
Read read_memory(const PcapBuilder& b, ReadLimits limits = {}) {
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); }, limits);
  std::uint64_t frame = 0;
  for (const auto& f : b.built()) x.packet(b.dlt(), f.ns, ++frame, f.bytes, f.wire_length);
  x.finish();
  r.summary = x.summary();
  return r;
}

std::string describe(const Read& r) {
  std::string out = std::to_string(r.exchanges.size()) + " exchanges:";
  for (const auto& e : r.exchanges) {
    out += "\n  stream " + std::to_string(e.stream) + "#" + std::to_string(e.sequence) + " " + e.request.method + " " +
           e.request.target + " -> " + (e.response ? std::to_string(e.response->status) : "none") +
           (e.complete ? " complete" : " incomplete: " + e.incomplete);
  }
  for (const auto& u : r.summary.unparsed) out += "\n  unparsed stream " + std::to_string(u.stream) + ": " + u.why;
  return out;
}

// One GET and its answer on a fresh connection, closed by both sides:
// frames 1-3 handshake, 4 request, 5 answer, 6-7 FINs.
void simple_exchange(PcapBuilder& b, const std::string& client, const std::string& server) {
  auto f = b.flow(client, 40000, server, 8080);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents/7", {{"Apikey", "k"}}), kT0 + 1 * kMs);
  b.send(f, Dir::to_client, http_response(200, {{"Content-Type", "application/json"}}, R"({"id":7})"), kT0 + 3 * kMs);
  b.fin(f, Dir::to_server, kT0 + 4 * kMs);
  b.fin(f, Dir::to_client, kT0 + 5 * kMs);
}

// The name libpcap gives the link type when it reads the file back.
const char* pcap_name(LinkKind link) {
  switch (link) {
    case LinkKind::ethernet:
    case LinkKind::ethernet_vlan:
    case LinkKind::ethernet_qinq: return "EN10MB";
    case LinkKind::sll: return "LINUX_SLL";
    case LinkKind::sll2: return "LINUX_SLL2";
    case LinkKind::null: return "NULL";
    case LinkKind::loop: return "LOOP";
    case LinkKind::raw: return "RAW";
  }
  return "?";
}

const char* camel(LinkKind link) {
  switch (link) {
    case LinkKind::ethernet: return "Ethernet";
    case LinkKind::ethernet_vlan: return "EthernetVlan";
    case LinkKind::ethernet_qinq: return "EthernetStackedVlans";
    case LinkKind::sll: return "LinuxSll";
    case LinkKind::sll2: return "LinuxSll2";
    case LinkKind::null: return "BsdNull";
    case LinkKind::loop: return "OpenBsdLoop";
    case LinkKind::raw: return "RawIp";
  }
  return "Unknown";
}

struct LinkCase {
  LinkKind link;
  bool v6;
};

class ExchangesLinkTypes : public ::testing::TestWithParam<LinkCase> {};

TEST_P(ExchangesLinkTypes, ReadsOneExchangeWithFramesAndTimes) {
  const auto [link, v6] = GetParam();
  const std::string path = temp_path("capture.pcap");
  {
    PcapBuilder b(link, path);
    simple_exchange(b, v6 ? "::1" : "127.0.0.1", v6 ? "::1" : "127.0.0.2");
  }
  const Read r = read_file(path);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  const WireExchange& e = r.exchanges[0];
  EXPECT_EQ(e.request.method, "GET");
  EXPECT_EQ(e.request.target, "/agents/7");
  ASSERT_TRUE(e.response);
  EXPECT_EQ(e.response->status, 200u);
  EXPECT_EQ(e.response->body, R"({"id":7})");
  EXPECT_EQ(e.response->header("content-type"), "application/json");
  EXPECT_TRUE(e.complete) << e.incomplete;
  EXPECT_EQ(e.client.address, v6 ? "::1" : "127.0.0.1");
  EXPECT_EQ(e.client.port, 40000);
  EXPECT_EQ(e.server.port, 8080);
  EXPECT_EQ(e.request_first.frame, 4u);
  EXPECT_EQ(e.request_last.frame, 4u);
  EXPECT_EQ(e.response_first.frame, 5u);
  EXPECT_EQ(e.response_last.frame, 5u);
  EXPECT_EQ(e.request_last.ns, kT0 + 1 * kMs);
  EXPECT_EQ(e.response_last.ns, kT0 + 3 * kMs);
  EXPECT_EQ(e.wire_latency_ns(), 2 * kMs);
  EXPECT_EQ(r.summary.format, "pcap");
  EXPECT_EQ(r.summary.packets, 7u);
  EXPECT_EQ(r.summary.tcp_packets, 7u);
  EXPECT_EQ(r.summary.streams, 1u);
  EXPECT_EQ(r.summary.link_type, std::string(pcap_name(link)));
}

INSTANTIATE_TEST_SUITE_P(
    Links, ExchangesLinkTypes,
    ::testing::Values(LinkCase{LinkKind::ethernet, false}, LinkCase{LinkKind::ethernet, true},
                      LinkCase{LinkKind::ethernet_vlan, false}, LinkCase{LinkKind::ethernet_qinq, true},
                      LinkCase{LinkKind::sll, false}, LinkCase{LinkKind::sll2, true}, LinkCase{LinkKind::null, false},
                      LinkCase{LinkKind::null, true}, LinkCase{LinkKind::loop, true}, LinkCase{LinkKind::raw, false},
                      LinkCase{LinkKind::raw, true}),
    [](const auto& info) { return std::string(camel(info.param.link)) + (info.param.v6 ? "Ipv6" : "Ipv4"); });


TEST(ExchangesReassembly, OutOfOrderSegmentsAreDeliveredInSequenceOrder) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40001, "10.0.0.2", 80);
  b.handshake(f, kT0);
  const std::string req = http_request("POST", "/database/k", {}, R"({"value":"abcdefghij"})");
  // Three segments; the last two arrive swapped (frames 4: first, 5: third, 6: second).
  const std::size_t a = 20, c = 40;
  b.send_at(f, Dir::to_server, 0, req.substr(0, a), kT0 + 1 * kMs);
  b.send_at(f, Dir::to_server, c, req.substr(c), kT0 + 2 * kMs);
  b.send_at(f, Dir::to_server, a, req.substr(a, c - a), kT0 + 3 * kMs);
  b.skip(f, Dir::to_server, static_cast<std::uint32_t>(req.size()));
  b.send(f, Dir::to_client, http_response(200, {}, "{}"), kT0 + 4 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  const auto& e = r.exchanges[0];
  EXPECT_EQ(e.request.method, "POST");
  EXPECT_EQ(e.request.body, R"({"value":"abcdefghij"})");
  EXPECT_TRUE(e.complete) << e.incomplete;
  EXPECT_EQ(e.request_first.frame, 4u);
  // The last byte travelled in frame 5, though it could only be delivered
  // once frame 6 filled the hole before it.
  EXPECT_EQ(e.request_last.frame, 5u);
}

TEST(ExchangesReassembly, RetransmissionsAreDroppedAndIdenticalOverlapsNotCounted) {
  PcapBuilder b(LinkKind::raw);
  auto f = b.flow("10.0.0.1", 40002, "10.0.0.2", 80);
  b.handshake(f, kT0);
  const std::string req = http_request("GET", "/agents");
  b.send(f, Dir::to_server, req.substr(0, 10), kT0 + 1 * kMs);
  b.send_at(f, Dir::to_server, 0, req.substr(0, 10), kT0 + 2 * kMs);  // a whole retransmission
  b.send_at(f, Dir::to_server, 5, req.substr(5, 10), kT0 + 3 * kMs);  // overlaps 5 delivered bytes
  b.skip(f, Dir::to_server, 5);
  b.send(f, Dir::to_server, req.substr(15), kT0 + 4 * kMs);
  b.send(f, Dir::to_client, http_response(200, {}, "[]"), kT0 + 5 * kMs);
  b.send_at(f, Dir::to_client, 0, http_response(200, {}, "[]"), kT0 + 6 * kMs);  // retransmitted answer
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/agents");
  EXPECT_TRUE(r.exchanges[0].complete) << r.exchanges[0].incomplete;
  EXPECT_EQ(r.exchanges[0].conflicting_overlaps, 0u);
  EXPECT_EQ(r.summary.conflicting_overlaps, 0u);
}

TEST(ExchangesReassembly, ConflictingOverlapKeepsTheFirstCopyAndIsCounted) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40003, "10.0.0.2", 80);
  b.handshake(f, kT0);
  const std::string req = http_request("GET", "/agents/1234");
  // The tail arrives first and is held; a second copy overlapping it with
  // other bytes must not replace it.
  const std::size_t cut = 4;  // "GET " | "/agents/1234 ..."
  b.send_at(f, Dir::to_server, cut, req.substr(cut), kT0 + 1 * kMs);
  std::string other = req.substr(0, cut + 12);
  other.replace(cut, 12, "/agents/9999");
  b.send_at(f, Dir::to_server, 0, other, kT0 + 2 * kMs);
  b.skip(f, Dir::to_server, static_cast<std::uint32_t>(req.size()));
  b.send(f, Dir::to_client, http_response(200, {}, "{}"), kT0 + 3 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/agents/1234");
  EXPECT_EQ(r.exchanges[0].conflicting_overlaps, 1u);
  EXPECT_EQ(r.summary.conflicting_overlaps, 1u);
}

TEST(ExchangesReassembly, SequenceNumbersWrapAround) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40004, "10.0.0.2", 80, 0xfffffff0u, 0xfffffffau);
  b.handshake(f, kT0);
  b.send_split(f, Dir::to_server, http_request("GET", "/wrapping/around"), 7, kT0 + 1 * kMs);
  b.send_split(f, Dir::to_client, http_response(200, {}, "0123456789abcdef"), 5, kT0 + 2 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/wrapping/around");
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, "0123456789abcdef");
  EXPECT_TRUE(r.exchanges[0].complete) << r.exchanges[0].incomplete;
}

TEST(ExchangesHttp, ChunkedBodySplitAcrossSegmentsEndsInItsLastFrame) {
  PcapBuilder b(LinkKind::sll2);
  auto f = b.flow("127.0.0.1", 40005, "127.0.0.1", 8080);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents"), kT0 + 1 * kMs);
  const std::string answer = http_chunked_response(200, {"[{\"id\":", "1},{\"id\"", ":2}]"});
  b.send_split(f, Dir::to_client, answer, 6, kT0 + 2 * kMs);
  const std::uint64_t last = b.frames();
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  const auto& e = r.exchanges[0];
  ASSERT_TRUE(e.response);
  EXPECT_EQ(e.response->body, R"([{"id":1},{"id":2}])");
  EXPECT_EQ(e.response_first.frame, 5u);
  EXPECT_EQ(e.response_last.frame, last);
  EXPECT_TRUE(e.complete) << e.incomplete;
}

TEST(ExchangesHttp, PipelinedRequestsPairWithAnswersInOrder) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40006, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/a") + http_request("POST", "/b", {}, "xy") + http_request("GET", "/c"),
         kT0 + 1 * kMs);
  b.send(f, Dir::to_client, http_response(200, {}, "A") + http_response(201, {}, "B"), kT0 + 2 * kMs);
  b.send(f, Dir::to_client, http_response(404, {}, "C"), kT0 + 3 * kMs);
  b.fin(f, Dir::to_server, kT0 + 4 * kMs);
  b.fin(f, Dir::to_client, kT0 + 5 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 3u) << describe(r);
  const char* targets[] = {"/a", "/b", "/c"};
  const unsigned statuses[] = {200, 201, 404};
  const char* bodies[] = {"A", "B", "C"};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& e = r.exchanges[i];
    EXPECT_EQ(e.sequence, i);
    EXPECT_EQ(e.request.target, targets[i]);
    ASSERT_TRUE(e.response);
    EXPECT_EQ(e.response->status, statuses[i]);
    EXPECT_EQ(e.response->body, bodies[i]);
    EXPECT_TRUE(e.complete) << e.incomplete;
    EXPECT_EQ(e.request_first.frame, 4u);
  }
  EXPECT_EQ(r.exchanges[1].request.body, "xy");
  EXPECT_EQ(r.exchanges[1].response_last.frame, 5u);
  EXPECT_EQ(r.exchanges[2].response_last.frame, 6u);
}

TEST(ExchangesHttp, ContinueIsCountedAndTheFinalAnswerTimed) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40007, "10.0.0.2", 80);
  b.handshake(f, kT0);
  const std::string body = R"({"value":"v"})";
  std::string req = http_request("POST", "/database/k", {{"Expect", "100-continue"}}, body);
  const std::size_t head = req.size() - body.size();
  b.send(f, Dir::to_server, req.substr(0, head), kT0 + 1 * kMs);              // frame 4
  b.send(f, Dir::to_client, "HTTP/1.1 100 Continue\r\n\r\n", kT0 + 2 * kMs);  // frame 5
  b.send(f, Dir::to_server, req.substr(head), kT0 + 3 * kMs);                 // frame 6
  b.send(f, Dir::to_client, http_response(200, {}, "{}"), kT0 + 4 * kMs);     // frame 7
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  const auto& e = r.exchanges[0];
  EXPECT_EQ(e.interim, 1u);
  EXPECT_EQ(e.request.body, body);
  EXPECT_EQ(e.request_last.frame, 6u);
  ASSERT_TRUE(e.response);
  EXPECT_EQ(e.response->status, 200u);
  EXPECT_EQ(e.response_first.frame, 7u);
  EXPECT_EQ(e.response_last.frame, 7u);
  EXPECT_TRUE(e.complete) << e.incomplete;
}

TEST(ExchangesHttp, AnswerToHeadHasNoBodyAndTheNextExchangeFollows) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40008, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("HEAD", "/agents"), kT0 + 1 * kMs);
  b.send(f, Dir::to_client, http_response(200, {{"Content-Length", "25"}}), kT0 + 2 * kMs);
  b.send(f, Dir::to_server, http_request("GET", "/agents"), kT0 + 3 * kMs);
  b.send(f, Dir::to_client, http_response(200, {}, "[]"), kT0 + 4 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 2u) << describe(r);
  EXPECT_TRUE(r.exchanges[0].head);
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, "");
  EXPECT_EQ(r.exchanges[0].response_last.frame, 5u);
  ASSERT_TRUE(r.exchanges[1].response);
  EXPECT_EQ(r.exchanges[1].response->body, "[]");
  EXPECT_TRUE(r.exchanges[1].complete) << r.exchanges[1].incomplete;
}

TEST(ExchangesHttp, CloseDelimitedAnswerEndsAtFin) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40009, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents"), kT0 + 1 * kMs);
  b.send(f, Dir::to_client, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n[1,", kT0 + 2 * kMs);
  b.send(f, Dir::to_client, "2]", kT0 + 3 * kMs);  // frame 6
  b.fin(f, Dir::to_client, kT0 + 4 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, "[1,2]");
  EXPECT_EQ(r.exchanges[0].response_last.frame, 6u);
  EXPECT_TRUE(r.exchanges[0].complete) << r.exchanges[0].incomplete;
}

TEST(ExchangesStreams, ResetBeforeTheAnswerLeavesTheExchangeIncomplete) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40010, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents/1"), kT0 + 1 * kMs);
  b.rst(f, Dir::to_client, kT0 + 2 * kMs);
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); });
  std::uint64_t frame = 0;
  for (const auto& fr : b.built()) x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
  // Handed out at the RST, not only at the end of the capture.
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(x.open_streams(), 0u);
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_FALSE(r.exchanges[0].complete);
  EXPECT_NE(r.exchanges[0].incomplete.find("reset"), std::string::npos) << r.exchanges[0].incomplete;
  EXPECT_FALSE(r.exchanges[0].wire_latency_ns());
}

TEST(ExchangesStreams, GapIsNeverSplicedAndTheReaderRestartsAfterIt) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40011, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents/1"), kT0 + 1 * kMs);  // 4
  const std::string answer = http_response(200, {}, R"({"id":1,"state":"idle"})");
  b.send(f, Dir::to_client, answer.substr(0, 30), kT0 + 2 * kMs);  // 5
  b.skip(f, Dir::to_client, 20);                                   // lost
  b.send(f, Dir::to_client, answer.substr(50), kT0 + 3 * kMs);     // 6
  b.send(f, Dir::to_server, http_request("GET", "/agents/2"), kT0 + 4 * kMs);  // 7
  b.send(f, Dir::to_client, http_response(404, {}, "{}"), kT0 + 5 * kMs);      // 8
  b.fin(f, Dir::to_server, kT0 + 6 * kMs);
  b.fin(f, Dir::to_client, kT0 + 7 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 2u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/agents/1");
  EXPECT_FALSE(r.exchanges[0].complete);
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_NE(r.exchanges[0].incomplete.find("gap of 20 bytes"), std::string::npos) << r.exchanges[0].incomplete;
  EXPECT_NE(r.exchanges[0].incomplete.find("frame 6"), std::string::npos) << r.exchanges[0].incomplete;
  // After the gap the answer after it is read again, and paired by its ack
  // (it acknowledges exactly the end of /agents/2): complete.
  EXPECT_EQ(r.exchanges[1].request.target, "/agents/2");
  ASSERT_TRUE(r.exchanges[1].response);
  EXPECT_EQ(r.exchanges[1].response->status, 404u);
  EXPECT_TRUE(r.exchanges[1].complete) << r.exchanges[1].incomplete;
}

// Packet loss on a keep-alive stream (what a loaded live capture brings):
// after a gap, answers pair with their request by TCP sequence space (the
// ack of an answer's first segment names its request's end), so only the
// exchange the capture cannot see whole is incomplete.
enum class Loss { none, request, response, response_tail, both };

struct KeepAliveRun {
  Read read;
  std::size_t lost = 0;
};

// Ten GET /agents/i, each answered 2 ms later with status 200 + i % 2 and
// body "i"; exchange `lost` loses what `loss` says.
KeepAliveRun keep_alive(Loss loss, std::size_t lost, bool acks = true) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40030, "10.0.0.2", 80);
  b.handshake(f, kT0);
  if (!acks) b.without_acks(f);
  for (std::size_t i = 0; i < 10; ++i) {
    const std::int64_t t = kT0 + static_cast<std::int64_t>(10 + 10 * i) * kMs;
    const std::string req = http_request("GET", "/agents/" + std::to_string(i), {{"Apikey", "k"}});
    const std::string answer = http_response(static_cast<unsigned>(200 + i % 2), {}, std::to_string(i));
    if (i == lost && (loss == Loss::request || loss == Loss::both)) b.skip(f, Dir::to_server, static_cast<std::uint32_t>(req.size()));
    else b.send(f, Dir::to_server, req, t);
    if (i == lost && (loss == Loss::response || loss == Loss::both)) {
      b.skip(f, Dir::to_client, static_cast<std::uint32_t>(answer.size()));
    } else if (i == lost && loss == Loss::response_tail) {
      b.send(f, Dir::to_client, answer.substr(0, 20), t + 2 * kMs);
      b.skip(f, Dir::to_client, static_cast<std::uint32_t>(answer.size() - 20));
    } else {
      b.send(f, Dir::to_client, answer, t + 2 * kMs);
    }
  }
  b.fin(f, Dir::to_server, kT0 + 200 * kMs);
  b.fin(f, Dir::to_client, kT0 + 201 * kMs);
  return {read_memory(b), lost};
}

// Every exchange but `lost` complete, in its place, with its own answer and times.
void expect_all_but_one_complete(const KeepAliveRun& run) {
  const Read& r = run.read;
  ASSERT_EQ(r.exchanges.size(), 10u) << describe(r);
  for (std::size_t i = 0; i < 10; ++i) {
    const auto& e = r.exchanges[i];
    EXPECT_EQ(e.sequence, i) << describe(r);
    if (i == run.lost) {
      EXPECT_FALSE(e.complete) << describe(r);
      EXPECT_FALSE(e.wire_latency_ns() && e.complete);
      continue;
    }
    EXPECT_EQ(e.request.target, "/agents/" + std::to_string(i)) << describe(r);
    ASSERT_TRUE(e.response) << describe(r);
    EXPECT_EQ(e.response->status, 200 + i % 2);
    EXPECT_EQ(e.response->body, std::to_string(i));
    EXPECT_TRUE(e.complete) << i << ": " << e.incomplete;
    EXPECT_EQ(e.request_last.ns, kT0 + static_cast<std::int64_t>(10 + 10 * i) * kMs);
    EXPECT_EQ(e.wire_latency_ns(), 2 * kMs);
  }
  EXPECT_EQ(r.summary.exchanges, 10u);
  EXPECT_EQ(r.summary.incomplete_exchanges, 1u);
}

TEST(ExchangesResync, LostRequestSegmentLosesOnlyThatExchange) {
  const auto run = keep_alive(Loss::request, 3);
  expect_all_but_one_complete(run);
  // Its answer was seen: it stands for a request the capture lost, so the
  // requests after it keep their places on the stream.
  const auto& e = run.read.exchanges[3];
  EXPECT_TRUE(e.request.method.empty());
  EXPECT_EQ(e.request_first.frame, 0u);
  EXPECT_NE(e.incomplete.find("request was lost"), std::string::npos) << e.incomplete;
}

TEST(ExchangesResync, LostAnswerSegmentLosesOnlyThatExchange) {
  const auto run = keep_alive(Loss::response, 4);
  expect_all_but_one_complete(run);
  const auto& e = run.read.exchanges[4];
  EXPECT_EQ(e.request.target, "/agents/4");
  EXPECT_FALSE(e.response);
  EXPECT_NE(e.incomplete.find("gap of"), std::string::npos) << e.incomplete;
}

TEST(ExchangesResync, LostSecondSegmentOfAnAnswerLosesOnlyThatExchange) {
  const auto run = keep_alive(Loss::response_tail, 6);
  expect_all_but_one_complete(run);
  const auto& e = run.read.exchanges[6];
  EXPECT_EQ(e.request.target, "/agents/6");
  EXPECT_FALSE(e.response);
  EXPECT_NE(e.incomplete.find("gap of"), std::string::npos) << e.incomplete;
}

TEST(ExchangesResync, LossAtTheFirstExchangeLosesOnlyIt) {
  expect_all_but_one_complete(keep_alive(Loss::request, 0));
  expect_all_but_one_complete(keep_alive(Loss::response, 0));
  expect_all_but_one_complete(keep_alive(Loss::response_tail, 9));
}

TEST(ExchangesResync, WholeExchangeLostInBothDirectionsKeepsTheRestByTheirOffsets) {
  // Nothing tells how many requests the lost bytes held: later places in the
  // order of the stream are unknown, but their byte offsets are not.
  const auto run = keep_alive(Loss::both, 5);
  const Read& r = run.read;
  ASSERT_EQ(r.exchanges.size(), 9u) << describe(r);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    const auto& e = r.exchanges[i];
    const std::size_t n = i < 5 ? i : i + 1;
    if (i == 5) offset += http_request("GET", "/agents/5", {{"Apikey", "k"}}).size();  // the lost one
    EXPECT_TRUE(e.complete) << describe(r);
    EXPECT_EQ(e.place_known, i < 5);
    EXPECT_EQ(e.request.target, "/agents/" + std::to_string(n));
    EXPECT_EQ(e.request_offset, offset);
    offset += http_request("GET", e.request.target, {{"Apikey", "k"}}).size();
  }
}

TEST(ExchangesResync, WithoutAcksEverythingAfterAGapStaysIncomplete) {
  const auto run = keep_alive(Loss::response, 4, /*acks=*/false);
  const Read& r = run.read;
  ASSERT_EQ(r.exchanges.size(), 10u) << describe(r);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(r.exchanges[i].complete) << describe(r);
  for (std::size_t i = 4; i < 10; ++i) EXPECT_FALSE(r.exchanges[i].complete) << describe(r);
  EXPECT_NE(r.exchanges[7].incomplete.find("cannot be paired with certainty"), std::string::npos)
      << r.exchanges[7].incomplete;
}

TEST(ExchangesResync, PipelinedRequestsAfterAGapStayIncomplete) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40031, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/a"), kT0 + 1 * kMs);
  b.send(f, Dir::to_client, http_response(200, {}, "A"), kT0 + 2 * kMs);
  b.send(f, Dir::to_server, http_request("GET", "/b"), kT0 + 3 * kMs);
  const std::string lost = http_response(200, {}, "B");
  b.skip(f, Dir::to_client, static_cast<std::uint32_t>(lost.size()));  // the answer to /b is lost
  // Three requests at once, then their answers: one ack for all three.
  b.send(f, Dir::to_server, http_request("GET", "/c") + http_request("GET", "/d") + http_request("GET", "/e"),
         kT0 + 5 * kMs);
  b.send(f, Dir::to_client, http_response(201, {}, "C") + http_response(202, {}, "D"), kT0 + 6 * kMs);
  b.send(f, Dir::to_client, http_response(203, {}, "E"), kT0 + 7 * kMs);
  b.fin(f, Dir::to_server, kT0 + 8 * kMs);
  b.fin(f, Dir::to_client, kT0 + 9 * kMs);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 5u) << describe(r);
  EXPECT_TRUE(r.exchanges[0].complete) << describe(r);
  EXPECT_FALSE(r.exchanges[1].complete) << describe(r);
  EXPECT_FALSE(r.exchanges[1].response);
  for (std::size_t i = 2; i < 5; ++i) {
    EXPECT_EQ(r.exchanges[i].sequence, i);
    EXPECT_FALSE(r.exchanges[i].complete) << describe(r);
  }
}

TEST(ExchangesResync, AnAckedHoleIsAGapAtOnceNotAtTheEndOfTheStream) {
  // A lost answer segment, then the next request acknowledging it: the
  // exchange is handed out at that request, not when the stream closes.
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40032, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/a"), kT0 + 1 * kMs);
  const std::string answer = http_response(200, {}, "A");
  b.skip(f, Dir::to_client, static_cast<std::uint32_t>(answer.size()));
  b.send(f, Dir::to_server, http_request("GET", "/b"), kT0 + 3 * kMs);
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); });
  std::uint64_t frame = 0;
  for (const auto& fr : b.built()) x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/a");
  EXPECT_FALSE(r.exchanges[0].complete);
  x.finish();
}

TEST(ExchangesResync, RandomLossNeverPairsWrongly) {
  // Segments dropped at random in both directions of long keep-alive
  // streams: whatever is marked complete must be paired right and in its
  // place, and most of what the loss did not touch must be complete.
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  std::size_t complete = 0, total = 0, untouched = 0, kept = 0;
  for (int round = 0; round < 20; ++round) {
    bool touched = false;
    PcapBuilder b(LinkKind::ethernet);
    auto f = b.flow("10.0.0.1", static_cast<std::uint16_t>(42000 + round), "10.0.0.2", 80);
    b.handshake(f, kT0);
    std::int64_t t = kT0 + kMs;
    auto send = [&](Dir d, const std::string& bytes) {
      const std::size_t pieces = 1 + next() % 3, step = (bytes.size() + pieces - 1) / pieces;
      for (std::size_t at = 0; at < bytes.size(); at += step) {
        const auto piece = std::string_view(bytes).substr(at, step);
        if (next() % 40 == 0) {
          b.skip(f, d, static_cast<std::uint32_t>(piece.size()));
          touched = true;
        } else {
          b.send(f, d, piece, t);
        }
        t += 1000;
      }
    };
    std::vector<std::uint64_t> offsets;
    for (int i = 0; i < 100; ++i) {
      offsets.push_back(b.offset(f, Dir::to_server));
      touched = false;
      send(Dir::to_server, http_request(i % 7 ? "GET" : "POST", "/agents/" + std::to_string(i), {}, i % 7 ? "" : "{}"));
      send(Dir::to_client, http_response(200, {}, "{\"i\":" + std::to_string(i) + "}"));
      untouched += !touched;
      t += kMs;
    }
    b.fin(f, Dir::to_server, t);
    b.fin(f, Dir::to_client, t + 1);
    const Read r = read_memory(b);
    for (const auto& e : r.exchanges) {
      ++total;
      if (!e.complete) continue;
      ++complete;
      ASSERT_TRUE(e.response) << describe(r);
      const std::string n = e.request.target.substr(e.request.target.rfind('/') + 1);
      EXPECT_EQ(e.response->body, "{\"i\":" + n + "}") << describe(r);
      EXPECT_EQ(e.request_offset, offsets.at(std::stoul(n)));
      if (e.place_known) {
        EXPECT_EQ(n, std::to_string(e.sequence)) << describe(r);
      }
    }
    ReadLimits keep;
    keep.keep_unplaced = true;
    const Read k = read_memory(b, keep);
    for (const auto& e : k.exchanges) {
      if (!e.complete) continue;
      ++kept;
      ASSERT_TRUE(e.response) << describe(k);
      const std::string n = e.request.target.substr(e.request.target.rfind('/') + 1);
      EXPECT_EQ(e.response->body, "{\"i\":" + n + "}") << describe(k);
      if (e.place_known) {
        EXPECT_EQ(n, std::to_string(e.sequence)) << describe(k);
      }
    }
  }
  // A loss in both directions at once (how many requests it hid is unknown)
  // leaves the places in the stream's order unknown, not the byte offsets:
  // only what the loss touched is lost.
  EXPECT_GT(complete, untouched * 97 / 100) << complete << " complete, " << untouched << " untouched by the loss, of " << total;
  EXPECT_LE(complete, untouched);
  EXPECT_GT(kept, untouched * 97 / 100) << kept << " complete (kept), " << untouched << " untouched";
  EXPECT_LE(kept, untouched);
}

TEST(ExchangesResync, BurstsOfDroppedPacketsLoseOnlyWhatTheyHit) {
  // What a kernel buffer overflow does to a live capture: every packet of
  // every stream dropped for 300 us at a time, on 16 keep-alive streams.
  std::uint64_t state = 777;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  PcapBuilder b(LinkKind::ethernet);
  std::vector<testing::Flow> flows;
  for (int i = 0; i < 16; ++i) flows.push_back(b.flow("10.0.0.1", static_cast<std::uint16_t>(43000 + i), "10.0.0.2", 80));
  std::int64_t t = kT0;
  for (auto& f : flows) b.handshake(f, t += kMs);
  std::int64_t burst_end = 0;
  std::size_t dropped = 0;
  auto out = [&](testing::Flow f, Dir d, const std::string& bytes) {
    t += 10'000;
    if (t >= burst_end && next() % 2000 == 0) burst_end = t + 300'000;
    if (t < burst_end) {
      b.skip(f, d, static_cast<std::uint32_t>(bytes.size()));
      ++dropped;
    } else {
      b.send(f, d, bytes, t);
    }
  };
  std::vector<std::vector<std::uint64_t>> offsets(flows.size());
  for (int i = 0; i < 500; ++i)
    for (auto& f : flows) {
      offsets[f.id].push_back(b.offset(f, Dir::to_server));
      out(f, Dir::to_server, http_request("GET", "/agents/" + std::to_string(i)));
      out(f, Dir::to_client, http_response(200, {}, std::to_string(i)));
    }
  ASSERT_GT(dropped, 100u);
  for (bool keep : {false, true}) {
    ReadLimits limits;
    limits.keep_unplaced = keep;
    const Read r = read_memory(b, limits);
    std::size_t complete = 0, unplaced = 0;
    for (const auto& e : r.exchanges) {
      if (!e.complete) continue;
      ++complete;
      ASSERT_TRUE(e.response);
      EXPECT_EQ(e.request.target, "/agents/" + e.response->body);  // never paired wrongly
      EXPECT_EQ(e.request_offset, offsets.at(e.client.port - 43000).at(std::stoul(e.response->body)));
      if (!e.place_known) {
        ++unplaced;
      } else {
        EXPECT_EQ(e.request.target, "/agents/" + std::to_string(e.sequence));  // in its place
      }
    }
    // Each dropped packet costs at most its exchange when places may be
    // unknown; else a loss in both directions costs the rest of its stream.
    // Each dropped packet costs at most its exchange.
    EXPECT_GE(complete + dropped, 16u * 500u) << complete << " complete, " << dropped << " dropped";
    EXPECT_GT(unplaced, 0u);
  }
}

TEST(ExchangesResync, PlacesLostInBothDirectionsWithoutOffsetsAreIncompleteUnlessKept) {
  // No SYN seen: no byte offsets either, so the exchanges after a loss in
  // both directions are incomplete, unless the reader keeps them.
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40033, "10.0.0.2", 80);
  for (int i = 0; i < 6; ++i) {
    const std::string req = http_request("GET", "/agents/" + std::to_string(i));
    const std::string answer = http_response(200, {}, std::to_string(i));
    if (i == 2) {
      b.skip(f, Dir::to_server, static_cast<std::uint32_t>(req.size()));
      b.skip(f, Dir::to_client, static_cast<std::uint32_t>(answer.size()));
      continue;
    }
    b.send(f, Dir::to_server, req, kT0 + (10 + 10 * i) * kMs);
    b.send(f, Dir::to_client, answer, kT0 + (12 + 10 * i) * kMs);
  }
  const Read strict = read_memory(b);
  ASSERT_EQ(strict.exchanges.size(), 5u) << describe(strict);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(strict.exchanges[i].complete, i < 2) << describe(strict);
    EXPECT_FALSE(strict.exchanges[i].request_offset);
  }
  EXPECT_NE(strict.exchanges[3].incomplete.find("place on the stream"), std::string::npos) << describe(strict);
  ReadLimits limits;
  limits.keep_unplaced = true;
  const Read r = read_memory(b, limits);
  ASSERT_EQ(r.exchanges.size(), 5u) << describe(r);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& e = r.exchanges[i];
    const std::size_t n = i < 2 ? i : i + 1;
    EXPECT_TRUE(e.complete) << describe(r);
    EXPECT_EQ(e.place_known, i < 2);
    EXPECT_EQ(e.request.target, "/agents/" + std::to_string(n));
    ASSERT_TRUE(e.response);
    EXPECT_EQ(e.response->body, std::to_string(n));
    EXPECT_EQ(e.wire_latency_ns(), 2 * kMs);
  }
}

TEST(ExchangesResync, CorruptedSequenceAndAckNumbersNeverHang) {
  // Acks and sequence numbers the reader must not believe blindly: random
  // bytes of the seq/ack fields overwritten; the read ends, memory returns.
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40034, "10.0.0.2", 80);
  b.handshake(f, kT0);
  for (int i = 0; i < 200; ++i) {
    b.send_split(f, Dir::to_server, http_request("POST", "/database/" + std::to_string(i), {}, std::string(40, 'v')), 30,
                 kT0 + (i + 1) * kMs);
    b.send_split(f, Dir::to_client, http_response(200, {}, std::to_string(i)), 25, kT0 + (i + 1) * kMs + 500);
  }
  std::uint64_t state = 99;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (int round = 0; round < 20; ++round) {
    ExchangeExtractor x([](WireExchange&&) {});
    std::uint64_t frame = 0;
    for (const auto& fr : b.built()) {
      std::string bytes = fr.bytes;
      if (next() % 10 == 0) bytes[14 + 20 + 4 + next() % 8] = static_cast<char>(next());  // seq or ack
      x.packet(b.dlt(), fr.ns, ++frame, bytes, fr.wire_length);
    }
    x.finish();
    EXPECT_EQ(x.open_streams(), 0u);
    EXPECT_EQ(x.buffered_bytes(), 0u);
  }
}

TEST(ExchangesStreams, StreamWithoutSynStartsAtTheFirstMessageStart) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40012, "10.0.0.2", 80);
  // No handshake: the capture began while an answer was on its way.
  b.skip(f, Dir::to_server, 1000);
  b.skip(f, Dir::to_client, 5000);
  b.send(f, Dir::to_client, "ue\"}\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", kT0);  // 1: tail + orphan answer
  b.send(f, Dir::to_server, http_request("GET", "/agents/3"), kT0 + 1 * kMs);                   // 2
  b.send(f, Dir::to_client, http_response(200, {}, R"({"id":3})"), kT0 + 2 * kMs);              // 3
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/agents/3");
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, R"({"id":3})");
  EXPECT_EQ(r.exchanges[0].client.port, 40012);
  EXPECT_EQ(r.exchanges[0].response_last.frame, 3u);
}

TEST(ExchangesStreams, FinishedTupleReusedBySynIsANewStream) {
  PcapBuilder b(LinkKind::ethernet);
  for (int i = 0; i < 2; ++i) {
    auto f = b.flow("10.0.0.1", 40013, "10.0.0.2", 80, 1000 + 100000 * i, 9000 + 100000 * i);
    const std::int64_t t = kT0 + i * 100 * kMs;
    b.handshake(f, t);
    b.send(f, Dir::to_server, http_request("GET", "/n/" + std::to_string(i)), t + 1 * kMs);
    b.send(f, Dir::to_client, http_response(200, {}, std::to_string(i)), t + 2 * kMs);
    b.fin(f, Dir::to_server, t + 3 * kMs);
    b.fin(f, Dir::to_client, t + 4 * kMs);
  }
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 2u) << describe(r);
  EXPECT_EQ(r.exchanges[0].stream, 0u);
  EXPECT_EQ(r.exchanges[1].stream, 1u);
  EXPECT_EQ(r.exchanges[1].sequence, 0u);
  EXPECT_EQ(r.summary.streams, 2u);
}

TEST(ExchangesStreams, ManyInterleavedStreamsPairEachAnswerWithItsRequest) {
  PcapBuilder b(LinkKind::ethernet);
  constexpr int kStreams = 60;
  std::vector<testing::Flow> flows;
  for (int i = 0; i < kStreams; ++i) flows.push_back(b.flow("10.0.0.1", static_cast<std::uint16_t>(41000 + i), "10.0.0.2", 80));
  std::int64_t t = kT0;
  for (auto& f : flows) b.handshake(f, t += kMs);
  for (int i = 0; i < kStreams; ++i)
    b.send(flows[i], Dir::to_server, http_request("GET", "/agents/" + std::to_string(i)), t += kMs);
  for (int i = kStreams - 1; i >= 0; --i)
    b.send(flows[i], Dir::to_client, http_response(200, {}, std::to_string(i)), t += kMs);
  for (auto& f : flows) {
    b.fin(f, Dir::to_server, t += kMs);
    b.fin(f, Dir::to_client, t += kMs);
  }
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), static_cast<std::size_t>(kStreams)) << describe(r);
  for (const auto& e : r.exchanges) {
    ASSERT_TRUE(e.response);
    EXPECT_EQ(e.request.target, "/agents/" + e.response->body);
    EXPECT_EQ(e.client.port, 41000 + e.stream);
    EXPECT_TRUE(e.complete) << e.incomplete;
  }
}

TEST(ExchangesStreams, ClosedStreamsFreeTheirMemory) {
  PcapBuilder b(LinkKind::ethernet);
  for (int i = 0; i < 200; ++i) {
    auto f = b.flow("10.0.0.1", static_cast<std::uint16_t>(20000 + i), "10.0.0.2", 80);
    const std::int64_t t = kT0 + i * 10 * kMs;
    b.handshake(f, t);
    const std::string req = http_request("GET", "/agents");
    b.send_at(f, Dir::to_server, 5, req.substr(5), t + 1 * kMs);  // held out of order
    b.send_at(f, Dir::to_server, 0, req.substr(0, 5), t + 2 * kMs);
    b.skip(f, Dir::to_server, static_cast<std::uint32_t>(req.size()));
    b.send(f, Dir::to_client, http_response(200, {}, "[]"), t + 3 * kMs);
    b.fin(f, Dir::to_server, t + 4 * kMs);
    b.fin(f, Dir::to_client, t + 5 * kMs);
  }
  std::size_t seen = 0, max_open = 0, max_buffered = 0;
  ExchangeExtractor x([&](WireExchange&&) { ++seen; });
  std::uint64_t frame = 0;
  for (const auto& f : b.built()) {
    x.packet(b.dlt(), f.ns, ++frame, f.bytes, f.wire_length);
    max_open = std::max(max_open, x.open_streams());
    max_buffered = std::max(max_buffered, x.buffered_bytes());
    if (frame % 8 == 0) {  // each stream is 8 frames: after its last FIN nothing stays
      EXPECT_EQ(x.open_streams(), 0u) << "after frame " << frame;
      EXPECT_EQ(x.buffered_bytes(), 0u) << "after frame " << frame;
    }
  }
  x.finish();
  EXPECT_EQ(seen, 200u);
  EXPECT_EQ(max_open, 1u);
  EXPECT_GT(max_buffered, 0u);  // the out-of-order segment was held, then released
  EXPECT_LT(max_buffered, 100u);
}

TEST(ExchangesLimits, HeldBytesBeyondTheStreamBoundBecomeAGap) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40020, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents/1"), kT0 + 1 * kMs);
  const std::string answer = http_response(200, {}, std::string(400, 'y'));
  // The first 10 bytes never come; the rest is held until the bound is passed.
  b.send_at(f, Dir::to_client, 10, answer.substr(10, 200), kT0 + 2 * kMs);  // frame 5
  b.send_at(f, Dir::to_client, 210, answer.substr(210), kT0 + 3 * kMs);     // frame 6
  ReadLimits limits;
  limits.stream_buffer_bytes = 300;
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); }, limits);
  std::uint64_t frame = 0;
  for (const auto& fr : b.built()) x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
  // Handed out as soon as the bound declared the gap, before the capture ends.
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_LE(x.buffered_bytes(), 300u);
  EXPECT_FALSE(r.exchanges[0].complete);
  EXPECT_NE(r.exchanges[0].incomplete.find("gap of 10 bytes"), std::string::npos) << r.exchanges[0].incomplete;
  x.finish();
  EXPECT_EQ(x.buffered_bytes(), 0u);
}

TEST(ExchangesLimits, IdleStreamIsClosedByCaptureTime) {
  PcapBuilder b(LinkKind::ethernet);
  auto quiet = b.flow("10.0.0.1", 40021, "10.0.0.2", 80);
  b.handshake(quiet, kT0);
  b.send(quiet, Dir::to_server, http_request("GET", "/never/answered"), kT0 + 1 * kMs);
  auto busy = b.flow("10.0.0.1", 40022, "10.0.0.2", 80);
  for (int i = 0; i < 20; ++i) b.send(busy, Dir::to_server, http_request("GET", "/x"), kT0 + (10 + i) * 1000 * kMs);
  ReadLimits limits;
  limits.idle_close_ns = 5'000 * kMs;
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.exchanges.push_back(std::move(e)); }, limits);
  std::uint64_t frame = 0;
  for (const auto& fr : b.built()) x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
  ASSERT_GE(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/never/answered");
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_NE(r.exchanges[0].incomplete.find("idle"), std::string::npos) << r.exchanges[0].incomplete;
  EXPECT_EQ(x.open_streams(), 1u);
}

TEST(ExchangesLimits, RequestsWithoutAnswersAreHandedOutAndStayBounded) {
  // Only the client's side captured (tcpdump dst port 8080, a one-way mirror):
  // no answer ever comes, yet exchanges flow out and memory stays flat.
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40030, "10.0.0.2", 8080);
  b.segment(f, Dir::to_server, 1000, 0, testing::kSyn, {}, kT0);
  constexpr int kRequests = 20'000;
  for (int i = 0; i < kRequests; ++i)
    b.send(f, Dir::to_server, http_request("POST", "/agents/" + std::to_string(i), {}, std::string(100, 'b')),
           kT0 + (i + 1) * 1000);
  std::vector<WireExchange> out;
  ExchangeExtractor x([&](WireExchange&& e) { out.push_back(std::move(e)); });
  std::uint64_t frame = 0;
  std::size_t max_queued = 0;
  for (const auto& fr : b.built()) {
    x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
    max_queued = std::max(max_queued, x.queued_bytes() + x.buffered_bytes());
  }
  const std::size_t before_finish = out.size();
  EXPECT_GE(before_finish, static_cast<std::size_t>(kRequests - 1024));
  EXPECT_LT(max_queued, 1024u * 1024u);  // about 1,024 requests of ~300 bytes, not 20,000
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].request.target, "/agents/0");
  EXPECT_EQ(out[0].sequence, 0u);
  EXPECT_FALSE(out[0].complete);
  EXPECT_FALSE(out[0].response);
  EXPECT_NE(out[0].incomplete.find("no answer seen within 1024 requests"), std::string::npos) << out[0].incomplete;
  x.finish();
  ASSERT_EQ(out.size(), static_cast<std::size_t>(kRequests));
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i].sequence, i);
  EXPECT_EQ(x.queued_bytes(), 0u);
  EXPECT_EQ(x.buffered_bytes(), 0u);
}

TEST(ExchangesLimits, AnswersToRequestsHandedOutUnansweredAreNotPairedWithLaterOnes) {
  // A server far behind a pipelining client: the first requests are handed
  // out unanswered; their late answers must not pair with later requests.
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40031, "10.0.0.2", 8080);
  b.handshake(f, kT0);
  for (int i = 0; i < 6; ++i) b.send(f, Dir::to_server, http_request("GET", "/r/" + std::to_string(i)), kT0 + (i + 1) * kMs);
  for (int i = 0; i < 6; ++i)
    b.send(f, Dir::to_client, http_response(200, {}, std::to_string(i)), kT0 + (10 + i) * kMs);
  ReadLimits limits;
  limits.max_waiting_requests = 4;
  const Read r = read_memory(b, limits);
  ASSERT_EQ(r.exchanges.size(), 6u) << describe(r);
  for (const auto& e : r.exchanges) {
    if (e.response) {
      EXPECT_EQ(e.request.target, "/r/" + e.response->body) << describe(r);
    }
  }
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_FALSE(r.exchanges[1].response);
  ASSERT_TRUE(r.exchanges[5].response) << describe(r);
}

TEST(ExchangesLimits, ManyConnectionAttemptsStayWithinTheStreamBound) {
  EXPECT_LE(ReadLimits{}.max_streams, 100'000u);  // fits the default memory budget
  // 50,000 SYNs never answered (a scan, a SYN flood, a dead server), then one
  // real exchange: eviction is O(1), so this reads in milliseconds.
  PcapBuilder b(LinkKind::ethernet);
  for (int i = 0; i < 50'000; ++i) {
    auto f = b.flow(i % 2 ? "10.0.1.1" : "10.0.1.2", static_cast<std::uint16_t>(10000 + i / 2), "10.0.0.2", 8080);
    b.segment(f, Dir::to_server, 1000, 0, testing::kSyn, {}, kT0 + i * 1000);
  }
  auto real = b.flow("10.0.0.9", 40032, "10.0.0.2", 8080);
  b.handshake(real, kT0 + 60 * kMs);
  b.send(real, Dir::to_server, http_request("GET", "/agents/9"), kT0 + 61 * kMs);
  b.send(real, Dir::to_client, http_response(200, {}, "9"), kT0 + 62 * kMs);
  ReadLimits limits;
  limits.max_streams = 1000;
  std::vector<WireExchange> out;
  ExchangeExtractor x([&](WireExchange&& e) { out.push_back(std::move(e)); }, limits);
  std::uint64_t frame = 0;
  std::size_t max_open = 0;
  for (const auto& fr : b.built()) {
    x.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
    max_open = std::max(max_open, x.open_streams());
  }
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].request.target, "/agents/9");
  EXPECT_TRUE(out[0].complete) << out[0].incomplete;
  EXPECT_EQ(max_open, 1000u);
  EXPECT_EQ(x.summary().streams_cut, 50'001u - 1000u);
  x.finish();
  EXPECT_EQ(x.open_streams(), 0u);

  // Open streams count in the memory budget: 1 MiB holds a few hundred.
  limits = {};
  limits.total_buffer_bytes = 1024 * 1024;
  ExchangeExtractor y([](WireExchange&&) {}, limits);
  frame = 0;
  max_open = 0;
  for (const auto& fr : b.built()) {
    y.packet(b.dlt(), fr.ns, ++frame, fr.bytes, fr.wire_length);
    max_open = std::max(max_open, y.open_streams());
  }
  EXPECT_GT(max_open, 10u);
  EXPECT_LT(max_open, 1024u);
  y.finish();
}

TEST(ExchangesLimits, BodyBeyondTheBoundIsIncomplete) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40023, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents"), kT0 + 1 * kMs);
  b.send(f, Dir::to_client, http_response(200, {}, std::string(100, 'z')), kT0 + 2 * kMs);
  ReadLimits limits;
  limits.body_bytes = 50;
  const Read r = read_memory(b, limits);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_FALSE(r.exchanges[0].complete);
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_FALSE(r.exchanges[0].incomplete.empty());
}

TEST(ExchangesStreams, NonHttpStreamIsListedAsUnparsed) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40014, "10.0.0.2", 22);
  b.handshake(f, kT0);
  b.send(f, Dir::to_client, "SSH-2.0-OpenSSH_9.2\r\n", kT0 + 1 * kMs);
  b.send(f, Dir::to_server, "SSH-2.0-OpenSSH_9.2\r\n", kT0 + 2 * kMs);
  b.send(f, Dir::to_server, std::string(200, '\x07'), kT0 + 3 * kMs);
  simple_exchange(b, "10.0.0.3", "10.0.0.4");
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  ASSERT_EQ(r.summary.unparsed_count, 1u) << describe(r);
  ASSERT_EQ(r.summary.unparsed.size(), 1u);
  EXPECT_EQ(r.summary.unparsed[0].stream, 0u);
  EXPECT_EQ(r.summary.unparsed[0].first_frame, 1u);
  EXPECT_EQ(r.summary.unparsed[0].server.port, 22);
  EXPECT_FALSE(r.summary.unparsed[0].why.empty());
}

TEST(ExchangesDecode, TruncatedFrameMakesAGap) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40015, "10.0.0.2", 80);
  b.handshake(f, kT0);
  b.send(f, Dir::to_server, http_request("GET", "/agents/1"), kT0 + 1 * kMs);
  const std::string answer = http_response(200, {}, std::string(3000, 'x'));
  b.send_truncated(f, Dir::to_client, answer, 200, kT0 + 2 * kMs);  // frame 5
  const Read r = read_memory(b);
  EXPECT_EQ(r.summary.truncated_packets, 1u);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_FALSE(r.exchanges[0].complete);
  EXPECT_FALSE(r.exchanges[0].response);
  EXPECT_NE(r.exchanges[0].incomplete.find("gap of"), std::string::npos) << r.exchanges[0].incomplete;
  EXPECT_NE(r.exchanges[0].incomplete.find("frame 5"), std::string::npos) << r.exchanges[0].incomplete;
}

TEST(ExchangesDecode, IpFragmentsAreCountedAndSkipped) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("10.0.0.1", 40016, "10.0.0.2", 80);
  std::string ip = b.ip_packet(f, Dir::to_server, 1, 0, testing::kAck, "GET / HTTP/1.1\r\n");
  ip[6] = 0x20;  // more fragments
  ip[7] = 0;
  b.ip_frame(false, ip, kT0);
  b.raw_frame(std::string(60, '\0'), kT0 + 1);  // not IP at all
  const Read r = read_memory(b);
  EXPECT_EQ(r.summary.fragments_skipped, 1u);
  EXPECT_EQ(r.summary.skipped_packets, 2u);
  EXPECT_EQ(r.summary.tcp_packets, 0u);
}

TEST(ExchangesDecode, Ipv6ExtensionHeadersAreSkipped) {
  PcapBuilder b(LinkKind::raw);
  auto f = b.flow("2001:db8::1", 40017, "2001:db8::2", 80);
  auto with_hop_by_hop = [&](Dir d, std::uint32_t seq, std::uint32_t ack, std::uint8_t flags, std::string_view payload) {
    std::string ip = b.ip_packet(f, d, seq, ack, flags, payload);
    std::string hop("\x06\x00\x01\x04\x00\x00\x00\x00", 8);  // next: TCP, 8 bytes, PadN
    ip[6] = 0;                                                // next header: hop-by-hop
    const std::uint16_t length = static_cast<std::uint16_t>(((static_cast<unsigned char>(ip[4]) << 8) | static_cast<unsigned char>(ip[5])) + 8);
    ip[4] = static_cast<char>(length >> 8);
    ip[5] = static_cast<char>(length & 0xff);
    ip.insert(40, hop);
    b.ip_frame(true, ip, kT0);
  };
  const std::string req = http_request("GET", "/v6");
  const std::string answer = http_response(200, {}, "six");
  with_hop_by_hop(Dir::to_server, 1001, 0, testing::kAck, req);
  with_hop_by_hop(Dir::to_client, 5001, 1001 + static_cast<std::uint32_t>(req.size()), testing::kAck, answer);
  const Read r = read_memory(b);
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/v6");
  EXPECT_EQ(r.exchanges[0].client.address, "2001:db8::1");
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, "six");
}

bool have_program(const char* name) {
  const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(ExchangesFiles, PcapngWrittenByTsharkReadsTheSame) {
  if (!have_program("tshark")) GTEST_SKIP() << "tshark is not installed: cannot write a pcapng file to read";
  const std::string pcap = temp_path("in.pcap"), pcapng = temp_path("out.pcapng");
  {
    PcapBuilder b(LinkKind::ethernet, pcap);
    simple_exchange(b, "10.0.0.1", "10.0.0.2");
  }
  std::filesystem::remove(pcapng);
  const std::string cmd = "tshark -r '" + pcap + "' -F pcapng -w '" + pcapng + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "failed: " << cmd;
  const Read r = read_file(pcapng);
  EXPECT_EQ(r.summary.format, "pcapng");
  ASSERT_EQ(r.exchanges.size(), 1u) << describe(r);
  EXPECT_EQ(r.exchanges[0].request.target, "/agents/7");
  EXPECT_EQ(r.exchanges[0].response_last.frame, 5u);
  EXPECT_EQ(r.exchanges[0].response_last.ns, kT0 + 3 * kMs);
}

TEST(ExchangesFiles, BuiltCaptureIsDissectedAsHttpByTshark) {
  if (!have_program("tshark")) GTEST_SKIP() << "tshark is not installed";
  const std::string pcap = temp_path("in.pcap"), out = temp_path("tshark.txt");
  {
    PcapBuilder b(LinkKind::sll2, pcap);
    simple_exchange(b, "127.0.0.1", "127.0.0.1");
  }
  const std::string cmd = "tshark -r '" + pcap + "' -d tcp.port==8080,http -Y http -T fields -e frame.number -e http.request.uri -e http.response.code > '" + out + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "failed: " << cmd;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("4\t/agents/7"), std::string::npos) << text;
  EXPECT_NE(text.find("5\t\t200"), std::string::npos) << text;
}

TEST(ExchangesFiles, MissingFileIsACaptureFileError) {
  EXPECT_THROW(read_file(temp_path("does-not-exist.pcap")), CaptureFileError);
}

TEST(ExchangesFiles, TcpdumpCaptureOfLoopbackExchangeReads) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: tcpdump cannot capture on lo";
  if (!have_program("tcpdump")) GTEST_SKIP() << "tcpdump is not installed";
  crh::test::ScriptedServer server([](int fd, const std::atomic<bool>&) {
    crh::test::ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
  });
  const std::string path = temp_path("tcpdump.pcap");
  const std::string log = temp_path("tcpdump.log");
  std::filesystem::remove(path);
  std::filesystem::remove(log);  // an earlier run's "listening on" must not count
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::freopen(log.c_str(), "w", stderr);
    const std::string filter = "tcp port " + std::to_string(server.port());
    execlp("tcpdump", "tcpdump", "--immediate-mode", "-i", "lo", "-U", "-s", "262144", "-w", path.c_str(), filter.c_str(), (char*)nullptr);
    _exit(127);
  }
  // tcpdump says "listening on lo" once its filter is attached (from then on
  // it sees every packet), and has written its file's header.
  const bool ready = crh::test::wait_for_text(log, "listening on", std::chrono::seconds(20)) &&
                     crh::test::wait_for_file(path, 24, std::chrono::seconds(5));  // a pcap file's header
  if (!ready) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "tcpdump did not say \"listening on\" within 20 s, or wrote no file header within 5 s more";
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string req = "GET /tcpdump/check HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
  char buf[512];
  std::size_t got = 0;
  for (int i = 0; i < 100 && got < 45; ++i) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fd);
  // Wait (bounded) until tcpdump has written the answer, then stop it.
  Read r;
  for (int i = 0; i < 100; ++i) {
    r = read_file(path);
    if (!r.exchanges.empty() && r.exchanges[0].response) break;
    usleep(50'000);
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  r = read_file(path);
  ASSERT_GE(r.exchanges.size(), 1u) << describe(r) << "\n(tcpdump status " << status << ")";
  EXPECT_EQ(r.exchanges[0].request.target, "/tcpdump/check");
  ASSERT_TRUE(r.exchanges[0].response);
  EXPECT_EQ(r.exchanges[0].response->body, "{\"a\":1}");
  EXPECT_GT(r.exchanges[0].request_first.frame, 0u);
  ASSERT_TRUE(r.exchanges[0].wire_latency_ns());
  EXPECT_GE(*r.exchanges[0].wire_latency_ns(), 0);
}

}  // namespace
}  // namespace crh::capture
