// TCP reassembly for the offline reader: each direction's bytes put in order
// as the receiver's stack delivers them (first copy wins, gaps never spliced,
// acked holes declared at once). What the bytes mean is http_pairing.cpp's.
#include <algorithm>

#include "capture/extractor_parts.hpp"

namespace crh::capture::extraction {

void Extractor::release(Half& h, std::map<std::int64_t, Held>::iterator it) {
  h.held_bytes -= it->second.data.size();
  total_held -= it->second.data.size();
  h.held.erase(it);
}

// Delivers what is held and now in order.
void Extractor::drain(Stream& st, int dir) {
  Half& h = st.half[dir];
  while (!h.held.empty()) {
    auto it = h.held.begin();
    const std::int64_t start = it->first;
    if (start > h.next_abs) break;
    const std::int64_t end = start + static_cast<std::int64_t>(it->second.size());
    if (end > h.next_abs) {
      const auto skip = static_cast<std::size_t>(h.next_abs - start);
      const std::size_t len = static_cast<std::size_t>(end - h.next_abs);
      const std::uint64_t frame = it->second.frame;
      const std::int64_t ns = it->second.ns;
      const std::int64_t from = h.next_abs;
      const std::uint32_t ack = it->second.ack;
      const bool acked = it->second.acked;
      h.next_abs = end;
      h.next_seq += static_cast<std::uint32_t>(len);
      if (it->second.missing) {
        release(h, it);
        gap(st, dir, len, frame);
      } else {
        // Move out first: delivering may not touch the map, but keep it simple and safe.
        std::string bytes = std::move(it->second.data);
        h.held_bytes -= bytes.size();
        total_held -= bytes.size();
        h.held.erase(it);
        h.last_byte = WireTime{ns, frame};
        deliver(st, dir, std::string_view(bytes).substr(skip), frame, ns, from, ack, acked);
      }
    } else {
      release(h, it);
    }
  }
}

// Declares the hole before the first held segment a gap and delivers on.
void Extractor::skip_hole(Stream& st, int dir) {
  Half& h = st.half[dir];
  if (h.held.empty()) return;
  auto it = h.held.begin();
  if (it->first > h.next_abs) {
    const auto bytes = static_cast<std::size_t>(it->first - h.next_abs);
    h.next_seq += static_cast<std::uint32_t>(bytes);
    h.next_abs = it->first;
    gap(st, dir, bytes, it->second.frame);
  }
  drain(st, dir);
}

void Extractor::flush(Stream& st, int dir) {
  Half& h = st.half[dir];
  while (!h.held.empty()) skip_hole(st, dir);
}

// Holds [abs, abs+len) keeping what is already held (the first copy wins).
void Extractor::hold(Stream& st, int dir, std::int64_t abs, std::string_view data, std::size_t missing,
                     std::uint64_t frame, std::int64_t ns, std::uint32_t ack, bool acked) {
  Half& h = st.half[dir];
  const std::int64_t end = abs + static_cast<std::int64_t>(missing ? missing : data.size());
  std::int64_t cursor = std::max(abs, h.next_abs);
  auto it = h.held.upper_bound(cursor);
  if (it != h.held.begin()) --it;
  struct Piece {
    std::int64_t at, end;
  };
  Piece pieces[64];
  std::size_t count = 0;
  for (; it != h.held.end() && it->first < end && cursor < end; ++it) {
    const std::int64_t hs = it->first, he = hs + static_cast<std::int64_t>(it->second.size());
    if (he <= cursor) continue;
    if (hs > cursor && count < 64) pieces[count++] = {cursor, std::min(hs, end)};
    // Overlap: compare what both copies carry.
    const std::int64_t os = std::max(cursor, hs), oe = std::min(end, he);
    if (!missing && !it->second.missing && os < oe) {
      const auto a = data.substr(static_cast<std::size_t>(os - abs), static_cast<std::size_t>(oe - os));
      const auto b = std::string_view(it->second.data).substr(static_cast<std::size_t>(os - hs), static_cast<std::size_t>(oe - os));
      if (a != b) conflict(st, dir);
    }
    cursor = std::max(cursor, he);
  }
  if (cursor < end && count < 64) pieces[count++] = {cursor, end};
  for (std::size_t i = 0; i < count; ++i) {
    Held piece;
    piece.frame = frame;
    piece.ns = ns;
    piece.ack = ack;
    piece.acked = acked;
    if (missing) piece.missing = static_cast<std::size_t>(pieces[i].end - pieces[i].at);
    else piece.data.assign(data.substr(static_cast<std::size_t>(pieces[i].at - abs), static_cast<std::size_t>(pieces[i].end - pieces[i].at)));
    h.held_bytes += piece.data.size();
    total_held += piece.data.size();
    h.held.emplace(pieces[i].at, std::move(piece));
  }
}

void Extractor::conflict(Stream& st, int dir) {
  // Counted on the exchange whose bytes they are, when one is open.
  Entry* e = nullptr;
  if (dir == 0 && !st.queue.empty()) e = &st.queue.back();
  if (dir == 1) e = unanswered(st);
  if (e) ++e->ex.conflicting_overlaps;
  else ++st.carry_conflicts;
}

// The peer acknowledged bytes of direction `dir` up to `upto`: what the
// capture lacks before that was received and will never be sent again, so
// it is a gap now, not at the end of the stream.
void Extractor::acked_gap(Stream& st, int dir, std::int64_t upto, std::uint64_t frame) {
  Half& h = st.half[dir];
  while (h.next_abs < upto) {
    std::int64_t stop = upto;
    std::uint64_t at = frame;
    if (!h.held.empty()) {
      if (h.held.begin()->first <= h.next_abs) {
        drain(st, dir);
        continue;
      }
      stop = std::min(stop, h.held.begin()->first);
      if (stop == h.held.begin()->first) at = h.held.begin()->second.frame;
    }
    const std::int64_t bytes = stop - h.next_abs;
    h.next_seq += static_cast<std::uint32_t>(bytes);
    h.next_abs = stop;
    gap(st, dir, static_cast<std::size_t>(bytes), at);
    drain(st, dir);
  }
}

void Extractor::data_segment(Stream& st, int dir, const Segment& s, std::uint64_t frame, std::int64_t ns) {
  Half& h = st.half[dir];
  if (!h.based) {
    h.based = true;
    h.next_seq = s.seq;
    h.next_abs = 0;
    h.synced = false;  // a direction seen from mid-way: find a message start
    h.line_start = true;
  }
  const std::int64_t abs = h.next_abs + static_cast<std::int32_t>(s.seq - h.next_seq);
  const std::int64_t end = abs + static_cast<std::int64_t>(s.payload_length);
  if (end <= h.next_abs) return;  // a retransmission of what was delivered
  const bool truncated = s.payload.size() < s.payload_length;
  const bool acked = (s.flags & kAck) && s.ack != 0;
  if (h.held.empty() && abs <= h.next_abs && !truncated) {
    // In order with nothing pending: straight to the reader, no copy.
    const auto skip = static_cast<std::size_t>(h.next_abs - abs);
    const std::int64_t from = h.next_abs;
    h.next_abs = end;
    h.next_seq += static_cast<std::uint32_t>(s.payload.size() - skip);
    h.last_byte = WireTime{ns, frame};
    deliver(st, dir, s.payload.substr(skip), frame, ns, from, s.ack, acked);
    return;
  }
  hold(st, dir, abs, s.payload, 0, frame, ns, s.ack, acked);
  if (truncated)
    hold(st, dir, abs + static_cast<std::int64_t>(s.payload.size()), {}, s.payload_length - s.payload.size(), frame, ns,
         s.ack, acked);
  drain(st, dir);
  if (h.held_bytes > limits.stream_buffer_bytes)
    while (h.held_bytes > limits.stream_buffer_bytes / 2 && !h.held.empty()) skip_hole(st, dir);
  if (total_held > limits.total_buffer_bytes) {
    ++summary.streams_cut;
    flush(st, dir);
  }
}

}  // namespace crh::capture::extraction
