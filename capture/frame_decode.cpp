// Frames decoded down to TCP and UDP for the offline reader: link layers (Ethernet
// with any VLAN tags, Linux cooked v1/v2, BSD loopback, raw IP), IPv4 and
// IPv6 with extension headers. Apart from reassembly so each reads alone.
#include "capture/frame_decode.hpp"
#include "capture/packet_headers.hpp"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <algorithm>

namespace crh::capture::extraction {
namespace {

constexpr int kLinktypeIpv4 = 228, kLinktypeIpv6 = 229, kLinktypeRaw = 101;

using detail::be16;
using detail::be32;

Decoded decode_tcp(const unsigned char* p, std::size_t n, std::size_t wire_left, Segment& s) {
  if (n < 20) return Decoded::skipped;
  const std::size_t offset = static_cast<std::size_t>(p[12] >> 4) * 4;
  if (offset < 20 || offset > n) return Decoded::skipped;
  s.sport = be16(p);
  s.dport = be16(p + 2);
  s.seq = be32(p + 4);
  s.ack = be32(p + 8);
  s.flags = p[13];
  s.payload = std::string_view(reinterpret_cast<const char*>(p + offset), n - offset);
  s.payload_length = wire_left >= offset ? wire_left - offset : s.payload.size();
  if (s.payload_length < s.payload.size()) s.payload_length = s.payload.size();
  return Decoded::tcp;
}

// UDP's length field bounds the datagram (IP may carry padding after it).
Decoded decode_udp(const unsigned char* p, std::size_t n, std::size_t wire_left, Segment& s) {
  if (n < 8) return Decoded::skipped;
  s.sport = be16(p);
  s.dport = be16(p + 2);
  std::size_t length = be16(p + 4);
  if (length < 8) length = wire_left;  // 0: an IPv6 jumbogram; less than a header: believe IP
  length = std::min(length, wire_left);
  const std::size_t captured = std::min(n, length);
  s.payload = std::string_view(reinterpret_cast<const char*>(p + 8), captured > 8 ? captured - 8 : 0);
  s.payload_length = std::max(length > 8 ? length - 8 : 0, s.payload.size());
  return Decoded::udp;
}

// `n`: captured bytes from the IP header on.
Decoded decode_ip(const unsigned char* p, std::size_t n, Segment& s) {
  if (n < 1) return Decoded::skipped;
  const int version = p[0] >> 4;
  if (version == 4) {
    if (n < 20) return Decoded::skipped;
    const std::size_t ihl = static_cast<std::size_t>(p[0] & 0x0f) * 4;
    const std::size_t total = be16(p + 2);
    if (ihl < 20 || ihl > n || total < ihl) return Decoded::skipped;
    const std::uint16_t frag = be16(p + 6);
    if ((frag & 0x2000) || (frag & 0x1fff)) return Decoded::fragment;
    if (p[9] != 6 && p[9] != 17) return Decoded::skipped;
    s.v6 = false;
    s.src = p + 12;
    s.dst = p + 16;
    // Ethernet pads short frames: trust IP's length, not the frame's.
    const std::size_t captured = std::min(n, total);
    if (p[9] == 17) return decode_udp(p + ihl, captured - ihl, total - ihl, s);
    return decode_tcp(p + ihl, captured - ihl, total - ihl, s);
  }
  if (version == 6) {
    if (n < 40) return Decoded::skipped;
    const std::size_t payload = be16(p + 4);
    s.v6 = true;
    s.src = p + 8;
    s.dst = p + 24;
    std::size_t at = 40;
    std::size_t wire_end = payload ? 40 + payload : n;  // 0: a jumbogram, take what was captured
    std::uint8_t next = p[6];
    for (int hops = 0; hops < 16; ++hops) {
      if (next == 6 || next == 17) {
        const std::size_t captured = std::min(n, wire_end);
        if (at > captured) return Decoded::skipped;
        if (next == 17) return decode_udp(p + at, captured - at, wire_end > at ? wire_end - at : 0, s);
        return decode_tcp(p + at, captured - at, wire_end > at ? wire_end - at : 0, s);
      }
      if (next == 44) return Decoded::fragment;
      if (at + 8 > n) return Decoded::skipped;
      std::size_t length;
      if (next == 0 || next == 43 || next == 60) length = (static_cast<std::size_t>(p[at + 1]) + 1) * 8;
      else if (next == 51) length = (static_cast<std::size_t>(p[at + 1]) + 2) * 4;
      else return Decoded::skipped;
      next = p[at];
      at += length;
    }
    return Decoded::skipped;
  }
  return Decoded::skipped;
}

}  // namespace

Decoded decode_frame(int link, const unsigned char* p, std::size_t n, Segment& s) {
  std::size_t at = 0;
  auto ethertype_ip = [&](std::uint16_t type) { return type == 0x0800 || type == 0x86dd; };
  switch (link) {
    case DLT_EN10MB: {
      if (n < 14) return Decoded::skipped;
      std::uint16_t type = be16(p + 12);
      at = 14;
      // 802.1Q, 802.1ad and the old QinQ value, stacked any number of times.
      while (type == 0x8100 || type == 0x88a8 || type == 0x9100) {
        if (at + 4 > n) return Decoded::skipped;
        type = be16(p + at + 2);
        at += 4;
      }
      if (!ethertype_ip(type)) return Decoded::skipped;
      break;
    }
    case DLT_LINUX_SLL:
      if (n < 16 || !ethertype_ip(be16(p + 14))) return Decoded::skipped;
      at = 16;
      break;
    case DLT_LINUX_SLL2:
      if (n < 20 || !ethertype_ip(be16(p))) return Decoded::skipped;
      at = 20;
      break;
    case DLT_NULL:
    case DLT_LOOP: {
      // The family is in the capturing host's byte order for NULL (either
      // order here, whoever wrote it), network order for LOOP; the IP
      // version nibble decides anyway.
      if (n < 4) return Decoded::skipped;
      std::uint32_t family = be32(p);
      if (family > 0xffff) family = (p[3] << 24 | p[2] << 16 | p[1] << 8 | p[0]);
      if (family != 2 && family != 10 && family != 24 && family != 28 && family != 30) return Decoded::skipped;
      at = 4;
      break;
    }
    case DLT_RAW:
    case kLinktypeRaw:
    case kLinktypeIpv4:
    case kLinktypeIpv6:
      break;
    default: return Decoded::skipped;
  }
  return decode_ip(p + at, n - at, s);
}

std::string printable(bool v6, const unsigned char* a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(v6 ? AF_INET6 : AF_INET, a, buf, sizeof buf);
  return buf;
}

}  // namespace crh::capture::extraction
