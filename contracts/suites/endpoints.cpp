// endpoints: each of the nine answers as documented (E1–E9), with JSON and
// HTTP 200 (C1, C2), under the documented version prefixes (V1); and C1/C2
// over every answer of the run.
#include <algorithm>
#include <boost/json.hpp>

#include "contracts/suites/suites.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

void agent_operation(CheckContext& ctx, const char* op, std::string_view rule) {
  auto id = first_agent(ctx);
  AgentGuard guard(ctx, id);
  ready_for(ctx, id, op);
  auto body = agent_op(ctx, id, op);
  ctx.require(body.is_object(), rule,
              std::string("PUT ") + agent_op_path(id, op) + ": expected the agent object, got " +
                  oracle::excerpt(json::serialize(body)));
}

// E1: the agent list answers, and holds an agent.
void agents_list(CheckContext& ctx) {
  auto agents = list_agents(ctx);
  ctx.prefer(!agents.empty(), "E1", "GET /api/v1/local-agents: expected at least one agent, got an empty list");
}

// E2: an agent read by its id is that agent.
void agent_get(CheckContext& ctx) {
  auto id = first_agent(ctx);
  auto body = get_agent(ctx, id);
  auto got = agent_id(ctx, body);
  ctx.require(!got || *got == id, "E2",
              "GET " + agent_path(id) + ": expected the agent with id " + id + ", got id " + got.value_or(""));
}

// E3: snooze answers with the agent object.
void agent_snooze(CheckContext& ctx) { agent_operation(ctx, "snooze", "E3"); }

// E4: wake answers with the agent object.
void agent_wake(CheckContext& ctx) { agent_operation(ctx, "wake", "E4"); }

// E6: a database write answers 200 with JSON.
void database_post(CheckContext& ctx) { database_set(ctx, probe_key(ctx, "endpoints"), "crh endpoints probe"); }

// E5: a database read answers with the entry holding the value written.
void database_get(CheckContext& ctx) {
  auto key = probe_key(ctx, "endpoints");
  database_set(ctx, key, "crh endpoints probe");
  auto body = ctx.ok_json(ctx.send(core::api::Operation::db_get, {.id = key}), "E5", "GET " + database_path(key));
  ctx.require(holds_string(body, "crh endpoints probe"), "E5",
              "GET " + database_path(key) +
                  ": expected the entry to hold the value just written (\"crh endpoints probe\"), got " +
                  oracle::excerpt(json::serialize(body)));
}

// E7: the channel's alias list answers, and holds an alias.
void aliases_list(CheckContext& ctx) {
  auto aliases = list_aliases(ctx);
  ctx.require(!aliases.empty(), "E7",
              "GET " + aliases_path(ctx.target().channel) +
                  ": expected the channel's aliases, got an empty list (choose a channel with --channel)");
}

// E8: tag answers with one of the channel's aliases, carrying the tag just set.
void tag_one_alias(CheckContext& ctx) {
  auto aliases = list_aliases(ctx);
  TagGuard tags(ctx);
  json::value answer;
  auto id = api::tag(ctx, tag_name("endpoints"), 10, &answer);
  tags.adopt(id);
  // api::tag failed a different tag; one not shown at all is the profile's to name.
  ctx.prefer(tag_of(ctx, answer).value_or("") == tag_name("endpoints"), "E8",
             "POST " + tag_path(ctx.target().channel) + ": expected the tagged alias to show its tag \"" +
                 tag_name("endpoints") + "\" in \"" + ctx.fields().alias_tag + "\" (profile fields.alias_tag), got " +
                 oracle::excerpt(json::serialize(answer)));
  ctx.require(std::any_of(aliases.begin(), aliases.end(), [&](const Item& a) { return a.id == id; }), "E8",
              "POST " + tag_path(ctx.target().channel) + ": expected one of the channel's aliases, got alias id " + id +
                  ", which the alias list does not hold");
}

// E9: deleting a tag answers 200, and the alias list no longer shows it
// (where the list shows tags).
void delete_tag_of_alias(CheckContext& ctx) {
  TagGuard tags(ctx);
  auto id = tags.tag("endpoints");
  delete_tag(ctx, id);
  tags.forget(id);
  for (const auto& a : list_aliases(ctx))
    ctx.require(a.id != id || tag_of(ctx, a.value).value_or("") != tag_name("endpoints"), "E9",
                "DELETE " + delete_tag_path(ctx.target().channel, id) + " answered 200, but the alias list still shows " +
                    "alias " + id + " with the tag \"" + tag_name("endpoints") + "\"");
}

// V1: agents answer under /api/v1, database and aliases without a prefix.
void version_prefix(CheckContext& ctx) {
  ctx.ok_json(ctx.send(core::api::Operation::list_agents), "V1", "GET " + agents_path());
  auto key = probe_key(ctx, "endpoints");
  database_set(ctx, key, "crh endpoints probe");
  ctx.ok_json(ctx.send(core::api::Operation::db_get, {.id = key}), "V1", "GET " + database_path(key));
  ctx.ok_json(ctx.send(core::api::Operation::list_aliases), "V1", "GET " + aliases_path(ctx.target().channel));
}

// V1: the paths are served under their documented prefix only.
void version_prefix_only(CheckContext& ctx) {
  using core::api::kVersionPrefix;
  const std::string unprefixed = agents_path().substr(kVersionPrefix.size());  // "/local-agents"
  for (const std::string& path : {unprefixed, std::string(kVersionPrefix) + aliases_path(ctx.target().channel)}) {
    auto e = ctx.send("GET", path);
    const auto& r = ctx.response(e, "GET " + path);
    ctx.prefer(r.status != 200, "V1",
               "GET " + path + ": expected an error (the spec places this path " +
                   (path == unprefixed ? "under " + std::string(kVersionPrefix) : std::string("without a prefix")) +
                   "), got " + describe_answer(e));
  }
}

// C1, C2: every answer of the whole run is 200 or an error status, with JSON
// (the readings are oracle::judge_answer's: a 3xx is an error status, a 5xx
// is judged by the error checks).
void every_answer(CheckContext& ctx) {
  std::optional<Finding> must, should, apart;  // apart: a framework's refusal, reported on its own
  int cited = 0;
  for (const auto& r : ctx.run().recorded()) {
    bool is_must = false, found = false;
    for (auto& [aspect, f] : judge(r).findings) {
      using oracle::Aspect;
      if (aspect != Aspect::success_status && aspect != Aspect::json_body && aspect != Aspect::content_type) continue;
      found = true;
      is_must = is_must || f.severity == Severity::must;
      auto& first = f.severity == Severity::must ? must : f.apart ? apart : should;
      if (first) continue;
      first = std::move(f);
      first->text = "expected every answer to be JSON with status 200 or an error status; first offender (" + r.check +
                    "): " + first->text;
    }
    if (found && cited < 5 && (is_must || !must)) {
      ctx.cite(r);
      ++cited;
    }
  }
  for (auto* f : {&apart, &should, &must})
    if (*f) ctx.add(std::move(**f));
}

}  // namespace

void add_endpoint_checks(std::vector<Check>& out) {
  const std::string s = "endpoints";
  out.push_back({.id = "endpoints.agents-list",
                 .suite = s,
                 .rules = {"E1", "C1", "C2"},
                 .summary = "GET /api/v1/local-agents answers 200 with a JSON list of agents, each with an id",
                 .body = agents_list});
  out.push_back({.id = "endpoints.agent-get",
                 .suite = s,
                 .rules = {"E2", "C1", "C2"},
                 .summary = "GET /api/v1/local-agents/[ID] answers 200 with the agent object of that id",
                 .body = agent_get});
  out.push_back({.id = "endpoints.agent-snooze",
                 .suite = s,
                 .rules = {"E3", "C1", "C2"},
                 .summary = "PUT /api/v1/local-agents/[ID]/snooze answers 200 with the agent object",
                 .body = agent_snooze});
  out.push_back({.id = "endpoints.agent-wake",
                 .suite = s,
                 .rules = {"E4", "C1", "C2"},
                 .summary = "PUT /api/v1/local-agents/[ID]/wake answers 200 with the agent object",
                 .body = agent_wake});
  out.push_back({.id = "endpoints.database-post",
                 .suite = s,
                 .rules = {"E6", "C1", "C2"},
                 .summary = "POST /database/[key] with value answers 200 with JSON",
                 .body = database_post});
  out.push_back({.id = "endpoints.database-get",
                 .suite = s,
                 .rules = {"E5", "C1", "C2"},
                 .summary = "GET /database/[key] answers 200 with the entry, which holds the value written",
                 .body = database_get});
  out.push_back({.id = "endpoints.aliases-list",
                 .suite = s,
                 .rules = {"E7", "C1", "C2"},
                 .summary = "GET /channels/[id]/alias-numbers answers 200 with a JSON list of aliases, each with an id",
                 .body = aliases_list});
  out.push_back(
      {.id = "endpoints.tag",
       .suite = s,
       .rules = {"E8", "C1", "C2"},
       .summary = "POST /channels/[id]/alias-numbers/tag answers 200 with the tagged alias, one of the channel's",
       .body = tag_one_alias});
  out.push_back({.id = "endpoints.delete-tag",
                 .suite = s,
                 .rules = {"E9", "C1", "C2"},
                 .summary = "DELETE /channels/[id]/alias-numbers/:id/tag answers 200 for a tagged alias and the tag is gone",
                 .body = delete_tag_of_alias});
  out.push_back({.id = "endpoints.version-prefix",
                 .suite = s,
                 .rules = {"V1"},
                 .summary = "agents answer under /api/v1; database and aliases answer without a prefix",
                 .body = version_prefix});
  out.push_back({.id = "endpoints.version-prefix-only",
                 .suite = s,
                 .rules = {"V1"},
                 .severity = Severity::should,
                 .summary = "the agent list is not also served without /api/v1, nor aliases with it",
                 .body = version_prefix_only});
  out.push_back({.id = "endpoints.every-answer",
                 .suite = s,
                 .rules = {"C1", "C2"},
                 .summary = "every answer of the run: success is exactly 200, bodies are JSON, Content-Type is JSON",
                 .body = every_answer,
                 .run_wide = true});
}

}  // namespace crh::contracts::suites
