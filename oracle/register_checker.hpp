// The mixed load's reads judged against its writes (issue 25): a database key
// and an agent's state are registers; a read must return a value some write
// could have left under linearizability. Pure: the loadgen records the
// history, this judges it after the run.
//
// Judged per read, from invoke and completion times only (both taken on one
// steady clock: invoke before the first byte went out, completion after the
// answer was read, so each operation took effect inside its interval):
//  * a write answered 200 took effect inside its interval; a refused one
//    (4xx) did not; one without an answer or with a 5xx may have taken effect
//    at any time after it was sent, so it overlaps everything after it;
//  * a read may return the value of any write that may have taken effect
//    before the read ended, unless a write answered 200 began after that
//    write had ended and itself ended before the read was sent (then that
//    later write certainly came between them); the value before the run,
//    unless a write answered 200 ended before the read was sent.
// Anything else is a violation no linearizable service could produce.
// Values are compared exactly; equal values written twice are told apart by
// value, never by which write left them.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "oracle/checker.hpp"
#include "oracle/history.hpp"

namespace crh::oracle {

enum class Register : std::uint8_t {
  database,  // writes db-set, reads db-get; the value is the database value
  agent,     // writes snooze and wake, reads get-agent and list-agents; the value is the state
};

struct RegisterHistory {
  Register what = Register::database;
  std::string id;                       // the key or the agent
  std::optional<std::string> initial;   // the value before the run; nothing: unknown
  // Writes (db-set, snooze, wake): `value` is what the write leaves; nothing:
  // unknown (a read it may precede is not judged).
  std::vector<Op> writes;
  // Reads answered 200 with a value; others are ignored.
  std::vector<Op> reads;
  // Reads that completed at or after this are not judged (the recording
  // stopped at it; writes sent after it are missing).
  std::int64_t judge_until = std::numeric_limits<std::int64_t>::max();
};

struct RegisterVerdict {
  std::uint64_t judged = 0;                // reads judged
  std::uint64_t violation_count = 0;       // all of them
  std::vector<Violation> violations;       // the first `keep`, with their proof
};

// `keep`: violations returned with their proof (all are counted).
RegisterVerdict check_register(const RegisterHistory& h, std::size_t keep = 100);

}  // namespace crh::oracle
