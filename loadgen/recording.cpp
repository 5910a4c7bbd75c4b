// What an answer counts as: an outcome for the history's checker, an error or
// an expected refusal in the statistics.
#include "loadgen/engine_parts.hpp"

#include <algorithm>

#include "oracle/answers.hpp"

namespace crh::loadgen::engine {
// What an HTTP status says is read as the answer judge reads it
// (oracle::status_class): success is exactly 200 (spec 7.1, rule C2), so a 204
// or a 201 never counts as a request that succeeded; a 5xx or no answer leaves
// the outcome unknown.
Outcome outcome_of(const Answer& a) {
  switch (oracle::status_class(a.status)) {
    case oracle::StatusClass::none:
    case oracle::StatusClass::server_error: return Outcome::indeterminate;
    case oracle::StatusClass::success: return Outcome::ok;
    default: return Outcome::fail;
  }
}

namespace {

bool one_of(const std::vector<unsigned>& statuses, unsigned status) {
  return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
}

// The answers an operation may get that are a "no" by design, not an error:
// the profile's statuses for every alias tagged and for a refused call.
bool expected_refusal(const core::ExpectedStatuses& s, OpKind op, unsigned status) {
  if (op == OpKind::tag) return one_of(s.all_tagged, status);
  if (op == OpKind::call || op == OpKind::recall) return one_of(s.call_refused, status);
  if (op == OpKind::sip_call || op == OpKind::sip_recall) return one_of(s.sip_refused, status);
  return false;
}

// No answer, or a server error (DESIGN §3: never a contract answer).
bool down(const Answer& a) {
  const auto cls = oracle::status_class(a.status);
  return cls == oracle::StatusClass::none || cls == oracle::StatusClass::server_error;
}

// A success: HTTP 200 only (C2); a SIP call's any 2xx (RFC 3261 §21.2).
bool succeeded(OpKind op, const Answer& a) {
  if (op == OpKind::sip_call || op == OpKind::sip_recall) return a.status / 100 == 2;
  return oracle::status_class(a.status) == oracle::StatusClass::success;
}

}  // namespace

bool throttled(const LoadConfig& c, OpKind op, const Answer& a) {
  if (op == OpKind::sip_call || op == OpKind::sip_recall) return a.status == 503 && a.retry_after.has_value();
  return core::throttled(a.status, c.statuses);
}

Liveness liveness(const LoadConfig& c, OpKind op, const Answer& a) {
  if (throttled(c, op, a)) return Liveness::up;  // there, and saying "not now"
  if (down(a)) return Liveness::down;
  if (succeeded(op, a)) return Liveness::up;
  return expected_refusal(c.statuses, op, a.status) ? Liveness::up : Liveness::neither;
}

bool all_tagged(const LoadConfig& c, unsigned status) { return one_of(c.statuses.all_tagged, status); }

bool is_error(const LoadConfig& c, OpKind op, const Answer& a) {
  if (throttled(c, op, a)) return false;
  if (down(a)) return true;
  if (succeeded(op, a)) return false;
  return !expected_refusal(c.statuses, op, a.status);
}

// Counts one operation if `counted_at` is inside the measured window: its due
// time, or for the race the start of its round, so a round counts whole.
void record(Worker& w, OpKind op, const Answer& a, Clock::time_point due, Clock::time_point sent,
            Clock::time_point counted_at) {
  const bool measured = !a.interrupted && counted_at >= w.run.measure_from && counted_at < w.run.measure_until;
  if (w.run.config.keep_client_exchanges && a.conn != 0) [[unlikely]]
    w.client_exchanges.push_back(
        {a.conn, a.order, static_cast<std::uint8_t>(op), measured,
         a.status ? std::chrono::duration_cast<std::chrono::nanoseconds>(a.done - sent).count() : -1, a.offset});
  if (a.interrupted) return;  // the run ended first: it says nothing about the target
  // Outages: every success marks the target up (the warm-up's too, so an
  // outage at the start begins at the last one); a down answer counts when measured.
  switch (liveness(w.run.config, op, a)) {
    case Liveness::up: w.outages.timeline.up(w.run.since_measuring(a.done)); break;
    case Liveness::down:
      if (measured) w.outages.timeline.down(w.run.since_measuring(a.done), a.status, a.failure);
      break;
    case Liveness::neither: break;
  }
  const bool error = is_error(w.run.config, op, a);
  w.requests.fetch_add(1, std::memory_order_relaxed);
  if (error) w.errors.fetch_add(1, std::memory_order_relaxed);
  if (!measured) return;
  OpStats& s = w.stats.ops[static_cast<std::size_t>(op)];
  const std::int64_t latency = std::chrono::duration_cast<std::chrono::nanoseconds>(a.done - due).count();
  s.latency[static_cast<std::size_t>(outcome_of(a))].record(latency);
  s.uncorrected.record(std::chrono::duration_cast<std::chrono::nanoseconds>(a.done - sent).count());
  if (a.status) ++s.statuses[std::min<unsigned>(a.status, 599)];
  else ++s.failures[static_cast<std::size_t>(a.failure)];
  s.errors += error;
  s.refusals += expected_refusal(w.run.config.statuses, op, a.status);
  s.throttled += throttled(w.run.config, op, a);
  w.stats.record_second(op,
                        std::chrono::duration_cast<std::chrono::nanoseconds>(counted_at - w.run.measure_from).count(),
                        latency, error);
}

Op make_op(const Run& run, std::uint64_t round, OpKind kind, std::string alias, std::string caller,
           Clock::time_point invoke, const Answer& a) {
  Op op;
  op.round = round;
  op.kind = kind;
  op.alias = std::move(alias);
  op.caller = std::move(caller);
  op.invoke_ns = run.ns(invoke);
  op.complete_ns = run.ns(a.done);
  op.outcome = outcome_of(a);
  op.not_now = op.outcome == Outcome::fail && throttled(run.config, kind, a);  // a SIP 503 is indeterminate
  op.status = a.status;
  op.error = a.error;
  return op;
}

std::uint64_t ledger_tag_sent(Run& run) {
  if (!run.judges_refusals()) return 0;
  std::lock_guard lock(run.mutex);
  return run.ledger.tag_sent();
}

void ledger_tag_done(Run& run, std::uint64_t ticket, const Answer& a, const std::optional<std::string>& alias,
                     Clock::time_point sent) {
  if (ticket == 0) return;
  const Op op = make_op(run, 0, OpKind::tag, alias.value_or(""), "", sent, a);
  std::lock_guard lock(run.mutex);
  run.add_violations(run.ledger.tag_done(ticket, op, all_tagged(run.config, a.status)));
}

void ledger_untag_done(Run& run, const Op& untag) {
  if (!run.judges_refusals()) return;
  std::lock_guard lock(run.mutex);
  run.ledger.untag_done(untag);
}

}  // namespace crh::loadgen::engine
