// Shrinking a failing sequence (delta debugging, then simplifying each step):
// a candidate is kept when its replay still breaks the same rule.
#include <set>

#include "contracts/explore/explore.hpp"

namespace crh::contracts::explore {

Shrunk shrink(const Sequence& failing, const Replay& failed, std::string_view rule,
              const std::function<Replay(const Sequence&)>& run, std::size_t budget,
              const std::function<bool()>& stopped) {
  Shrunk best{failing, failed, 0, false};
  // A step on an alias names the last tag step before it that picked that
  // alias (its tag's lifetime is the one the step ran in): when dropped steps
  // change which alias a tag picks (the least recently used), the step
  // follows the tag.
  for (std::size_t i = 0; i < best.sequence.size() && i < failed.sent.size(); ++i) {
    auto& step = best.sequence[i];
    const auto endpoint = step.op.endpoint;
    if (step.kind == Step::Kind::before_expiry || step.kind == Step::Kind::after_expiry || failed.sent[i].ops.empty() ||
        (endpoint != core::api::Operation::call && endpoint != core::api::Operation::untag))
      continue;
    for (std::size_t j = i; j-- > 0;)
      if (failed.sent[j].picked == failed.sent[i].ops.front().id) {
        step.alias_of = failed.sent[j].step.serial;
        break;
      }
  }
  const bool racy = failed.failure && failed.failure->step < failed.sent.size() &&
                    failed.sent[failed.failure->step].step.kind == Step::Kind::burst;
  const std::size_t tries = racy ? 6 : 1;
  if (failed.failure) best.sequence.resize(std::min(best.sequence.size(), failed.failure->step + 1));

  // Keeps `candidate` (cut after the step that failed) when it still fails so.
  const auto still_fails = [&](const Sequence& candidate) {
    if (best.replays >= budget) return false;
    if (stopped && stopped()) {
      best.interrupted = true;
      return false;
    }
    // A failure of calls at one instant may not come every time: a few tries.
    Replay r;
    for (std::size_t t = 0; t < tries && best.replays < budget; ++t) {
      ++best.replays;
      r = run(candidate);
      if (r.failure && r.failure->rule() == rule) break;
    }
    if (!r.failure || r.failure->rule() != rule) return false;
    best.sequence.assign(candidate.begin(), candidate.begin() + static_cast<std::ptrdiff_t>(r.failure->step + 1));
    best.replay = std::move(r);
    return true;
  };
  const auto drop_chunks = [&] {
    for (std::size_t chunk = std::max<std::size_t>(best.sequence.size() / 2, 1);; chunk /= 2) {
      for (std::size_t start = 0; start < best.sequence.size() && best.replays < budget && !best.interrupted;) {
        Sequence candidate = best.sequence;
        const auto end = std::min(start + chunk, candidate.size());
        candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(start),
                        candidate.begin() + static_cast<std::ptrdiff_t>(end));
        if (candidate.empty() || !still_fails(candidate)) start += chunk;
      }
      if (chunk == 1) break;
    }
  };
  // Plainer versions of step i, plainest first.
  const auto simpler = [](const Step& s) {
    std::vector<Step> out;
    if (s.key != KeyForm::proper) out.push_back(s), out.back().key = KeyForm::proper;
    if (s.trailing_slash) out.push_back(s), out.back().trailing_slash = false;
    if (s.encode_all) out.push_back(s), out.back().encode_all = false;
    if (s.kind == Step::Kind::burst) {
      out.push_back(s), out.back().kind = Step::Kind::request, out.back().also_callers.clear();
      if (s.also_callers.size() > 1) out.push_back(s), out.back().also_callers.resize(1);
    }
    if (s.op.value && *s.op.value != "v") out.push_back(s), out.back().op.value = "v";
    if (s.op.endpoint == core::api::Operation::tag && s.op.tag && *s.op.tag != probe_tags().front())
      out.push_back(s), out.back().op.tag = probe_tags().front();
    return out;
  };

  // First, one guess at what matters: the steps on the failing step's
  // resource (its agent, key or alias; a tag by the alias it picked), the
  // waits for those tags, and the first lists (what the model learns the
  // target from).
  if (failed.failure && failed.failure->step < failed.sent.size()) {
    const auto resource = [](const Sent& s) {
      return !s.picked.empty() ? s.picked : s.ops.empty() ? std::string() : s.ops.front().id;
    };
    const std::string wanted = resource(failed.sent[failed.failure->step]);
    Sequence guess;
    std::set<std::uint32_t> kept_tags;
    bool agents_listed = false, aliases_listed = false;
    for (std::size_t i = 0; i < best.sequence.size() && i < failed.sent.size(); ++i) {
      const auto& step = best.sequence[i];
      const auto endpoint = step.op.endpoint;
      const bool wait = step.kind == Step::Kind::before_expiry || step.kind == Step::Kind::after_expiry;
      bool keep = i == failed.failure->step || (!wait && !wanted.empty() && resource(failed.sent[i]) == wanted) ||
                  (wait && kept_tags.contains(step.alias_of));
      if (endpoint == core::api::Operation::list_agents && !agents_listed) keep = agents_listed = true;
      if (endpoint == core::api::Operation::list_aliases && !aliases_listed) keep = aliases_listed = true;
      if (keep && endpoint == core::api::Operation::tag) kept_tags.insert(step.serial);
      if (keep) guess.push_back(step);
    }
    if (guess.size() < best.sequence.size()) still_fails(guess);
  }
  drop_chunks();
  const std::size_t before = best.sequence.size();
  bool simplified = false;
  for (std::size_t i = 0; i < best.sequence.size() && best.replays < budget && !best.interrupted; ++i)
    for (const auto& plainer : simpler(best.sequence[i])) {
      if (i >= best.sequence.size()) break;
      Sequence candidate = best.sequence;
      candidate[i] = plainer;
      if (still_fails(candidate)) {
        simplified = true;
        break;
      }
    }
  if (simplified || best.sequence.size() != before) drop_chunks();
  return best;
}

}  // namespace crh::contracts::explore
