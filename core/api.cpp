// The API model: paths, requests and readers of answers.
#include "core/api.hpp"

#include <boost/json.hpp>

#include "core/outside.hpp"
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

namespace {

std::string encode_every_byte(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) out += {'%', hex[c >> 4], hex[c & 15]};
  return out;
}

// Sent as a JSON number in a JSON body: an integer of at most 18 characters.
bool is_integer(const std::string& s) {
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  if (i == s.size() || s.size() > 18) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

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
  return request_as_sent(target, op,
                 Sent{.id = a.id, .channel = target.channel, .value = a.value, .tag = a.tag,
                      .minutes = std::to_string(a.minutes), .caller = a.caller});
}

HttpRequest request_as_sent(const Target& target, Operation op, const Sent& s) {
  const auto encoding = target.dialect.encoding;
  const auto db_path = [&s] { return s.every_byte_encoded ? "/database/" + encode_every_byte(s.id) : database_path(s.id); };
  std::vector<Param> params;
  switch (op) {
    case Operation::list_agents: return build_request("GET", agents_path(), {}, encoding);
    case Operation::get_agent: return build_request("GET", agent_path(s.id), {}, encoding);
    case Operation::snooze: return build_request("PUT", agent_op_path(s.id, "snooze"), {}, encoding);
    case Operation::wake: return build_request("PUT", agent_op_path(s.id, "wake"), {}, encoding);
    case Operation::db_get: return build_request("GET", db_path(), {}, encoding);
    case Operation::db_set:
      if (s.value) params.push_back({"value", *s.value});
      return build_request("POST", db_path(), params, encoding);
    case Operation::list_aliases: return build_request("GET", aliases_path(s.channel), {}, encoding);
    case Operation::tag:
      if (s.tag) params.push_back({"tag", *s.tag});
      if (s.minutes) params.push_back({"minutes", *s.minutes, is_integer(*s.minutes)});
      return build_request("POST", tag_path(s.channel), params, encoding);
    case Operation::untag: return build_request("DELETE", delete_tag_path(s.channel, s.id), {}, encoding);
    case Operation::call: {
      const auto& hook = target.dialect.call_hook;
      return build_request(hook.method, hook.path_for(s.channel, s.id), {{hook.parameter, s.caller}}, encoding);
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

std::string fields_text(const json::value& item) {
  if (!item.is_object())
    return std::string("not an object but ") + (item.is_string() ? "a string" : "a scalar or array");
  std::string names;
  for (const auto& [k, v] : item.get_object())
    names += (names.empty() ? "\"" : ", \"") + from_target(std::string(k), 40) + "\"";
  return names.empty() ? "no fields" : "fields " + names;
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

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) out.push_back(' ');
    else if (c != '%') out.push_back(c);
    else {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex(text[i + 1]), lo = hex(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return out;
}

namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.starts_with('/')) path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// The hook's template against the request's segments: literal segments
// equal, {channel} and {alias} one segment each.
std::optional<Recognized> match_hook(const CallHook& hook, const std::vector<std::string_view>& got) {
  const auto want = segments(hook.path);
  if (want.size() != got.size()) return std::nullopt;
  Recognized r{Operation::call, {}, {}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "{channel}" || want[i] == "{alias}") {
      auto v = percent_decode(got[i]);
      if (!v || v->empty()) return std::nullopt;
      (want[i] == "{channel}" ? r.channel : r.id) = std::move(*v);
    } else if (want[i] != got[i]) {
      return std::nullopt;
    }
  }
  return r;
}

}  // namespace

std::optional<Recognized> recognize(const CallHook& hook, std::string_view method, std::string_view target,
                                    std::string_view base_path) {
  std::string_view path = target.substr(0, target.find('?'));
  while (base_path.ends_with('/')) base_path.remove_suffix(1);
  if (!base_path.empty()) {
    if (!path.starts_with(base_path) || (path.size() > base_path.size() && path[base_path.size()] != '/'))
      return std::nullopt;
    path.remove_prefix(base_path.size());
  }
  if (!path.starts_with('/')) return std::nullopt;
  const auto seg = segments(path);
  if (hook.enabled && method == hook.method)
    if (auto r = match_hook(hook, seg)) return r;
  auto decoded = [&](std::size_t i) { return percent_decode(seg[i]); };
  const std::size_t n = seg.size();
  // /api/v1/local-agents[/ID[/snooze|/wake]]
  if (n >= 3 && seg[0] == "api" && seg[1] == "v1" && seg[2] == "local-agents") {
    if (n == 3 && method == "GET") return Recognized{Operation::list_agents, {}, {}};
    if (n < 4 || seg[3].empty()) return std::nullopt;
    auto id = decoded(3);
    if (!id) return std::nullopt;
    if (n == 4 && method == "GET") return Recognized{Operation::get_agent, {}, *id};
    if (n == 5 && method == "PUT" && seg[4] == "snooze") return Recognized{Operation::snooze, {}, *id};
    if (n == 5 && method == "PUT" && seg[4] == "wake") return Recognized{Operation::wake, {}, *id};
    return std::nullopt;
  }
  if (n == 2 && seg[0] == "database" && !seg[1].empty()) {
    auto key = decoded(1);
    if (!key) return std::nullopt;
    if (method == "GET") return Recognized{Operation::db_get, {}, *key};
    if (method == "POST") return Recognized{Operation::db_set, {}, *key};
    return std::nullopt;
  }
  if (n >= 3 && seg[0] == "channels" && !seg[1].empty() && seg[2] == "alias-numbers") {
    auto channel = decoded(1);
    if (!channel) return std::nullopt;
    if (n == 3 && method == "GET") return Recognized{Operation::list_aliases, *channel, {}};
    if (n == 4 && method == "POST" && seg[3] == "tag") return Recognized{Operation::tag, *channel, {}};
    if (n == 5 && method == "DELETE" && seg[4] == "tag" && !seg[3].empty()) {
      auto alias = decoded(3);
      if (!alias) return std::nullopt;
      return Recognized{Operation::untag, *channel, *alias};
    }
  }
  return std::nullopt;
}

std::optional<std::string> request_parameter(const HttpRequest& request, std::string_view name) {
  auto from_pairs = [&](std::string_view text) -> std::optional<std::string> {
    while (!text.empty()) {
      const auto amp = text.find('&');
      const auto pair = text.substr(0, amp);
      const auto eq = pair.find('=');
      if (auto k = percent_decode(pair.substr(0, eq), true); k && *k == name)
        return eq == std::string_view::npos ? std::optional<std::string>("")
                                            : percent_decode(pair.substr(eq + 1), true);
      if (amp == std::string_view::npos) break;
      text.remove_prefix(amp + 1);
    }
    return std::nullopt;
  };
  const std::string_view target = request.target;
  if (const auto q = target.find('?'); q != std::string_view::npos)
    if (auto v = from_pairs(target.substr(q + 1))) return v;
  if (request.body.empty()) return std::nullopt;
  const auto first = request.body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && request.body[first] == '{') {
    boost::system::error_code ec;
    auto doc = json::parse(request.body, ec);
    if (!ec && doc.is_object()) {
      auto* v = doc.get_object().if_contains(name);
      if (!v) return std::nullopt;
      if (v->is_string()) return std::string(v->get_string());
      if (v->is_number() || v->is_bool()) return json::serialize(*v);
      return std::nullopt;
    }
  }
  return from_pairs(request.body);
}

}  // namespace crh::core::api
