// TCP connections for the offline reader: a segment's stream found by its
// 4-tuple, streams opened, ended, reset, cut by the memory bounds and closed
// when idle, least recently active first.
#include <algorithm>
#include <cstring>

#include "capture/extractor_parts.hpp"

namespace crh::capture::extraction {
namespace {

constexpr std::int64_t kMaxAckedGap = 64 * 1024 * 1024;  // an ack further ahead is not believed

}  // namespace

Endpoint endpoint(const Segment& s, bool source) {
  Endpoint e{};
  const std::size_t len = s.v6 ? 16 : 4;
  std::memcpy(e.data(), source ? s.src : s.dst, len);
  const std::uint16_t port = source ? s.sport : s.dport;
  e[16] = static_cast<unsigned char>(port >> 8);
  e[17] = static_cast<unsigned char>(port & 0xff);
  return e;
}

Key key_of(const Endpoint& a, const Endpoint& b, bool v6) {
  Key k;
  const bool swap = b < a;
  std::memcpy(k.bytes.data(), (swap ? b : a).data(), 18);
  std::memcpy(k.bytes.data() + 18, (swap ? a : b).data(), 18);
  k.bytes[36] = v6 ? 1 : 0;
  return k;
}

// Open streams by last activity: a list, least recently active first.
void Extractor::link_newest(Stream& st) {
  st.older = newest;
  st.newer = nullptr;
  if (newest) newest->newer = &st;
  else oldest = &st;
  newest = &st;
}

void Extractor::unlink(Stream& st) {
  if (st.older) st.older->newer = st.newer;
  else oldest = st.newer;
  if (st.newer) st.newer->older = st.older;
  else newest = st.older;
  st.older = st.newer = nullptr;
}

void Extractor::touch(Stream& st) {
  if (newest == &st) return;
  unlink(st);
  link_newest(st);
}

void Extractor::maybe_end(Stream& st, int dir, std::uint64_t frame) {
  Half& h = st.half[dir];
  if (h.fin && !h.ended && h.next_abs >= h.fin_abs) end_direction(st, dir, frame);
}

// Everything still open ends: what is missing is marked, all is handed out.
void Extractor::close(Stream& st, std::uint64_t frame, const char* why) {
  for (int dir = 0; dir < 2; ++dir) flush(st, dir);
  end_direction(st, 0, frame);
  end_direction(st, 1, frame);
  for (auto& e : st.queue) {
    if (!e.request_done) {
      mark(e.ex, std::string("the stream ") + why + " in the middle of the request");
      e.request_done = true;
    }
    if (!e.response_done) {
      mark(e.ex, std::string("no answer seen before the stream ") + why);
      e.response_done = true;
    }
  }
  emit_ready(st);
  for (int dir = 0; dir < 2; ++dir)
    if (st.half[dir].skipped > 0 && st.emitted == 0)
      note_unparsed(st, std::string("not HTTP/1.1: ") + std::to_string(st.half[dir].skipped) + " bytes " +
                            (dir == 0 ? "client to server" : "server to client") + " with no request or answer start");
  for (int dir = 0; dir < 2; ++dir) {
    total_held -= st.half[dir].held_bytes;
    st.half[dir].held_bytes = 0;
  }
}

void Extractor::close_and_erase(std::unordered_map<Key, std::unique_ptr<Stream>, KeyHash>::iterator it,
                                std::uint64_t frame, const char* why) {
  close(*it->second, frame, why);
  unlink(*it->second);
  total_stream_bytes -= kStreamCost;
  streams.erase(it);
}

Stream& Extractor::open_stream(const Key& key, const Segment& s, bool source_is_client, std::uint64_t frame,
                               std::int64_t ns) {
  auto st = std::make_unique<Stream>(reader_limits);
  st->index = next_index++;
  st->key = key;
  st->client_ep = endpoint(s, source_is_client);
  st->client = WireEndpoint{printable(s.v6, source_is_client ? s.src : s.dst), source_is_client ? s.sport : s.dport};
  st->server = WireEndpoint{printable(s.v6, source_is_client ? s.dst : s.src), source_is_client ? s.dport : s.sport};
  st->first_frame = frame;
  st->last_ns = ns;
  ++summary.streams;
  while (oldest && (streams.size() >= limits.max_streams || used() + kStreamCost > limits.total_buffer_bytes))
    cut_oldest(frame);
  auto& slot = streams[key];
  slot = std::move(st);
  link_newest(*slot);
  total_stream_bytes += kStreamCost;
  return *slot;
}

// O(1): the least recently active stream is the head of the list.
void Extractor::cut_oldest(std::uint64_t frame) {
  if (!oldest) return;
  ++summary.streams_cut;
  close_and_erase(streams.find(oldest->key), frame, "was cut (too many open streams)");
}

// Streams without a packet for idle_close_ns are at the head of the list:
// O(1) per packet, plus the streams it closes.
void Extractor::sweep(std::int64_t now, std::uint64_t frame) {
  while (oldest && now - oldest->last_ns > limits.idle_close_ns) close_and_erase(streams.find(oldest->key), frame, "went idle");
}

void Extractor::tcp(const Segment& s, std::uint64_t frame, std::int64_t ns) {
  ++summary.tcp_packets;
  const Endpoint src = endpoint(s, true), dst = endpoint(s, false);
  const Key key = key_of(src, dst, s.v6);
  auto it = streams.find(key);
  const bool syn = s.flags & kSyn, ack = s.flags & kAck;
  if (it != streams.end() && syn) {
    // A SYN on a tuple whose stream carried data or ended: a new connection.
    Stream& old = *it->second;
    const int dir = old.client_ep == src ? 0 : 1;
    const Half& h = old.half[dir];
    const bool same = h.based && static_cast<std::uint32_t>(s.seq + 1) == h.next_seq && h.next_abs == 0;
    if (!same && (old.half[0].next_abs > 0 || old.half[1].next_abs > 0 || old.half[0].ended || old.half[1].ended)) {
      close_and_erase(it, frame, "ended");
      it = streams.end();
    }
  }
  if (it == streams.end()) {
    // Pure ACKs and a lone FIN/RST open nothing: they trail a closed stream.
    if (!syn && s.payload_length == 0) return;
    bool source_is_client = true;
    if (syn) source_is_client = !ack;
    else if (starts_response(s.payload)) source_is_client = false;
    else if (starts_sip(s.payload)) source_is_client = s.payload.substr(0, 8) != "SIP/2.0 ";
    else if (!starts_request(s.payload)) source_is_client = s.sport > s.dport;
    Stream& st = open_stream(key, s, source_is_client, frame, ns);
    st.midway = !syn;
    it = streams.find(key);
  }
  Stream& st = *it->second;
  st.last_ns = ns;
  touch(st);
  const int dir = st.client_ep == src ? 0 : 1;
  Half& h = st.half[dir];
  if (syn) {
    if (!h.based) {
      h.based = true;
      h.from_syn = true;
      h.next_seq = s.seq + 1;
      h.next_abs = 0;
    }
  }
  if (s.payload_length > 0 && (!(s.flags & kAck) || s.ack == 0)) st.acks_ok = false;
  if ((s.flags & kAck) && s.ack != 0 && st.acks_ok) {
    // Acked bytes the capture lacks in the other direction are a gap now.
    Half& o = st.half[1 - dir];
    if (o.based && !o.ended) {
      std::int64_t upto = o.next_abs + static_cast<std::int32_t>(s.ack - o.next_seq);
      if (o.fin) upto = std::min(upto, o.fin_abs);
      if (upto > o.next_abs && upto - o.next_abs <= kMaxAckedGap) acked_gap(st, 1 - dir, upto, frame);
    }
  }
  if (s.payload_length > 0) data_segment(st, dir, s, frame, ns);
  if ((s.flags & kFin) && h.based && !h.fin) {
    h.fin = true;
    const std::int64_t abs = h.next_abs + static_cast<std::int32_t>(s.seq - h.next_seq);
    h.fin_abs = abs + static_cast<std::int64_t>(s.payload_length);
  } else if ((s.flags & kFin) && !h.based) {
    h.based = true;
    h.next_seq = s.seq;
    h.fin = true;
    h.fin_abs = 0;
  }
  maybe_end(st, dir, frame);
  if (s.flags & kRst) {
    close_and_erase(it, frame, "was reset");
    return;
  }
  if (st.half[0].ended && st.half[1].ended) close_and_erase(it, frame, "ended");
}

}  // namespace crh::capture::extraction
