// The reasoning behind the verdicts that need more than one answer, as pure
// functions: the LRU cycle (R2) and a race of callers (B1, B2).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/call_outcome.hpp"

namespace crh::oracle {

// `picks`: the aliases that 2k tag+delete cycles returned, in order, where
// `untagged` are the k aliases free at the start. The least recently used
// pick visits every free alias once, then repeats the same order. Returns
// what broke that, or nothing when it held.
std::optional<std::string> lru_cycle_problem(const std::vector<std::string>& picks,
                                             const std::vector<std::string>& untagged);

using core::CallOutcome;  // what the call driver learned of each call

struct RaceVerdict {
  enum Kind { held, broken, undecided } kind;
  std::string text;
};

// K distinct callers called one freshly tagged alias at once: exactly one
// connects, judged by the Checker (checker.hpp) on a round where every call
// overlaps every other. An unknown or throttled outcome (timeout, reset, "not
// now") may have bound its caller, so it proves nothing on its own.
RaceVerdict race_verdict(const std::vector<CallOutcome>& outcomes);

}  // namespace crh::oracle
