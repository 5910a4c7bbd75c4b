// The API model: paths, requests and readers of answers.
#include "core/api.hpp"

#include <boost/json.hpp>

#include "core/target.hpp"

namespace crh::core {

std::string CallHook::path_for(std::string_view channel, std::string_view alias) const {
  std::string out = path;
  auto replace = [&out](std::string_view name, std::string_view value) {
    for (auto pos = out.find(name); pos != std::string::npos; pos = out.find(name, pos + value.size()))
      out.replace(pos, name.size(), percent_encode(value));
  };
  replace("{channel}", channel);
  replace("{alias}", alias);
  return out;
}

}  // namespace crh::core

namespace crh::core::api {
namespace json = boost::json;

std::string agents_path() { return std::string(kVersionPrefix) + "/local-agents"; }
std::string agent_path(const std::string& id) { return agents_path() + "/" + percent_encode(id); }
std::string agent_op_path(const std::string& id, std::string_view op) { return agent_path(id) + "/" + std::string(op); }
std::string database_path(const std::string& key) { return "/database/" + percent_encode(key); }
std::string aliases_path(const std::string& channel) {
  return "/channels/" + percent_encode(channel) + "/alias-numbers";
}
std::string tag_path(const std::string& channel) { return aliases_path(channel) + "/tag"; }
std::string delete_tag_path(const std::string& channel, const std::string& alias) {
  return aliases_path(channel) + "/" + percent_encode(alias) + "/tag";
}

HttpRequest request(const Target& target, Operation op, const Arguments& a) {
  const auto encoding = target.dialect.encoding;
  switch (op) {
    case Operation::list_agents: return build_request("GET", agents_path(), {}, encoding);
    case Operation::get_agent: return build_request("GET", agent_path(a.id), {}, encoding);
    case Operation::snooze: return build_request("PUT", agent_op_path(a.id, "snooze"), {}, encoding);
    case Operation::wake: return build_request("PUT", agent_op_path(a.id, "wake"), {}, encoding);
    case Operation::db_get: return build_request("GET", database_path(a.id), {}, encoding);
    case Operation::db_set: return build_request("POST", database_path(a.id), {{"value", a.value}}, encoding);
    case Operation::list_aliases: return build_request("GET", aliases_path(target.channel), {}, encoding);
    case Operation::tag:
      return build_request("POST", tag_path(target.channel),
                           {{"tag", a.tag}, {"minutes", std::to_string(a.minutes), true}}, encoding);
    case Operation::untag: return build_request("DELETE", delete_tag_path(target.channel, a.id), {}, encoding);
    case Operation::call: {
      const auto& hook = target.dialect.call_hook;
      return build_request(hook.method, hook.path_for(target.channel, a.id), {{hook.parameter, a.caller}}, encoding);
    }
  }
  return {};
}

std::optional<FoundList> find_list(const json::value& body, std::string_view preferred, std::string& why) {
  if (body.is_array()) return FoundList{&body.get_array(), "the body"};
  if (!body.is_object()) {
    why = "expected a JSON array or an object holding one, got " + std::string(body.is_string() ? "a string"
                                                                               : body.is_null() ? "null"
                                                                                                : "a scalar");
    return std::nullopt;
  }
  const auto& obj = body.get_object();
  if (!preferred.empty())
    if (auto* v = obj.if_contains(preferred); v && v->is_array())
      return FoundList{&v->get_array(), "field \"" + std::string(preferred) + "\""};
  const json::array* only = nullptr;
  std::string names;
  int count = 0;
  for (const auto& [k, v] : obj) {
    if (!v.is_array()) continue;
    ++count;
    only = &v.get_array();
    names += (names.empty() ? "\"" : ", \"") + std::string(k) + "\"";
  }
  if (count == 1) return FoundList{only, "field " + names};
  why = count == 0 ? "expected an array, or an object with an array field; the object has no array field"
                   : "the object has several array fields (" + names + "); name one in the profile";
  return std::nullopt;
}

std::optional<std::string> item_id(const json::value& item, std::span<const std::string> fields) {
  auto scalar = [](const json::value& v) -> std::optional<std::string> {
    if (v.is_string() && !v.get_string().empty()) return std::string(v.get_string());
    if (v.is_int64()) return std::to_string(v.get_int64());
    if (v.is_uint64()) return std::to_string(v.get_uint64());
    return std::nullopt;
  };
  if (!item.is_object()) return scalar(item);
  for (const auto& f : fields)
    if (auto* v = item.get_object().if_contains(f))
      if (auto id = scalar(*v)) return id;
  return std::nullopt;
}

std::optional<std::string> agent_id(const FieldNames& names, const json::value& item) {
  return item_id(item, names.agent_id);
}

std::optional<std::string> alias_id(const FieldNames& names, const json::value& item) {
  return item_id(item, names.alias_id);
}

std::optional<std::string> tagged_alias_id(const FieldNames& names, const json::value& body) {
  if (!body.is_object()) return std::nullopt;
  if (auto id = alias_id(names, body)) return id;
  for (const auto& [k, inner] : body.get_object())
    if (inner.is_object())
      if (auto id = alias_id(names, inner)) return id;
  return std::nullopt;
}

std::optional<std::string> tag_of(const FieldNames& names, const json::value& alias) {
  if (!alias.is_object()) return std::nullopt;
  auto* v = alias.get_object().if_contains(names.alias_tag);
  if (!v) return std::nullopt;
  if (v->is_string()) return std::string(v->get_string());
  return std::string();  // null (or anything that is not a tag) reads as untagged
}

std::optional<std::vector<std::string>> aliases_tagged(const FieldNames& names, const json::value& body,
                                                       std::string_view prefix) {
  std::string why;
  auto list = find_list(body, names.aliases_list, why);
  if (!list) return std::nullopt;
  std::vector<std::string> ids;
  for (const auto& item : *list->items)
    if (tag_of(names, item).value_or("").starts_with(prefix))
      if (auto id = alias_id(names, item)) ids.push_back(*id);
  return ids;
}

std::string agent_state(const FieldNames& names, const json::value& agent) {
  if (agent.is_object())
    if (auto* v = agent.get_object().if_contains(names.agent_state)) return json::serialize(*v);
  return json::serialize(agent);
}

std::optional<std::string> agent_state_text(const FieldNames& names, const json::value& agent) {
  if (agent.is_object())
    if (auto* v = agent.get_object().if_contains(names.agent_state); v && v->is_string())
      return std::string(v->get_string());
  return std::nullopt;
}

std::optional<std::string> database_value(const FieldNames& names, const json::value& body) {
  if (body.is_string()) return std::string(body.get_string());
  if (body.is_object())
    if (auto* v = body.get_object().if_contains(names.database_value); v && v->is_string())
      return std::string(v->get_string());
  return std::nullopt;
}

}  // namespace crh::core::api
