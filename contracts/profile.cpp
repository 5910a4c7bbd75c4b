// Profile files: parsing with errors that name the field.
#include "contracts/profile.hpp"

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace crh::contracts {
namespace json = boost::json;
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

Profile parse_profile(const json::value& doc, const std::string& source) {
  Reader r{source};
  Profile p;
  r.each(r.object(doc, "(top level)"), "", [&](std::string_view k, const json::value& v, const std::string& f) {
    if (k == "encoding") {
      auto e = r.string(v, f);
      if (e == "form") p.encoding = core::ParamEncoding::form;
      else if (e == "json") p.encoding = core::ParamEncoding::json;
      else if (e == "query") p.encoding = core::ParamEncoding::query;
      else r.error(f, "must be \"form\", \"json\" or \"query\", got \"" + e + "\"");
    } else if (k == "call_hook") {
      if (v.is_null() || (v.is_bool() && !v.get_bool())) {
        p.call_hook.enabled = false;
        return true;
      }
      r.each(r.object(v, f), f, [&](std::string_view k2, const json::value& v2, const std::string& f2) {
        if (k2 == "method") p.call_hook.method = r.string(v2, f2);
        else if (k2 == "path") p.call_hook.path = r.string(v2, f2);
        else if (k2 == "parameter") p.call_hook.parameter = r.string(v2, f2);
        else return false;
        return true;
      });
      if (p.call_hook.path.find("{alias}") == std::string::npos)
        r.error(f + ".path", "must contain {alias}");
    } else if (k == "statuses") {
      r.each(r.object(v, f), f, [&](std::string_view k2, const json::value& v2, const std::string& f2) {
        if (k2 == "auth") p.auth_statuses = r.statuses(v2, f2);
        else if (k2 == "not_found") p.not_found_statuses = r.statuses(v2, f2);
        else if (k2 == "bad_input") p.bad_input_statuses = r.statuses(v2, f2);
        else if (k2 == "all_tagged") p.all_tagged_statuses = r.statuses(v2, f2);
        else if (k2 == "call_refused") p.call_refused_statuses = r.statuses(v2, f2);
        else if (k2 == "wrong_method") p.wrong_method_statuses = r.statuses(v2, f2);
        else return false;
        return true;
      });
    } else if (k == "id_fields") {
      r.each(r.object(v, f), f, [&](std::string_view k2, const json::value& v2, const std::string& f2) {
        if (k2 == "agent") p.agent_id_fields = r.strings(v2, f2);
        else if (k2 == "alias") p.alias_id_fields = r.strings(v2, f2);
        else return false;
        return true;
      });
    } else if (k == "lists") {
      r.each(r.object(v, f), f, [&](std::string_view k2, const json::value& v2, const std::string& f2) {
        if (k2 == "agents") p.agents_list_field = r.string(v2, f2);
        else if (k2 == "aliases") p.aliases_list_field = r.string(v2, f2);
        else return false;
        return true;
      });
    } else if (k == "fields") {
      r.each(r.object(v, f), f, [&](std::string_view k2, const json::value& v2, const std::string& f2) {
        if (k2 == "agent_state") p.agent_state_field = r.string(v2, f2);
        else if (k2 == "alias_tag") p.alias_tag_field = r.string(v2, f2);
        else if (k2 == "database_value") p.database_value_field = r.string(v2, f2);
        else return false;
        return true;
      });
    } else {
      return false;
    }
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
  if (p.call_hook.enabled)
    hook = json::object{{"method", p.call_hook.method}, {"path", p.call_hook.path},
                        {"parameter", p.call_hook.parameter}};
  return json::object{
      {"encoding", core::to_string(p.encoding)},
      {"call_hook", hook},
      {"statuses", json::object{{"auth", list(p.auth_statuses)},
                                {"not_found", list(p.not_found_statuses)},
                                {"bad_input", list(p.bad_input_statuses)},
                                {"all_tagged", list(p.all_tagged_statuses)},
                                {"call_refused", list(p.call_refused_statuses)},
                                {"wrong_method", list(p.wrong_method_statuses)}}},
      {"id_fields", json::object{{"agent", list(p.agent_id_fields)}, {"alias", list(p.alias_id_fields)}}},
      {"lists", json::object{{"agents", p.agents_list_field}, {"aliases", p.aliases_list_field}}},
      {"fields", json::object{{"agent_state", p.agent_state_field},
                              {"alias_tag", p.alias_tag_field},
                              {"database_value", p.database_value_field}}},
  };
}

}  // namespace crh::contracts
