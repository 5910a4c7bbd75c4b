// binding (B1–B3 through the call hook): the first caller of a tagged alias
// is bound to it, others are refused until the tag ends, aliases bind
// independently, and a race of callers has exactly one winner. expiry
// (--slow): the lock holds for the tag's lifetime and ends with it.
#include <boost/json.hpp>
#include <optional>

#include "calls/call_drivers.hpp"
#include "contracts/suites/suites.hpp"
#include "oracle/verdicts.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;
using Clock = std::chrono::steady_clock;

namespace {

// The outcome of one call, its exchange (or another driver's account of the
// call) kept as evidence; the check is skipped when the target has no call
// hook at all.
calls::CallResult recorded(CheckContext& ctx, calls::CallResult r, const std::string& alias, const std::string& caller) {
  if (r.exchange) ctx.record(*r.exchange);
  else ctx.record_evidence({ctx.calls().describe() + ": " + caller + " calls alias " + alias, r.evidence, {}});
  if (r.no_hook) {
    ctx.run().no_call_hook = true;
    ctx.skip("the target has no call hook: " + ctx.calls().describe() + " answered " + r.evidence +
             "; binding checks need one (README, \"The call hook\"; or set call_hook in the profile)");
  }
  return r;
}

// A throttled call (a "not now") is placed again, by the same caller, as
// CheckContext::wait_out_not_now says.
calls::CallResult place(CheckContext& ctx, const std::string& alias, const std::string& caller) {
  return calls::placed_past_not_now([&] { return recorded(ctx, ctx.calls().place(alias, caller), alias, caller); },
                                    [&](int again, const std::string& retry_after) {
                                      return ctx.wait_out_not_now(again, retry_after);
                                    });
}

// Ends the check when the call got no usable answer: an HTTP exchange as
// CheckContext::response judges it, any other driver's unknown outcome as
// indeterminate. A call that was answered goes on to be judged.
void settle(CheckContext& ctx, const calls::CallResult& r, const std::string& what) {
  if (r.exchange) ctx.response(*r.exchange, what);
  else if (r.outcome == core::CallOutcome::unknown) ctx.indeterminate(what + ": " + r.evidence);
}

std::string answer_of(const calls::CallResult& r) { return r.exchange ? describe_answer(*r.exchange) : r.evidence; }

void connects(CheckContext& ctx, const std::string& alias, const std::string& caller, std::string_view rule,
              const std::string& why) {
  const std::string what = caller + " calls alias " + alias + " (" + why + ")";
  auto r = place(ctx, alias, caller);
  if (r.exchange) {  // an HTTP answer: judged whole (200 with JSON)
    ctx.ok_json(*r.exchange, rule, what);
    return;
  }
  if (r.failure) ctx.fail(rule, what + ": " + r.evidence);
  if (r.outcome == core::CallOutcome::unknown || r.outcome == core::CallOutcome::throttled)
    ctx.indeterminate(what + ": " + r.evidence);
  if (r.outcome != core::CallOutcome::connected)
    ctx.fail(rule, what + ": expected the call to connect, got " + r.evidence);
}

// `alive_until`: when the tag may have ended; a call connected by an answer
// that came later may have been taken after the end: too late to tell.
void refused_call(CheckContext& ctx, const std::string& alias, const std::string& caller, std::string_view rule,
                  const std::string& why, std::optional<Clock::time_point> alive_until = std::nullopt) {
  const std::string what = caller + " calls alias " + alias + " (" + why + ")";
  auto r = place(ctx, alias, caller);
  if (alive_until && Clock::now() >= *alive_until && r.outcome == core::CallOutcome::connected)
    ctx.indeterminate(what + ": connected, but its answer came after the tag may have ended (the run was too slow "
                      "to tell): " + r.evidence);
  if (r.exchange) {  // an HTTP answer: judged whole (refused with a msg, a status the profile expects)
    ctx.refused(*r.exchange, rule, what, ctx.statuses().call_refused);
    return;
  }
  if (r.failure) ctx.fail(rule, what + ": " + r.evidence);
  if (r.outcome == core::CallOutcome::unknown || r.outcome == core::CallOutcome::throttled)
    ctx.indeterminate(what + ": " + r.evidence);
  if (r.outcome != core::CallOutcome::refused)
    ctx.fail(rule, what + ": expected the call to be refused, got " + r.evidence);
}

// A refused (or failed) caller's answer must still have the error shape (X2).
void judge_refusals(CheckContext& ctx, const std::vector<calls::CallResult>& results, const std::string& where) {
  for (const auto& r : results) {
    if (!r.exchange || !r.exchange->answered() || r.outcome == core::CallOutcome::connected) continue;
    const auto& answer = *r.exchange->response;
    for (const auto& f : oracle::error_shape_findings(answer.status, answer.header("Content-Type"), answer.body))
      if (f.severity == Severity::must) ctx.fail(f.rule, where + "a refused caller's answer: " + f.text);
  }
}

// The race: rounds of callers armed on their own connections (each call
// written but its last byte) and released together by the driver (those
// bytes in a row over HTTP; every INVITE in one sendmmsg over SIP/UDP, one
// write over TCP), as the load's race releases SIP calls. A round catches a
// check-then-bind window wider than the callers' spread of arrival at the
// target; README (the race's power) has the rate per window size measured
// for the load's race.
constexpr int kRaceRounds = 48;
constexpr int kRaceCallers = 8;

// Releases every armed call together; returns the skew: from the start of
// the release to its end.
std::chrono::microseconds release_together(CheckContext& ctx, std::vector<std::unique_ptr<calls::ArmedCall>>& calls) {
  ctx.needs_one_instant();
  std::vector<calls::ArmedCall*> all;
  for (auto& c : calls) all.push_back(c.get());
  const auto first = Clock::now();
  ctx.calls().fire_together(all);
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - first);
}

// One round: `n` callers raced on a freshly tagged alias.
void race_round(CheckContext& ctx, int round, int n) {
  TagGuard tags(ctx);
  auto alias = tags.tag("race");
  auto caller = [&](int i) { return ctx.caller(10 + round * n + i); };
  std::vector<std::unique_ptr<calls::ArmedCall>> calls;
  for (int i = 0; i < n; ++i) {
    calls.push_back(ctx.calls().arm(alias, caller(i)));
    if (!calls.back()->ready())
      ctx.indeterminate("could not open caller connection " + std::to_string(i + 1) + ": " +
                        calls.back()->result().evidence);
  }
  const auto skew = release_together(ctx, calls);
  std::vector<calls::CallResult> results;
  std::vector<core::CallOutcome> outcomes;
  for (int i = 0; i < n; ++i) {
    results.push_back(recorded(ctx, calls[static_cast<std::size_t>(i)]->result(), alias, caller(i)));
    outcomes.push_back(results.back().outcome);
  }
  auto verdict = oracle::race_verdict(outcomes);
  const std::string where = "round " + std::to_string(round + 1) + ", alias " + alias + ", " + std::to_string(n) +
                            " callers released within " + std::to_string(skew.count()) + " µs: ";
  if (verdict.kind == oracle::RaceVerdict::broken) ctx.fail("B2", where + verdict.text);
  for (const auto& r : results)
    if (r.failure) ctx.fail("B1", where + "a caller's call: " + r.evidence);
  for (const auto& r : results)  // a caller whose call was dropped unanswered: a crash, not an open outcome
    if (r.exchange)
      if (auto problem = ctx.drop_problem(*r.exchange)) ctx.fail("X0", where + "a caller's call: " + *problem);
  judge_refusals(ctx, results, where);
  if (verdict.kind == oracle::RaceVerdict::undecided) ctx.indeterminate(where + verdict.text);
  for (int i = 0; i < n; ++i)
    if (outcomes[static_cast<std::size_t>(i)] == core::CallOutcome::connected)
      connects(ctx, alias, caller(i), "B3", "the race's winner calls again");
}

// B1 after a re-tag: a new tag starts unbound, also on an alias whose last
// tag was bound (a lock left behind would refuse the new tag's first caller).
void fresh_after_retag(CheckContext& ctx) {
  const auto aliases = list_aliases(ctx);
  need_an_untagged_alias(ctx, aliases);
  TagGuard tags(ctx);
  auto alias = tags.tag("retag");
  connects(ctx, alias, ctx.caller(1), "B1", "the first caller of the first tag");
  delete_tag(ctx, alias);
  tags.forget(alias);
  // Used last, the alias comes back after the other free ones (R2), and
  // after any tag of another check that ends meanwhile: at most one tag per
  // alias of the channel, and it stays free until it is picked.
  bool again = false;
  for (std::size_t i = 0; i < aliases.size() && !again; ++i) again = tags.tag("retag-again") == alias;
  if (!again)
    ctx.skip("alias " + alias + " was not tagged again within " + std::to_string(aliases.size()) +
             " tags, so its next tag could not be called");
  connects(ctx, alias, ctx.caller(2), "B1",
           "the first caller of the alias's new tag; " + ctx.caller(1) + " was bound under its deleted tag");
  refused_call(ctx, alias, ctx.caller(1), "B2", "alias " + alias + " is bound to " + ctx.caller(2) + " now");
}

// B2 as the alias list shows it: the bound caller under the profile's field
// name (a SHOULD: the spec shows no alias fields).
void listed_binding(CheckContext& ctx, const std::string& alias, const std::string& caller) {
  const auto& field = ctx.fields().alias_bound_caller;
  for (const auto& a : list_aliases(ctx))
    if (a.id == alias) {
      const auto* v = a.value.is_object() ? a.value.get_object().if_contains(field) : nullptr;
      ctx.prefer(v && v->is_string() && v->get_string() == caller, "B2",
                 "alias list after the first call: expected \"" + field + "\" (profile fields.alias_bound_caller) " +
                     "to name " + caller + ", got " + oracle::excerpt(json::serialize(a.value)));
    }
}

// B1–B3 per alias: the binding belongs to the alias, not to its tag's name
// (a service keeping it per name would lock every alias tagged alike).
void same_tag_name(CheckContext& ctx) {
  TagGuard tags(ctx);
  auto a = tags.tag("same-name");
  const std::string what = "POST " + tag_path(ctx.target().channel) + " (the same tag name again)";
  const auto second = ctx.send(core::api::Operation::tag,
                               {.tag = tag_name("same-name"), .minutes = ctx.target().dialect.minutes.fit(10)});
  if (ctx.response(second, what).status != 200) {
    untag_if_tagged(ctx, second);
    ctx.skip("the target refused a second live tag named like the first (" + describe_answer(second) +
             "); the spec does not say tag names are unique, so there is nothing to compare");
  }
  const auto b = tagged_alias_id(ctx, ctx.ok_json(second, "E8", what));
  if (!b)
    ctx.skip("the second tag's answer names no alias under the profile's id_fields.alias: " + describe_answer(second));
  tags.adopt(*b);
  if (a == *b) ctx.fail("T1", "two tags in a row returned the same alias " + a);
  const std::string same = " (both aliases are tagged \"" + tag_name("same-name") + "\")";
  connects(ctx, a, ctx.caller(1), "B1", "first caller of alias " + a + same);
  connects(ctx, *b, ctx.caller(2), "B1", "first caller of alias " + *b + same);
  refused_call(ctx, a, ctx.caller(2), "B2", "alias " + a + " is bound to " + ctx.caller(1));
  refused_call(ctx, *b, ctx.caller(1), "B2", "alias " + *b + " is bound to " + ctx.caller(2));
}

// T1 from the alias list: `tagged` says whether the alias should show a tag.
// A list answered after `judged_until` is not judged (the tag may have ended).
void listed_tag(CheckContext& ctx, const std::string& alias, bool tagged, const std::string& when,
                std::optional<Clock::time_point> judged_until = std::nullopt) {
  const auto listed = list_aliases(ctx);
  if (judged_until && Clock::now() >= *judged_until) return;
  for (const auto& a : listed)
    if (a.id == alias)
      ctx.prefer(tagged == (tag_of(ctx, a.value).value_or(tagged ? "x" : "") != ""), "T1",
                 "alias list " + when + ": expected alias " + alias + (tagged ? " still tagged" : " untagged") +
                     ", got " + oracle::excerpt(json::serialize(a.value)));
}

// T1, B3, B1 over one tag lifetime (the profile's shortest, normally one
// minute): locked at half of it; the bound caller calls again after half of
// it (a service that restarts the lifetime at each call then holds the tag
// beyond the last look, end + at most half a lifetime); free once the
// minutes have passed since the tag operation.
void lifetime(CheckContext& ctx) {
  const int minutes = ctx.target().dialect.minutes.fit(1);
  const auto life = ctx.target().minute * minutes;
  TagGuard tags(ctx);
  const auto sent = Clock::now();
  auto alias = tags.tag("expiry", minutes);
  const auto answered = Clock::now();
  connects(ctx, alias, ctx.caller(1), "B1", "the first caller");

  ctx.sleep_until(answered + life / 2);
  if (Clock::now() >= sent + life - life / 10)
    ctx.indeterminate("could not look at the tag before the end of its lifetime (the run was too slow)");
  // The tag began no earlier than its request left: an answer that came
  // before sent + life was given while it held.
  refused_call(ctx, alias, ctx.caller(2), "B3", "at half the tag's lifetime, the alias is still bound", sent + life);
  listed_tag(ctx, alias, true, "at half the lifetime", sent + life);
  // The look after the lifetime needs the channel to itself: from here no
  // quick check starts, so the one running (slower than a lifetime on a
  // loaded sanitized run) ends before that look is due.
  ++ctx.run().channel_wanted;
  struct Unwant {
    std::atomic<int>& wanted;
    ~Unwant() { --wanted; }
  } unwant{ctx.run().channel_wanted};
  // Twice, so that a run running late still gets one call past half the
  // lifetime, which a sliding lifetime would carry past the last look below.
  std::optional<Clock::time_point> late_sent;  // when the last late call left
  for (const auto at : {life * 3 / 5, life * 17 / 20}) {
    ctx.sleep_until(answered + at);
    if (const auto now = Clock::now(); now < sent + life - life / 20) {
      late_sent = now;
      connects(ctx, alias, ctx.caller(1), "B3", "the bound caller calls again late in the tag's lifetime");
    }
  }
  // Without a call after half the lifetime a lifetime restarted by calls
  // looks like a correct one: passing would prove nothing.
  if (!late_sent)
    ctx.indeterminate("could not call again in the second half of the tag's lifetime (the run was too slow): a "
                      "lifetime that each call restarts could not be told from a correct one");

  // The tag began at the latest when its answer came. The target gets some
  // clock slack after the end (a second, or a tenth of the lifetime), never
  // more than half a lifetime: a lifetime restarted by the late call would
  // still be running at the last look.
  const auto end = answered + life;
  const auto grace = std::min<Clock::duration>(std::max<Clock::duration>(std::chrono::seconds(1), life / 10), life / 2);
  ctx.sleep_until(end + std::chrono::milliseconds(20));
  std::lock_guard channel(ctx.run().channel_mutex);  // no quick check may re-tag it meanwhile
  calls::CallResult last;
  Clock::time_point last_answered;
  do {
    last = place(ctx, alias, ctx.caller(2));
    last_answered = Clock::now();
    if (last.outcome == core::CallOutcome::connected) break;
    ctx.sleep_until(Clock::now() + std::chrono::milliseconds(50));
  } while (Clock::now() < end + grace);
  settle(ctx, last, "a call after the tag's lifetime");
  // A lifetime restarted by the late call ends a lifetime after it left at
  // the earliest. A look answered later than that (the channel lock or a
  // loaded machine held it back) connects on such a service too: a pass
  // would prove nothing.
  if (last.outcome == core::CallOutcome::connected && late_sent && last_answered > *late_sent + life)
    ctx.indeterminate("the look after the tag's lifetime came " +
                      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(last_answered - answered).count()) +
                      " ms after the tag, later than a lifetime after the bound caller's late call (the run was too "
                      "slow): a lifetime that each call restarts could not be told from a correct one");
  const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - answered);
  if (last.outcome != core::CallOutcome::connected)
    ctx.fail("T1",
             ctx.caller(2) + " calls alias " + alias + " " + std::to_string(since.count()) + " ms after a " +
                 std::to_string(minutes) + "-minute tag (minute = " + std::to_string(ctx.target().minute.count()) +
                 " ms), the bound caller having called again after half of it: expected the tag expired and any caller "
                 "connects, got " +
                 answer_of(last));
  listed_tag(ctx, alias, false, "after the lifetime");
  tags.forget(alias);
  ctx.janitor().untagged(alias);
}

}  // namespace

void add_binding_checks(std::vector<Check>& out) {
  const std::string s = "binding";
  out.push_back({.id = "binding.first-caller-wins",
                 .suite = s,
                 .rules = {"B1", "B2", "B3"},
                 .summary =
                     "the first caller connects (and the alias list names it), another is refused with a msg (403 "
                     "expected), the first still connects",
                 .body =
                     [](CheckContext& ctx) {
                       TagGuard tags(ctx);
                       auto alias = tags.tag("binding");
                       connects(ctx, alias, ctx.caller(1), "B1", "the first caller of a newly tagged alias");
                       listed_binding(ctx, alias, ctx.caller(1));
                       refused_call(ctx, alias, ctx.caller(2), "B2", "alias bound to " + ctx.caller(1));
                       connects(ctx, alias, ctx.caller(1), "B3", "the bound caller calls again");
                       refused_call(ctx, alias, ctx.caller(3), "B3", "alias still bound to " + ctx.caller(1));
                     },
                 .needs_call_hook = true,
                 .calls_by_driver = true});
  out.push_back({.id = "binding.independent-aliases",
                 .suite = s,
                 .rules = {"B1", "B2", "B3"},
                 .summary = "two tagged aliases bind two callers independently",
                 .body =
                     [](CheckContext& ctx) {
                       TagGuard tags(ctx);
                       auto a = tags.tag("binding-a");
                       auto b = tags.tag("binding-b");
                       if (a == b) ctx.fail("T1", "two tags in a row returned the same alias " + a);
                       connects(ctx, a, ctx.caller(1), "B1", "first caller of alias " + a);
                       connects(ctx, b, ctx.caller(2), "B1", "first caller of alias " + b + ", another alias");
                       refused_call(ctx, a, ctx.caller(2), "B2", "alias " + a + " is bound to " + ctx.caller(1));
                       refused_call(ctx, b, ctx.caller(1), "B2", "alias " + b + " is bound to " + ctx.caller(2));
                     },
                 .needs_call_hook = true,
                 .calls_by_driver = true});
  out.push_back({.id = "binding.same-tag-name",
                 .suite = s,
                 .rules = {"B1", "B2", "B3"},
                 .summary = "two live aliases tagged with the same tag name bind two callers independently",
                 .body = same_tag_name,
                 .needs_call_hook = true,
                 .calls_by_driver = true});
  out.push_back({.id = "binding.fresh-after-retag",
                 .suite = s,
                 .rules = {"B1", "B2"},
                 .summary = "an alias tagged again after its bound tag was deleted takes a new first caller",
                 .body = fresh_after_retag,
                 .needs_call_hook = true,
                 .calls_by_driver = true});
  out.push_back({.id = "binding.free-after-delete",
                 .suite = s,
                 .rules = {"B1", "T1"},
                 .severity = Severity::should,
                 .summary = "after the tag is deleted the lock ends: another caller connects",
                 .body =
                     [](CheckContext& ctx) {
                       TagGuard tags(ctx);
                       auto alias = tags.tag("binding-delete");
                       connects(ctx, alias, ctx.caller(1), "B1", "the first caller");
                       delete_tag(ctx, alias);
                       tags.forget(alias);
                       auto r = place(ctx, alias, ctx.caller(2));
                       settle(ctx, r, "a call after the tag was deleted");
                       ctx.prefer(r.outcome == core::CallOutcome::connected, "T1",
                                  ctx.caller(2) + " calls alias " + alias +
                                      " after its tag was deleted: expected the call to go through (deleting a tag "
                                      "ends the lock), got " +
                                      answer_of(r));
                     },
                 .needs_call_hook = true,
                 .calls_by_driver = true});
  out.push_back({.id = "binding.race",
                 .suite = s,
                 .rules = {"B1", "B2"},
                 .summary = std::to_string(kRaceCallers) +
                            " callers released together (last bytes written in a row) "
                            "on a fresh tag: exactly one connects, in each of " +
                            std::to_string(kRaceRounds) + " rounds",
                 .body =
                     [](CheckContext& ctx) {
                       for (int round = 0; round < kRaceRounds; ++round) race_round(ctx, round, kRaceCallers);
                     },
                 .needs_call_hook = true,
                 .calls_by_driver = true});
}

void add_expiry_checks(std::vector<Check>& out) {
  out.push_back({.id = "expiry.lifetime",
                 .suite = "expiry",
                 .rules = {"T1", "B3", "B1"},
                 .summary = "the shortest tag still locks at half its lifetime, the bound caller's calls do not extend "
                            "it, and it is free (and untagged) once its minutes have passed since the tag operation",
                 .body = lifetime,
                 .slow = true,
                 .needs_call_hook = true,
                 .calls_by_driver = true});
}

}  // namespace crh::contracts::suites
