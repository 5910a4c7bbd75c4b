// LRU cycle and race reasoning.
#include "oracle/verdicts.hpp"

#include <algorithm>
#include <set>

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

RaceVerdict race_verdict(const std::vector<CallOutcome>& outcomes) {
  const auto count = [&](CallOutcome o) { return std::count(outcomes.begin(), outcomes.end(), o); };
  const auto connected = count(CallOutcome::connected);
  const auto unknown = count(CallOutcome::unknown);
  const auto throttled = count(CallOutcome::throttled);  // not handled: says nothing of the binding
  const std::string tally = std::to_string(connected) + " of " + std::to_string(outcomes.size()) +
                            " callers connected, " + std::to_string(count(CallOutcome::refused)) + " refused, " +
                            (throttled ? std::to_string(throttled) + " throttled, " : "") + std::to_string(unknown) +
                            " unknown (no answer)";
  if (connected > 1) return {RaceVerdict::broken, "expected exactly one caller to win the race, got " + tally};
  if (connected == 1) return {RaceVerdict::held, tally};
  if (unknown + throttled > 0)
    return {RaceVerdict::undecided, "no answered caller connected and some calls got no answer: " + tally};
  return {RaceVerdict::broken,
          "expected one caller to connect (any caller may call a newly tagged alias), got " + tally};
}

}  // namespace crh::oracle
