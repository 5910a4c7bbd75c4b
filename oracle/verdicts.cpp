// LRU cycle and race reasoning.
#include "oracle/verdicts.hpp"

#include <algorithm>
#include <set>

#include "oracle/checker.hpp"

namespace crh::oracle {

std::optional<std::string> lru_cycle_problem(const std::vector<std::string>& picks,
                                             const std::vector<std::string>& untagged) {
  const std::size_t k = untagged.size();
  if (k == 0) return "no untagged alias to cycle through";
  if (picks.size() != 2 * k) return "expected " + std::to_string(2 * k) + " picks, got " + std::to_string(picks.size());
  auto list = [](auto first, auto last) {
    std::string out;
    for (auto it = first; it != last; ++it) out += (out.empty() ? "" : ", ") + *it;
    return "[" + out + "]";
  };
  const std::set<std::string> free(untagged.begin(), untagged.end());
  std::set<std::string> seen;
  for (std::size_t i = 0; i < k; ++i) {
    if (!free.contains(picks[i]))
      return "cycle 1 picked alias " + picks[i] + ", which was not among the untagged aliases " +
             list(untagged.begin(), untagged.end());
    if (!seen.insert(picks[i]).second)
      return "the first " + std::to_string(k) + " tag+delete cycles should visit each of the " + std::to_string(k) +
             " untagged aliases once (least recently used first), but alias " + picks[i] + " came back at cycle " +
             std::to_string(i + 1) + " while others were unused longer: picks " +
             list(picks.begin(), picks.begin() + static_cast<long>(i) + 1);
  }
  for (std::size_t i = 0; i < k; ++i)
    if (picks[k + i] != picks[i])
      return "the second round should repeat the first round's order " +
             list(picks.begin(), picks.begin() + static_cast<long>(k)) +
             " (each alias is then the least recently used in turn), got " +
             list(picks.begin() + static_cast<long>(k), picks.end());
  return std::nullopt;
}

namespace {

// The race as the one first-caller-wins judge (checker.hpp) sees it: a tag
// that held throughout, and every call released at once, so that any caller
// may have been first. A throttled call goes in as every "not now" does
// (Op::not_now): it took no effect, so it neither bound its caller nor was
// a refusal; a call with no answer may have bound its caller.
Round race_round(const std::vector<CallOutcome>& outcomes) {
  Round round;
  round.id = 1;
  round.tag = {.kind = OpKind::tag, .alias = "raced", .invoke_ns = 0, .complete_ns = 1, .outcome = Outcome::ok};
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    Op& call = round.calls.emplace_back(Op{.round = round.id,
                                           .kind = OpKind::call,
                                           .alias = "raced",
                                           .caller = "caller " + std::to_string(i + 1),
                                           .invoke_ns = 2,
                                           .complete_ns = 3});
    read_call_outcome(call, outcomes[i]);
  }
  return round;
}

}  // namespace

RaceVerdict race_verdict(const std::vector<CallOutcome>& outcomes) {
  const auto count = [&](CallOutcome o) { return std::count(outcomes.begin(), outcomes.end(), o); };
  const auto connected = count(CallOutcome::connected);
  const auto unknown = count(CallOutcome::unknown);
  const auto throttled = count(CallOutcome::throttled);
  const std::string tally = std::to_string(connected) + " of " + std::to_string(outcomes.size()) +
                            " callers connected, " + std::to_string(count(CallOutcome::refused)) + " refused, " +
                            (throttled ? std::to_string(throttled) + " throttled, " : "") + std::to_string(unknown) +
                            " unknown (no answer)";
  if (!Checker().add(race_round(outcomes)).empty())
    return {RaceVerdict::broken,
            connected > 1 ? "expected exactly one caller to win the race, got " + tally
                          : "expected one caller to connect (any caller may call a newly tagged alias), got " + tally};
  if (connected == 1) return {RaceVerdict::held, tally};
  return {RaceVerdict::undecided,
          "no caller connected and the others' calls got no answer or were throttled: " + tally};
}

}  // namespace crh::oracle
