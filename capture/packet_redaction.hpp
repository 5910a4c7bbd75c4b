// The key overwritten in captured packets before they are saved (issue 14 §1):
// in place, byte for byte, so the file stays a capture tshark dissects. Pure
// over packet bytes (no libpcap), so the tests feed it crafted packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

namespace crh::capture::detail {

struct RedactionResult {
  unsigned values = 0;               // Apikey header values (or parts of one) overwritten
  unsigned raw = 0;                  // other occurrences of the key (whole, or its ends at a segment edge)
  unsigned digests = 0;              // SIP digest values (response, cnonce) overwritten (sip_redaction.hpp)
  bool edited = false;               // some byte changed
  bool checksum_recomputed = false;  // the TCP (or UDP) checksum was valid before the edit and was made valid again
  bool checksum_left = false;        // edited, but the checksum was not valid before (offload): left as it was
};

// Tracks the Apikey header per TCP flow direction in sequence space, so a
// value split across segments, arriving out of order or retransmitted is
// overwritten wherever its bytes appear. SIP digest credentials are
// overwritten in every TCP segment and UDP datagram (sip_redaction.hpp).
// Not thread-safe: one per capture thread.
class PacketRedactor {
 public:
  // `key`: overwritten anywhere in any payload; `server_port`: the target's,
  // whose inbound payloads are scanned for the Apikey header.
  PacketRedactor(std::string key, std::uint16_t server_port);
  ~PacketRedactor();
  PacketRedactor(const PacketRedactor&) = delete;
  PacketRedactor& operator=(const PacketRedactor&) = delete;

  // `link_type` as pcap_datalink gives it (EN10MB, LINUX_SLL, LINUX_SLL2,
  // NULL, LOOP, RAW). A packet that cannot be read as a TCP segment (an IP
  // fragment, an unknown link type or protocol, a truncated header) still
  // has the key overwritten wherever it is in the bytes after the IP header
  // (the whole packet when the link type is unknown).
  RedactionResult redact(int link_type, std::span<unsigned char> packet);
  // The same, where `packet` is a copy of `original` (the same bytes, not
  // yet edited): the checksum's validity before the edit is then read from
  // `original`, and only for a packet that was edited, which spares summing
  // every segment on the capture thread.
  RedactionResult redact(int link_type, std::span<unsigned char> packet, std::span<const unsigned char> original);

  // For tests: connection directions tracked now (erased on FIN or RST,
  // bounded), and payload bytes held ahead of a gap, over all of them.
  std::size_t tracked_flows() const;
  std::size_t pending_bytes() const;

  static constexpr char kFill = 'x';       // the key's bytes, and a value not seen whole in one segment
  static constexpr char kOtherFill = '*';  // an Apikey value seen whole that is not the key

 private:
  struct Flow;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The TCP checksum of a segment over its IPv4 (version 4) or IPv6 pseudo
// header; `tcp` is the whole segment with its checksum field as it is.
// Returns the ones'-complement sum folded: 0xFFFF (or 0) means valid.
std::uint16_t tcp_checksum_fold(bool ipv6, const unsigned char* src, const unsigned char* dst,
                                std::span<const unsigned char> tcp);

}  // namespace crh::capture::detail
