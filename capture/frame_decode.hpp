// Frames decoded down to TCP or UDP, private to capture/'s offline reader:
// the segment or datagram a frame carries, read in place from libpcap's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace crh::capture::extraction {

// One TCP segment (or UDP datagram: seq, ack and flags 0) as decoded from a frame.
struct Segment {
  bool v6 = false;
  const unsigned char* src = nullptr;  // 4 or 16 bytes
  const unsigned char* dst = nullptr;
  std::uint16_t sport = 0, dport = 0;
  std::uint32_t seq = 0, ack = 0;
  std::uint8_t flags = 0;
  std::string_view payload;       // captured payload bytes
  std::size_t payload_length = 0; // on the wire (IP's length): more than payload when truncated
};

enum class Decoded { tcp, udp, skipped, fragment };

constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;

// The TCP segment or UDP datagram in a frame of link type `link` (DLT_* as pcap_datalink
// gives it, or the LINKTYPE_* value a file holds); `n`: the captured bytes.
Decoded decode_frame(int link, const unsigned char* p, std::size_t n, Segment& s);

// An address as text, without brackets ("127.0.0.1", "::1").
std::string printable(bool v6, const unsigned char* a);

}  // namespace crh::capture::extraction
