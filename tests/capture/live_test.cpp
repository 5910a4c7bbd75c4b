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
  b[t + 13] = s.syn ? 0x02 : 0x18;
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
// that is not the key proves the header tracking, not the raw search.
TEST(PacketRedaction, ValueSplitAcrossTwoSegmentsAtEveryPoint) {
  for (const std::string& value : {kKey, std::string("near-miss-value-only-the-header-says-secret")}) {
    const std::string req = request_with(value);
    for (std::size_t cut = 1; cut < req.size(); ++cut) {
      const auto [a, b] = split_through(req, cut, false);
      EXPECT_EQ(a + b, redacted_request(value)) << "cut at " << cut << " of " << req.size();
    }
  }
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
    if (rest >= 4) EXPECT_EQ(b.find(kKey.substr(head)), std::string::npos) << "cut at " << cut << ": " << b;
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

TEST(PacketRedaction, OffloadedChecksumLeftAsItWas) {
  detail::PacketRedactor redactor(kKey, kServerPort);
  Bytes p = frame({.payload = request_with(kKey)});
  const auto r = redactor.redact(DLT_EN10MB, p);
  EXPECT_TRUE(r.checksum_left);
  EXPECT_FALSE(r.checksum_recomputed);
  EXPECT_EQ(p[14 + 20 + 16], 0);
  EXPECT_EQ(p[14 + 20 + 17], 0);
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

TEST(LiveCapture, LoopbackCaptureHoldsNoKeyAndDissectsAsHttp) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: a live capture needs root or CAP_NET_RAW";
  reference::ServerConfig server_config;
  server_config.threads = 1;
  server_config.service.api_key = kKey;
  reference::Server server(std::move(server_config));
  server.start();
  const auto file =
      (std::filesystem::temp_directory_path() / ("crh-live-test-" + std::to_string(::getpid()) + ".pcap")).string();
  LiveConfig config;
  config.file = file;
  config.target_host = "127.0.0.1";
  config.target_port = server.port();
  config.api_key = kKey;
  LiveCapture capture(config);
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
  std::string methods;
  if (FILE* p = ::popen(
          ("tshark -r '" + file + "' -Y http.request -T fields -e http.request.method 2>/dev/null").c_str(), "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, p)) methods += line;
    ::pclose(p);
  }
  EXPECT_EQ(methods, "GET\nPOST\nPUT\n") << "tshark -r " << file << " -Y http.request";
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
  if (::geteuid() == 0) EXPECT_NE(summary.not_made.find("crh-nosuch0"), std::string::npos) << summary.not_made;
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_FALSE(std::filesystem::exists(file + ".partial"));
}

}  // namespace
}  // namespace crh::capture
