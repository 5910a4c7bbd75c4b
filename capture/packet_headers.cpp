// Packet headers read in place (see packet_headers.hpp): the IP header's
// offset per link type, and the TCP checksum the redaction keeps valid.
#include "capture/packet_headers.hpp"

#include <pcap/dlt.h>

#include "capture/packet_redaction.hpp"

namespace crh::capture::detail {

long ip_offset(int link_type, std::span<const unsigned char> p) {
  switch (link_type) {
    case DLT_EN10MB: {
      std::size_t off = 12;
      while (p.size() >= off + 2) {
        const auto type = be16(&p[off]);
        if (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
          off += 4;
          continue;
        }
        return (type == 0x0800 || type == 0x86DD) ? static_cast<long>(off + 2) : -1;
      }
      return -1;
    }
    case DLT_LINUX_SLL: return 16;
    case DLT_LINUX_SLL2: return 20;
    case DLT_NULL:
    case DLT_LOOP: return 4;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6: return 0;
    default: return link_type == 101 ? 0 : -1;  // LINKTYPE_RAW as written in files
  }
}

std::uint16_t tcp_checksum_fold(bool ipv6, const unsigned char* src, const unsigned char* dst,
                                std::span<const unsigned char> tcp) {
  std::uint64_t sum = 0;
  const std::size_t alen = ipv6 ? 16 : 4;
  for (std::size_t i = 0; i < alen; i += 2) sum += be16(src + i) + be16(dst + i);
  sum += 6;  // next header / protocol: TCP
  sum += ipv6 ? (tcp.size() >> 16) + (tcp.size() & 0xFFFF) : tcp.size();
  std::size_t i = 0;
  for (; i + 1 < tcp.size(); i += 2) sum += be16(&tcp[i]);
  if (i < tcp.size()) sum += std::uint32_t{tcp[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

}  // namespace crh::capture::detail
