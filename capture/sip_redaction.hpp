// Digest credentials overwritten in SIP packets before they are saved (issue
// 26), as the Apikey is (packet_redaction.hpp): the values of the response
// and cnonce parameters of Authorization and Proxy-Authorization headers,
// byte for byte with 'x', so lengths stay and the file stays a capture tshark
// dissects. The username, realm and nonce are not secrets and stay readable.
// Pure over payload bytes; packet_redaction.cpp finds the payloads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace crh::capture::detail {

// Reads SIP bytes in order across calls and masks digest values in place.
class DigestScanner {
 public:
  // What came before is not known (a flow joined mid-way, a gap): the line
  // the bytes begin in is taken to be an authorization header, to be safe.
  void start_unknown();
  // Returns the number of values (or pieces of one) overwritten.
  unsigned scan(unsigned char* data, std::size_t n, bool& edited);

  static constexpr char kFill = 'x';

 private:
  enum class At { line_start, name, value, other_line };
  enum class Param { word, before_equals, before_value, quoted, token, skip_quoted };
  At at_ = At::line_start;
  bool in_scope_ = false;  // the current header is Authorization or Proxy-Authorization
  Param param_ = Param::word;
  bool escaped_ = false;
  bool masking_started_ = false;
  std::string name_, word_;
};

// Per TCP flow direction (by its 4-tuple), in sequence space: a value split
// across segments is overwritten in both; a segment that does not follow the
// last one is read from an unknown start, or from the state saved where it
// begins when it is a retransmission of a recent segment. Bounded.
class DigestRedactor {
 public:
  // `flow`: source address, destination address (16 bytes each, IPv4 in
  // the first 4), source port, destination port.
  using FlowId = std::array<unsigned char, 36>;
  unsigned tcp(const FlowId& flow, std::uint32_t seq, bool syn, bool closing, unsigned char* payload, std::size_t n,
               bool& edited);
  // One datagram, one message from its start.
  unsigned udp(unsigned char* payload, std::size_t n, bool& edited);
  std::size_t tracked_flows() const { return flows_.size(); }

 private:
  struct Flow {
    std::uint32_t next = 0;
    DigestScanner scanner;
    std::deque<std::pair<std::uint32_t, DigestScanner>> recent;  // state where recent segments began
  };
  struct Hash {
    std::size_t operator()(const FlowId& f) const {
      return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(f.data()), f.size()));
    }
  };
  std::unordered_map<FlowId, Flow, Hash> flows_;
};

// The UDP checksum over its IPv4 or IPv6 pseudo header (as tcp_checksum_fold):
// 0xFFFF (or 0) means valid.
std::uint16_t udp_checksum_fold(bool ipv6, const unsigned char* src, const unsigned char* dst,
                                std::span<const unsigned char> udp);

}  // namespace crh::capture::detail
