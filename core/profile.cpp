// Profile files: parsing with errors that name the field.
#include "core/profile.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace crh::core {
namespace json = boost::json;

bool throttled(unsigned status, const ExpectedStatuses& named) {
  if (status != 429) return false;
  for (const auto* list : {&named.auth, &named.not_found, &named.bad_input, &named.all_tagged, &named.call_refused,
                           &named.wrong_method})
    if (std::find(list->begin(), list->end(), status) != list->end()) return false;
  return true;
}
namespace {

struct Reader {
  const std::string& source;

  [[noreturn]] void error(const std::string& field, const std::string& what) const {
    throw std::runtime_error("profile " + source + ": field \"" + field + "\" " + what);
  }

  const json::object& object(const json::value& v, const std::string& field) const {
    if (!v.is_object()) error(field, "must be an object");
    return v.get_object();
  }

  std::string string(const json::value& v, const std::string& field) const {
    if (!v.is_string() || v.get_string().empty()) error(field, "must be a non-empty string");
    return std::string(v.get_string());
  }

  std::vector<std::string> strings(const json::value& v, const std::string& field) const {
    if (!v.is_array() || v.get_array().empty()) error(field, "must be a non-empty array of strings");
    std::vector<std::string> out;
    for (const auto& s : v.get_array()) out.push_back(string(s, field + "[]"));
    return out;
  }

  std::vector<unsigned> statuses(const json::value& v, const std::string& field) const {
    if (!v.is_array() || v.get_array().empty()) error(field, "must be a non-empty array of HTTP statuses");
    std::vector<unsigned> out;
    for (const auto& s : v.get_array()) {
      const bool integer = s.is_int64() || s.is_uint64();
      const auto status = integer ? s.to_number<std::int64_t>() : 0;
      if (status < 100 || status > 599 || status == 200)
        error(field, "must hold error statuses from 100 to 599 (not 200), got " + json::serialize(s));
      out.push_back(static_cast<unsigned>(status));
    }
    return out;
  }

  template <class F>
  void each(const json::object& o, const std::string& prefix, F&& f) const {
    for (const auto& [k, v] : o) {
      const std::string field = prefix.empty() ? std::string(k) : prefix + "." + std::string(k);
      if (!f(std::string_view(k), v, field)) error(field, "is not a profile setting");
    }
  }
};

}  // namespace

namespace {

ParamEncoding read_encoding(const Reader& r, const json::value& v, const std::string& f) {
  auto e = r.string(v, f);
  if (e == "form") return ParamEncoding::form;
  if (e == "json") return ParamEncoding::json;
  if (e == "query") return ParamEncoding::query;
  r.error(f, "must be \"form\", \"json\" or \"query\", got \"" + e + "\"");
}

void read_call_hook(const Reader& r, const json::value& v, const std::string& f, CallHook& hook) {
  if (v.is_null() || (v.is_bool() && !v.get_bool())) {
    hook.enabled = false;
    return;
  }
  r.each(r.object(v, f), f, [&](std::string_view k, const json::value& v2, const std::string& f2) {
    if (k == "method") hook.method = r.string(v2, f2);
    else if (k == "path") hook.path = r.string(v2, f2);
    else if (k == "parameter") hook.parameter = r.string(v2, f2);
    else return false;
    return true;
  });
  if (hook.path.find("{alias}") == std::string::npos) r.error(f + ".path", "must contain {alias}");
}

void read_statuses(const Reader& r, const json::value& v, const std::string& f, ExpectedStatuses& s) {
  r.each(r.object(v, f), f, [&](std::string_view k, const json::value& v2, const std::string& f2) {
    if (k == "auth") s.auth = r.statuses(v2, f2);
    else if (k == "not_found") s.not_found = r.statuses(v2, f2);
    else if (k == "bad_input") s.bad_input = r.statuses(v2, f2);
    else if (k == "all_tagged") s.all_tagged = r.statuses(v2, f2);
    else if (k == "call_refused") s.call_refused = r.statuses(v2, f2);
    else if (k == "sip_refused") s.sip_refused = r.statuses(v2, f2);
    else if (k == "wrong_method") s.wrong_method = r.statuses(v2, f2);
    else return false;
    return true;
  });
}

// "sip": {"number_field": "number", "uri": "sip:{number}@{host}:{port}"}.
void read_sip(const Reader& r, const json::value& v, const std::string& f, SipMapping& m) {
  r.each(r.object(v, f), f, [&](std::string_view k, const json::value& v2, const std::string& f2) {
    if (k == "number_field") m.number_field = r.string(v2, f2);
    else if (k == "uri") m.uri_template = r.string(v2, f2);
    else return false;
    return true;
  });
  if (m.uri_template.find("{number}") == std::string::npos) r.error(f + ".uri", "must contain {number}");
  if (!m.uri_template.starts_with("sip:") && !m.uri_template.starts_with("sips:"))
    r.error(f + ".uri", "must be a sip: or sips: URI, got \"" + m.uri_template + "\"");
}

// "id_fields", "lists" and "fields": every name the target gives what the spec leaves unnamed.
bool read_names(const Reader& r, std::string_view section, const json::value& v, const std::string& f, FieldNames& n) {
  if (section != "id_fields" && section != "lists" && section != "fields") return false;
  r.each(r.object(v, f), f, [&](std::string_view k, const json::value& v2, const std::string& f2) {
    if (section == "id_fields" && k == "agent") n.agent_id = r.strings(v2, f2);
    else if (section == "id_fields" && k == "alias") n.alias_id = r.strings(v2, f2);
    else if (section == "lists" && k == "agents") n.agents_list = r.string(v2, f2);
    else if (section == "lists" && k == "aliases") n.aliases_list = r.string(v2, f2);
    else if (section == "fields" && k == "agent_state") n.agent_state = r.string(v2, f2);
    else if (section == "fields" && k == "alias_tag") n.alias_tag = r.string(v2, f2);
    else if (section == "fields" && k == "database_value") n.database_value = r.string(v2, f2);
    else if (section == "fields" && k == "alias_expiry") n.alias_expiry = r.string(v2, f2);
    else if (section == "fields" && k == "alias_bound_caller") n.alias_bound_caller = r.string(v2, f2);
    else return false;
    return true;
  });
  return true;
}

// "minutes": {"min": 1, "max": 10080}, the tag lifetimes the target accepts.
void read_minutes(const Reader& r, const json::value& v, const std::string& f, MinutesRange& m) {
  auto bound = [&](const json::value& b, const std::string& field) {
    if (!b.is_int64() && !b.is_uint64()) r.error(field, "must be an integer, got " + json::serialize(b));
    const auto n = b.to_number<std::int64_t>();
    if (n < 0 || n > 10'000'000) r.error(field, "must be from 0 to 10000000, got " + json::serialize(b));
    return n;
  };
  r.each(r.object(v, f), f, [&](std::string_view k, const json::value& v2, const std::string& f2) {
    if (k == "min") m.min = bound(v2, f2);
    else if (k == "max") m.max = bound(v2, f2);
    else return false;
    return true;
  });
  if (m.max < m.min || m.max < 1) r.error(f, "must have max >= min and max >= 1");
}

}  // namespace

Profile parse_profile(const json::value& doc, const std::string& source) {
  Reader r{source};
  Profile p;
  r.each(r.object(doc, "(top level)"), "", [&](std::string_view k, const json::value& v, const std::string& f) {
    if (k == "encoding") {
      p.dialect.encoding = read_encoding(r, v, f);
      p.encoding_given = true;
    } else if (k == "call_hook") read_call_hook(r, v, f, p.dialect.call_hook);
    else if (k == "statuses") read_statuses(r, v, f, p.statuses);
    else if (k == "minutes") {
      read_minutes(r, v, f, p.dialect.minutes);
      p.dialect.minutes.given = true;
    }
    else if (k == "sip") read_sip(r, v, f, p.dialect.sip);
    else if (k == "database_keys") {
      const auto text = r.string(v, f);
      if (text != "case-sensitive" && text != "case-insensitive")
        r.error(f, "must be \"case-sensitive\" or \"case-insensitive\", got \"" + text + "\"");
      p.dialect.keys_fold_case = text == "case-insensitive";
    }
    else return read_names(r, k, v, f, p.dialect.fields);
    return true;
  });
  return p;
}

Profile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("profile " + path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  auto doc = json::parse(text.str(), ec);
  if (ec) throw std::runtime_error("profile " + path + ": not JSON (" + ec.message() + ")");
  return parse_profile(doc, path);
}

json::value to_json(const Profile& p) {
  auto list = [](const auto& items) {
    json::array a;
    for (const auto& i : items) a.emplace_back(i);
    return a;
  };
  json::value hook = nullptr;
  if (p.dialect.call_hook.enabled)
    hook = json::object{{"method", p.dialect.call_hook.method},
                        {"path", p.dialect.call_hook.path},
                        {"parameter", p.dialect.call_hook.parameter}};
  return json::object{
      {"encoding", to_string(p.dialect.encoding)},
      {"call_hook", hook},
      {"statuses", json::object{{"auth", list(p.statuses.auth)},
                                {"not_found", list(p.statuses.not_found)},
                                {"bad_input", list(p.statuses.bad_input)},
                                {"all_tagged", list(p.statuses.all_tagged)},
                                {"call_refused", list(p.statuses.call_refused)},
                                {"sip_refused", list(p.statuses.sip_refused)},
                                {"wrong_method", list(p.statuses.wrong_method)}}},
      {"id_fields",
       json::object{{"agent", list(p.dialect.fields.agent_id)}, {"alias", list(p.dialect.fields.alias_id)}}},
      {"lists", json::object{{"agents", p.dialect.fields.agents_list}, {"aliases", p.dialect.fields.aliases_list}}},
      {"fields", json::object{{"agent_state", p.dialect.fields.agent_state},
                              {"alias_tag", p.dialect.fields.alias_tag},
                              {"database_value", p.dialect.fields.database_value},
                              {"alias_expiry", p.dialect.fields.alias_expiry},
                              {"alias_bound_caller", p.dialect.fields.alias_bound_caller}}},
      {"minutes", json::object{{"min", p.dialect.minutes.min}, {"max", p.dialect.minutes.max}}},
      {"sip", json::object{{"number_field", p.dialect.sip.number_field}, {"uri", p.dialect.sip.uri_template}}},
      {"database_keys", p.dialect.keys_fold_case ? "case-insensitive" : "case-sensitive"},
  };
}

}  // namespace crh::core
