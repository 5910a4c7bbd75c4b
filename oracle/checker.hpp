// The race's invariant checker (DESIGN.md §6): reads the history per alias and
// tag epoch and reports each broken first-caller-wins rule with the
// operations that prove it. It only judges what the times make certain: an
// operation that may or may not have taken effect never makes a violation.
// The rule is the model's (model.hpp: lock_answer, lock_after_call); this
// reads a concurrent round into the lock each call met.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "oracle/history.hpp"
#include "oracle/model.hpp"

namespace crh::oracle {

// One tag epoch as the race ran it: the tag, every call made to the alias it
// returned, and the untag that ended it.
struct Round {
  std::uint64_t id = 0;
  Op tag;                        // outcome ok; tag.alias is the alias the target chose
  std::vector<Op> calls;         // first and second calls, in any order
  std::optional<Op> untag;       // absent when the round ended without one
  std::int64_t lifetime_ns = 0;  // the tag's minutes in the target's time; 0: unlimited
};

enum class ViolationKind {
  two_winners,            // two callers connected in one epoch, racing
  connected_after_bound,  // a caller connected after another one had been bound
  bound_caller_rejected,  // the bound caller was refused later in its epoch
  rejected_while_free,    // a call was refused when no other caller could have been bound yet
  alias_tagged_twice,     // a tag returned an alias another tag still held
  // a tag refused as "every alias is tagged" while the load's own history
  // shows an alias untagged (loadgen/tag_ledger.hpp)
  tag_refused_while_free,
  // The mixed load's reads (oracle/register_checker.hpp): a value a write
  // completed before the read was sent had replaced, or one no write left.
  database_stale_read,
  database_unwritten_read,
  agent_stale_state,
  agent_unexplained_state,
};
inline constexpr std::size_t kViolationKinds = 10;
std::string_view to_string(ViolationKind k);

struct Violation {
  ViolationKind kind;
  std::uint64_t round = 0;
  std::string alias;
  std::string explanation;  // a sentence: what the rule says, what the operations show
  std::vector<Op> proof;    // the operations that prove it, in invoke order
  // The mixed load's reads only: the key or agent, what a linearizable
  // service could have answered, what came back, how to run it again.
  std::string id, expected, actual, reproduce;
};

class Checker {
 public:
  // Keeps this many past epochs per alias to compare new tags with; more than
  // the rounds ever in flight at once.
  explicit Checker(std::size_t epochs_per_alias = 256) : epochs_per_alias_(epochs_per_alias) {}

  // Checks one round and returns what it proves broken.
  std::vector<Violation> add(const Round& round);

  std::uint64_t rounds() const { return rounds_; }

 private:
  struct Epoch {
    std::uint64_t round;
    Op tag;
    std::optional<Op> untag;
    std::int64_t certain_begin, certain_end;  // when the tag certainly held
  };
  struct Judged;
  static AliasFacts lock_before(const Judged& j, const Op& c);
  static void check_winners(Judged& j);
  static void check_refusals(Judged& j);
  void check_tagged_twice(Judged& j);  // and keeps the round's epoch
  std::size_t epochs_per_alias_;
  std::unordered_map<std::string, std::deque<Epoch>> epochs_;
  std::uint64_t rounds_ = 0;
};

// The window in which a round's tag certainly held: from the tag's answer to
// the untag's start or the end of the lifetime counted from the tag's start.
std::pair<std::int64_t, std::int64_t> certain_window(const Round& round);

}  // namespace crh::oracle
