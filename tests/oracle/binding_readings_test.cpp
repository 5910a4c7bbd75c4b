// First-caller-wins over a concurrent round against the same rule over
// sequences: the checker (oracle/checker.hpp) reads a round's history from
// its times into the lock each call met and asks the model's lock_answer;
// the model (oracle/model.hpp) judges operations one after another. Brute
// force over random rounds of one alias: a history is explained when some
// order of its operations that keeps real time (an operation answered before
// another was sent comes first) gives every answer without a MUST divergence
// of the model. The checker must never flag an explained history (it would
// cry wolf where the model's reading of the spec accepts), and where every
// call was answered inside the tag's certain window it must flag every
// history no order explains.
#include "oracle/checker.hpp"
#include "oracle/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace crh::oracle {
namespace binding_readings_test {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

enum class Answer { connected, refused, throttled, none };

// One operation of the round as both readings see it.
struct Step {
  Operation op;
  ObservedAnswer answer;
  Op seen;  // the history's record (invoke and completion in ns)
  // Until when its effect may take place: its completion, or never known for
  // an operation without an answer (the target may still act on it).
  std::int64_t effect_by() const { return answer.answered ? seen.complete_ns : kNever; }
};

std::string alias_body(bool tagged) {
  return std::string(R"({"id":"1","number":"+15550101","tag":)") + (tagged ? R"("x")" : "null") +
         R"(,"expires_at":null,"bound_caller":null})";
}

Op record(OpKind kind, const std::string& caller, std::int64_t invoke, std::int64_t complete, Answer a) {
  Op o;
  o.round = 1;
  o.kind = kind;
  o.alias = "1";
  o.caller = caller;
  o.invoke_ns = invoke;
  o.complete_ns = complete;
  switch (a) {  // as the load records an HTTP answer (loadgen/recording.cpp)
    case Answer::connected: o.outcome = Outcome::ok, o.status = 200; break;
    case Answer::refused: o.outcome = Outcome::fail, o.status = 403; break;
    case Answer::throttled: o.outcome = Outcome::fail, o.status = 429, o.not_now = true; break;
    case Answer::none: o.outcome = Outcome::indeterminate, o.error = "timeout"; break;
  }
  return o;
}

ObservedAnswer answer_of(Answer a) {
  switch (a) {
    case Answer::connected: return {true, 200, R"({"connected":true})"};
    case Answer::refused: return {true, 403, R"({"msg":"bound to another caller"})"};
    case Answer::throttled: return {true, 429, R"({"msg":"too many requests"})"};
    case Answer::none: break;
  }
  return ObservedAnswer::none();
}

struct History {
  std::vector<Step> steps;  // [0] the tag, then the calls, then the untag if any
  Round round;
  bool certain = true;  // every call answered inside the tag's certain window

  std::string text() const {
    std::string out;
    for (const auto& s : steps)
      out += "  " + describe(s.op) + " [" + std::to_string(s.seen.invoke_ns) + ", " +
             (s.answer.answered ? std::to_string(s.seen.complete_ns) : "never") + "] -> " +
             (s.answer.answered ? std::to_string(s.answer.status) : "no answer") + "\n";
    return out;
  }
};

// A tag of the only alias, 2 to 5 calls by 3 callers at random times with
// random answers, and half the time an untag.
History random_history(std::mt19937_64& rng, int most_calls) {
  auto uniform = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  // Times in µs, made distinct by a nanosecond count: two instants of a real
  // clock are never equal, and a tie would decide an order by itself.
  std::int64_t tie_breaker = 0;
  auto at = [&](std::int64_t us) { return us * 1000 + ++tie_breaker; };
  History h;
  const std::int64_t tag_done = uniform(1, 40);
  Step tag{ops::tag("1", "x", 5), {true, 200, alias_body(true)},
           record(OpKind::tag, "", at(0), at(tag_done), Answer::connected)};
  h.steps.push_back(tag);
  std::int64_t untag_sent = kNever;
  const bool untags = uniform(0, 1) == 1;
  if (untags) untag_sent = at(uniform(tag_done + 1, 300));
  const int calls = static_cast<int>(uniform(2, most_calls));
  for (int i = 0; i < calls; ++i) {
    const std::string caller = "+" + std::to_string(uniform(1, 3));
    const std::int64_t sent_us = uniform(0, 250), sent = at(sent_us), done = at(sent_us + uniform(1, 90));
    const auto roll = uniform(0, 99);
    const Answer a = roll < 40 ? Answer::connected : roll < 75 ? Answer::refused : roll < 85 ? Answer::throttled
                                                                                              : Answer::none;
    h.steps.push_back({ops::call("1", "1", caller), answer_of(a), record(OpKind::call, caller, sent, done, a)});
    h.certain = h.certain && a != Answer::none && sent >= h.steps.front().seen.complete_ns && done <= untag_sent;
  }
  if (untags) {
    Step untag{ops::untag("1", "1"), {true, 200, alias_body(false)},
               record(OpKind::untag, "", untag_sent, untag_sent + uniform(1, 40) * 1000, Answer::connected)};
    h.steps.push_back(untag);
  }
  h.round.id = 1;
  h.round.tag = h.steps.front().seen;
  for (std::size_t i = 1; i < h.steps.size(); ++i)
    if (h.steps[i].seen.kind == OpKind::call) h.round.calls.push_back(h.steps[i].seen);
  if (untags) h.round.untag = h.steps.back().seen;
  return h;
}

bool breaks_a_must(const std::vector<Divergence>& d) {
  return std::any_of(d.begin(), d.end(), [](const Divergence& x) { return x.severity == Severity::must; });
}

// Whether some order that keeps real time explains every answer (depth-first,
// an order cut where the model first diverges).
bool explained(const Model& model, const std::vector<Step>& steps, std::vector<bool>& done, std::size_t left,
               const core::Profile& profile) {
  if (left == 0) return true;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (done[i]) continue;
    const bool waits = std::any_of(steps.begin(), steps.end(), [&](const Step& other) {
      const auto j = static_cast<std::size_t>(&other - steps.data());
      return !done[j] && j != i && other.effect_by() < steps[i].seen.invoke_ns;
    });
    if (waits) continue;
    if (breaks_a_must(check(predict(model, steps[i].op, profile), steps[i].answer))) continue;
    Model next = model;
    observe(next, steps[i].op, steps[i].answer, profile);
    done[i] = true;
    const bool ok = explained(next, steps, done, left - 1, profile);
    done[i] = false;
    if (ok) return true;
  }
  return false;
}

Model one_alias() {
  Start start;
  start.channels = {{"1", {"1"}}};
  return Model::known(start);
}

struct Tally {
  int explained = 0, flagged = 0, unexplained_unflagged = 0, certain_unexplained = 0;
};

Tally compare(std::uint64_t seed, int histories, int most_calls) {
  std::mt19937_64 rng(seed);
  const core::Profile profile;
  const Model start = one_alias();
  Tally t;
  for (int n = 0; n < histories; ++n) {
    const History h = random_history(rng, most_calls);
    std::vector<bool> done(h.steps.size(), false);
    const bool model_explains = explained(start, h.steps, done, h.steps.size(), profile);
    Checker checker;
    const auto violations = checker.add(h.round);
    t.explained += model_explains;
    t.flagged += !violations.empty();
    if (model_explains) {
      EXPECT_TRUE(violations.empty()) << "seed " << seed << ", history " << n
                                      << ": the checker flags what an order of the model explains ("
                                      << violations.front().explanation << "):\n"
                                      << h.text();
    } else {
      t.certain_unexplained += h.certain;
      t.unexplained_unflagged += violations.empty();
      if (h.certain) {
        EXPECT_FALSE(violations.empty()) << "seed " << seed << ", history " << n
                                         << ": no order explains these answers, every call was answered inside "
                                            "the tag's certain window, and the checker flags nothing:\n"
                                         << h.text();
      }
    }
    if (::testing::Test::HasFailure()) break;  // one history in full is enough to reproduce
  }
  return t;
}

TEST(BindingReadings, TheCheckerNeverFlagsWhatTheModelExplainsAndMissesNothingCertain) {
  const auto t = compare(20261128, 1500, 5);
  // Both sides of the comparison must occur, or it proves nothing.
  EXPECT_GT(t.explained, 100);
  EXPECT_GT(t.certain_unexplained, 100);
  RecordProperty("explained", t.explained);
  RecordProperty("unexplained_unflagged", t.unexplained_unflagged);
  std::printf("explained %d of 1500, flagged %d; not explained: %d with every call certain (all flagged), %d "
              "unflagged (an unanswered call, or one outside the certain window, may explain them to the "
              "checker)\n",
              t.explained, t.flagged, t.certain_unexplained, t.unexplained_unflagged);
}

// Rounds of two or three calls, over many seeds: fewer operations, so more
// of the histories are ones a single wrong answer decides.
TEST(BindingReadings, OnSmallRoundsManySeedsAgree) {
  for (std::uint64_t seed = 1; seed <= 20 && !HasFailure(); ++seed) compare(seed, 150, 3);
}

}  // namespace binding_readings_test
}  // namespace crh::oracle
