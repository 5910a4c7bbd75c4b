// binding (B1–B3 through the call hook): the first caller of a tagged alias
// is bound to it, others are refused until the tag ends, aliases bind
// independently, and a race of callers has exactly one winner. expiry
// (--slow): the lock holds for the tag's lifetime and ends with it.
#include <barrier>
#include <boost/json.hpp>
#include <thread>

#include "contracts/suites/suites.hpp"
#include "contracts/verdicts.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;
using Clock = std::chrono::steady_clock;

namespace {

void connects(CheckContext& ctx, const std::string& alias, const std::string& caller, std::string_view rule,
              const std::string& why) {
  ctx.ok_json(call_or_skip(ctx, alias, caller), rule, caller + " calls alias " + alias + " (" + why + ")");
}

void refused_call(CheckContext& ctx, const std::string& alias, const std::string& caller, std::string_view rule,
                  const std::string& why) {
  ctx.refused(call_or_skip(ctx, alias, caller), rule, caller + " calls alias " + alias + " (" + why + ")",
              ctx.profile().call_refused_statuses);
}

CallOutcome outcome_of(const core::Exchange& e) {
  if (!e.answered()) return CallOutcome::unknown;
  return e.response->status == 200 ? CallOutcome::connected : CallOutcome::refused;
}

// One round: `n` callers on pre-opened connections, released together.
void race_round(CheckContext& ctx, int round, int n) {
  TagGuard tags(ctx);
  auto alias = tags.tag("race");
  std::vector<std::unique_ptr<core::HttpClient>> clients;
  std::vector<core::HttpRequest> requests;
  for (int i = 0; i < n; ++i) {
    clients.push_back(ctx.new_client());
    // Open the connection now, so the release sends on a warm socket.
    auto warm = clients.back()->send(ctx.authenticated(ctx.request("GET", agents_path())));
    if (!warm.answered()) ctx.indeterminate("could not open caller connection " + std::to_string(i + 1) + ": " + warm.error_detail);
    requests.push_back(ctx.authenticated(ctx.call_request(alias, ctx.caller(10 + round * n + i))));
  }
  std::vector<core::Exchange> results(n);
  std::barrier start(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = clients[i]->send(requests[i]);
    });
  for (auto& t : threads) t.join();
  std::vector<CallOutcome> outcomes;
  for (const auto& e : results) {
    ctx.record(e);
    outcomes.push_back(outcome_of(e));
    if (e.answered() && (e.response->status == 404 || e.response->status == 405 || e.response->status == 501))
      ctx.skip("the target has no call hook (" + describe_answer(e) + ")");
  }
  auto verdict = race_verdict(outcomes);
  const std::string where = "round " + std::to_string(round + 1) + ", alias " + alias + ": ";
  if (verdict.kind == RaceVerdict::broken) ctx.fail("B2", where + verdict.text);
  if (verdict.kind == RaceVerdict::undecided) ctx.indeterminate(where + verdict.text);
  for (int i = 0; i < n; ++i)
    if (outcomes[i] == CallOutcome::connected)
      connects(ctx, alias, ctx.caller(10 + round * n + i), "B3", "the race's winner calls again");
    else if (outcomes[i] == CallOutcome::refused)
      for (const auto& f : error_shape_findings(results[i].response->status, results[i].response->header("Content-Type"),
                                                 results[i].response->body))
        if (f.severity == Severity::must) ctx.fail(f.rule, where + "a refused caller's answer: " + f.text);
}

}  // namespace

void add_binding_checks(std::vector<Check>& out) {
  const std::string s = "binding";
  out.push_back({.id = "binding.first-caller-wins", .suite = s, .rules = {"B1", "B2", "B3"},
                 .summary = "the first caller connects, another is refused with a msg (403 expected), the first still connects",
                 .body = [](CheckContext& ctx) {
                   TagGuard tags(ctx);
                   auto alias = tags.tag("binding");
                   connects(ctx, alias, ctx.caller(1), "B1", "the first caller of a newly tagged alias");
                   refused_call(ctx, alias, ctx.caller(2), "B2", "alias bound to " + ctx.caller(1));
                   connects(ctx, alias, ctx.caller(1), "B3", "the bound caller calls again");
                   refused_call(ctx, alias, ctx.caller(3), "B3", "alias still bound to " + ctx.caller(1));
                 },
                 .needs_call_hook = true});
  out.push_back({.id = "binding.independent-aliases", .suite = s, .rules = {"B1", "B2", "B3"},
                 .summary = "two tagged aliases bind two callers independently",
                 .body = [](CheckContext& ctx) {
                   TagGuard tags(ctx);
                   auto a = tags.tag("binding-a");
                   auto b = tags.tag("binding-b");
                   if (a == b) ctx.fail("T1", "two tags in a row returned the same alias " + a);
                   connects(ctx, a, ctx.caller(1), "B1", "first caller of alias " + a);
                   connects(ctx, b, ctx.caller(2), "B1", "first caller of alias " + b + ", another alias");
                   refused_call(ctx, a, ctx.caller(2), "B2", "alias " + a + " is bound to " + ctx.caller(1));
                   refused_call(ctx, b, ctx.caller(1), "B2", "alias " + b + " is bound to " + ctx.caller(2));
                 },
                 .needs_call_hook = true});
  out.push_back({.id = "binding.free-after-delete", .suite = s, .rules = {"B1", "T1"}, .severity = Severity::should,
                 .summary = "after the tag is deleted the lock ends: another caller connects",
                 .body = [](CheckContext& ctx) {
                   TagGuard tags(ctx);
                   auto alias = tags.tag("binding-delete");
                   connects(ctx, alias, ctx.caller(1), "B1", "the first caller");
                   delete_tag(ctx, alias);
                   tags.forget(alias);
                   auto e = call_or_skip(ctx, alias, ctx.caller(2));
                   const auto& r = ctx.response(e, "a call after the tag was deleted");
                   ctx.prefer(r.status == 200, "T1",
                              ctx.caller(2) + " calls alias " + alias + " after its tag was deleted: expected the call to go through (deleting a tag ends the lock), got " +
                                  describe_answer(e));
                 },
                 .needs_call_hook = true});
  out.push_back({.id = "binding.race", .suite = s, .rules = {"B1", "B2"},
                 .summary = "8 callers released together on a fresh tag: exactly one connects, in each of 3 rounds",
                 .body = [](CheckContext& ctx) {
                   for (int round = 0; round < 3; ++round) race_round(ctx, round, 8);
                 },
                 .needs_call_hook = true});
}

void add_expiry_checks(std::vector<Check>& out) {
  out.push_back({.id = "expiry.lifetime", .suite = "expiry", .rules = {"T1", "B3", "B1"},
                 .summary = "a 1-minute tag still locks at half its lifetime and is free (and untagged) after it",
                 .body = [](CheckContext& ctx) {
                   const auto lifetime = ctx.target().minute;
                   TagGuard tags(ctx);
                   const auto sent = Clock::now();
                   auto alias = tags.tag("expiry", 1);
                   const auto answered = Clock::now();
                   connects(ctx, alias, ctx.caller(1), "B1", "the first caller");

                   ctx.sleep_until(answered + lifetime / 2);
                   if (Clock::now() >= sent + lifetime - lifetime / 10)
                     ctx.indeterminate("could not look at the tag before the end of its lifetime (the run was too slow)");
                   refused_call(ctx, alias, ctx.caller(2), "B3", "at half the tag's lifetime, the alias is still bound");
                   for (const auto& a : list_aliases(ctx))
                     if (a.id == alias)
                       ctx.prefer(tag_of(ctx, a.value).value_or("x") != "", "T1",
                                  "alias list at half the lifetime: expected alias " + alias + " still tagged, got " +
                                      excerpt(json::serialize(a.value)));

                   // The tag began at the latest when its answer came; allow the target a
                   // little clock slack (a second, or a tenth of the lifetime) after that.
                   const auto end = answered + lifetime;
                   const auto grace = std::max<std::chrono::milliseconds>(std::chrono::milliseconds(1000), lifetime / 10);
                   ctx.sleep_until(end + std::chrono::milliseconds(20));
                   std::lock_guard channel(ctx.run().channel_mutex);  // no quick check may re-tag it meanwhile
                   core::Exchange last;
                   do {
                     last = call_or_skip(ctx, alias, ctx.caller(2));
                     if (last.answered() && last.response->status == 200) break;
                     ctx.sleep_until(Clock::now() + std::chrono::milliseconds(50));
                   } while (Clock::now() < end + grace);
                   const auto& r = ctx.response(last, "a call after the tag's lifetime");
                   if (r.status != 200)
                     ctx.fail("T1", ctx.caller(2) + " calls alias " + alias + " " +
                                        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - answered).count()) +
                                        " ms after a 1-minute tag (minute = " + std::to_string(lifetime.count()) +
                                        " ms): expected the tag expired and any caller connects, got " + describe_answer(last));
                   for (const auto& a : list_aliases(ctx))
                     if (a.id == alias)
                       ctx.prefer(tag_of(ctx, a.value).value_or("") == "", "T1",
                                  "alias list after the lifetime: expected alias " + alias + " untagged, got " +
                                      excerpt(json::serialize(a.value)));
                   tags.forget(alias);
                   ctx.janitor().untagged(alias);
                 },
                 .slow = true,
                 .needs_call_hook = true});
}

}  // namespace crh::contracts::suites
