// The Apikey header's values found in a direction's bytes and overwritten
// (see apikey_scanner.hpp): the line state machine and the fill chosen.
#include "capture/apikey_scanner.hpp"

#include <algorithm>
#include <cstring>

#include "capture/packet_redaction.hpp"

namespace crh::capture::detail {

void Scanner::close(std::uint64_t end) {
  ranges.emplace_back(open_start, end);
  if (ranges.size() > kRanges) ranges.pop_front();
}

unsigned Scanner::scan(const unsigned char* data, std::size_t n, std::uint64_t at) {
  unsigned opened = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (state == State::other) {  // the rest of a line that is not the header: skipped whole
      const void* nl = std::memchr(data + i, '\n', n - i);
      if (nl == nullptr) break;
      i = static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - data);
      state = State::line_start;
      continue;
    }
    const unsigned char c = data[i];
    const std::uint64_t pos = at + i;
    switch (state) {
      case State::line_start:
        if (lower(c) == kName[0]) {
          state = State::name;
          name_pos = 1;
        } else if (c != '\n') {
          state = State::other;
        }
        break;
      case State::name:
        if (name_pos == kName.size()) {
          state = c == ':' ? State::ows : (c == '\n' ? State::line_start : State::other);
        } else if (lower(c) == kName[name_pos]) {
          ++name_pos;
        } else {
          state = c == '\n' ? State::line_start : State::other;
        }
        break;
      case State::ows:
        if (c == ' ' || c == '\t') break;
        if (c == '\r' || c == '\n') {
          state = c == '\n' ? State::line_start : State::other;
          break;
        }
        state = State::value;
        open_start = pos;
        ++opened;
        break;
      case State::value:
        if (c == '\r' || c == '\n') {
          close(pos);
          state = c == '\n' ? State::line_start : State::other;
        }
        break;
      case State::other:
        if (c == '\n') state = State::line_start;
        break;
    }
  }
  next = at + n;
  return opened;
}

unsigned Scanner::overwrite(unsigned char* data, std::size_t n, std::uint64_t at, std::string_view key,
                           bool& edited) const {
  unsigned touched = 0;
  auto fill = [&](std::uint64_t b, std::uint64_t e, bool closed) {
    const std::uint64_t from = std::max(b, at), to = std::min(e, at + n);
    if (from >= to) return;
    ++touched;
    const unsigned char f = fill_of(data, n, at, b, e, closed, key);
    for (auto k = from; k < to; ++k) {
      auto& byte = data[k - at];
      if (byte != f) {
        byte = f;
        edited = true;
      }
    }
  };
  if (state == State::value) fill(open_start, next, false);
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    if (it->second <= at) break;  // ascending: the rest end earlier still
    fill(it->first, it->second, true);
  }
  return touched;
}

unsigned char Scanner::fill_of(const unsigned char* data, std::size_t n, std::uint64_t at, std::uint64_t b,
                               std::uint64_t e, bool closed, std::string_view key) {
  if (!closed || b < at || e > at + n) return PacketRedactor::kFill;
  const std::string_view value(reinterpret_cast<const char*>(data + (b - at)), e - b);
  const bool key_or_filled =
      value == key || value.find_first_not_of(static_cast<char>(PacketRedactor::kFill)) == std::string_view::npos;
  return key_or_filled ? PacketRedactor::kFill : PacketRedactor::kOtherFill;
}

}  // namespace crh::capture::detail
