// Tests of capture/live: the key overwritten in crafted packets (whole, split
// at every point, retransmitted, out of order, in a body; checksums), and a
// live capture on loopback as root, checked byte for byte and with tshark.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <netdb.h>

#include "capture/live.hpp"
#include "capture/packet_redaction.hpp"
#include "reference/server.hpp"

namespace crh::capture {
namespace {

using Bytes = std::vector<unsigned char>;
constexpr std::uint16_t kServerPort = 8080;
constexpr std::uint16_t kClientPort = 40000;
const std::string kKey = "k3y-0123456789abcdef-SECRET-fedcba9876543210";

struct Segment {
  bool ipv6 = false;
  std::uint16_t sport = kClientPort, dport = kServerPort;
  std::uint32_t seq = 1000;
  bool syn = false;
  std::string payload;
  bool valid_checksum = false;  // else 0, as loopback's offload leaves it
  std::uint8_t flags = 0;       // 0: SYN when syn, else PSH|ACK
  std::uint32_t ack = 0;
};

void put16(Bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<unsigned char>(v >> 8);
  b[at + 1] = static_cast<unsigned char>(v);
}

// An Ethernet frame carrying the segment.
Bytes frame(const Segment& s) {
  const std::size_t ip_len = s.ipv6 ? 40 : 20, tcp_len = 20 + s.payload.size();
  Bytes b(14 + ip_len + tcp_len, 0);
  put16(b, 12, s.ipv6 ? 0x86DD : 0x0800);
  unsigned char* ip = &b[14];
  if (s.ipv6) {
    ip[0] = 0x60;
    put16(b, 14 + 4, static_cast<std::uint16_t>(tcp_len));
    ip[6] = 6;
    ip[7] = 64;
    ip[8 + 15] = 1;   // ::1
    ip[24 + 15] = 1;  // ::1
  } else {
    ip[0] = 0x45;
    put16(b, 14 + 2, static_cast<std::uint16_t>(ip_len + tcp_len));
    ip[8] = 64;
    ip[9] = 6;
    ip[12] = ip[16] = 127;
    ip[15] = ip[19] = 1;
  }
  const std::size_t t = 14 + ip_len;
  put16(b, t, s.sport);
  put16(b, t + 2, s.dport);
  for (int i = 0; i < 4; ++i) b[t + 4 + i] = static_cast<unsigned char>(s.seq >> (24 - 8 * i));
  b[t + 12] = 5 << 4;
  for (int i = 0; i < 4; ++i) b[t + 8 + i] = static_cast<unsigned char>(s.ack >> (24 - 8 * i));
  b[t + 13] = s.flags != 0 ? s.flags : (s.syn ? 0x02 : 0x18);
  std::copy(s.payload.begin(), s.payload.end(), b.begin() + static_cast<long>(t + 20));
  if (s.valid_checksum) {
    const auto sum = static_cast<std::uint16_t>(~detail::tcp_checksum_fold(
        s.ipv6, ip + (s.ipv6 ? 8 : 12), ip + (s.ipv6 ? 24 : 16), std::span<const unsigned char>(&b[t], tcp_len)));
    put16(b, t + 16, sum);
  }
  return b;
}

std::string payload_of(const Bytes& b, bool ipv6 = false) {
  return std::string(b.begin() + (14 + (ipv6 ? 40 : 20) + 20), b.end());
}

bool checksum_valid(const Bytes& b, bool ipv6) {
  const unsigned char* ip = &b[14];
  const std::size_t t = 14 + (ipv6 ? 40 : 20);
  return detail::tcp_checksum_fold(ipv6, ip + (ipv6 ? 8 : 12), ip + (ipv6 ? 24 : 16),
                                   std::span<const unsigned char>(&b[t], b.size() - t)) == 0xFFFF;
}

// Sends `request` as two segments cut at `cut`, in the order given, through a
// fresh redactor; returns the two payloads as they would be saved.
std::pair<std::string, std::string> split_through(const std::string& request, std::size_t cut, bool second_first,
                                                  const std::string& key = kKey) {
  detail::PacketRedactor redactor(key, kServerPort);
  Bytes syn = frame({.seq = 999, .syn = true});
  redactor.redact(DLT_EN10MB, syn);
  Bytes a = frame({.seq = 1000, .payload = request.substr(0, cut)});
  Bytes b = frame({.seq = static_cast<std::uint32_t>(1000 + cut), .payload = request.substr(cut)});
  if (second_first) {
    redactor.redact(DLT_EN10MB, b);
    redactor.redact(DLT_EN10MB, a);
  } else {
    redactor.redact(DLT_EN10MB, a);
    redactor.redact(DLT_EN10MB, b);
  }
  return {payload_of(a), payload_of(b)};
}

std::string request_with(const std::string& value) {
  return "GET /local-agents HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nApikey: " + value + "\r\nAccept: */*\r\n\r\n";
}
std::string redacted_request(const std::string& value) { return request_with(std::string(value.size(), 'x')); }

TEST(PacketRedaction, WholeApikeyValueOverwrittenInPlace) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  Bytes p = frame({.payload = request_with(kKey)});
  const auto size = p.size();
  const auto r = redactor.redact(DLT_EN10MB, p);
  EXPECT_EQ(p.size(), size);
  EXPECT_EQ(payload_of(p), redacted_request(kKey));
  EXPECT_TRUE(r.edited);
  EXPECT_GE(r.values, 1u);
}

TEST(PacketRedaction, ApikeyHeaderNameInAnyCaseIsFound) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  const std::string wrong = "a-wrong-key-that-is-still-sent";
  std::string req = request_with(wrong);
  req.replace(req.find("Apikey"), 6, "aPIKEY");
  Bytes p = frame({.payload = req});
  redactor.redact(DLT_EN10MB, p);
  EXPECT_EQ(payload_of(p).find(wrong), std::string::npos) << payload_of(p);
}

// Every cut of the request, the header name's and the value's included, in
// order: the saved bytes are the request with the value overwritten. A value
// that is not the key proves the header tracking, not the raw search; seen
// whole in one segment (with its line end) it is filled apart, with '*'.
TEST(PacketRedaction, ValueSplitAcrossTwoSegmentsAtEveryPoint) {
  for (const std::string& value : {kKey, std::string("near-miss-value-only-the-header-says-secret")}) {
    const std::string req = request_with(value);
    const std::size_t begin = req.find(value), end = begin + value.size();
    for (std::size_t cut = 1; cut < req.size(); ++cut) {
      const auto [a, b] = split_through(req, cut, false);
      const bool whole = cut <= begin || cut > end;
      const std::string expected = value != kKey && whole ? request_with(std::string(value.size(), '*'))
                                                          : redacted_request(value);
      EXPECT_EQ(a + b, expected) << "cut at " << cut << " of " << req.size();
    }
  }
}

// A reader of the capture must tell the key's refusals from a wrong key's
// (crh pcap check's binding rules): the key is filled with 'x', another value
// seen whole with '*', each byte for byte.
TEST(PacketRedaction, AValueThatIsNotTheKeyIsFilledApart) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  const std::string wrong(kKey.size(), 'Q');
  Bytes a = frame({.seq = 1000, .payload = request_with(kKey)});
  const auto first = request_with(kKey).size();
  Bytes b = frame({.seq = static_cast<std::uint32_t>(1000 + first), .payload = request_with(wrong)});
  redactor.redact(DLT_EN10MB, a);
  redactor.redact(DLT_EN10MB, b);
  EXPECT_EQ(payload_of(a), redacted_request(kKey));
  EXPECT_EQ(payload_of(b), request_with(std::string(wrong.size(), '*')));
}

TEST(PacketRedaction, HeaderNameSplitAcrossSegments) {
  const std::string value = "secret-value-not-the-key";
  const std::string req = request_with(value);
  const auto cut = req.find("key: ");  // "...Api" | "key: value"
  const auto [a, b] = split_through(req, cut, false);
  EXPECT_TRUE(a.ends_with("\r\nApi"));
  EXPECT_EQ(b.find(value), std::string::npos) << b;
}

TEST(PacketRedaction, RetransmittedSecondHalfOverwrittenToo) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  const std::string value = "secret-value-not-the-key-" + std::string(20, 'z');
  const std::string req = request_with(value);
  const std::size_t cut = req.find(value) + value.size() / 2;
  Bytes a = frame({.seq = 1000, .payload = req.substr(0, cut)});
  const Segment second{.seq = static_cast<std::uint32_t>(1000 + cut), .payload = req.substr(cut)};
  Bytes b = frame(second), again = frame(second);
  // A retransmission that starts earlier and overlaps the first half too.
  Bytes overlap = frame({.seq = static_cast<std::uint32_t>(1000 + cut - 5), .payload = req.substr(cut - 5)});
  for (Bytes* p : {&a, &b, &again, &overlap}) redactor.redact(DLT_EN10MB, *p);
  EXPECT_EQ(payload_of(a) + payload_of(b), redacted_request(value));
  EXPECT_EQ(payload_of(again), payload_of(b));
  EXPECT_EQ(payload_of(overlap), redacted_request(value).substr(cut - 5));
}

TEST(PacketRedaction, KeySplitArrivingOutOfOrderNeverSaved) {
  const std::string req = request_with(kKey);
  const auto start = req.find(kKey);
  for (std::size_t cut = start + 1; cut < start + kKey.size(); ++cut) {
    const auto [a, b] = split_through(req, cut, true);
    const std::size_t head = cut - start, rest = kKey.size() - head;
    EXPECT_EQ((a + b).find(kKey), std::string::npos) << "cut at " << cut;
    EXPECT_TRUE(a.ends_with("Apikey: " + std::string(head, 'x'))) << "cut at " << cut << ": " << a;
    // The rest came first, before any header: an end of the key at a segment
    // edge is overwritten from 4 bytes on (shorter ones match ordinary text).
    if (rest >= 4) {
      EXPECT_EQ(b.find(kKey.substr(head)), std::string::npos) << "cut at " << cut << ": " << b;
    }
  }
}

TEST(PacketRedaction, KeyInABodyAndInAnAnswerOverwritten) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  const std::string body = "value=" + kKey + "&other=1";
  Bytes post = frame(
      {.payload = "POST /database/k HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body});
  Bytes answer = frame({.sport = kServerPort,
                        .dport = kClientPort,
                        .seq = 5000,
                        .payload = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"echo\":\"" + kKey + "\"}"});
  redactor.redact(DLT_EN10MB, post);
  redactor.redact(DLT_EN10MB, answer);
  EXPECT_EQ(payload_of(post).find(kKey), std::string::npos);
  EXPECT_NE(payload_of(post).find("value=" + std::string(kKey.size(), 'x') + "&other=1"), std::string::npos);
  EXPECT_EQ(payload_of(answer).find(kKey), std::string::npos);
}

TEST(PacketRedaction, ValidChecksumRecomputedAfterTheEdit) {
  for (bool ipv6 : {false, true}) {
    detail::PacketRedactor redactor(kKey, kServerPort);
    Bytes p = frame({.ipv6 = ipv6, .payload = request_with(kKey), .valid_checksum = true});
    ASSERT_TRUE(checksum_valid(p, ipv6));
    const auto r = redactor.redact(DLT_EN10MB, p);
    EXPECT_EQ(payload_of(p, ipv6), redacted_request(kKey));
    EXPECT_TRUE(r.checksum_recomputed) << (ipv6 ? "IPv6" : "IPv4");
    EXPECT_TRUE(checksum_valid(p, ipv6)) << (ipv6 ? "IPv6" : "IPv4");
  }
}

// The capture thread edits a copy and reads the checksum's validity from
// libpcap's unedited bytes, and only for edited packets: the same outcome.
TEST(PacketRedaction, ChecksumValidityReadFromTheOriginalWhenGiven) {
  for (bool valid : {true, false}) {
    detail::PacketRedactor redactor(kKey, kServerPort);
    const Bytes original = frame({.payload = request_with(kKey), .valid_checksum = valid});
    Bytes p = original;
    const auto r = redactor.redact(DLT_EN10MB, p, original);
    EXPECT_EQ(payload_of(p), redacted_request(kKey));
    EXPECT_EQ(r.checksum_recomputed, valid);
    EXPECT_EQ(r.checksum_left, !valid);
    EXPECT_EQ(checksum_valid(p, false), valid);
  }
}

TEST(PacketRedaction, OffloadedChecksumLeftAsItWas) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  Bytes p = frame({.payload = request_with(kKey)});
  const auto r = redactor.redact(DLT_EN10MB, p);
  EXPECT_TRUE(r.checksum_left);
  EXPECT_FALSE(r.checksum_recomputed);
  EXPECT_EQ(p[14 + 20 + 16], 0);
  EXPECT_EQ(p[14 + 20 + 17], 0);
}

// A keep-alive connection whose second request the capture missed (the
// kernel dropped it from the capture; TCP delivered it, so it never comes
// again): the third request, its value cut anywhere (3 bytes before its end
// among them), is saved with no byte of the value left. With the server's
// acknowledgement past the hole seen before the third request, between its
// two segments, or not at all.
TEST(PacketRedaction, SegmentMissedByTheCaptureDoesNotStopTracking) {
  const std::string key = "SECRETKEY123";
  const std::string req = request_with(key);
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  const auto value_end = req.find(key) + key.size();
  std::vector<std::size_t> cuts;
  for (std::size_t cut = 1; cut < req.size(); ++cut) cuts.push_back(cut);
  for (const char* mode : {"ack-before", "ack-between", "no-ack"}) {
    for (const std::size_t cut : cuts) {
      detail::PacketRedactor redactor(key, kServerPort);
      Bytes syn = frame({.seq = 999, .syn = true});
      redactor.redact(DLT_EN10MB, syn);
      std::uint32_t seq = 1000, server_seq = 5000;
      auto answer = [&](std::uint32_t acked) {
        Bytes a =
            frame({.sport = kServerPort, .dport = kClientPort, .seq = server_seq, .payload = response, .ack = acked});
        server_seq += static_cast<std::uint32_t>(response.size());
        redactor.redact(DLT_EN10MB, a);
      };
      Bytes first = frame({.seq = seq, .payload = req});
      redactor.redact(DLT_EN10MB, first);
      ASSERT_EQ(payload_of(first), redacted_request(key));
      seq += static_cast<std::uint32_t>(req.size());
      answer(seq);
      seq += static_cast<std::uint32_t>(req.size());  // the second request: not captured
      if (std::string(mode) == "ack-before") answer(seq);
      Bytes a = frame({.seq = seq, .payload = req.substr(0, cut)});
      Bytes b = frame({.seq = static_cast<std::uint32_t>(seq + cut), .payload = req.substr(cut)});
      redactor.redact(DLT_EN10MB, a);
      if (std::string(mode) == "ack-between") {
        Bytes ack = frame({.sport = kServerPort,
                           .dport = kClientPort,
                           .seq = server_seq,
                           .flags = 0x10,
                           .ack = static_cast<std::uint32_t>(seq + cut)});
        redactor.redact(DLT_EN10MB, ack);
      }
      redactor.redact(DLT_EN10MB, b);
      EXPECT_EQ(payload_of(a) + payload_of(b), redacted_request(key))
          << mode << ", cut at " << cut << (cut == value_end - 3 ? " (3 bytes before the value's end)" : "");
    }
  }
}

// The start of the value is in the segment the capture missed: the rest, at
// the start of the next segment, is overwritten (it is an end of the key
// that stops at the line's end), whether the hole is known lost or not yet.
TEST(PacketRedaction, KeyEndAfterAMissedSegmentOverwritten) {
  const std::string key = "SECRETKEY123";
  const std::string req = request_with(key);
  for (const bool acked : {true, false}) {
    for (std::size_t rest = 1; rest < key.size(); ++rest) {
      detail::PacketRedactor redactor(key, kServerPort);
      Bytes syn = frame({.seq = 999, .syn = true});
      redactor.redact(DLT_EN10MB, syn);
      const auto cut = req.find(key) + key.size() - rest;  // [0, cut) is missed
      if (acked) {
        Bytes ack = frame({.sport = kServerPort,
                           .dport = kClientPort,
                           .seq = 5000,
                           .flags = 0x10,
                           .ack = static_cast<std::uint32_t>(1000 + cut)});
        redactor.redact(DLT_EN10MB, ack);
      }
      Bytes b = frame({.seq = static_cast<std::uint32_t>(1000 + cut), .payload = req.substr(cut)});
      redactor.redact(DLT_EN10MB, b);
      EXPECT_EQ(payload_of(b), redacted_request(key).substr(cut)) << (acked ? "acked" : "not acked") << ", " << rest;
    }
  }
}

// A short key (edge matching of 4 bytes or more cannot apply) split at every
// point of its value, in order and second half first.
TEST(PacketRedaction, ShortKeySplitAcrossSegmentsOverwritten) {
  const std::string key = "k5y9Z";
  const std::string req = request_with(key);
  const auto start = req.find(key);
  for (const bool second_first : {false, true}) {
    for (std::size_t cut = start; cut <= start + key.size(); ++cut) {
      const auto [a, b] = split_through(req, cut, second_first, key);
      EXPECT_EQ(a + b, redacted_request(key)) << (second_first ? "second first" : "in order") << ", cut " << cut;
    }
  }
  // A long key the same way: no end of it is left however short.
  for (std::size_t cut = start; cut <= start + kKey.size(); ++cut) {
    const auto [a, b] = split_through(request_with(kKey), cut, true);
    EXPECT_EQ(a + b, redacted_request(kKey)) << "second first, cut " << cut;
  }
}

TEST(PacketRedaction, FlowsErasedOnFinOrResetAndBounded) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  Bytes syn = frame({.seq = 999, .syn = true});
  redactor.redact(DLT_EN10MB, syn);
  Bytes req = frame({.seq = 1000, .payload = request_with(kKey)});
  redactor.redact(DLT_EN10MB, req);
  EXPECT_EQ(redactor.tracked_flows(), 1u);
  Bytes fin = frame({.seq = static_cast<std::uint32_t>(1000 + request_with(kKey).size()), .flags = 0x11});
  redactor.redact(DLT_EN10MB, fin);
  EXPECT_EQ(redactor.tracked_flows(), 0u) << "a flow closed by FIN is kept";

  Bytes syn2 = frame({.sport = kClientPort + 1, .seq = 999, .syn = true});
  redactor.redact(DLT_EN10MB, syn2);
  // Ahead of a gap: held until the gap fills.
  Bytes ahead = frame({.sport = kClientPort + 1, .seq = 2000, .payload = std::string(100, 'a')});
  redactor.redact(DLT_EN10MB, ahead);
  EXPECT_EQ(redactor.tracked_flows(), 1u);
  EXPECT_EQ(redactor.pending_bytes(), 100u);
  Bytes rst = frame({.sport = kServerPort, .dport = kClientPort + 1, .seq = 5000, .flags = 0x14});
  redactor.redact(DLT_EN10MB, rst);
  EXPECT_EQ(redactor.tracked_flows(), 0u) << "a flow reset by the server is kept";
  EXPECT_EQ(redactor.pending_bytes(), 0u);

  // A hole never filled: what is held ahead of it stays small.
  Bytes syn3 = frame({.sport = kClientPort + 2, .seq = 999, .syn = true});
  redactor.redact(DLT_EN10MB, syn3);
  for (std::uint32_t i = 0; i < 200; ++i) {
    Bytes p = frame({.sport = kClientPort + 2, .seq = 10000 + i * 1000, .payload = std::string(1000, 'b')});
    redactor.redact(DLT_EN10MB, p);
  }
  EXPECT_LE(redactor.pending_bytes(), 64u * 1024);

  // Many connections never closed: bounded.
  for (std::uint32_t i = 0; i < 20000; ++i) {
    Bytes p = frame({.sport = static_cast<std::uint16_t>(1024 + i), .seq = 1, .payload = "GET / HTTP/1.1\r\n"});
    redactor.redact(DLT_EN10MB, p);
  }
  EXPECT_LE(redactor.tracked_flows(), 16384u);
}

// Packets that are not readable as TCP segments still have the key
// overwritten: IPv4 fragments (first and later), IPv6 with a fragment
// header, an unknown link type. An IPv6 destination-options header is
// stepped over, the segment read as any other.
TEST(PacketRedaction, KeyOverwrittenInPacketsNotReadAsTcp) {
  const std::string req = request_with(kKey);
  {
    detail::PacketRedactor redactor(kKey, kServerPort);
    Bytes first = frame({.payload = req});
    first[14 + 6] = 0x20;  // more fragments, offset 0
    redactor.redact(DLT_EN10MB, first);
    EXPECT_EQ(payload_of(first).find(kKey), std::string::npos) << "first fragment";
    Bytes later = frame({.payload = "padding" + kKey + "more"});
    later[14 + 6] = 0x00;
    later[14 + 7] = 0x10;  // offset 128 bytes, last fragment
    redactor.redact(DLT_EN10MB, later);
    const std::string bytes(later.begin() + 34, later.end());
    EXPECT_EQ(bytes.find(kKey), std::string::npos) << "later fragment";
  }
  {
    // IPv6: a fragment header (later fragment), then a destination-options header.
    for (const bool fragment : {true, false}) {
      detail::PacketRedactor redactor(kKey, kServerPort);
      Bytes p = frame({.ipv6 = true, .payload = req, .valid_checksum = !fragment});
      Bytes ext(8, 0);
      ext[0] = 6;                   // next: TCP
      if (fragment) ext[3] = 0x08;  // offset 1 (8 bytes)
      p.insert(p.begin() + 14 + 40, ext.begin(), ext.end());
      p[14 + 6] = fragment ? 44 : 60;
      put16(p, 14 + 4, static_cast<std::uint16_t>(p.size() - 14 - 40));
      const auto r = redactor.redact(DLT_EN10MB, p);
      const std::string bytes(p.begin() + 14 + 48, p.end());
      EXPECT_EQ(bytes.find(kKey), std::string::npos) << (fragment ? "fragment header" : "destination options");
      if (!fragment) {
        EXPECT_EQ(bytes.substr(20), redacted_request(kKey));
        EXPECT_TRUE(r.checksum_recomputed);
      }
    }
  }
  {
    detail::PacketRedactor redactor(kKey, kServerPort);
    Bytes p = frame({.payload = req});
    redactor.redact(147 /* DLT_USER0 */, p);
    EXPECT_EQ(payload_of(p).find(kKey), std::string::npos) << "unknown link type";
  }
}

// ---- the capture filter

TEST(LiveCaptureFilter, EveryAddressOfTheTargetIsInTheFilter) {
  // What getaddrinfo("localhost") gives where /etc/hosts names ::1 too,
  // first and twice (one per socket type), as glibc returns it.
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_addr = in6addr_loopback;
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addrinfo c{}, b{}, a{};
  c.ai_family = AF_INET;
  c.ai_addr = reinterpret_cast<sockaddr*>(&v4);
  c.ai_addrlen = sizeof v4;
  b = c;
  b.ai_next = &c;
  a.ai_family = AF_INET6;
  a.ai_addr = reinterpret_cast<sockaddr*>(&v6);
  a.ai_addrlen = sizeof v6;
  a.ai_next = &b;
  const auto addresses = detail::numeric_addresses(&a);
  EXPECT_EQ(addresses, (std::vector<std::string>{"::1", "127.0.0.1"}));
  const auto filter = detail::capture_filter(addresses, 8080);
  EXPECT_EQ(filter, "tcp and (host ::1 or host 127.0.0.1) and port 8080");
  EXPECT_EQ(detail::capture_filter({"127.0.0.1"}, 80), "tcp and host 127.0.0.1 and port 80");
  for (const int dlt : {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2}) {
    pcap_t* dead = ::pcap_open_dead(dlt, 65535);
    bpf_program program{};
    EXPECT_EQ(::pcap_compile(dead, &program, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN), 0) << ::pcap_geterr(dead);
    ::pcap_freecode(&program);
    ::pcap_close(dead);
  }
  // The real resolver's answer for localhost: every address it gives.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  ASSERT_EQ(::getaddrinfo("localhost", "80", &hints, &res), 0);
  std::size_t count = 0;
  for (auto* i = res; i != nullptr; i = i->ai_next) ++count;
  const auto local = detail::numeric_addresses(res);
  ::freeaddrinfo(res);
  EXPECT_GE(local.size(), 1u);
  EXPECT_LE(local.size(), count);
}

// ---- live, on loopback

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// One request on a fresh connection (Connection: close), written in two
// parts cut at `cut` (0: whole) with a pause between, as two segments.
void send_request(std::uint16_t port, const std::string& request, std::size_t cut) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  if (cut == 0) {
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  } else {
    ASSERT_EQ(::send(fd, request.data(), cut, 0), static_cast<ssize_t>(cut));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // so the kernel sends two segments
    ASSERT_EQ(::send(fd, request.data() + cut, request.size() - cut, 0), static_cast<ssize_t>(request.size() - cut));
  }
  char buf[4096];
  for (int i = 0; i < 1000 && ::recv(fd, buf, sizeof buf, 0) > 0; ++i) {
  }
  ::close(fd);
}

// The reference service with kKey, on loopback, and the configuration of a
// capture of it into a file of the temporary folder named after `name`.
struct LiveTarget {
  explicit LiveTarget(const std::string& name, std::string host = "127.0.0.1") : server(server_config()) {
    server.start();
    file = (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".pcap")).string();
    config.file = file;
    config.target_host = std::move(host);
    config.target_port = server.port();
    config.api_key = kKey;
  }
  static reference::ServerConfig server_config() {
    reference::ServerConfig c;
    c.threads = 1;
    c.service.api_key = kKey;
    return c;
  }
  reference::Server server;
  std::string file;
  LiveConfig config;
};

TEST(LiveCapture, LoopbackCaptureHoldsNoKeyAndDissectsAsHttp) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: a live capture needs root or CAP_NET_RAW";
  LiveTarget target("crh-live-test");
  auto& server = target.server;
  const auto& file = target.file;
  LiveCapture capture(target.config);
  if (!capture.summary().made) GTEST_SKIP() << "no capture permitted here: " << capture.summary().not_made;

  const auto request = [&](const std::string& method) {
    return method + " /local-agents HTTP/1.1\r\nHost: 127.0.0.1\r\nApikey: " + kKey +
           "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  };
  send_request(server.port(), request("GET"), 0);
  const std::string split = request("POST");
  send_request(server.port(), split, split.find(kKey) + kKey.size() / 2);  // cut inside the key
  send_request(server.port(), request("PUT"), 0);
  const auto& summary = capture.stop();
  server.stop();

  ASSERT_TRUE(summary.made) << summary.not_made;
  EXPECT_GT(summary.packets, 6u);
  EXPECT_GE(summary.redactions, 3u);
  EXPECT_EQ(summary.interface, "lo");
  EXPECT_FALSE(std::filesystem::exists(file + ".partial"));
  const std::string bytes = read_all(file);
  ASSERT_FALSE(bytes.empty()) << "no file written at " << file;
  EXPECT_EQ(bytes.find(kKey), std::string::npos) << "the key is in " << file;
  EXPECT_EQ(bytes.find(kKey.substr(0, kKey.size() / 2)), std::string::npos) << "the key's first half is in " << file;
  EXPECT_EQ(bytes.find(kKey.substr(kKey.size() / 2)), std::string::npos) << "the key's second half is in " << file;

  if (std::system("command -v tshark >/dev/null 2>&1") != 0) {
    std::filesystem::remove(file);
    GTEST_SKIP() << "tshark is absent: the dissection is not checked";
  }
  // HTTP decoded on the server's port: tshark otherwise picks the dissector
  // by port, trying a port registered to another protocol before its HTTP
  // heuristic, and the client's ephemeral port is now and then one (44321
  // pcp, 44322 pmproxy, 48898 ams, 57000 irc, ...): that connection's
  // request was then not dissected as HTTP at all.
  std::string methods;
  if (FILE* p = ::popen(("tshark -r '" + file + "' -d tcp.port==" + std::to_string(target.config.target_port) +
                         ",http -Y http.request -T fields -e http.request.method 2>/dev/null")
                            .c_str(),
                        "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, p)) methods += line;
    ::pclose(p);
  }
  EXPECT_EQ(methods, "GET\nPOST\nPUT\n") << "tshark -r " << file << " -Y http.request";
  std::filesystem::remove(file);
}

// The target named "localhost": the filter holds every address it resolves
// to (the server listens on 127.0.0.1), and the capture has the packets.
TEST(LiveCapture, TargetByNameCapturesOnEveryAddress) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: a live capture needs root or CAP_NET_RAW";
  LiveTarget target("crh-live-name", "localhost");
  auto& server = target.server;
  const auto& file = target.file;
  LiveCapture capture(target.config);
  if (!capture.summary().made) GTEST_SKIP() << "no capture permitted here: " << capture.summary().not_made;
  send_request(server.port(),
               "GET /local-agents HTTP/1.1\r\nHost: localhost\r\nApikey: " + kKey + "\r\nConnection: close\r\n\r\n", 0);
  const auto& summary = capture.stop();
  server.stop();
  ASSERT_TRUE(summary.made) << summary.not_made;
  EXPECT_NE(summary.filter.find("host 127.0.0.1"), std::string::npos) << summary.filter;
  EXPECT_EQ(summary.interface, "lo");
  EXPECT_GT(summary.packets, 3u) << summary.filter;
  EXPECT_EQ(read_all(file).find(kKey), std::string::npos);
  std::filesystem::remove(file);
}

TEST(LiveCapture, BogusInterfaceSaysWhyAndWritesNothing) {
  const auto file =
      (std::filesystem::temp_directory_path() / ("crh-bogus-" + std::to_string(::getpid()) + ".pcap")).string();
  LiveConfig config;
  config.file = file;
  config.target_host = "127.0.0.1";
  config.target_port = 9;
  config.interface = "crh-nosuch0";
  LiveCapture capture(config);
  const auto& summary = capture.stop();
  EXPECT_FALSE(summary.made);
  EXPECT_FALSE(summary.not_made.empty());
  if (::geteuid() == 0) {
    EXPECT_NE(summary.not_made.find("crh-nosuch0"), std::string::npos) << summary.not_made;
  }
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(file + ".partial"));
}

}  // namespace
}  // namespace crh::capture
