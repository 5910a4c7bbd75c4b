// API helpers shared by the suites.
#include "contracts/api.hpp"

#include <boost/json.hpp>
#include <set>

#include "core/outside.hpp"

namespace crh::contracts::api {
namespace json = boost::json;
using core::api::Operation;

std::string tag_name(const std::string& what) { return std::string(kProbePrefix) + what; }

namespace {

std::string fields_text(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// `id_key`: the profile key naming the items' id fields.
std::vector<Item> list(CheckContext& ctx, Operation op, std::string_view rule, const char* what,
                       const std::string& preferred, const std::vector<std::string>& id_fields, const char* id_key) {
  const core::HttpRequest request = ctx.request(op, {});
  const std::string label = request.method + " " + request.target;
  auto body = ctx.ok_json(ctx.send(request), rule, label);
  std::string why;
  auto found = core::api::find_list(body, preferred, why);
  if (!found) ctx.fail(rule, label + ": expected a list of " + what + ", but " + why);
  std::vector<Item> items;
  std::set<std::string> seen;
  for (const auto& item : *found->items) {
    auto id = core::api::item_id(item, id_fields);
    // The spec shows no fields of these objects: an id under other names is
    // the profile's to say, not a broken rule, and nothing here can go on.
    if (!id)
      ctx.skip(label + ": an item of " + found->where + " has no id under the names " + fields_text(id_fields) + " (" +
               oracle::excerpt(json::serialize(item)) + "); say which field holds it with " + id_key +
               " in the profile (README, \"The profile\")");
    if (!seen.insert(*id).second) ctx.fail(rule, label + ": the id \"" + *id + "\" is listed twice");
    items.push_back({*id, item});
  }
  return items;
}

}  // namespace

std::vector<Item> list_agents(CheckContext& ctx) {
  return list(ctx, Operation::list_agents, "E1", "agents", ctx.fields().agents_list, ctx.fields().agent_id,
              "id_fields.agent");
}

std::vector<Item> list_aliases(CheckContext& ctx) {
  return list(ctx, Operation::list_aliases, "E7", "aliases", ctx.fields().aliases_list,
              ctx.fields().alias_id, "id_fields.alias");
}

std::optional<std::string> agent_id(const CheckContext& ctx, const json::value& item) {
  return core::api::agent_id(ctx.fields(), item);
}
std::optional<std::string> alias_id(const CheckContext& ctx, const json::value& item) {
  return core::api::alias_id(ctx.fields(), item);
}

std::optional<std::string> tagged_alias_id(const CheckContext& ctx, const json::value& body) {
  return core::api::tagged_alias_id(ctx.fields(), body);
}

std::optional<std::string> tag_of(const CheckContext& ctx, const json::value& alias) {
  return core::api::tag_of(ctx.fields(), alias);
}

std::string agent_state(const CheckContext& ctx, const json::value& agent) {
  return core::api::agent_state(ctx.fields(), agent);
}

json::value get_agent(CheckContext& ctx, const std::string& id) {
  auto body = ctx.ok_json(ctx.send(Operation::get_agent, {.id = id}), "E2", "GET " + agent_path(id));
  if (!body.is_object())
    ctx.fail("E2",
             "GET " + agent_path(id) + ": expected the agent object, got " + oracle::excerpt(json::serialize(body)));
  return body;
}

Operation snooze_or_wake(std::string_view op) { return op == "snooze" ? Operation::snooze : Operation::wake; }

json::value agent_op(CheckContext& ctx, const std::string& id, const char* op) {
  const Operation operation = snooze_or_wake(op);
  auto e = ctx.send(operation, {.id = id});
  return ctx.ok_json(e, operation == Operation::snooze ? "E3" : "E4", "PUT " + agent_op_path(id, op));
}

void ready_for(CheckContext& ctx, const std::string& id, std::string_view op) {
  ctx.send(op == "snooze" ? Operation::wake : Operation::snooze, {.id = id});
}

std::string tag(CheckContext& ctx, const std::string& name, int minutes, json::value* answer) {
  const std::string path = tag_path(ctx.target().channel);
  auto e = ctx.send(Operation::tag, {.tag = name, .minutes = ctx.target().dialect.minutes.fit(minutes)});
  skip_if_rightly_full(ctx, e);
  auto body = ctx.ok_json(e, "E8", "POST " + path);
  auto id = tagged_alias_id(ctx, body);
  if (!id)  // the spec shows no alias fields: the id's name is the profile's to say
    ctx.skip("POST " + path + ": the tagged alias has no id under the names " + fields_text(ctx.fields().alias_id) +
             " (" + oracle::excerpt(json::serialize(body)) +
             "); say which field holds it with id_fields.alias in the profile (README, \"The profile\"). The tag "
             "stays until it expires: without its id it cannot be deleted");
  ctx.janitor().tagged(*id);
  // The alias returned is the one that was tagged (E8): where it shows its
  // tag under the profile's name, that is the tag just set.
  if (auto shown = tag_of(ctx, body); shown && !shown->empty() && *shown != name)
    ctx.fail("E8", "POST " + path + " with tag \"" + name + "\": expected the tagged alias, carrying that tag in \"" +
                       ctx.fields().alias_tag + "\", got alias " + *id + " with " + ctx.fields().alias_tag + " \"" +
                       core::from_target(*shown, 80) + "\" (" + oracle::excerpt(json::serialize(body)) + ")");
  if (answer) *answer = std::move(body);
  return *id;
}

void delete_tag(CheckContext& ctx, const std::string& alias) {
  const std::string path = delete_tag_path(ctx.target().channel, alias);
  ctx.ok_json(ctx.send(Operation::untag, {.id = alias}), "E9", "DELETE " + path);
  ctx.janitor().untagged(alias);
}

std::optional<std::string> database_value(const CheckContext& ctx, const json::value& body) {
  return core::api::database_value(ctx.fields(), body);
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
  auto e = ctx.send(Operation::db_get, {.id = key});
  if (!e.answered() || e.response->status != 200) return std::nullopt;
  std::string why;
  auto body = oracle::parse_json(e.response->body, why);
  return body ? database_value(ctx, *body) : std::nullopt;
}

void database_set(CheckContext& ctx, const std::string& key, const std::string& value) {
  ctx.ok_json(ctx.send(Operation::db_set, {.id = key, .value = value}), "E6", "POST " + database_path(key));
}

std::string first_agent(CheckContext& ctx) {
  auto agents = list_agents(ctx);
  if (agents.empty()) ctx.skip("the target lists no agents");
  return agents.front().id;
}

core::SendRequest sender(CheckContext& ctx) {
  return [&ctx](core::HttpRequest r) { return ctx.send(std::move(r)); };
}

bool restore_agent(CheckContext& ctx, const std::string& id, const std::string& start_state) {
  if (core::put_agent_back(sender(ctx), ctx.target(), id, start_state)) return false;
  ctx.janitor().agent_restored(id);
  return true;
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
  auto e = ctx.send(Operation::untag, {.id = alias});
  if (e.answered() && e.response->status == 200) ctx.janitor().untagged(alias);
}

void untag_if_tagged(CheckContext& ctx, const core::Exchange& e) {
  if (!e.answered() || e.response->status != 200) return;
  std::string why;
  if (auto body = oracle::parse_json(e.response->body, why))
    if (auto id = tagged_alias_id(ctx, *body)) untag_quietly(ctx, *id);
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

void TagGuard::adopt(const std::string& alias) {
  ctx_.janitor().tagged(alias);
  aliases_.push_back(alias);
}

std::optional<std::vector<std::string>> untagged_aliases(CheckContext& ctx, const std::vector<Item>& aliases) {
  std::vector<std::string> out;
  for (const auto& a : aliases) {
    if (!a.value.is_object()) return std::nullopt;  // a bare id shows nothing of a tag
    // Untagged: the tag field null, "" or absent (README, fields.alias_tag).
    if (tag_of(ctx, a.value).value_or("").empty()) out.push_back(a.id);
  }
  return out;
}

void skip_if_rightly_full(CheckContext& ctx, const core::Exchange& tag) {
  const auto& full = ctx.statuses().all_tagged;
  if (tag.answered() && std::find(full.begin(), full.end(), tag.response->status) != full.end())
    need_an_untagged_alias(ctx, list_aliases(ctx));
}

void need_an_untagged_alias(CheckContext& ctx, const std::vector<Item>& aliases) {
  // A list of bare ids shows no tags: the tag itself tells whether one is free.
  const auto untagged = untagged_aliases(ctx, aliases);
  if (untagged && untagged->empty())
    ctx.skip("no untagged alias on the channel (every alias shows a tag in \"" + ctx.fields().alias_tag + "\")");
}

}  // namespace crh::contracts::api
