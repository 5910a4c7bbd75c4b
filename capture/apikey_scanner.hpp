// Where the Apikey header's values lie in one direction's bytes, private to
// the packet redaction: a reader of the header lines by offset, apart from
// the per-packet work so the state machine reads alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>

namespace crh::capture::detail {

inline constexpr std::string_view kName = "apikey";
inline constexpr std::size_t kRanges = 512;  // value ranges kept per flow for later retransmissions

inline char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); }

// One reader of a direction's bytes in stream order: where the Apikey values
// are, as offsets from the direction's first byte.
struct Scanner {
  enum class State { line_start, name, ows, value, other };
  State state = State::line_start;
  std::size_t name_pos = 0;
  std::uint64_t next = 0;                                      // the next offset not read
  std::uint64_t open_start = 0;                                // the value being read, when state == value
  std::deque<std::pair<std::uint64_t, std::uint64_t>> ranges;  // closed values [begin, end), ascending

  void close(std::uint64_t end);

  // Reads [at, at + n), `at` being `next`; returns the values opened.
  unsigned scan(const unsigned char* data, std::size_t n, std::uint64_t at);

  // Overwrites the bytes of [at, at + n) that belong to a value; returns
  // how many values it touched.
  unsigned overwrite(unsigned char* data, std::size_t n, std::uint64_t at, std::string_view key, bool& edited) const;

  // A value seen whole in this segment that is not the key is filled apart
  // (kOtherFill), so a reader of the capture can still tell a wrong key's
  // refusal from a refusal of the key (crh pcap check's binding rules). The
  // key, and a value not seen whole here, get kFill: nothing about the key
  // is shown either way.
  static unsigned char fill_of(const unsigned char* data, std::size_t n, std::uint64_t at, std::uint64_t b,
                               std::uint64_t e, bool closed, std::string_view key);
};

}  // namespace crh::capture::detail
