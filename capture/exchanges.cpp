// Offline reading of captures: frames decoded down to TCP, each direction of
// each stream reassembled as the receiver's stack would deliver it (first copy
// wins, gaps never spliced), and core's HTTP/1 readers pairing requests with
// answers on the stream. Exchanges leave as soon as they end and a stream is
// freed when it closes, so memory follows open streams, not file size.
#include "capture/exchanges.hpp"

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

#include "core/http1.hpp"

namespace crh::capture {

std::optional<std::int64_t> WireExchange::wire_latency_ns() const {
  if (request_last.frame == 0 || response_last.frame == 0 || !response) return std::nullopt;
  return response_last.ns - request_last.ns;
}

namespace {

namespace http1 = core::http1;

constexpr int kLinktypeIpv4 = 228, kLinktypeIpv6 = 229, kLinktypeRaw = 101;

std::uint16_t be16(const unsigned char* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }
std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// One TCP segment as decoded from a frame.
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

enum class Decoded { tcp, skipped, fragment };

constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;

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
    if (p[9] != 6) return Decoded::skipped;
    s.v6 = false;
    s.src = p + 12;
    s.dst = p + 16;
    // Ethernet pads short frames: trust IP's length, not the frame's.
    const std::size_t captured = std::min(n, total);
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
      if (next == 6) {
        const std::size_t captured = std::min(n, wire_end);
        if (at > captured) return Decoded::skipped;
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

// The 4-tuple with the lower endpoint first, so both directions find the stream.
struct Key {
  std::array<unsigned char, 37> bytes{};
  bool operator==(const Key& o) const { return bytes == o.bytes; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(k.bytes.data()), k.bytes.size()));
  }
};

// 16 address bytes then the port: one endpoint, comparable as bytes.
using Endpoint = std::array<unsigned char, 18>;
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

bool starts_request(std::string_view s) {
  static constexpr std::string_view kMethods[] = {"GET ", "POST ", "PUT ", "DELETE ", "HEAD ", "PATCH ", "OPTIONS ",
                                                   "CONNECT ", "TRACE "};
  for (auto m : kMethods)
    if (s.substr(0, m.size()) == m) return true;
  return false;
}

bool starts_response(std::string_view s) { return s.substr(0, 7) == "HTTP/1."; }

void mark(WireExchange& e, const std::string& why) {
  if (why.empty()) return;
  if (e.complete) e.incomplete = why;
  e.complete = false;
}

// Bytes not yet delivered: ahead of a hole, or missing from a truncated frame.
struct Held {
  std::string data;
  std::size_t missing = 0;  // a run of bytes the capture lacks (data empty)
  std::uint64_t frame = 0;
  std::int64_t ns = 0;
  std::uint32_t ack = 0;  // the segment's acknowledgment number
  bool acked = false;     // it had one (ACK flag, non-zero)
  std::size_t size() const { return missing ? missing : data.size(); }
};

constexpr std::int64_t kUnknown = INT64_MIN;
constexpr std::int64_t kMaxAckedGap = 64 * 1024 * 1024;  // an ack further ahead is not believed

// A run of bytes the capture lacks, in a direction's offsets.
struct Lost {
  std::int64_t start = 0, end = 0;
};

struct Half {
  bool based = false;
  std::uint32_t next_seq = 0;  // sequence number of the next byte to deliver
  std::int64_t next_abs = 0;   // its offset from the direction's first byte (no wraparound)
  bool fin = false;
  std::int64_t fin_abs = 0;
  bool ended = false;
  bool from_syn = false;  // offsets count from the SYN (else from the first byte seen)
  std::map<std::int64_t, Held> held;
  std::size_t held_bytes = 0;
  // The HTTP reader's position: in step with message starts, or looking for one.
  bool synced = true;
  bool line_start = true;
  std::uint64_t skipped = 0;
  std::uint64_t skipped_frame = 0;
  WireTime last_byte;  // of the last payload delivered: where a close-delimited answer ends
};

struct Entry {
  WireExchange ex;
  bool request_done = false;
  bool response_done = false;
  // Where the request lies in the client's offsets and what the client had
  // received of the server's bytes when it began (its first segment's ack):
  // after a gap, answers are paired by these, not by order.
  std::int64_t req_start = 0, req_end = kUnknown, req_ack = kUnknown;
  bool req_whole = false;  // read to its end
  std::size_t bytes = 0;   // counted in the stream's queued_bytes (see cost)
};

// After a loss in the requests, the answers to the lost requests lie in the
// server's bytes from `from` (what the client had received when it sent the
// last request before the loss) to `to` (the same for the first request after
// it). Seen whole, each answer there stands for one lost request and the
// requests' places on the stream stay certain; lost too, they do not.
struct LossSpan {
  std::int64_t from = kUnknown, to = INT64_MAX;
  std::int64_t client_at = 0;  // where the lost requests began (client offset)
};

struct Stream {
  std::uint64_t index = 0;
  Key key;
  Endpoint client_ep{};
  WireEndpoint client, server;
  std::uint64_t first_frame = 0;
  std::int64_t last_ns = 0;
  bool midway = false;
  Half half[2];  // 0: client to server, 1: server to client
  http1::RequestReader req;
  http1::ResponseReader resp;
  bool req_active = false, resp_active = false;
  bool resp_orphan = false;
  bool pending_first = false;  // the final answer's first byte is in the next piece (after a 1xx)
  std::deque<Entry> queue;
  std::uint32_t next_sequence = 0;
  std::string uncertain;  // set when later exchanges cannot be paired with certainty
  // Resynchronising after gaps by TCP sequence space: answers pair with the
  // request whose end their ack names (see pair_by_ack).
  bool resync = false;       // a gap came: pair by acks from now on
  bool no_resync = false;    // pairing by acks is not possible (given up, pipelining)
  bool acks_ok = true;       // every data segment so far carried an ACK
  bool pipelined = false;    // an answer began with two requests waiting
  std::uint32_t resp_seq = 0;  // the sequence of the entry the active answer belongs to (not orphan)
  std::int64_t seg_abs = 0, seg_ack = kUnknown;  // the piece being delivered: its offset and its ack (other side's offset)
  std::int64_t last_req_ack = kUnknown;          // req_ack of the last request begun
  std::int64_t answer_end = kUnknown;            // server offset after the last answer read whole
  std::int64_t last_emitted_start = kUnknown;
  std::vector<Lost> lost[2];
  std::vector<LossSpan> spans;
  std::string unplaced;  // set once a loss hid an unknown number of requests: later places are unknown
  std::uint32_t carry_conflicts = 0;
  bool noted_unparsed = false;
  std::uint64_t emitted = 0;
  std::size_t queued_bytes = 0;    // of the entries in queue
  std::uint32_t skip_answers = 0;  // entries handed out unanswered whose answers, if they come, are not theirs to pair
  Stream* older = nullptr;         // open streams by last activity (Impl::oldest .. newest)
  Stream* newer = nullptr;
  Stream(const http1::ReaderLimits& l)
      : req(l, http1::HeaderCapture::on), resp(l, http1::HeaderCapture::on) {}
};

}  // namespace

struct ExchangeExtractor::Impl {
  ExchangeSink sink;
  ReadLimits limits;
  http1::ReaderLimits reader_limits;
  ReadSummary summary;
  std::unordered_map<Key, std::unique_ptr<Stream>, KeyHash> streams;
  std::size_t total_held = 0;
  std::size_t total_queued = 0;  // Entry::bytes of every queue
  std::size_t total_stream_bytes = 0;  // kStreamCost per open stream
  Stream* oldest = nullptr;  // the least recently active open stream
  Stream* newest = nullptr;
  // What one open stream costs besides its buffers: the object, its map node.
  static constexpr std::size_t kStreamCost = sizeof(Stream) + sizeof(Key) + sizeof(void*) * 4;

  std::size_t used() const { return total_held + total_queued + total_stream_bytes; }

  // ------------------------------------------------ streams by activity

  void link_newest(Stream& st) {
    st.older = newest;
    st.newer = nullptr;
    if (newest) newest->newer = &st;
    else oldest = &st;
    newest = &st;
  }
  void unlink(Stream& st) {
    if (st.older) st.older->newer = st.newer;
    else oldest = st.newer;
    if (st.newer) st.newer->older = st.older;
    else newest = st.older;
    st.older = st.newer = nullptr;
  }
  void touch(Stream& st) {
    if (newest == &st) return;
    unlink(st);
    link_newest(st);
  }
  std::uint64_t next_index = 0;
  std::vector<int> links_seen;

  // ------------------------------------------------------------ HTTP side

  void note_unparsed(Stream& st, std::string why) {
    if (st.noted_unparsed) return;
    st.noted_unparsed = true;
    ++summary.unparsed_count;
    if (summary.unparsed.size() < 100)
      summary.unparsed.push_back(UnparsedStream{st.index, st.client, st.server, st.first_frame, std::move(why)});
  }

  void emit_ready(Stream& st) {
    while (!st.queue.empty() && st.queue.front().request_done && st.queue.front().response_done) {
      st.last_emitted_start = std::max(st.last_emitted_start, st.queue.front().req_start);
      uncount(st, st.queue.front());
      emit(st, std::move(st.queue.front().ex));
      st.queue.pop_front();
    }
  }

  // What an entry holds, roughly: the object and the strings it keeps.
  static std::size_t cost(const WireExchange& ex) {
    std::size_t n = sizeof(Entry) + ex.request.method.size() + ex.request.target.size() + ex.request.body.size();
    for (const auto& h : ex.request.headers) n += sizeof(h) + h.name.size() + h.value.size();
    if (ex.response) {
      n += ex.response->body.size();
      for (const auto& h : ex.response->headers) n += sizeof(h) + h.name.size() + h.value.size();
    }
    return n;
  }
  void recount(Stream& st, Entry& e) {
    const std::size_t c = cost(e.ex);
    st.queued_bytes = st.queued_bytes - e.bytes + c;
    total_queued = total_queued - e.bytes + c;
    e.bytes = c;
  }
  void uncount(Stream& st, Entry& e) {
    st.queued_bytes -= e.bytes;
    total_queued -= e.bytes;
    e.bytes = 0;
  }

  // Requests waiting for answers are bounded (a capture of the client's side
  // alone never sees one): past the bound the oldest is handed out without
  // its answer, so memory stays flat and exchanges flow.
  void bound_queue(Stream& st) {
    while (st.queue.size() > 1 && st.queue.front().request_done) {
      std::string why;
      if (st.queue.size() > limits.max_waiting_requests)
        why = "no answer seen within " + std::to_string(limits.max_waiting_requests) + " requests";
      else if (st.queued_bytes > limits.stream_buffer_bytes)
        why = "no answer seen while " + std::to_string(limits.stream_buffer_bytes) + " bytes of later requests waited";
      else if (used() > limits.total_buffer_bytes)
        why = "no answer seen before the reader's memory bound was reached";
      else
        return;
      Entry& e = st.queue.front();
      if (!e.response_done) {
        // An answer that has not begun yet, if it comes, is this request's:
        // it must not be paired with the next one.
        if (!(st.resp_active && !st.resp_orphan && st.resp_seq == e.ex.sequence)) ++st.skip_answers;
        mark(e.ex, why);
        e.ex.response_first = {};
        e.response_done = true;
      }
      emit_ready(st);
    }
  }

  void emit(Stream& st, WireExchange&& ex) {
    ++summary.exchanges;
    ++st.emitted;
    if (!ex.complete) ++summary.incomplete_exchanges;
    summary.conflicting_overlaps += ex.conflicting_overlaps;
    sink(std::move(ex));
  }

  Entry* unanswered(Stream& st) {
    for (auto& e : st.queue)
      if (!e.response_done) return &e;
    return nullptr;
  }

  // The entry the active answer belongs to; none for an orphan answer.
  Entry* answered(Stream& st) {
    if (!st.resp_active || st.resp_orphan) return nullptr;
    for (auto& e : st.queue)
      if (e.ex.sequence == st.resp_seq) return e.response_done ? nullptr : &e;
    return nullptr;
  }

  // ------------------------------------------------- pairing after gaps

  static bool overlaps(const std::vector<Lost>& lost, std::int64_t from, std::int64_t to) {
    if (from == kUnknown || to == kUnknown) return false;
    for (const auto& l : lost)
      if (l.start < to && l.end > from) return true;
    return false;
  }
  static bool inside(const std::vector<Lost>& lost, std::int64_t at) {
    for (const auto& l : lost)
      if (l.start < at && at <= l.end) return true;
    return false;
  }

  // Bytes skipped after a gap up to `to`, looking for a message start: as
  // unknown as the lost ones (they may hold whole messages), so the lost run
  // grows over them.
  void unreadable(Stream& st, int dir, std::int64_t to) {
    if (!st.resync || st.lost[dir].empty()) return;
    Lost& l = st.lost[dir].back();
    if (to <= l.end) return;
    const std::int64_t from = l.end;
    l.end = to;
    if (dir == 1)
      for (const auto& span : st.spans)
        if (from < span.to && to > span.from) {
          lose_places(st, span.client_at, "after gaps in both directions");
          return;
        }
  }

  // A loss in both directions at once hid an unknown number of requests:
  // exchanges are still paired by acks, but the places of the requests from
  // `client_at` on are unknown (place_known false; incomplete unless the
  // reader was asked to keep them).
  void lose_places(Stream& st, std::int64_t client_at, const std::string& where) {
    if (st.unplaced.empty())
      st.unplaced = where + ", how many requests the capture lost is unknown: this request's place on the stream is not";
    for (auto& e : st.queue)
      if (e.req_start >= client_at) unplace(st, e);
  }
  void unplace(Stream& st, Entry& e) {
    e.ex.place_known = false;
    if (!limits.keep_unplaced && !e.ex.request_offset) mark(e.ex, st.unplaced);
  }

  bool can_resync(const Stream& st) const {
    return st.acks_ok && !st.no_resync && !st.pipelined && st.half[0].based && st.half[1].based;
  }

  // Pairing by acks cannot go on: from here, what is open is uncertain (the
  // behaviour before resynchronisation existed).
  void give_up(Stream& st, const std::string& why) {
    st.resync = false;
    st.no_resync = true;
    if (st.uncertain.empty()) st.uncertain = why;
    for (auto& e : st.queue)
      if (!e.response_done) mark(e.ex, st.uncertain);
  }

  // Earlier requests still waiting when `until` (an answer) is paired: their
  // answers came before it, so they must lie in lost answer bytes (else the
  // client pipelined and the pairing is not certain: false).
  bool settle_earlier(Stream& st, const Entry* until, std::int64_t to) {
    for (auto& u : st.queue) {
      if (&u == until) break;
      if (u.response_done) continue;
      if (!overlaps(st.lost[1], u.req_ack, to)) return false;
    }
    for (auto& u : st.queue) {
      if (&u == until) break;
      if (u.response_done) continue;
      mark(u.ex, "the answer was lost in a gap of the capture");
      u.ex.response_first = {};
      u.response_done = true;
    }
    return true;
  }

  // After a gap: the request an answer starting at server offset `start`
  // belongs to, by the ack of its first segment. The server had received the
  // client's bytes up to that ack when it answered, and the client had
  // received the server's bytes up to `start` when it sent the request
  // (its own ack). An answer whose ack ends a lost run answers a request the
  // capture cannot see: it gets an entry of its own, incomplete, so later
  // requests keep their places. nullptr: given up, pair by order.
  Entry* pair_by_ack(Stream& st, std::int64_t start, std::uint64_t frame) {
    if (st.seg_ack == kUnknown) {
      give_up(st, "after a gap, an answer without an acknowledgment number cannot be paired with certainty");
      return nullptr;
    }
    const std::int64_t ack = st.seg_ack;
    const std::string why = "after a gap, the answer at frame " + std::to_string(frame) +
                            " cannot be paired with certainty (pipelined requests?)";
    for (auto& e : st.queue) {
      if (e.response_done || !e.request_done) continue;
      const bool whole = e.req_whole && e.req_end == ack;
      const bool cut = !e.req_whole && e.req_start < ack && inside(st.lost[0], ack);
      if (!whole && !cut) continue;
      if (e.req_ack != start || !settle_earlier(st, &e, e.req_ack)) {
        give_up(st, why);
        return nullptr;
      }
      return &e;
    }
    if (!inside(st.lost[0], ack) || st.last_emitted_start >= ack) {
      give_up(st, why);
      return nullptr;
    }
    // A request the capture lost whole: its place is before any request
    // that begins at or after the ack.
    auto at = std::find_if(st.queue.begin(), st.queue.end(), [&](const Entry& e) { return e.req_start >= ack; });
    const auto position = static_cast<std::size_t>(at - st.queue.begin());
    for (std::size_t i = 0; i < position; ++i) {
      Entry& u = st.queue[i];
      if (!u.response_done && !overlaps(st.lost[1], u.req_ack, start)) {
        give_up(st, why);
        return nullptr;
      }
    }
    Entry lost;
    lost.ex.stream = st.index;
    lost.ex.client = st.client;
    lost.ex.server = st.server;
    lost.ex.sequence = at == st.queue.end() ? st.next_sequence : at->ex.sequence;
    mark(lost.ex, "the request was lost in a gap of the capture (answered at frame " + std::to_string(frame) + ")");
    lost.request_done = true;
    lost.req_start = ack;  // somewhere before; only its end is known
    lost.req_end = ack;
    lost.req_ack = start;
    for (auto it = at; it != st.queue.end(); ++it) ++it->ex.sequence;
    ++st.next_sequence;
    at = st.queue.insert(at, std::move(lost));
    recount(st, *at);
    settle_earlier(st, &*at, start);
    return &*at;
  }

  // Looks for a message start in an unsynced direction: at a line start, a
  // request line or a status line; or at the start of a segment, since
  // senders usually start a message in a new segment (an answer follows a
  // body without a line end). Returns where it begins, or npos.
  std::size_t find_start(Half& h, std::string_view data, bool requests, std::uint64_t frame, bool segment_start) {
    std::size_t at = 0;
    while (at < data.size()) {
      if ((h.line_start || (segment_start && at == 0)) && (requests ? starts_request(data.substr(at)) : starts_response(data.substr(at)))) {
        h.synced = true;
        return at;
      }
      const auto nl = data.find('\n', at);
      if (h.skipped == 0) h.skipped_frame = frame;
      if (nl == std::string_view::npos) {
        h.skipped += data.size() - at;
        h.line_start = false;
        return std::string_view::npos;
      }
      h.skipped += nl + 1 - at;
      at = nl + 1;
      h.line_start = true;
    }
    return std::string_view::npos;
  }

  void request_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns) {
    Half& h = st.half[0];
    const std::size_t total = data.size();
    bool segment_start = true;
    for (; !data.empty(); segment_start = false) {
      if (!h.synced) {
        const auto at = find_start(h, data, true, frame, segment_start);
        unreadable(st, 0, st.seg_abs + static_cast<std::int64_t>(total - data.size() + std::min(at, data.size())));
        if (at == std::string_view::npos) return;
        data.remove_prefix(at);
      }
      if (!st.req_active) {
        st.req.reset(true);
        st.req_active = true;
      }
      const bool was_started = st.req.started();
      const std::size_t n = st.req.feed(data);
      if (!was_started && st.req.started()) {
        Entry e;
        e.ex.stream = st.index;
        e.ex.sequence = st.next_sequence++;
        e.ex.client = st.client;
        e.ex.server = st.server;
        e.ex.request_first = WireTime{ns, frame};
        e.ex.conflicting_overlaps = st.carry_conflicts;
        e.req_start = st.seg_abs + static_cast<std::int64_t>(total - data.size());
        if (h.from_syn && e.req_start >= 0) e.ex.request_offset = static_cast<std::uint64_t>(e.req_start);
        e.req_ack = st.seg_ack;
        st.carry_conflicts = 0;
        mark(e.ex, st.uncertain);
        if (!st.unplaced.empty()) unplace(st, e);
        st.queue.push_back(std::move(e));
        recount(st, st.queue.back());
        st.last_req_ack = st.seg_ack;
        for (auto& span : st.spans)
          if (span.to == INT64_MAX) span.to = st.seg_ack == kUnknown ? span.from : st.seg_ack;
      }
      data.remove_prefix(n);
      h.line_start = n > 0 ? false : h.line_start;
      const auto state = st.req.state();
      if (state == http1::State::done) {
        Entry& e = st.queue.back();
        e.ex.request.method = st.req.method();
        e.ex.request.target = st.req.target();
        e.ex.request.headers = st.req.headers();
        e.ex.request.body = st.req.body();
        e.ex.head = st.req.method() == "HEAD";
        e.ex.request_last = WireTime{ns, frame};
        e.request_done = true;
        e.req_whole = true;
        e.req_end = st.seg_abs + static_cast<std::int64_t>(total - data.size());
        recount(st, e);
        st.req_active = false;
        h.line_start = true;
        emit_ready(st);
        bound_queue(st);
      } else if (state == http1::State::error) {
        request_failed(st, "request: " + st.req.error(), frame);
      } else if (n == 0) {
        return;
      }
    }
  }

  // A request that never got past its first line is not an exchange: bytes
  // that are not HTTP, unless an answer already took it for a request.
  bool drop_headless_request(Stream& st) {
    if (st.queue.empty()) return false;
    Entry& e = st.queue.back();
    if (e.request_done || !st.req.method().empty() || e.response_done || (st.resp_active && !st.resp_orphan)) return false;
    if (unanswered(st) != &e) return false;
    uncount(st, e);
    st.queue.pop_back();
    --st.next_sequence;
    return true;
  }

  void request_failed(Stream& st, const std::string& why, std::uint64_t frame) {
    Half& h = st.half[0];
    note_unparsed(st, why + " (client to server, frame " + std::to_string(frame) + ")");
    if (st.req_active && st.req.started()) drop_headless_request(st);
    if (st.req_active && st.req.started() && !st.queue.empty() && !st.queue.back().request_done) {
      Entry& e = st.queue.back();
      e.ex.request.method = st.req.method();
      e.ex.request.target = st.req.target();
      mark(e.ex, "unreadable " + why + " at frame " + std::to_string(frame));
      e.request_done = true;
    }
    st.req_active = false;
    h.synced = false;
    h.line_start = false;
    st.uncertain = "after an unreadable request at frame " + std::to_string(frame) + ", answers cannot be paired with certainty";
    st.resync = false;
    st.no_resync = true;
    emit_ready(st);
  }

  void response_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns) {
    Half& h = st.half[1];
    const std::size_t total = data.size();
    bool segment_start = true;
    for (; !data.empty(); segment_start = false) {
      if (!h.synced) {
        const std::uint64_t skipped_before = h.skipped;
        const auto at = find_start(h, data, false, frame, segment_start);
        unreadable(st, 1, st.seg_abs + static_cast<std::int64_t>(total - data.size() + std::min(at, data.size())));
        if (h.skipped > skipped_before) {
          // Skipped bytes may have held the answer we wait for: it is lost.
          if (Entry* e = st.resync ? nullptr : unanswered(st); e && e->ex.request_first.frame <= h.skipped_frame) {
            mark(e->ex, "answer unreadable: " + std::to_string(h.skipped - skipped_before) +
                            " bytes without a status line from frame " + std::to_string(h.skipped_frame));
            e->response_done = true;
            emit_ready(st);
          }
        }
        if (at == std::string_view::npos) return;
        data.remove_prefix(at);
      }
      if (!st.resp_active) {
        Entry* e = nullptr;
        if (st.resync) e = pair_by_ack(st, st.seg_abs + static_cast<std::int64_t>(total - data.size()), frame);
        if (!st.resync && st.skip_answers > 0) {
          --st.skip_answers;  // the answer to a request handed out unanswered
        } else if (!st.resync) {
          e = unanswered(st);
          // Two requests waiting when an answer begins: the client pipelines,
          // and acks cannot single out the request an answer belongs to.
          if (e && e != &st.queue.back() && !st.queue.back().response_done) st.pipelined = true;
        }
        bool head = false;
        if (e) head = e->request_done ? e->ex.head : st.req.method() == "HEAD";
        st.resp.reset(e != nullptr, http1::Asked{.head = head});
        st.resp_active = true;
        st.resp_orphan = e == nullptr;
        st.resp_seq = e ? e->ex.sequence : 0;
        st.pending_first = false;
        emit_ready(st);
      }
      Entry* e = answered(st);
      const bool was_started = st.resp.started();
      const std::size_t interim_before = st.resp.interim_answers();
      const std::size_t n = st.resp.feed(data);
      const std::string_view consumed = data.substr(0, n);
      data.remove_prefix(n);
      h.line_start = n > 0 ? false : h.line_start;
      if (e) {
        if (!was_started && st.resp.started()) e->ex.response_first = WireTime{ns, frame};
        if (st.resp.interim_answers() > interim_before) {
          e->ex.interim = static_cast<unsigned>(st.resp.interim_answers());
          const auto end = consumed.rfind("\r\n\r\n");
          if (st.resp.state() == http1::State::done || (end != std::string_view::npos && end + 4 < consumed.size())) {
            e->ex.response_first = WireTime{ns, frame};
            st.pending_first = false;
          } else {
            st.pending_first = true;
          }
        } else if (st.pending_first && n > 0) {
          e->ex.response_first = WireTime{ns, frame};
          st.pending_first = false;
        }
      }
      const auto state = st.resp.state();
      if (state == http1::State::done) {
        if (e) finish_response(st, *e, WireTime{ns, frame});
        st.answer_end = st.seg_abs + static_cast<std::int64_t>(total - data.size());
        st.resp_active = false;
        h.line_start = true;
        emit_ready(st);
      } else if (state == http1::State::error) {
        response_failed(st, "answer: " + st.resp.error(), frame);
      } else if (n == 0) {
        return;
      }
    }
  }

  void finish_response(Stream& st, Entry& e, WireTime last) {
    core::HttpResponse r;
    r.status = st.resp.status();
    r.headers = st.resp.headers();
    r.body = st.resp.body();
    e.ex.response = std::move(r);
    e.ex.response_last = last;
    e.ex.interim = static_cast<unsigned>(st.resp.interim_answers());
    e.response_done = true;
    recount(st, e);
  }

  void response_failed(Stream& st, const std::string& why, std::uint64_t frame) {
    Half& h = st.half[1];
    note_unparsed(st, why + " (server to client, frame " + std::to_string(frame) + ")");
    if (Entry* e = answered(st)) {
        mark(e->ex, "unreadable " + why + " at frame " + std::to_string(frame));
        e->ex.response_first = {};
        e->response_done = true;
      }
    st.resp_active = false;
    h.synced = false;
    h.line_start = false;
    st.uncertain = "after an unreadable answer at frame " + std::to_string(frame) + ", answers cannot be paired with certainty";
    give_up(st, st.uncertain);
    emit_ready(st);
  }

  // Bytes the capture lacks: never spliced; the message around them is
  // incomplete and the reader looks for the next message start.
  void gap(Stream& st, int dir, std::size_t bytes, std::uint64_t frame) {
    const std::string where = std::to_string(bytes) + " bytes in the " + (dir == 0 ? "requests" : "answers") +
                              " before frame " + std::to_string(frame);
    if (dir == 0) {
      if (st.req_active && st.req.started() && !st.queue.empty() && !st.queue.back().request_done) {
        Entry& e = st.queue.back();
        e.ex.request.method = st.req.method();
        e.ex.request.target = st.req.target();
        mark(e.ex, "gap of " + where + " (request incomplete)");
        e.request_done = true;
      }
      st.req_active = false;
    } else {
      // The answer the gap cut is incomplete. Without acks to pair by, the
      // first one waiting is taken to be the one the lost bytes held.
      Entry* e = can_resync(st) ? answered(st) : st.resp_orphan ? nullptr : unanswered(st);
      if (e) {
        mark(e->ex, "gap of " + where + " (answer missing)");
        e->ex.response_first = {};
        e->response_done = true;
      }
      st.resp_active = false;
    }
    Half& h = st.half[dir];
    if (can_resync(st)) {
      // Later answers pair by their acks (pair_by_ack); what the gap cut
      // is settled as they come.
      st.resync = true;
      const std::int64_t end = h.next_abs, start = end - static_cast<std::int64_t>(bytes);
      auto& lost = st.lost[dir];
      if (lost.size() >= 64) lost.erase(lost.begin());
      lost.push_back(Lost{start, end});
      bool certain = true;
      std::int64_t client_at = dir == 0 ? start : INT64_MAX;  // where places become unknown
      if (dir == 0) {
        // The answers to what was lost must all be seen to keep the places.
        // Answers come in order: those to the lost requests follow the last
        // answer read and what the client had when it sent its last request.
        const LossSpan span{st.next_sequence == 0 && !st.midway ? 0 : std::max(st.last_req_ack, st.answer_end),
                            INT64_MAX, start};
        certain = span.from != kUnknown && !overlaps(st.lost[1], span.from, span.to);
        while (st.spans.size() >= 64 || (!st.spans.empty() && st.spans.front().to <= st.half[1].next_abs))
          st.spans.erase(st.spans.begin());
        st.spans.push_back(span);
      } else {
        for (const auto& span : st.spans)
          if (start < span.to && end > span.from) {
            certain = false;
            client_at = std::min(client_at, span.client_at);
          }
        // An answer begins where the server's bytes stood when its request
        // was sent: one waiting whose answer began in the lost bytes is cut.
        for (auto& e : st.queue)
          if (!e.response_done && e.req_ack != kUnknown && e.req_ack >= start && e.req_ack < end) {
            mark(e.ex, "gap of " + where + " (answer missing)");
            e.ex.response_first = {};
            e.response_done = true;
          }
      }
      if (!certain) lose_places(st, client_at, "after a gap of " + where + " while the other direction lost bytes too");
    } else {
      st.uncertain = "after a gap of " + where + ", requests and answers cannot be paired with certainty";
      give_up(st, st.uncertain);
    }
    h.synced = false;
    h.line_start = true;
    emit_ready(st);
  }

  // `abs`: the offset of data's first byte; `ack`: its segment's ack, if any.
  void deliver(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns, std::int64_t abs,
               std::uint32_t ack, bool acked) {
    st.seg_abs = abs;
    const Half& other = st.half[1 - dir];
    st.seg_ack = acked && st.acks_ok && other.based ? other.next_abs + static_cast<std::int32_t>(ack - other.next_seq) : kUnknown;
    if (dir == 0) request_bytes(st, data, frame, ns);
    else response_bytes(st, data, frame, ns);
  }

  // A direction ended (FIN delivered, RST, or the stream closed).
  void end_direction(Stream& st, int dir, std::uint64_t frame) {
    Half& h = st.half[dir];
    if (h.ended) return;
    h.ended = true;
    if (dir == 0) {
      if (st.req_active && st.req.started() && drop_headless_request(st))
        note_unparsed(st, "not HTTP/1.1: client to server bytes from frame " + std::to_string(st.first_frame) +
                              " end without a request line");
      if (st.req_active && st.req.started() && !st.queue.empty() && !st.queue.back().request_done) {
        Entry& e = st.queue.back();
        e.ex.request.method = st.req.method();
        e.ex.request.target = st.req.target();
        mark(e.ex, "the stream ended in the middle of the request (frame " + std::to_string(frame) + ")");
        e.request_done = true;
      }
      st.req_active = false;
    } else if (st.resp_active) {
      Entry* e = st.resp_orphan ? nullptr : unanswered(st);
      st.resp.eof();
      if (st.resp.state() == http1::State::done) {
        // A close-delimited body ends here; its last byte came before the FIN.
        if (e) finish_response(st, *e, st.half[1].last_byte);
      } else if (e && st.resp.started()) {
        mark(e->ex, "the stream ended in the middle of the answer (frame " + std::to_string(frame) + ")");
        e->ex.response_first = {};
        e->response_done = true;
      }
      st.resp_active = false;
    }
    emit_ready(st);
  }

  // ------------------------------------------------------------ TCP side

  void release(Half& h, std::map<std::int64_t, Held>::iterator it) {
    h.held_bytes -= it->second.data.size();
    total_held -= it->second.data.size();
    h.held.erase(it);
  }

  // Delivers what is held and now in order.
  void drain(Stream& st, int dir) {
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
  void skip_hole(Stream& st, int dir) {
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

  void flush(Stream& st, int dir) {
    Half& h = st.half[dir];
    while (!h.held.empty()) skip_hole(st, dir);
  }

  // Holds [abs, abs+len) keeping what is already held (the first copy wins).
  void hold(Stream& st, int dir, std::int64_t abs, std::string_view data, std::size_t missing, std::uint64_t frame,
            std::int64_t ns, std::uint32_t ack, bool acked) {
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

  void conflict(Stream& st, int dir) {
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
  void acked_gap(Stream& st, int dir, std::int64_t upto, std::uint64_t frame) {
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

  void data_segment(Stream& st, int dir, const Segment& s, std::uint64_t frame, std::int64_t ns) {
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

  void maybe_end(Stream& st, int dir, std::uint64_t frame) {
    Half& h = st.half[dir];
    if (h.fin && !h.ended && h.next_abs >= h.fin_abs) end_direction(st, dir, frame);
  }

  // Everything still open ends: what is missing is marked, all is handed out.
  void close(Stream& st, std::uint64_t frame, const char* why) {
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

  void close_and_erase(std::unordered_map<Key, std::unique_ptr<Stream>, KeyHash>::iterator it, std::uint64_t frame,
                       const char* why) {
    close(*it->second, frame, why);
    unlink(*it->second);
    total_stream_bytes -= kStreamCost;
    streams.erase(it);
  }

  Stream& open_stream(const Key& key, const Segment& s, bool source_is_client, std::uint64_t frame, std::int64_t ns) {
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
  void cut_oldest(std::uint64_t frame) {
    if (!oldest) return;
    ++summary.streams_cut;
    close_and_erase(streams.find(oldest->key), frame, "was cut (too many open streams)");
  }

  // Streams without a packet for idle_close_ns are at the head of the list:
  // O(1) per packet, plus the streams it closes.
  void sweep(std::int64_t now, std::uint64_t frame) {
    while (oldest && now - oldest->last_ns > limits.idle_close_ns) close_and_erase(streams.find(oldest->key), frame, "went idle");
  }

  void tcp(const Segment& s, std::uint64_t frame, std::int64_t ns) {
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

  void packet(int link, std::int64_t ns, std::uint64_t frame, std::string_view bytes, std::size_t wire_length) {
    ++summary.packets;
    if (summary.packets == 1) summary.first_ns = ns;
    summary.last_ns = std::max(summary.last_ns, ns);
    if (bytes.size() < wire_length) ++summary.truncated_packets;
    if (std::find(links_seen.begin(), links_seen.end(), link) == links_seen.end()) {
      links_seen.push_back(link);
      const char* name = pcap_datalink_val_to_name(link);
      if (!summary.link_type.empty()) summary.link_type += ", ";
      summary.link_type += name ? name : std::to_string(link);
    }
    Segment s;
    switch (decode_frame(link, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), s)) {
      case Decoded::tcp: tcp(s, frame, ns); break;
      case Decoded::fragment:
        ++summary.fragments_skipped;
        ++summary.skipped_packets;
        break;
      case Decoded::skipped: ++summary.skipped_packets; break;
    }
    sweep(ns, frame);
  }

  void finish() {
    while (!streams.empty()) close_and_erase(streams.begin(), summary.packets, "ended with the capture");
  }
};

ExchangeExtractor::ExchangeExtractor(ExchangeSink sink, ReadLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->sink = std::move(sink);
  impl_->limits = limits;
  impl_->reader_limits.body_bytes = limits.body_bytes;
}

ExchangeExtractor::~ExchangeExtractor() = default;

void ExchangeExtractor::packet(int link_type, std::int64_t ns, std::uint64_t frame, std::string_view bytes,
                               std::size_t wire_length) {
  impl_->packet(link_type, ns, frame, bytes, wire_length);
}

void ExchangeExtractor::finish() { impl_->finish(); }

const ReadSummary& ExchangeExtractor::summary() const { return impl_->summary; }

std::size_t ExchangeExtractor::open_streams() const { return impl_->streams.size(); }
std::size_t ExchangeExtractor::buffered_bytes() const { return impl_->total_held; }
std::size_t ExchangeExtractor::queued_bytes() const { return impl_->total_queued; }

ReadSummary read_capture(const std::string& path, const ExchangeSink& sink, ReadLimits limits) {
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, error);
  if (!p)
    throw CaptureFileError("cannot read capture " + path + ": " + error +
                           " (expected a pcap or pcapng file, as tcpdump -w or tshark -w write)");
  std::string format = "pcap";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    unsigned char magic[4] = {};
    if (std::fread(magic, 1, 4, f) == 4 && magic[0] == 0x0a && magic[1] == 0x0d && magic[2] == 0x0d && magic[3] == 0x0a)
      format = "pcapng";
    std::fclose(f);
  }
  ExchangeExtractor extractor(sink, limits);
  const int link = pcap_datalink(p);
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  std::uint64_t frame = 0;
  int rc;
  while ((rc = pcap_next_ex(p, &header, &data)) == 1) {
    const std::int64_t ns = static_cast<std::int64_t>(header->ts.tv_sec) * 1'000'000'000 + header->ts.tv_usec;
    extractor.packet(link, ns, ++frame, std::string_view(reinterpret_cast<const char*>(data), header->caplen),
                     header->len);
  }
  std::string read_error;
  if (rc == PCAP_ERROR) read_error = pcap_geterr(p);
  pcap_close(p);
  extractor.finish();
  ReadSummary summary = extractor.summary();
  summary.format = format;
  if (!read_error.empty()) {
    // A file cut short (a capture still being written, a copy interrupted):
    // what came before stands, and the summary says where it stopped.
    UnparsedStream u;
    u.first_frame = frame + 1;
    u.why = "the file ends early after frame " + std::to_string(frame) + ": " + read_error;
    summary.unparsed.push_back(std::move(u));
    ++summary.unparsed_count;
  }
  return summary;
}

}  // namespace crh::capture
