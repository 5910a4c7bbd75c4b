// The vocabulary of a concurrent history: every operation with its invoke and
// completion times and outcome, and its JSON-lines form. A load run records
// one (loadgen/history.hpp writes it to a file); a capture's exchanges are
// replayed as one (capture/pcap_check); the checker judges it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/call_outcome.hpp"

namespace crh::oracle {

// Every operation the generator sends. `call` is a caller's first call in a
// race round, `recall` its second.
enum class OpKind : std::uint8_t {
  get,
  list_agents,
  get_agent,
  snooze,
  wake,
  db_get,
  db_set,
  list_aliases,
  tag,
  untag,
  call,
  recall,
  sip_call,    // the race's call placed by the SIP call driver: its figures never mix with HTTP's
  sip_recall,  // the SIP race's second call
  count_
};
inline constexpr std::size_t kOpKinds = static_cast<std::size_t>(OpKind::count_);

std::string_view to_string(OpKind k);  // "get", "list-agents", ..., "untag", "call", "recall", "sip-call", "sip-recall"
std::optional<OpKind> op_kind_by_name(std::string_view name);

// ok: the target said yes (2xx). fail: it said no (any other answer).
// indeterminate: no answer, or a 5xx: the operation may or may not have been applied.
enum class Outcome : std::uint8_t { ok, fail, indeterminate, count_ };
inline constexpr std::size_t kOutcomes = static_cast<std::size_t>(Outcome::count_);
std::string_view to_string(Outcome o);

struct Op {
  std::uint64_t round = 0;  // race round id; 0 outside the race
  OpKind kind = OpKind::get;
  std::string alias;             // tag: the alias it returned; untag and calls: the alias addressed
  std::string caller;            // calls: the calling number
  std::int64_t invoke_ns = 0;    // since the run started (steady clock): when the last byte went out
  std::int64_t complete_ns = 0;  // when the answer was complete (or the attempt given up)
  Outcome outcome = Outcome::indeterminate;
  unsigned status = 0;  // HTTP status; 0 when there was no answer
  std::string error;    // why there was no answer ("timeout", "reset", ...)
  // The mixed load's reads and writes: the database key or agent addressed,
  // and the value written, or read (a database value; an agent's state field
  // as JSON text); nothing when none was sent or could be read.
  std::string id;
  std::optional<std::string> value;
  // An HTTP "not now" (core::throttled: a 429), outcome `fail`: it took no
  // effect, so it is no refusal either. (A SIP 503 with Retry-After is
  // `indeterminate`, unmarked: it may have bound on the way, calls/call_driver.hpp.)
  bool not_now = false;  // last: the positional initializers above stay valid
};

// A call driver's answer as a history reads it: connected is ok, refused a
// fail, throttled a "not now" (a fail, marked), no answer indeterminate.
void read_call_outcome(Op& op, core::CallOutcome o);

// One JSON object, no newline.
std::string to_json_line(const Op& op);

}  // namespace crh::oracle
