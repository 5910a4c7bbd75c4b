// sip_frames: see sip_frames.hpp.
#include "sip_frames.hpp"

#include <arpa/inet.h>

#include <cstdio>
#include <span>
#include <stdexcept>

#include "capture/sip_redaction.hpp"

namespace crh::capture::testing {
namespace {

void put16(std::string& s, std::uint16_t v) {
  s.push_back(static_cast<char>(v >> 8));
  s.push_back(static_cast<char>(v & 0xff));
}

std::string head(const SipCall& c, std::string_view via_host) {
  return "Via: SIP/2.0/UDP " + std::string(via_host) + ";branch=" + c.branch + "\r\n" +
         "From: <sip:" + c.caller + "@127.0.0.1>;tag=from-" + c.caller + "\r\n" +
         "To: <sip:" + c.number + "@" + c.host + ">\r\n" + "Call-ID: " + c.call_id + "\r\n";
}

std::string with_body(std::string message, std::string_view body) {
  if (!body.empty()) message += "Content-Type: application/sdp\r\n";
  message += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  message += body;
  return message;
}

const char* kSdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

}  // namespace

std::string sip_invite(const SipCall& c, std::string_view extra) {
  std::string m = "INVITE sip:" + c.number + "@" + c.host + " SIP/2.0\r\n" + head(c, "127.0.0.1:40000") +
                  "CSeq: " + std::to_string(c.cseq) + " INVITE\r\nMax-Forwards: 70\r\nContact: <sip:" + c.caller +
                  "@127.0.0.1:40000>\r\n" + std::string(extra);
  return with_body(std::move(m), kSdp);
}

std::string sip_answer(const SipCall& c, unsigned status) {
  const char* reason = status == 100 ? "Trying" : status == 200 ? "OK" : status == 403 ? "Forbidden" : "Other";
  std::string m = "SIP/2.0 " + std::to_string(status) + " " + reason + "\r\n" + head(c, "127.0.0.1:40000") +
                  "CSeq: " + std::to_string(c.cseq) + " INVITE\r\n";
  return with_body(std::move(m), status >= 200 && status < 300 ? kSdp : "");
}

std::string sip_request(const SipCall& c, std::string_view method) {
  std::string m = std::string(method) + " sip:" + c.number + "@" + c.host + " SIP/2.0\r\n" +
                  head(c, "127.0.0.1:40000") + "CSeq: " + std::to_string(method == "ACK" ? c.cseq : c.cseq + 1) +
                  " " + std::string(method) + "\r\nMax-Forwards: 70\r\n";
  return with_body(std::move(m), "");
}

std::string udp_packet(std::string_view src, std::uint16_t sport, std::string_view dst, std::uint16_t dport,
                       std::string_view payload) {
  const bool v6 = src.find(':') != std::string_view::npos;
  unsigned char s[16] = {}, d[16] = {};
  if (inet_pton(v6 ? AF_INET6 : AF_INET, std::string(src).c_str(), s) != 1 ||
      inet_pton(v6 ? AF_INET6 : AF_INET, std::string(dst).c_str(), d) != 1)
    throw std::invalid_argument("not an address");
  const std::size_t alen = v6 ? 16 : 4;
  std::string udp;
  put16(udp, sport);
  put16(udp, dport);
  put16(udp, static_cast<std::uint16_t>(8 + payload.size()));
  put16(udp, 0);
  udp += payload;
  auto sum = static_cast<std::uint16_t>(~detail::udp_checksum_fold(
      v6, s, d, std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(udp.data()), udp.size())));
  if (sum == 0) sum = 0xffff;
  udp[6] = static_cast<char>(sum >> 8);
  udp[7] = static_cast<char>(sum & 0xff);
  std::string ip;
  if (v6) {
    ip += std::string("\x60\x00\x00\x00", 4);
    put16(ip, static_cast<std::uint16_t>(udp.size()));
    ip.push_back(17);
    ip.push_back(64);
  } else {
    ip += "\x45";
    ip.push_back(0);
    put16(ip, static_cast<std::uint16_t>(20 + udp.size()));
    put16(ip, 1);
    put16(ip, 0x4000);  // don't fragment
    ip.push_back(64);
    ip.push_back(17);
    put16(ip, 0);  // header checksum: below
  }
  ip.append(reinterpret_cast<const char*>(s), alen);
  ip.append(reinterpret_cast<const char*>(d), alen);
  if (!v6) {
    std::uint32_t sum4 = 0;
    for (std::size_t i = 0; i < 20; i += 2)
      sum4 += (static_cast<unsigned char>(ip[i]) << 8) | static_cast<unsigned char>(ip[i + 1]);
    while (sum4 >> 16) sum4 = (sum4 & 0xffff) + (sum4 >> 16);
    const auto h = static_cast<std::uint16_t>(~sum4);
    ip[10] = static_cast<char>(h >> 8);
    ip[11] = static_cast<char>(h & 0xff);
  }
  return ip + udp;
}

std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

}  // namespace crh::capture::testing
