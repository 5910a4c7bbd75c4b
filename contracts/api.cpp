// API helpers shared by the suites.
#include "contracts/api.hpp"

#include <boost/json.hpp>
#include <set>

namespace crh::contracts::api {
namespace json = boost::json;
using core::percent_encode;

std::string agents_path() { return "/api/v1/local-agents"; }
std::string agent_path(const std::string& id) { return agents_path() + "/" + percent_encode(id); }
std::string agent_op_path(const std::string& id, const char* op) { return agent_path(id) + "/" + op; }
std::string database_path(const std::string& key) { return "/database/" + percent_encode(key); }
std::string aliases_path(const std::string& channel) {
  return "/channels/" + percent_encode(channel) + "/alias-numbers";
}
std::string tag_path(const std::string& channel) { return aliases_path(channel) + "/tag"; }
std::string delete_tag_path(const std::string& channel, const std::string& alias) {
  return aliases_path(channel) + "/" + percent_encode(alias) + "/tag";
}
std::string tag_name(const std::string& what) { return std::string(kProbePrefix) + what; }

namespace {

std::optional<std::string> id_with(const json::value& item, const std::vector<std::string>& fields) {
  std::vector<std::string_view> views(fields.begin(), fields.end());
  return item_id(item, views);
}

std::string fields_text(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ", ") + f;
  return out;
}

std::vector<Item> list(CheckContext& ctx, const std::string& path, std::string_view rule, const char* what,
                       const std::string& preferred, const std::vector<std::string>& id_fields) {
  const std::string label = std::string("GET ") + path;
  auto body = ctx.ok_json(ctx.send("GET", path), rule, label);
  std::string why;
  auto found = find_list(body, preferred, why);
  if (!found) ctx.fail(rule, label + ": expected a list of " + what + ", but " + why);
  std::vector<Item> items;
  std::set<std::string> seen;
  for (const auto& item : *found->items) {
    auto id = id_with(item, id_fields);
    if (!id)
      ctx.fail(rule, label + ": expected every item of " + found->where + " to have an id (" +
                         fields_text(id_fields) + "), got " + excerpt(json::serialize(item)));
    if (!seen.insert(*id).second) ctx.fail(rule, label + ": the id \"" + *id + "\" is listed twice");
    items.push_back({*id, item});
  }
  return items;
}

}  // namespace

std::vector<Item> list_agents(CheckContext& ctx) {
  return list(ctx, agents_path(), "E1", "agents", ctx.profile().agents_list_field, ctx.profile().agent_id_fields);
}

std::vector<Item> list_aliases(CheckContext& ctx) {
  return list(ctx, aliases_path(ctx.target().channel), "E7", "aliases", ctx.profile().aliases_list_field,
              ctx.profile().alias_id_fields);
}

std::optional<std::string> agent_id(const CheckContext& ctx, const json::value& item) {
  return id_with(item, ctx.profile().agent_id_fields);
}
std::optional<std::string> alias_id(const CheckContext& ctx, const json::value& item) {
  return id_with(item, ctx.profile().alias_id_fields);
}

std::optional<std::string> tag_of(const CheckContext& ctx, const json::value& alias) {
  if (!alias.is_object()) return std::nullopt;
  auto* v = alias.get_object().if_contains(ctx.profile().alias_tag_field);
  if (!v) return std::nullopt;
  if (v->is_string()) return std::string(v->get_string());
  return std::string();  // null (or anything that is not a tag) reads as untagged
}

std::string agent_state(const CheckContext& ctx, const json::value& agent) {
  if (agent.is_object())
    if (auto* v = agent.get_object().if_contains(ctx.profile().agent_state_field))
      return json::serialize(*v);
  return json::serialize(agent);
}

json::value get_agent(CheckContext& ctx, const std::string& id) {
  auto body = ctx.ok_json(ctx.send("GET", agent_path(id)), "E2", "GET " + agent_path(id));
  if (!body.is_object())
    ctx.fail("E2", "GET " + agent_path(id) + ": expected the agent object, got " + excerpt(json::serialize(body)));
  return body;
}

json::value agent_op(CheckContext& ctx, const std::string& id, const char* op) {
  const std::string path = agent_op_path(id, op);
  const bool snooze = std::string_view(op) == "snooze";
  auto body = ctx.ok_json(ctx.send("PUT", path), snooze ? "E3" : "E4", "PUT " + path);
  return body;
}

std::string tag(CheckContext& ctx, const std::string& name, int minutes) {
  const std::string path = tag_path(ctx.target().channel);
  auto e = ctx.send("POST", path, {{"tag", name}, {"minutes", std::to_string(minutes), true}});
  auto body = ctx.ok_json(e, "E8", "POST " + path);
  auto id = alias_id(ctx, body);
  if (!id)
    ctx.fail("E8", "POST " + path + ": expected the tagged alias with an id (" +
                       fields_text(ctx.profile().alias_id_fields) + "), got " + excerpt(json::serialize(body)));
  ctx.janitor().tagged(*id);
  return *id;
}

void delete_tag(CheckContext& ctx, const std::string& alias) {
  const std::string path = delete_tag_path(ctx.target().channel, alias);
  ctx.ok_json(ctx.send("DELETE", path), "E9", "DELETE " + path);
  ctx.janitor().untagged(alias);
}

std::optional<std::string> database_value(const CheckContext& ctx, const json::value& body) {
  if (body.is_string()) return std::string(body.get_string());
  if (body.is_object())
    if (auto* v = body.get_object().if_contains(ctx.profile().database_value_field); v && v->is_string())
      return std::string(v->get_string());
  return std::nullopt;
}

bool holds_string(const json::value& body, const std::string& expected) {
  if (body.is_string()) return body.get_string() == expected;
  if (body.is_object()) {
    for (const auto& [k, v] : body.get_object())
      if (holds_string(v, expected)) return true;
  } else if (body.is_array()) {
    for (const auto& v : body.get_array())
      if (holds_string(v, expected)) return true;
  }
  return false;
}

std::string probe_key(CheckContext& ctx, const std::string& suffix) {
  const std::string key = std::string(kProbePrefix) + suffix;
  if (ctx.janitor().knows_database_key(key)) return key;
  ctx.janitor().database_key(key, read_database_value(ctx, key));
  return key;
}

std::optional<std::string> read_database_value(CheckContext& ctx, const std::string& key) {
  auto e = ctx.send("GET", database_path(key));
  if (!e.answered() || e.response->status != 200) return std::nullopt;
  std::string why;
  auto body = parse_json(e.response->body, why);
  return body ? database_value(ctx, *body) : std::nullopt;
}

void database_set(CheckContext& ctx, const std::string& key, const std::string& value) {
  ctx.ok_json(ctx.send("POST", database_path(key), {{"value", value}}), "E6", "POST " + database_path(key));
}

std::string first_agent(CheckContext& ctx) {
  auto agents = list_agents(ctx);
  if (agents.empty()) ctx.skip("the target lists no agents");
  return agents.front().id;
}

bool restore_agent(CheckContext& ctx, const std::string& id, const std::string& start_state) {
  for (const char* op : {"wake", "snooze"}) {
    auto put = ctx.send("PUT", agent_op_path(id, op));
    auto get = ctx.send("GET", agent_path(id));
    if (!put.answered() || !get.answered() || get.response->status != 200) return false;
    std::string why;
    auto body = parse_json(get.response->body, why);
    if (body && agent_state(ctx, *body) == start_state) {
      ctx.janitor().agent_restored(id);
      return true;
    }
  }
  return false;
}

AgentGuard::AgentGuard(CheckContext& ctx, std::string id) : ctx_(ctx), id_(std::move(id)) {
  start_ = agent_state(ctx_, get_agent(ctx_, id_));
  ctx_.janitor().agent_changed(id_, start_);
}

AgentGuard::~AgentGuard() {
  try {
    restore_agent(ctx_, id_, start_);
  } catch (...) {
    // The janitor tries again at the end of the run.
  }
}

void untag_quietly(CheckContext& ctx, const std::string& alias) {
  auto e = ctx.send("DELETE", delete_tag_path(ctx.target().channel, alias));
  if (e.answered() && e.response->status == 200) ctx.janitor().untagged(alias);
}

void untag_if_tagged(CheckContext& ctx, const core::Exchange& e) {
  if (!e.answered() || e.response->status != 200) return;
  std::string why;
  if (auto body = parse_json(e.response->body, why))
    if (auto id = alias_id(ctx, *body)) untag_quietly(ctx, *id);
}

TagGuard::~TagGuard() {
  for (const auto& a : aliases_) {
    try {
      untag_quietly(ctx_, a);
    } catch (...) {
    }
  }
}

std::string TagGuard::tag(const std::string& what, int minutes) {
  auto id = api::tag(ctx_, tag_name(what), minutes);
  aliases_.push_back(id);
  return id;
}

void TagGuard::forget(const std::string& alias) { std::erase(aliases_, alias); }

core::Exchange call_or_skip(CheckContext& ctx, const std::string& alias, const std::string& caller) {
  auto e = ctx.call(alias, caller);
  if (e.answered() && (e.response->status == 404 || e.response->status == 405 || e.response->status == 501)) {
    const auto& hook = ctx.profile().call_hook;
    ctx.skip("the target has no call hook: " + hook.method + " " + hook.path + " answered HTTP " +
             std::to_string(e.response->status) +
             "; binding checks need one (README, \"The call hook\"; or set call_hook in the profile)");
  }
  return e;
}

std::optional<std::vector<std::string>> untagged_aliases(CheckContext& ctx, const std::vector<Item>& aliases) {
  std::vector<std::string> out;
  for (const auto& a : aliases) {
    auto t = tag_of(ctx, a.value);
    if (!t) return std::nullopt;
    if (t->empty()) out.push_back(a.id);
  }
  return out;
}

}  // namespace crh::contracts::api
