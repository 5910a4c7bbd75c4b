// HTTP exchanges on a reassembled stream: core's HTTP/1 readers fed each
// direction, requests paired with answers in order, each exchange handed out
// as it ends. Pairing after a gap, by TCP sequence space, is gap_pairing.cpp.
#include <algorithm>

#include "capture/extractor_parts.hpp"

namespace crh::capture::extraction {

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

void Extractor::note_unparsed(Stream& st, std::string why) {
  if (st.noted_unparsed) return;
  st.noted_unparsed = true;
  ++summary.unparsed_count;
  if (summary.unparsed.size() < 100)
    summary.unparsed.push_back(UnparsedStream{st.index, st.client, st.server, st.first_frame, std::move(why)});
}

void Extractor::emit_ready(Stream& st) {
  while (!st.queue.empty() && st.queue.front().request_done && st.queue.front().response_done) {
    st.last_emitted_start = std::max(st.last_emitted_start, st.queue.front().req_start);
    uncount(st, st.queue.front());
    emit(st, std::move(st.queue.front().ex));
    st.queue.pop_front();
  }
}

// What an entry holds, roughly: the object and the strings it keeps.
std::size_t Extractor::cost(const WireExchange& ex) {
  std::size_t n = sizeof(Entry) + ex.request.method.size() + ex.request.target.size() + ex.request.body.size();
  for (const auto& h : ex.request.headers) n += sizeof(h) + h.name.size() + h.value.size();
  if (ex.response) {
    n += ex.response->body.size();
    for (const auto& h : ex.response->headers) n += sizeof(h) + h.name.size() + h.value.size();
  }
  return n;
}

void Extractor::recount(Stream& st, Entry& e) {
  const std::size_t c = cost(e.ex);
  st.queued_bytes = st.queued_bytes - e.bytes + c;
  total_queued = total_queued - e.bytes + c;
  e.bytes = c;
}

void Extractor::uncount(Stream& st, Entry& e) {
  st.queued_bytes -= e.bytes;
  total_queued -= e.bytes;
  e.bytes = 0;
}

// Requests waiting for answers are bounded (a capture of the client's side
// alone never sees one): past the bound the oldest is handed out without
// its answer, so memory stays flat and exchanges flow.
void Extractor::bound_queue(Stream& st) {
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

void Extractor::emit(Stream& st, WireExchange&& ex) {
  ++summary.exchanges;
  ++st.emitted;
  if (!ex.complete) ++summary.incomplete_exchanges;
  summary.conflicting_overlaps += ex.conflicting_overlaps;
  sink(std::move(ex));
}

Entry* Extractor::unanswered(Stream& st) {
  for (auto& e : st.queue)
    if (!e.response_done) return &e;
  return nullptr;
}

// The entry the active answer belongs to; none for an orphan answer.
Entry* Extractor::answered(Stream& st) {
  if (!st.resp_active || st.resp_orphan) return nullptr;
  for (auto& e : st.queue)
    if (e.ex.sequence == st.resp_seq) return e.response_done ? nullptr : &e;
  return nullptr;
}

// Looks for a message start in an unsynced direction: at a line start, a
// request line or a status line; or at the start of a segment, since
// senders usually start a message in a new segment (an answer follows a
// body without a line end). Returns where it begins, or npos.
std::size_t Extractor::find_start(Half& h, std::string_view data, bool requests, std::uint64_t frame,
                                  bool segment_start) {
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

void Extractor::request_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns) {
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
bool Extractor::drop_headless_request(Stream& st) {
  if (st.queue.empty()) return false;
  Entry& e = st.queue.back();
  if (e.request_done || !st.req.method().empty() || e.response_done || (st.resp_active && !st.resp_orphan)) return false;
  if (unanswered(st) != &e) return false;
  uncount(st, e);
  st.queue.pop_back();
  --st.next_sequence;
  return true;
}

void Extractor::request_failed(Stream& st, const std::string& why, std::uint64_t frame) {
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

void Extractor::response_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns) {
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

void Extractor::finish_response(Stream& st, Entry& e, WireTime last) {
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

void Extractor::response_failed(Stream& st, const std::string& why, std::uint64_t frame) {
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

// `abs`: the offset of data's first byte; `ack`: its segment's ack, if any.
void Extractor::deliver(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns,
                        std::int64_t abs, std::uint32_t ack, bool acked) {
  // The stream's first bytes decide whether it carries SIP or HTTP.
  if (!st.sip_decided && !decide_sip(st, dir, data, frame, ns, abs, ack, acked)) return;
  if (st.sip) return sip_bytes(st, dir, data, frame, ns);
  st.seg_abs = abs;
  const Half& other = st.half[1 - dir];
  st.seg_ack = acked && st.acks_ok && other.based ? other.next_abs + static_cast<std::int32_t>(ack - other.next_seq) : kUnknown;
  if (dir == 0) request_bytes(st, data, frame, ns);
  else response_bytes(st, data, frame, ns);
}

// A direction ended (FIN delivered, RST, or the stream closed).
void Extractor::end_direction(Stream& st, int dir, std::uint64_t frame) {
  Half& h = st.half[dir];
  if (h.ended) return;
  if (!st.sip_decided) release_held(st, frame, h.last_byte.ns);
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

}  // namespace crh::capture::extraction
