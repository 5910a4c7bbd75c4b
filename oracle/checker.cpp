// First-caller-wins, checked per tag epoch from invoke and completion times.
#include "oracle/checker.hpp"

#include <algorithm>
#include <limits>

namespace crh::oracle {
namespace {

bool is_refusal(const Op& op) { return op.outcome == Outcome::fail && !op.not_now; }

std::string describe(const Op& op) {
  std::string s = std::string(to_string(op.kind)) + " by " + (op.caller.empty() ? "?" : op.caller) + " [" +
                  std::to_string(op.invoke_ns / 1000) + "–" + std::to_string(op.complete_ns / 1000) + " µs] → ";
  return s + (op.status ? std::to_string(op.status) : op.error.empty() ? "no answer" : op.error);
}

std::vector<Op> by_invoke(std::vector<Op> ops) {
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.invoke_ns < b.invoke_ns; });
  return ops;
}

}  // namespace

std::string_view to_string(ViolationKind k) {
  switch (k) {
    case ViolationKind::two_winners: return "two-winners";
    case ViolationKind::connected_after_bound: return "connected-after-bound";
    case ViolationKind::bound_caller_rejected: return "bound-caller-rejected";
    case ViolationKind::rejected_while_free: return "rejected-while-free";
    case ViolationKind::alias_tagged_twice: return "alias-tagged-twice";
    case ViolationKind::tag_refused_while_free: return "tag-refused-while-free";
    case ViolationKind::database_stale_read: return "database-stale-read";
    case ViolationKind::database_unwritten_read: return "database-unwritten-read";
    case ViolationKind::agent_stale_state: return "agent-stale-state";
    case ViolationKind::agent_unexplained_state: return "agent-unexplained-state";
  }
  return "?";
}

std::pair<std::int64_t, std::int64_t> certain_window(const Round& round) {
  std::int64_t end = std::numeric_limits<std::int64_t>::max();
  if (round.untag) end = round.untag->invoke_ns;
  if (round.lifetime_ns > 0) end = std::min(end, round.tag.invoke_ns + round.lifetime_ns);
  return {round.tag.complete_ns, end};
}

// One round under judgement: the window in which its tag certainly held, and
// what it has proved broken so far.
struct Checker::Judged {
  const Round& round;
  std::int64_t begin, end;
  std::vector<const Op*> effects;       // the calls inside the window that may have bound: by completion
  std::vector<AliasFacts> lock_after;   // [k]: the lock after the first k of them, from a free one
  std::vector<Violation> found;

  bool inside(const Op& op) const { return op.invoke_ns >= begin && op.complete_ns <= end; }
  void violation(ViolationKind kind, std::string why, std::vector<Op> proof) {
    found.push_back({kind, round.id, round.tag.alias, std::move(why), by_invoke(std::move(proof))});
  }
};

std::vector<Violation> Checker::add(const Round& round) {
  ++rounds_;
  if (round.tag.outcome != Outcome::ok) return {};
  const auto [begin, end] = certain_window(round);
  Judged j{round, begin, end, {}, {}, {}};
  for (const auto& o : round.calls)
    if (j.inside(o) && o.outcome != Outcome::fail) j.effects.push_back(&o);
  std::sort(j.effects.begin(), j.effects.end(), [](const Op* a, const Op* b) { return a->complete_ns < b->complete_ns; });
  AliasFacts lock;
  lock.bound = Bound::nobody;
  j.lock_after.reserve(j.effects.size() + 1);
  j.lock_after.push_back(lock);
  for (const auto* o : j.effects) {
    lock_after_call(lock, o->caller, o->outcome == Outcome::ok ? CallAnswer::connected : CallAnswer::unknown);
    j.lock_after.push_back(lock);
  }
  check_winners(j);
  check_refusals(j);
  check_tagged_twice(j);
  return std::move(j.found);
}

// The caller lock when `c` took effect, as far as the times make it certain:
// free when the epoch began (c was sent after the tag's answer), then the
// calls that certainly came between in the order they ended (a prefix of
// `effects`, folded once in add()), then, as calls without an answer, those
// that may have (answered before c ended, after the tag was sent: one handled
// after the tag took effect binds in this epoch). Refusals and "not now"s
// (Op::not_now, outcome fail) are left out: only an effect can make a refusal
// right. The lock itself is the model's (lock_after_call, lock_answer).
AliasFacts Checker::lock_before(const Judged& j, const Op& c) {
  const auto certain = static_cast<std::size_t>(
      std::partition_point(j.effects.begin(), j.effects.end(), [&](const Op* o) { return o->complete_ns < c.invoke_ns; }) -
      j.effects.begin());
  AliasFacts lock = j.lock_after[certain];
  for (const auto& o : j.round.calls) {
    if (&o == &c || o.outcome == Outcome::fail || (j.inside(o) && o.complete_ns < c.invoke_ns)) continue;
    if (o.invoke_ns < c.complete_ns && o.complete_ns > j.round.tag.invoke_ns)
      lock_after_call(lock, o.caller, CallAnswer::unknown);
  }
  return lock;
}

// At most one caller connects per epoch, and none after another was bound:
// each caller's first connection is judged against the lock before it, and
// two that overlap against each other (whichever came second met the other's
// caller bound).
void Checker::check_winners(Judged& j) {
  const Round& round = j.round;
  std::vector<const Op*> first_ok;
  for (const auto& c : round.calls) {
    if (!j.inside(c) || c.outcome != Outcome::ok) continue;
    auto same = std::find_if(first_ok.begin(), first_ok.end(), [&](const Op* o) { return o->caller == c.caller; });
    if (same == first_ok.end()) first_ok.push_back(&c);
    else if (c.complete_ns < (*same)->complete_ns) *same = &c;
  }
  std::sort(first_ok.begin(), first_ok.end(), [](const Op* a, const Op* b) { return a->complete_ns < b->complete_ns; });
  if (first_ok.size() < 2) return;
  const Op& a = *first_ok[0];
  const auto bound_to = [](const std::string& caller) {
    AliasFacts lock;
    lock.bound = Bound::caller;
    lock.caller = caller;
    return lock;
  };
  for (std::size_t i = 1; i < first_ok.size(); ++i) {
    const Op& b = *first_ok[i];
    if (lock_answer(lock_before(j, b), b.caller) == LockAnswer::refuses)
      j.violation(ViolationKind::connected_after_bound,
                  "alias " + round.tag.alias + ": " + b.caller + " connected although " + a.caller +
                      " had connected before it called (" + describe(a) + "; " + describe(b) + ")",
                  {a, b});
    else if (lock_answer(bound_to(a.caller), b.caller) == LockAnswer::refuses &&
             lock_answer(bound_to(b.caller), a.caller) == LockAnswer::refuses)
      j.violation(ViolationKind::two_winners,
                  "alias " + round.tag.alias + ": " + a.caller + " and " + b.caller +
                      " both connected in one tag epoch; only the first caller may be bound (" + describe(a) + "; " +
                      describe(b) + ")",
                  {a, b});
  }
}

// A refusal is wrong where the lock before it lets its caller through: held
// by that caller (it had connected before), or free.
void Checker::check_refusals(Judged& j) {
  const Round& round = j.round;
  for (const auto& r : round.calls) {
    if (!j.inside(r) || !is_refusal(r)) continue;
    const AliasFacts lock = lock_before(j, r);
    if (lock_answer(lock, r.caller) != LockAnswer::lets_through) continue;
    // Held by r's caller: only its own connection, certainly before r, binds it here.
    const auto bound = std::find_if(round.calls.begin(), round.calls.end(), [&](const Op& o) {
      return j.inside(o) && o.outcome == Outcome::ok && o.caller == r.caller && o.complete_ns < r.invoke_ns;
    });
    if (lock.bound == Bound::caller && bound != round.calls.end()) {
      j.violation(ViolationKind::bound_caller_rejected,
                  "alias " + round.tag.alias + ": " + r.caller + " was bound (" + describe(*bound) +
                      ") and then refused (" + describe(r) + ")",
                  {*bound, r});
      continue;
    }
    j.violation(ViolationKind::rejected_while_free,
                "alias " + round.tag.alias + ": " + r.caller +
                    " was refused although no other caller could have been bound yet (" + describe(r) + ")",
                {round.tag, r});
  }
}

// The same alias given to two tags at once; the round's epoch is kept for
// the rounds after it.
void Checker::check_tagged_twice(Judged& j) {
  const Round& round = j.round;
  auto& kept = epochs_[round.tag.alias];
  for (const auto& e : kept) {
    // Both tags certainly held the alias at some common instant.
    if (std::max(e.certain_begin, j.begin) >= std::min(e.certain_end, j.end)) continue;
    const bool kept_first = e.tag.complete_ns <= round.tag.complete_ns;
    const std::uint64_t first = kept_first ? e.round : round.id, second = kept_first ? round.id : e.round;
    std::vector<Op> proof = {e.tag, round.tag};
    if (e.untag) proof.push_back(*e.untag);
    if (round.untag) proof.push_back(*round.untag);
    j.violation(ViolationKind::alias_tagged_twice,
                "alias " + round.tag.alias + " was returned by the tag of round " + std::to_string(second) +
                    " while the tag of round " + std::to_string(first) +
                    " still held it (both answered before either was deleted or expired)",
                std::move(proof));
  }
  kept.push_back({round.id, round.tag, round.untag, j.begin, j.end});
  if (kept.size() > epochs_per_alias_) kept.pop_front();
}

}  // namespace crh::oracle
