// A live capture with SIP calls (issue 26), as root on loopback: the SIP
// target's port is recorded over UDP and TCP beside the HTTP port, digest
// values are overwritten in the saved file (a TCP value split across two
// segments too), tshark dissects it as SIP with nothing malformed, and the
// pcap check reads the calls back.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "capture/live.hpp"
#include "capture/pcap_check.hpp"
#include "sip_frames.hpp"

namespace crh::capture {
namespace {

const std::string kResponse = "6629fae49393a05397450978507c4ef1";
const std::string kCnonce = "0a4f113bcafe";

std::string authorization(const char* header) {
  return std::string(header) + ": Digest username=\"alice\", realm=\"crh\", nonce=\"n0nce\", uri=\"sip:x@h\", response=\"" +
         kResponse + "\", cnonce=\"" + kCnonce + "\", qop=auth, nc=00000001\r\n";
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

TEST(SipLiveCapture, RecordsSipOverUdpAndTcpWithDigestValuesOverwritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: a live capture needs root or CAP_NET_RAW";
  // The "SIP target": a UDP socket and a TCP listener on one port (a few
  // tries: the UDP port's number may be taken for TCP).
  int udp_server = -1, listener = -1;
  std::uint16_t port = 0;
  for (int attempt = 0; attempt < 20 && listener < 0; ++attempt) {
    udp_server = ::socket(AF_INET, SOCK_DGRAM, 0);
    auto any = loopback(0);
    ASSERT_EQ(::bind(udp_server, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
    socklen_t len = sizeof any;
    ::getsockname(udp_server, reinterpret_cast<sockaddr*>(&any), &len);
    port = ntohs(any.sin_port);
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    auto at = loopback(port);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || ::listen(listener, 4) != 0) {
      ::close(udp_server);
      ::close(listener);
      listener = -1;
    }
  }
  ASSERT_GE(listener, 0) << "no port free for both UDP and TCP in 20 tries";
  auto at = loopback(port);
  const std::string file = ::testing::TempDir() + "/sip_live_test.pcap";
  LiveConfig config;
  config.file = file;
  config.target_host = "127.0.0.1";
  config.target_port = 9;  // the HTTP side: unused here
  config.sip_host = "127.0.0.1";
  config.sip_port = port;
  config.api_key = "live-sip-key-0123456789abcdef";
  LiveCapture capture(config);
  if (!capture.summary().made) GTEST_SKIP() << "no capture permitted here: " << capture.summary().not_made;
  EXPECT_NE(capture.summary().filter.find("(tcp or udp) and host 127.0.0.1 and port " + std::to_string(port)),
            std::string::npos);

  testing::SipCall udp_call;
  udp_call.call_id = "live-udp";
  const std::string invite = testing::sip_invite(udp_call, authorization("Authorization"));
  const int client = ::socket(AF_INET, SOCK_DGRAM, 0);
  ::sendto(client, invite.data(), invite.size(), 0, reinterpret_cast<sockaddr*>(&at), sizeof at);
  char buf[4096];
  EXPECT_GT(::recv(udp_server, buf, sizeof buf, 0), 0);

  testing::SipCall tcp_call;
  tcp_call.call_id = "live-tcp";
  tcp_call.caller = "+15550002";
  const std::string tcp_invite = testing::sip_invite(tcp_call, authorization("Proxy-Authorization"));
  const int stream = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(stream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ASSERT_EQ(::connect(stream, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  const int accepted = ::accept(listener, nullptr, nullptr);
  const auto cut = tcp_invite.find(kResponse) + 10;  // inside the response value
  ::send(stream, tcp_invite.data(), cut, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // so the kernel sends two segments
  ::send(stream, tcp_invite.data() + cut, tcp_invite.size() - cut, 0);
  std::size_t got = 0;
  while (got < tcp_invite.size()) {
    const auto n = ::recv(accepted, buf, sizeof buf, 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  const std::string answer = testing::sip_answer(tcp_call, 200);
  ::send(accepted, answer.data(), answer.size(), 0);
  ::recv(stream, buf, sizeof buf, 0);
  for (int fd : {client, stream, accepted, listener, udp_server}) ::close(fd);
  const auto& summary = capture.stop();

  ASSERT_TRUE(summary.made) << summary.not_made;
  EXPECT_GE(summary.redactions, 4u);  // response and cnonce, over UDP and TCP (the split value counts per piece)
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  for (const std::string& secret : {kResponse, kResponse.substr(0, 10), kResponse.substr(10), kCnonce})
    EXPECT_EQ(bytes.find(secret), std::string::npos) << secret << " is in " << file;
  EXPECT_NE(bytes.find("username=\"alice\""), std::string::npos);

  const auto report = check_capture(file, {});
  EXPECT_EQ(report.sip.calls, 2u);
  EXPECT_EQ(report.sip.connected, 1u);
  EXPECT_EQ(report.sip.unanswered, 1u);
  EXPECT_EQ(report.sip.unreadable, 0u);

  if (std::system("command -v tshark >/dev/null 2>&1") == 0) {
    const std::string tshark = "tshark -r '" + file + "' -d udp.port==" + std::to_string(port) +
                               ",sip -d tcp.port==" + std::to_string(port) + ",sip ";
    const std::string methods = testing::command_output(tshark + "-Y sip.Method -T fields -e sip.Method 2>/dev/null");
    EXPECT_EQ(methods, "INVITE\nINVITE\n");
    EXPECT_EQ(testing::command_output(tshark + "-Y _ws.malformed 2>/dev/null"), "");
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace crh::capture
