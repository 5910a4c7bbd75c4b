// agents: the list, each agent readable, snooze and wake answering with the
// single GET's form (R1: field names, field types, id; the GET made after the
// operation, in the same state) and their effect visible in a later GET.
#include <boost/json.hpp>

#include "contracts/suites/suites.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// R1: the answer is compared with a GET made after it, so both show the
// agent in one state: a field written only once it has a value (a last
// change) differs between states, not between forms (oracle::form_difference).
void same_shape(CheckContext& ctx, const char* op) {
  auto id = first_agent(ctx);
  AgentGuard guard(ctx, id);
  ready_for(ctx, id, op);
  auto answer = agent_op(ctx, id, op);
  auto single = get_agent(ctx, id);
  const std::string what = std::string("PUT ") + agent_op_path(id, op);
  ctx.require(answer.is_object(), "R1",
              what + ": expected the agent object (the same form as GET " + agent_path(id) + "), got " +
                  oracle::excerpt(json::serialize(answer)));
  if (single.is_object()) {
    const auto diff = oracle::form_difference(single.get_object(), answer.get_object());
    ctx.require(!diff, "R1",
                what + ": expected the form of the GET " + agent_path(id) +
                    " that followed it (the same field names and JSON types), got " + diff.value_or(""));
  }
  auto got = agent_id(ctx, answer);
  ctx.require(
      got == agent_id(ctx, single), "R1",
      what + ": expected the agent's id " + agent_id(ctx, single).value_or("?") + ", got " + got.value_or("none"));
}

// E1, E2: every listed agent reads back by its id as that agent.
void each_agent_readable(CheckContext& ctx) {
  auto agents = list_agents(ctx);
  if (agents.empty()) ctx.skip("the target lists no agents");
  std::size_t n = 0;
  for (const auto& a : agents) {
    if (++n > 50) break;  // enough to trust the pattern, bounded for large fixtures
    auto body = get_agent(ctx, a.id);
    auto got = agent_id(ctx, body);
    ctx.require(!got || *got == a.id, "E2",
                "GET " + agent_path(a.id) + ": expected the agent with id " + a.id + ", got id " + *got);
  }
}

// E3, E4: a GET shows the state snooze and wake answered, and the two states differ.
void snooze_wake_visible(CheckContext& ctx) {
  auto id = first_agent(ctx);
  AgentGuard guard(ctx, id);
  ready_for(ctx, id, "snooze");
  auto snoozed = agent_state(ctx, agent_op(ctx, id, "snooze"));
  auto after_snooze = agent_state(ctx, get_agent(ctx, id));
  auto woke = agent_state(ctx, agent_op(ctx, id, "wake"));
  auto after_wake = agent_state(ctx, get_agent(ctx, id));
  ctx.prefer(after_wake == woke, "E4",
             "GET after wake: expected the state wake answered (" + woke + "), got " + after_wake);
  ctx.prefer(after_snooze == snoozed, "E3",
             "GET after snooze: expected the state snooze answered (" + snoozed + "), got " + after_snooze);
  ctx.prefer(after_wake != after_snooze, "E3",
             "expected snooze to change what GET " + agent_path(id) + " shows (field \"" + ctx.fields().agent_state +
                 "\"), got " + after_snooze + " after both");
}

// E2, E3, E4, X1, X2: an agent id that does not exist is refused on GET, snooze and wake.
void unknown_agent(CheckContext& ctx) {
  const std::string id = "crh-no-such-agent-" + ctx.run().caller_base.substr(5);
  ctx.refused(ctx.send(core::api::Operation::get_agent, {.id = id}), "E2", "GET " + agent_path(id),
              ctx.statuses().not_found);
  for (const char* op : {"snooze", "wake"})
    ctx.refused(ctx.send(snooze_or_wake(op), {.id = id}), op[0] == 's' ? "E3" : "E4", "PUT " + agent_op_path(id, op),
                ctx.statuses().not_found);
}

}  // namespace

void add_agent_checks(std::vector<Check>& out) {
  const std::string s = "agents";
  out.push_back({.id = "agents.each-readable",
                 .suite = s,
                 .rules = {"E1", "E2"},
                 .summary = "every listed agent can be read by its id and is that agent",
                 .body = each_agent_readable});
  out.push_back(
      {.id = "agents.snooze-same-shape",
       .suite = s,
       .rules = {"R1", "E3"},
       .summary = "snooze answers with the agent object: the same fields, field types and id as the single GET after it",
       .body = [](CheckContext& ctx) { same_shape(ctx, "snooze"); }});
  out.push_back({.id = "agents.wake-same-shape",
                 .suite = s,
                 .rules = {"R1", "E4"},
                 .summary = "wake answers with the agent object: the same fields, field types and id as the single GET after it",
                 .body = [](CheckContext& ctx) { same_shape(ctx, "wake"); }});
  out.push_back(
      {.id = "agents.snooze-wake-visible",
       .suite = s,
       .rules = {"E3", "E4", "R1"},
       .severity = Severity::should,
       .summary = "after snooze and after wake, a GET shows the state the operation answered, and the two differ",
       .body = snooze_wake_visible});
  out.push_back(
      {.id = "agents.unknown-id",
       .suite = s,
       .rules = {"E2", "X1", "X2"},
       .summary = "an agent id that does not exist is refused with a msg on GET, snooze and wake (404 expected)",
       .body = unknown_agent});
}

}  // namespace crh::contracts::suites
