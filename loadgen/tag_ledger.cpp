// A refused "every alias is tagged" judged against the load's own tags.
#include "loadgen/tag_ledger.hpp"

#include <algorithm>

namespace crh::loadgen {
namespace {

std::string describe(const oracle::Op& op) {
  std::string s = std::string(to_string(op.kind)) + (op.alias.empty() ? "" : " of alias " + op.alias) + " [" +
                  std::to_string(op.invoke_ns / 1000) + "–" + std::to_string(op.complete_ns / 1000) + " µs] → ";
  return s + (op.status ? "HTTP " + std::to_string(op.status) : op.error.empty() ? "no answer" : op.error);
}

}  // namespace

std::uint64_t TagLedger::tag_sent() {
  in_flight_.insert(++clock_);
  return clock_;
}

std::vector<oracle::Violation> TagLedger::tag_done(std::uint64_t ticket, const oracle::Op& op,
                                                   bool refused_all_tagged) {
  in_flight_.erase(ticket);
  ++clock_;
  if (refused_all_tagged) {
    Pending p{op, clock_, {}};
    for (const auto& [alias, state] : aliases_)
      if (state.free && state.free_since < ticket) p.free.push_back(alias);
    std::sort(p.free.begin(), p.free.end());
    if (p.free.empty()) ++judged_;
    else if (pending_.size() < kMaxPending) pending_.push_back(std::move(p));
  } else if (op.outcome == oracle::Outcome::ok && !op.alias.empty()) {
    // The target gave the alias to this tag: it was free, and now the load holds it.
    auto& state = aliases_[op.alias];
    state.free = false;
    state.tag = op;
    for (auto& p : pending_) std::erase(p.free, op.alias);
  } else if (op.outcome != oracle::Outcome::fail) {
    // No answer, a 5xx, or a success that names no alias: it may hold any of them.
    ++unknown_tags_;
    for (auto& [alias, state] : aliases_) state.free = false;
    for (auto& p : pending_) p.free.clear();
  }
  return resolve();
}

void TagLedger::untag_done(const oracle::Op& op) {
  ++clock_;
  auto& state = aliases_[op.alias];
  // Refused or unknown: the tag may still be there. And a tag of the load
  // that returned this alias but was answered after this untag was sent may
  // have run on the target after it (answers reach the ledger in any order):
  // then the alias is that tag's now, not free.
  state.free = op.outcome == oracle::Outcome::ok && state.tag.complete_ns < op.invoke_ns;
  if (!state.free) return;
  state.free_since = clock_;
  state.untag = op;
}

// A pending refusal is decided once every tag sent before its answer came has
// answered: none of them can still turn out to have taken a free alias.
std::vector<oracle::Violation> TagLedger::resolve() {
  std::vector<oracle::Violation> found;
  std::erase_if(pending_, [&](const Pending& p) {
    const bool waiting = !in_flight_.empty() && *in_flight_.begin() < p.horizon && !p.free.empty();
    if (waiting) return false;
    ++judged_;
    // Each tag of unknown outcome may have run late and taken one of them.
    if (p.free.size() > unknown_tags_) found.push_back(violation(p));
    return true;
  });
  return found;
}

oracle::Violation TagLedger::violation(const Pending& p) const {
  const std::string& alias = p.free.front();
  const AliasState& state = aliases_.at(alias);
  std::string others;
  if (p.free.size() > 1) {
    others = " (" + std::to_string(p.free.size()) + " aliases were untagged so:";
    for (std::size_t i = 0; i < p.free.size() && i < 5; ++i) others += " " + p.free[i];
    others += p.free.size() > 5 ? " ...)" : ")";
  }
  oracle::Violation v;
  v.kind = oracle::ViolationKind::tag_refused_while_free;
  v.round = p.refused.round;
  v.alias = alias;
  v.explanation = "a tag was refused as if every alias were tagged (" + describe(p.refused) + ") although alias " +
                  alias + " was untagged: the load's tag of it (" + describe(state.tag) + ") had been deleted (" +
                  describe(state.untag) + ") before the refused tag was sent, and no tag the load sent since took it" +
                  others;
  v.proof = {state.tag, state.untag, p.refused};
  std::sort(v.proof.begin(), v.proof.end(),
            [](const oracle::Op& a, const oracle::Op& b) { return a.invoke_ns < b.invoke_ns; });
  return v;
}

}  // namespace crh::loadgen
