// auth: every endpoint and the call hook refuse a missing, empty, wrong or
// misplaced key (R5, A2) and accept the header name in any case; a refused
// write changes nothing (the key offered otherwise: auth_offers.cpp).
#include <boost/json.hpp>
#include <functional>

#include "calls/http_call_driver.hpp"
#include "contracts/suites/suites.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// One documented operation, built against real resources so that only the
// key can be the reason for a refusal.
struct Operation {
  const char* name;
  const char* rule;
  bool needs_tag;  // delete-tag and call address a tagged alias
  bool call_hook;
  std::function<core::HttpRequest(CheckContext&, const std::string& alias)> build;
};

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops{
      {"agents-list", "E1", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::list_agents, {}); }},
      {"agent-get", "E2", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::get_agent, {.id = first_agent(c)}); }},
      {"agent-snooze", "E3", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::snooze, {.id = first_agent(c)}); }},
      {"agent-wake", "E4", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::wake, {.id = first_agent(c)}); }},
      {"database-get", "E5", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::db_get, {.id = probe_key(c, "auth")}); }},
      {"database-post", "E6", false, false,
       [](CheckContext& c, auto&) {
         return c.request(core::api::Operation::db_set, {.id = probe_key(c, "auth"), .value = "crh auth probe"});
       }},
      {"aliases-list", "E7", false, false,
       [](CheckContext& c, auto&) { return c.request(core::api::Operation::list_aliases, {}); }},
      {"tag", "E8", false, false,
       [](CheckContext& c, auto&) {
         return c.request(core::api::Operation::tag, {.tag = tag_name("auth")});
       }},
      {"delete-tag", "E9", true, false,
       [](CheckContext& c, const std::string& alias) {
         return c.request(core::api::Operation::untag, {.id = alias});
       }},
      {"call", "B1", true, true,
       [](CheckContext& c, const std::string& alias) { return c.call_request(alias, c.caller(1)); }},
  };
  return ops;
}

struct KeyVariant {
  const char* name;
  KeyMode mode;
  const char* rule;
  const char* what;
};

constexpr KeyVariant kBadKeys[] = {
    {"missing-key", KeyMode::missing, "R5", "without an Apikey header"},
    {"empty-key", KeyMode::empty, "A2", "with an empty Apikey"},
    {"wrong-key", KeyMode::wrong, "A2", "with a wrong Apikey of the right length"},
    {"other-header", KeyMode::other_header, "R5", "with the key in Authorization and X-Api-Key instead of Apikey"},
};

std::string label(const core::HttpRequest& r) { return r.method + " " + r.target; }

// Runs `send` against the operation's resources, cleaning up what it made.
void with_resources(CheckContext& ctx, const Operation& op, const std::function<void(const std::string&)>& send) {
  TagGuard tags(ctx);
  std::string alias;
  if (op.needs_tag) alias = tags.tag("auth");
  if (std::string_view(op.name).starts_with("database-"))
    database_set(ctx, probe_key(ctx, "auth"), "crh auth probe");  // so that a GET with the key finds a value
  std::optional<AgentGuard> agent;
  if (std::string_view(op.name).starts_with("agent-")) {
    const std::string id = first_agent(ctx);
    agent.emplace(ctx, id);
    // A snooze or wake accepted with the key is then a real transition.
    if (std::string_view(op.name) == "agent-snooze" || std::string_view(op.name) == "agent-wake")
      ready_for(ctx, id, std::string_view(op.name).substr(6));
  }
  send(alias);
  if (std::string_view(op.name) == "tag") {
    // A tag the target applied anyway (or rightly, with the lower-case header)
    // is removed: found by its name in any field, since without a profile the
    // tag's field may not be the one the profile names.
    const auto holds_tag = [&](const boost::json::value& alias) {
      if (!alias.is_object()) return false;
      for (const auto& [k, v] : alias.get_object())
        if (v.is_string() && v.get_string() == tag_name("auth")) return true;
      return false;
    };
    for (const auto& a : list_aliases(ctx))
      if (holds_tag(a.value)) untag_quietly(ctx, a.id);
  }
}

// A write sent with bad keys must leave the state as it was: `read` gives
// the state, `write` is the operation.
void rejected_write(CheckContext& ctx, const std::string& what, const std::function<std::string()>& read,
                    const core::HttpRequest& write) {
  const std::string before = read();
  for (auto mode : {KeyMode::missing, KeyMode::wrong}) {
    auto e = ctx.send(write, mode);
    ctx.refused(e, mode == KeyMode::missing ? "R5" : "A2",
                label(write) + (mode == KeyMode::missing ? " without an Apikey" : " with a wrong Apikey"),
                ctx.statuses().auth);
    const std::string after = read();
    ctx.require(after == before, mode == KeyMode::missing ? "R5" : "A2",
                label(write) + " was refused" + (mode == KeyMode::missing ? " (no Apikey)" : " (wrong Apikey)") +
                    " but changed " + what + ": before " + excerpt(before, 160) + ", after " + excerpt(after, 160));
  }
}

// The key variant's rule: the operation sent with that bad key is refused with the error shape.
void bad_key_refused(CheckContext& ctx, const Operation& op, const KeyVariant& key) {
  with_resources(ctx, op, [&](const std::string& alias) {
    auto request = op.build(ctx, alias);
    ctx.refused(ctx.send(request, key.mode), key.rule, label(request) + " " + key.what, ctx.statuses().auth);
  });
}

// R5: header names are case-insensitive, so the key under "apikey" is accepted.
void lower_case_header_accepted(CheckContext& ctx, const Operation& op) {
  with_resources(ctx, op, [&](const std::string& alias) {
    auto request = op.build(ctx, alias);
    auto e = ctx.send(request, KeyMode::lower_case);
    if (op.call_hook && e.answered() && (e.response->status == 404 || e.response->status == 405))
      ctx.skip("the target has no call hook (" + describe_answer(e) + ")");
    if (std::string_view(op.name) == "tag") skip_if_rightly_full(ctx, e);
    ctx.ok_json(e, "R5", label(request) + " with the header \"apikey\" (HTTP header names are case-insensitive)");
  });
}

// R5, A2: a database write refused for its key leaves the stored value as it was.
void rejected_database_post(CheckContext& ctx) {
  auto key = probe_key(ctx, "rejected-write");
  database_set(ctx, key, "crh value before");
  rejected_write(
      ctx, "the stored value",
      [&] {
        auto e = ctx.send(core::api::Operation::db_get, {.id = key});
        return json::serialize(ctx.ok_json(e, "E5", "GET " + database_path(key)));
      },
      ctx.request(core::api::Operation::db_set, {.id = key, .value = "crh value after"}));
}

// R5, A2: snooze or wake refused for its key leaves the agent as it was.
void rejected_agent_op(CheckContext& ctx, const char* op) {
  auto id = first_agent(ctx);
  AgentGuard guard(ctx, id);
  // Start from the other state, so that an applied write would show.
  ready_for(ctx, id, op);
  rejected_write(
      ctx, "the agent", [&] { return agent_state(ctx, get_agent(ctx, id)); },
      ctx.request(snooze_or_wake(op), {.id = id}));
}

// R5, A2: a tag refused for its key tags no alias of the channel.
void rejected_tag(CheckContext& ctx) {
  auto read = [&] {
    std::string tags;
    for (const auto& a : list_aliases(ctx)) tags += a.id + "=" + tag_of(ctx, a.value).value_or("?") + " ";
    return tags;
  };
  TagGuard cleanup(ctx);
  rejected_write(
      ctx, "the channel's tags", read,
      ctx.request(core::api::Operation::tag, {.tag = tag_name("rejected")}));
}

// R5, A2: a tag deletion refused for its key leaves the tag in place.
void rejected_delete_tag(CheckContext& ctx) {
  TagGuard tags(ctx);
  auto alias = tags.tag("rejected-delete");
  auto read = [&] {
    for (const auto& a : list_aliases(ctx))
      if (a.id == alias) {
        auto t = tag_of(ctx, a.value);
        if (!t) ctx.skip("the alias list shows no tag field (profile fields.alias_tag), so a deletion cannot be seen");
        return *t;
      }
    return std::string("(alias gone)");
  };
  rejected_write(ctx, "the alias's tag", read, ctx.request(core::api::Operation::untag, {.id = alias}));
}

// R5, A2, B1: calls refused for their key bind nobody, so a later caller still connects.
void rejected_call(CheckContext& ctx) {
  TagGuard tags(ctx);
  auto alias = tags.tag("rejected-call");
  for (auto mode : {KeyMode::missing, KeyMode::wrong}) {
    auto e = ctx.call(alias, ctx.caller(2), mode);
    if (e.answered() && (e.response->status == 404 || e.response->status == 405)) {
      ctx.run().no_call_hook = true;
      ctx.skip("the target has no call hook (" + describe_answer(e) + ")");
    }
    ctx.refused(e, mode == KeyMode::missing ? "R5" : "A2", "a call without the right Apikey", ctx.statuses().auth);
  }
  auto e = ctx.call(alias, ctx.caller(3));
  // Keyless calls may be refused before any route is looked up: only the
  // keyed call shows whether there is a hook (the binding checks' reading).
  if (e.answered() && calls::no_call_hook(e.response->status)) {
    ctx.run().no_call_hook = true;
    ctx.skip("the target has no call hook (" + describe_answer(e) + ")");
  }
  ctx.ok_json(e, "B1",
              "a call by " + ctx.caller(3) + " after refused calls by " + ctx.caller(2) +
                  " (a refused call must not bind its caller)");
}

}  // namespace

void add_auth_checks(std::vector<Check>& out) {
  const std::string s = "auth";
  for (const auto& op : operations()) {
    for (const auto& key : kBadKeys)
      out.push_back({.id = std::string("auth.") + key.name + "." + op.name,
                     .suite = s,
                     .rules = {key.rule, "X1", "X2"},
                     .summary = std::string(op.name) + " " + key.what + " is refused with a msg (401/403 expected)",
                     .body = [&op, key](CheckContext& ctx) { bad_key_refused(ctx, op, key); },
                     .needs_call_hook = op.call_hook});
    out.push_back({.id = std::string("auth.lower-case-header.") + op.name,
                   .suite = s,
                   .rules = {"R5"},
                   .summary = std::string(op.name) + " with the header name written \"apikey\" is accepted",
                   .body = [&op](CheckContext& ctx) { lower_case_header_accepted(ctx, op); },
                   .needs_call_hook = op.call_hook});
  }
  out.push_back({.id = "auth.rejected-write.database-post",
                 .suite = s,
                 .rules = {"R5", "A2"},
                 .summary = "a database POST refused for its key leaves the value as it was",
                 .body = rejected_database_post});
  for (const char* op : {"snooze", "wake"})
    out.push_back({.id = std::string("auth.rejected-write.agent-") + op,
                   .suite = s,
                   .rules = {"R5", "A2"},
                   .summary = std::string(op) + " refused for its key leaves the agent as it was",
                   .body = [op](CheckContext& ctx) { rejected_agent_op(ctx, op); }});
  out.push_back({.id = "auth.rejected-write.tag",
                 .suite = s,
                 .rules = {"R5", "A2"},
                 .summary = "a tag refused for its key tags nothing",
                 .body = rejected_tag,
                 .owns_channel = true});
  out.push_back({.id = "auth.rejected-write.delete-tag",
                 .suite = s,
                 .rules = {"R5", "A2"},
                 .summary = "a tag deletion refused for its key leaves the tag in place",
                 .body = rejected_delete_tag});
  out.push_back({.id = "auth.rejected-write.call",
                 .suite = s,
                 .rules = {"R5", "A2", "B1"},
                 .summary = "a call refused for its key binds nobody: another caller still connects",
                 .body = rejected_call,
                 .needs_call_hook = true});
}

}  // namespace crh::contracts::suites
