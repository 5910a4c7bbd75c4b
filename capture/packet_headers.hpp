// A captured packet's headers read in place (the redaction and the offline
// reader's frame decoding share them; no libpcap):
// big-endian fields, and where the IP header begins for a link type. The TCP
// checksum over them is tcp_checksum_fold (packet_redaction.hpp).
#pragma once

#include <cstdint>
#include <span>

namespace crh::capture::detail {

inline std::uint16_t be16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
inline std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// Where the IP header starts for a link type, or -1. The protocol is read
// from the IP version nibble, so BSD loopback's host-order family needs no care.
long ip_offset(int link_type, std::span<const unsigned char> p);

}  // namespace crh::capture::detail
