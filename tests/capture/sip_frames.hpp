// Test helper for SIP in captures (issue 26): SIP messages as a UA writes
// them, and UDP packets (IPv4 and IPv6, with a valid checksum) that carry
// them, framed by PcapBuilder::ip_frame.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace crh::capture::testing {

struct SipCall {
  std::string caller = "+15550001";
  std::string number = "+15559999";
  std::string call_id = "call-1@test";
  std::string branch = "z9hG4bK-1";
  unsigned cseq = 1;
  std::string host = "127.0.0.1:5060";
};

// An INVITE with a small SDP offer; `extra` lines (each ending CRLF) go after the headers.
std::string sip_invite(const SipCall& c, std::string_view extra = {});
// A final (or interim) answer to the call's INVITE; 2xx carry an SDP answer.
std::string sip_answer(const SipCall& c, unsigned status);
// A request of the dialog (ACK, BYE) after the INVITE.
std::string sip_request(const SipCall& c, std::string_view method);

// An IP packet (header and UDP, the UDP checksum valid) from src:sport to dst:dport.
std::string udp_packet(std::string_view src, std::uint16_t sport, std::string_view dst, std::uint16_t dport,
                       std::string_view payload);

// The bytes a shell command prints (popen), for tshark.
std::string command_output(const std::string& command);

}  // namespace crh::capture::testing
