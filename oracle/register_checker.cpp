// Reads judged against the writes that may precede them (register_checker.hpp).
#include "oracle/register_checker.hpp"

#include <algorithm>
#include <unordered_map>

namespace crh::oracle {
namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();
constexpr std::size_t kShownValues = 6;

std::string in_quotes(const std::optional<std::string>& v) {
  if (!v) return "(unknown)";
  // Long values are cut in the sentence; the proof keeps them whole.
  return "\"" + (v->size() > 60 ? v->substr(0, 60) + "…" : *v) + "\"";
}

std::string describe_register_op(const Op& op) {
  std::string s = std::string(to_string(op.kind));
  if (op.value) s += " " + in_quotes(op.value);
  s += " [" + std::to_string(op.invoke_ns / 1000) + "–" + std::to_string(op.complete_ns / 1000) + " µs] → ";
  return s + (op.status ? std::to_string(op.status) : op.error.empty() ? "no answer" : op.error);
}

bool may_apply(const Op& w) { return w.outcome != Outcome::fail; }

// The write answered 200 that began last among those that ended before a
// read was sent: every write answered 200 that ended before it began was
// certainly replaced before the read.
struct Cut {
  std::int64_t invoke = kNone;
  const Op* write = nullptr;
};

bool candidate(const Op& w, const Op& read, const Cut& cut) {
  if (!may_apply(w) || w.invoke_ns > read.complete_ns) return false;
  return !(w.outcome == Outcome::ok && cut.write && w.complete_ns < cut.invoke);
}

struct Judge {
  const RegisterHistory& h;
  std::vector<const Op*> by_invoke;  // the writes that may apply
  std::unordered_map<std::string, std::vector<const Op*>> by_value;
  std::vector<const Op*> unknown_value;  // writes that may apply, value unknown

  explicit Judge(const RegisterHistory& history) : h(history) {
    for (const auto& w : h.writes) {
      if (!may_apply(w)) continue;
      by_invoke.push_back(&w);
      if (w.value) by_value[*w.value].push_back(&w);
      else unknown_value.push_back(&w);
    }
    std::sort(by_invoke.begin(), by_invoke.end(),
              [](const Op* a, const Op* b) { return a->invoke_ns < b->invoke_ns; });
  }

  // Whether the read can be judged, and if so whether its value is one a
  // linearizable service could return.
  enum class Verdict { unjudged, possible, impossible };
  Verdict judge(const Op& read, const Cut& cut) const {
    if (!cut.write && !h.initial) return Verdict::unjudged;
    for (const Op* w : unknown_value)
      if (candidate(*w, read, cut)) return Verdict::unjudged;
    if (!cut.write && h.initial == read.value) return Verdict::possible;
    auto it = by_value.find(*read.value);
    if (it != by_value.end())
      for (const Op* w : it->second)
        if (candidate(*w, read, cut)) return Verdict::possible;
    return Verdict::impossible;
  }

  Violation violation(const Op& read, const Cut& cut) const {
    const bool db = h.what == Register::database;
    Violation v;
    v.id = h.id;
    v.actual = *read.value;
    // What could have been read: the values of the candidate writes, and
    // the value before the run while no write had surely replaced it.
    std::vector<std::string> values;
    std::vector<const Op*> overlapping;
    if (!cut.write && h.initial) values.push_back(*h.initial);
    if (cut.write) values.push_back(*cut.write->value);
    for (const Op* w : by_invoke) {
      if (w->invoke_ns > read.complete_ns) break;
      if (!candidate(*w, read, cut) || w == cut.write) continue;
      overlapping.push_back(w);
      if (std::find(values.begin(), values.end(), *w->value) == values.end()) values.push_back(*w->value);
    }
    for (std::size_t i = 0; i < values.size() && i < kShownValues; ++i)
      v.expected += (i ? ", " : "") + in_quotes(values[i]);
    if (values.size() > kShownValues) v.expected += ", … (" + std::to_string(values.size()) + " in all)";
    v.expected = (values.size() == 1 ? "" : "one of ") + v.expected;

    // The latest write of the value read that may have applied before the
    // read ended (the read's value was once there, but replaced).
    const Op* left = nullptr;
    if (auto it = by_value.find(*read.value); it != by_value.end())
      for (const Op* w : it->second)
        if (w->invoke_ns <= read.complete_ns && (!left || w->complete_ns > left->complete_ns)) left = w;
    const bool was_initial = h.initial == read.value;
    const std::string subject = db ? "database key " + h.id : "agent " + h.id;
    const std::string got = db ? "returned " + in_quotes(read.value) : "showed state " + in_quotes(read.value);
    const std::string read_text = describe_register_op(read);
    if (left || was_initial) {
      v.kind = db ? ViolationKind::database_stale_read : ViolationKind::agent_stale_state;
      v.explanation = subject + ": " + read_text + " " + got + ", " +
                      (left ? "left by " + describe_register_op(*left) + "; but " + describe_register_op(*cut.write) +
                                  " was sent after that write was answered,"
                            : "the value before the run; but " + describe_register_op(*cut.write) + " was") +
                      " answered before the read was sent, so a linearizable service returns " + v.expected;
      if (left) v.proof.push_back(*left);
      v.proof.push_back(*cut.write);
    } else {
      v.kind = db ? ViolationKind::database_unwritten_read : ViolationKind::agent_unexplained_state;
      v.explanation = subject + ": " + read_text + " " + got + ", which no write sent before the read ended left" +
                      (h.initial ? std::string(" (nor was it the value before the run)") : std::string()) +
                      "; a linearizable service returns " + v.expected;
      if (cut.write) v.proof.push_back(*cut.write);
    }
    for (std::size_t i = 0; i < overlapping.size() && i < 4; ++i) v.proof.push_back(*overlapping[i]);
    v.proof.push_back(read);
    std::sort(v.proof.begin(), v.proof.end(), [](const Op& a, const Op& b) { return a.invoke_ns < b.invoke_ns; });
    return v;
  }
};

}  // namespace

RegisterVerdict check_register(const RegisterHistory& h, std::size_t keep) {
  RegisterVerdict out;
  const Judge judge(h);
  std::vector<const Op*> certain;
  for (const auto& w : h.writes)
    if (w.outcome == Outcome::ok) certain.push_back(&w);
  std::sort(certain.begin(), certain.end(),
            [](const Op* a, const Op* b) { return a->complete_ns < b->complete_ns; });
  std::vector<const Op*> reads;
  for (const auto& r : h.reads)
    if (r.outcome == Outcome::ok && r.value && r.complete_ns < h.judge_until) reads.push_back(&r);
  std::sort(reads.begin(), reads.end(), [](const Op* a, const Op* b) { return a->invoke_ns < b->invoke_ns; });

  // One sweep: the cut of each read grows with the read's invoke time.
  Cut cut;
  std::size_t next = 0;
  for (const Op* r : reads) {
    for (; next < certain.size() && certain[next]->complete_ns < r->invoke_ns; ++next)
      if (certain[next]->invoke_ns > cut.invoke) cut = {certain[next]->invoke_ns, certain[next]};
    // A value the cut write left is unknown: nothing before it can be told.
    if (cut.write && !cut.write->value) continue;
    const auto verdict = judge.judge(*r, cut);
    if (verdict == Judge::Verdict::unjudged) continue;
    ++out.judged;
    if (verdict == Judge::Verdict::possible) continue;
    ++out.violation_count;
    if (out.violations.size() < keep) out.violations.push_back(judge.violation(*r, cut));
  }
  return out;
}

}  // namespace crh::oracle
