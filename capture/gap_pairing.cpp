// Pairing after gaps: once the capture lost bytes, answers pair with
// requests by TCP sequence space (an answer's ack names its request's end),
// and a loss in both directions at once makes the requests' places unknown.
#include <algorithm>

#include "capture/extractor_parts.hpp"

namespace crh::capture::extraction {

bool Extractor::overlaps(const std::vector<Lost>& lost, std::int64_t from, std::int64_t to) {
  if (from == kUnknown || to == kUnknown) return false;
  for (const auto& l : lost)
    if (l.start < to && l.end > from) return true;
  return false;
}

bool Extractor::inside(const std::vector<Lost>& lost, std::int64_t at) {
  for (const auto& l : lost)
    if (l.start < at && at <= l.end) return true;
  return false;
}

// Bytes skipped after a gap up to `to`, looking for a message start: as
// unknown as the lost ones (they may hold whole messages), so the lost run
// grows over them.
void Extractor::unreadable(Stream& st, int dir, std::int64_t to) {
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
void Extractor::lose_places(Stream& st, std::int64_t client_at, const std::string& where) {
  if (st.unplaced.empty())
    st.unplaced = where + ", how many requests the capture lost is unknown: this request's place on the stream is not";
  for (auto& e : st.queue)
    if (e.req_start >= client_at) unplace(st, e);
}

void Extractor::unplace(Stream& st, Entry& e) {
  e.ex.place_known = false;
  if (!limits.keep_unplaced && !e.ex.request_offset) mark(e.ex, st.unplaced);
}

bool Extractor::can_resync(const Stream& st) const {
  return st.acks_ok && !st.no_resync && !st.pipelined && st.half[0].based && st.half[1].based;
}

// Pairing by acks cannot go on: from here, what is open is uncertain (the
// behaviour before resynchronisation existed).
void Extractor::give_up(Stream& st, const std::string& why) {
  st.resync = false;
  st.no_resync = true;
  if (st.uncertain.empty()) st.uncertain = why;
  for (auto& e : st.queue)
    if (!e.response_done) mark(e.ex, st.uncertain);
}

// Earlier requests still waiting when `until` (an answer) is paired: their
// answers came before it, so they must lie in lost answer bytes (else the
// client pipelined and the pairing is not certain: false).
bool Extractor::settle_earlier(Stream& st, const Entry* until, std::int64_t to) {
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
Entry* Extractor::pair_by_ack(Stream& st, std::int64_t start, std::uint64_t frame) {
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

// Bytes the capture lacks: never spliced; the message around them is
// incomplete and the reader looks for the next message start.
void Extractor::gap(Stream& st, int dir, std::size_t bytes, std::uint64_t frame) {
  if (st.sip) return sip_broken(st, dir, "gap of " + std::to_string(bytes) + " bytes", frame, st.last_ns);
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

}  // namespace crh::capture::extraction
