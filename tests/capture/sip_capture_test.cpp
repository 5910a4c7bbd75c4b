// Tests of SIP in captures (issue 26): UDP datagrams over IPv4 and IPv6 and
// TCP streams split across segments read as SIP messages; malformed SIP
// counted as unreadable, never a crash; digest credentials overwritten in
// saved packets byte for byte, checksums kept valid.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "capture/exchanges.hpp"
#include "capture/live.hpp"
#include "capture/packet_redaction.hpp"
#include "capture/sip_redaction.hpp"
#include "pcap_builder.hpp"
#include "sip_frames.hpp"

namespace crh::capture::sip_capture_test {
namespace {

using testing::command_output;
using testing::Dir;
using testing::LinkKind;
using testing::PcapBuilder;
using testing::SipCall;

struct Read {
  std::vector<WireSipMessage> sip;
  std::vector<WireExchange> http;
  ReadSummary summary;
};

Read read(const PcapBuilder& b) {
  Read r;
  ExchangeExtractor x([&](WireExchange&& e) { r.http.push_back(std::move(e)); }, {},
                      [&](WireSipMessage&& m) { r.sip.push_back(std::move(m)); });
  std::uint64_t frame = 0;
  for (const auto& f : b.built()) x.packet(b.dlt(), f.ns, ++frame, f.bytes, f.wire_length);
  x.finish();
  r.summary = x.summary();
  return r;
}

TEST(SipCapture, UdpDatagramsOverIpv4AndIpv6AreReadAsSip) {
  for (auto link : {LinkKind::ethernet, LinkKind::sll2, LinkKind::raw}) {
    PcapBuilder b(link);
    SipCall c;
    b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 5060, testing::sip_invite(c)), 1000);
    b.ip_frame(true, testing::udp_packet("::1", 5060, "::1", 40000, testing::sip_answer(c, 200)), 2000);
    b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 53, "not sip"), 3000);
    const auto r = read(b);
    ASSERT_EQ(r.sip.size(), 2u) << testing::to_string(link);
    ASSERT_TRUE(r.sip[0].message);
    EXPECT_EQ(r.sip[0].message->method, "INVITE");
    EXPECT_FALSE(r.sip[0].tcp);
    EXPECT_EQ(r.sip[0].source.address, "127.0.0.1");
    EXPECT_EQ(r.sip[0].destination.port, 5060);
    EXPECT_EQ(r.sip[0].at.frame, 1u);
    ASSERT_TRUE(r.sip[1].message);
    EXPECT_EQ(r.sip[1].message->status, 200u);
    EXPECT_EQ(r.sip[1].source.address, "::1");
    EXPECT_FALSE(r.sip[1].message->body.empty());
    EXPECT_EQ(r.summary.udp_packets, 3u);
    EXPECT_EQ(r.summary.sip_messages, 2u);
    EXPECT_EQ(r.summary.skipped_packets, 1u);  // the DNS-port datagram
  }
}

TEST(SipCapture, TcpStreamSplitAcrossSegmentsIsReassembled) {
  PcapBuilder b(LinkKind::ethernet);
  auto f = b.flow("127.0.0.1", 40001, "127.0.0.1", 5060);
  b.handshake(f, 1000);
  SipCall c;
  // Two messages in one direction, cut at every 7 bytes: framing by Content-Length.
  b.send_split(f, Dir::to_server, testing::sip_invite(c) + testing::sip_request(c, "ACK"), 7, 10'000);
  b.send_split(f, Dir::to_client, testing::sip_answer(c, 100) + testing::sip_answer(c, 200), 11, 20'000);
  b.fin(f, Dir::to_server, 30'000);
  b.fin(f, Dir::to_client, 31'000);
  const auto r = read(b);
  EXPECT_TRUE(r.http.empty());
  EXPECT_EQ(r.summary.unparsed_count, 0u);
  EXPECT_EQ(r.summary.sip_streams, 1u);
  ASSERT_EQ(r.sip.size(), 4u);
  std::vector<std::string> seen;
  for (const auto& m : r.sip) {
    ASSERT_TRUE(m.message) << m.error;
    EXPECT_TRUE(m.tcp);
    seen.push_back(m.message->request ? m.message->method : std::to_string(m.message->status));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"INVITE", "ACK", "100", "200"}));
  EXPECT_EQ(r.sip[0].message->find("Call-ID") ? *r.sip[0].message->find("Call-ID") : "", c.call_id);
}

TEST(SipCapture, MalformedSipIsCountedUnreadableNeverACrash) {
  PcapBuilder b(LinkKind::ethernet);
  b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 5060, "INVITE sip:1@h SIP/2.0\r\nno colon\r\n\r\n"),
             1000);
  b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 5060, "SIP/2.0 2x0 Bad\r\n\r\n"), 2000);
  b.ip_frame(false, testing::udp_packet("127.0.0.1", 40000, "127.0.0.1", 5060, std::string(3, '\0')), 3000);
  // Over TCP a message without Content-Length cannot be framed: the direction is broken, once.
  auto f = b.flow("127.0.0.1", 40002, "127.0.0.1", 5060);
  b.handshake(f, 4000);
  b.send(f, Dir::to_server, "OPTIONS sip:1@h SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\nCall-ID: x\r\n\r\n", 5000);
  b.send(f, Dir::to_server, std::string(5000, 'G'), 6000);
  b.fin(f, Dir::to_server, 7000);
  const auto r = read(b);
  EXPECT_EQ(r.summary.sip_unreadable, 3u);
  EXPECT_EQ(r.summary.sip_messages, 0u);
  for (const auto& m : r.sip) {
    EXPECT_FALSE(m.message);
    EXPECT_FALSE(m.error.empty());
  }
}

TEST(SipCapture, FilterRecordsTheSipPortOverUdpAndTcpBesideHttp) {
  const auto filter = detail::capture_filter({"127.0.0.1"}, 8080, {"127.0.0.1", "::1"}, 5060);
  EXPECT_EQ(filter,
            "(tcp and host 127.0.0.1 and port 8080) or ((tcp or udp) and (host 127.0.0.1 or host ::1) and port 5060)");
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  bpf_program program{};
  EXPECT_EQ(pcap_compile(dead, &program, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN), 0) << pcap_geterr(dead);
  pcap_freecode(&program);
  pcap_close(dead);
}

// ---- redaction ----

const std::string kAuth =
    "Authorization: Digest username=\"alice\", realm=\"crh\", nonce=\"n0nce\", uri=\"sip:+15559999@127.0.0.1\", "
    "response=\"6629fae49393a05397450978507c4ef1\", cnonce=\"0a4f113b\", qop=auth, nc=00000001\r\n";

bool masked(std::string_view bytes, std::string_view secret) { return bytes.find(secret) == std::string_view::npos; }

TEST(SipRedaction, DigestValuesInUdpAreOverwrittenAndTheChecksumStaysValid) {
  for (const char* addr : {"127.0.0.1", "::1"}) {
    SipCall c;
    const std::string msg = testing::sip_invite(c, kAuth + "Proxy-Authorization: Digest response=tok3n99, cnonce=\"cc\"\r\n");
    std::string ip = testing::udp_packet(addr, 40000, addr, 5060, msg);
    std::string frame = std::string(addr[0] == ':' ? "\x00\x00\x00\x1e" : "\x00\x00\x00\x02", 4) + ip;  // DLT_NULL
    const std::string before = frame;
    std::vector<unsigned char> bytes(frame.begin(), frame.end());
    detail::PacketRedactor redactor("some-api-key-0123456789", 8080);
    const auto result = redactor.redact(0 /* DLT_NULL */, bytes);
    const std::string after(bytes.begin(), bytes.end());
    EXPECT_EQ(after.size(), before.size());
    EXPECT_TRUE(masked(after, "6629fae49393a05397450978507c4ef1")) << addr;
    EXPECT_TRUE(masked(after, "0a4f113b"));
    EXPECT_TRUE(masked(after, "tok3n99"));
    EXPECT_NE(after.find("response=\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\""), std::string::npos);
    EXPECT_NE(after.find("username=\"alice\""), std::string::npos);  // not a secret: kept readable
    EXPECT_NE(after.find("nonce=\"n0nce\""), std::string::npos);
    EXPECT_EQ(result.digests, 4u);
    EXPECT_TRUE(result.checksum_recomputed);
    const bool v6 = addr[0] == ':';
    const auto* ipb = bytes.data() + 4;
    const std::size_t ihl = v6 ? 40 : 20;
    EXPECT_EQ(detail::udp_checksum_fold(v6, ipb + (v6 ? 8 : 12), ipb + (v6 ? 24 : 16),
                                        std::span<const unsigned char>(ipb + ihl, bytes.size() - 4 - ihl)),
              0xFFFF);
  }
}

TEST(SipRedaction, DigestValueSplitAcrossTcpSegmentsIsOverwrittenInEach) {
  SipCall c;
  const std::string msg = testing::sip_invite(c, kAuth);
  const auto at = msg.find("6629fae4");
  for (std::size_t cut : {at - 3, at + 1, at + 16, at + 31}) {
    PcapBuilder b(LinkKind::raw);
    auto f = b.flow("127.0.0.1", 40003, "127.0.0.1", 5060);
    b.handshake(f, 1000);
    b.send(f, Dir::to_server, std::string_view(msg).substr(0, cut), 2000);
    b.send(f, Dir::to_server, std::string_view(msg).substr(cut), 3000);
    // Both halves retransmitted: read from the state where their first copies began.
    b.send_at(f, Dir::to_server, 0, std::string_view(msg).substr(0, cut), 4000);
    b.send_at(f, Dir::to_server, static_cast<std::uint32_t>(cut), std::string_view(msg).substr(cut), 5000);
    detail::PacketRedactor redactor("some-api-key-0123456789", 8080);
    std::string payloads;
    for (const auto& frame : b.built()) {
      std::vector<unsigned char> bytes(frame.bytes.begin(), frame.bytes.end());
      redactor.redact(b.dlt(), bytes);
      const std::string edited(bytes.begin(), bytes.end());
      EXPECT_EQ(edited.size(), frame.bytes.size());
      payloads += edited;
    }
    for (std::string_view piece : {"6629", "fae4", "4ef1", "0a4f113b"})
      EXPECT_TRUE(masked(payloads, piece)) << "cut at " << cut << ": " << piece;
    EXPECT_NE(payloads.find("username=\"alice\""), std::string::npos);
  }
}

TEST(SipRedaction, ScannerLeavesOtherHeadersAndQuotedLookalikesAlone) {
  std::string text =
      "Subject: response=\"keep\"\r\nWWW-Authenticate: Digest realm=\"r\", nonce=\"n\"\r\n"
      "Authorization: Digest username=\"response=x\", response=abc123\r\n\tcnonce=\"folded\"\r\n\r\n";
  std::vector<unsigned char> bytes(text.begin(), text.end());
  detail::DigestScanner scanner;
  bool edited = false;
  EXPECT_EQ(scanner.scan(bytes.data(), bytes.size(), edited), 2u);
  const std::string after(bytes.begin(), bytes.end());
  EXPECT_NE(after.find("Subject: response=\"keep\""), std::string::npos);
  EXPECT_NE(after.find("username=\"response=x\""), std::string::npos);
  EXPECT_NE(after.find("response=xxxxxx\r\n"), std::string::npos);
  EXPECT_NE(after.find("cnonce=\"xxxxxx\""), std::string::npos);
}

TEST(SipRedaction, TsharkDissectsRedactedSipOverUdpAndTcpWithNothingMalformed) {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "tshark is not installed";
  const std::string path = ::testing::TempDir() + "/sip_tshark_test.pcap";
  {
    PcapBuilder b(LinkKind::ethernet, path);
    detail::PacketRedactor redactor("some-api-key-0123456789", 8080);
    SipCall c;
    for (const char* addr : {"127.0.0.1", "::1"}) {
      std::string ip = testing::udp_packet(addr, 40000, addr, 5060, testing::sip_invite(c, kAuth));
      std::vector<unsigned char> bytes(ip.begin(), ip.end());
      redactor.redact(DLT_RAW, bytes);
      b.ip_frame(addr[0] == ':', std::string(bytes.begin(), bytes.end()), 1000);
      b.ip_frame(addr[0] == ':', testing::udp_packet(addr, 5060, addr, 40000, testing::sip_answer(c, 200)), 2000);
    }
    auto f = b.flow("127.0.0.1", 40003, "127.0.0.1", 5060);
    b.handshake(f, 3000);
    b.send_split(f, Dir::to_server, testing::sip_invite(c), 200, 4000);
    b.send(f, Dir::to_client, testing::sip_answer(c, 403), 5000);
  }
  // Every response value tshark reads is the mask.
  const std::string tshark = "tshark -r " + path + " -d udp.port==5060,sip -d tcp.port==5060,sip ";
  const std::string sip = command_output(tshark + "-Y sip 2>/dev/null");
  EXPECT_GE(std::count(sip.begin(), sip.end(), '\n'), 5) << sip;
  EXPECT_EQ(command_output(tshark + "-Y _ws.malformed 2>/dev/null"), "");
  const std::string responses = command_output(tshark + "-Y sip.auth -T fields -e sip.auth.digest.response 2>/dev/null");
  EXPECT_NE(responses.find("xxxxxxxx"), std::string::npos) << responses;
  EXPECT_EQ(responses.find("6629"), std::string::npos) << responses;
}

}  // namespace
}  // namespace crh::capture::sip_capture_test
