// check(): an answer against what the model predicted. The status first (a
// 5xx is never a contract answer; a 200 or a refusal the MUST rules do not
// accept breaks the prediction's rule; a status the profile does not name is
// a SHOULD), then, on a 200, each determined field read under the profile's
// names: a value shown that differs breaks its rule, none shown is a SHOULD.
#include <algorithm>
#include <boost/json.hpp>

#include "core/outside.hpp"
#include "oracle/model.hpp"
#include "oracle/model_parts.hpp"

namespace crh::oracle {
namespace api = core::api;
namespace json = boost::json;

namespace model_parts {

std::optional<json::value> json_body(const ObservedAnswer& answer) {
  if (answer.body.empty()) return std::nullopt;
  boost::system::error_code ec;
  auto v = json::parse(answer.body, ec);
  if (ec) return std::nullopt;
  return v;
}

std::optional<std::string> field_text(const json::value& object, const std::string& name) {
  if (!object.is_object()) return std::nullopt;
  const auto* v = object.get_object().if_contains(name);
  if (!v) return std::nullopt;
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_null()) return std::string();
  return json::serialize(*v);
}

std::optional<std::string> state_text(const core::FieldNames& names, const json::value& agent) {
  if (!agent.is_object()) return std::nullopt;
  const auto* v = agent.get_object().if_contains(names.agent_state);
  if (!v) return std::nullopt;
  return json::serialize(*v);
}

std::optional<std::string> answer_tag(const core::FieldNames& names, const json::value& body) {
  if (auto t = api::tag_of(names, body)) return t;
  if (body.is_object())
    for (const auto& [k, inner] : body.get_object())
      if (auto t = api::tag_of(names, inner)) return t;
  return std::nullopt;
}

}  // namespace model_parts

namespace {
using namespace model_parts;

std::string in_quotes(std::string_view v) { return "\"" + std::string(v) + "\""; }

std::string statuses_text(const std::vector<unsigned>& statuses) {
  std::string out;
  for (auto s : statuses) out += (out.empty() ? "" : " or ") + std::to_string(s);
  return out.empty() ? "a refusal" : out;
}

std::string joined(std::vector<std::string> values, bool sort) {
  if (sort) std::sort(values.begin(), values.end());
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return "[" + out + "]";
}

bool is_set(Field f) { return f == Field::agent_ids || f == Field::alias_ids; }
bool is_listed(Field f) {
  return f == Field::agent_ids || f == Field::alias_ids || f == Field::listed_agent_state || f == Field::listed_tag ||
         f == Field::listed_bound_caller;
}
bool about_agents(Field f) { return f == Field::agent_ids || f == Field::listed_agent_state; }

std::string name_of(Field f, const core::FieldNames& n) {
  switch (f) {
    case Field::agent_id: return joined(n.agent_id, false);
    case Field::agent_state:
    case Field::listed_agent_state: return in_quotes(n.agent_state);
    case Field::agent_ids: return in_quotes(n.agents_list) + " (or the only list)";
    case Field::entry_value: return in_quotes(n.database_value);
    case Field::alias_id: return joined(n.alias_id, false);
    case Field::alias_tag:
    case Field::listed_tag: return in_quotes(n.alias_tag);
    case Field::alias_ids: return in_quotes(n.aliases_list) + " (or the only list)";
    case Field::listed_bound_caller: return in_quotes(n.alias_bound_caller);
  }
  return "?";
}

struct Judge {
  const Prediction& p;
  const json::value& body;
  std::vector<Divergence>& out;
  bool list_missing_said = false;

  void add(Severity s, std::string_view rule, std::string expected, std::string got) {
    // What the model expects may hold what it learned from the target: redacted as composed text.
    expected = core::composed(expected);
    std::string text = p.operation + ": expected " + expected + ", got " + got + " (" + std::string(rule) +
                       (s == Severity::should ? ", a SHOULD" : "") + ")";
    out.push_back({s, rule, std::move(expected), std::move(got), std::move(text)});
  }

  std::optional<json::array> list(Field f) const {
    std::string why;
    auto found = api::find_list(body, about_agents(f) ? p.names.agents_list : p.names.aliases_list, why);
    if (!found) return std::nullopt;
    return *found->items;
  }

  const json::value* item(const json::array& items, Field f, const std::string& id) const {
    for (const auto& it : items) {
      auto got = about_agents(f) ? api::agent_id(p.names, it) : api::alias_id(p.names, it);
      if (got && *got == id) return &it;
    }
    return nullptr;
  }

  // What the answer shows for `e`; nothing when it shows none.
  std::optional<std::string> shown(const FieldExpectation& e, std::optional<std::vector<std::string>>& set,
                                   bool& item_absent) {
    const auto& n = p.names;
    switch (e.field) {
      case Field::agent_id: return api::agent_id(n, body);
      case Field::agent_state: return state_text(n, body);
      case Field::entry_value: return api::database_value(n, body);
      case Field::alias_id: return api::tagged_alias_id(n, body);
      case Field::alias_tag: return answer_tag(n, body);
      default: break;
    }
    auto items = list(e.field);
    if (!items) return std::nullopt;
    if (is_set(e.field)) {
      set.emplace();
      for (const auto& it : *items) {
        auto id = e.field == Field::agent_ids ? api::agent_id(n, it) : api::alias_id(n, it);
        set->push_back(id ? *id : "(no id)");
      }
      return std::string();
    }
    const auto* it = item(*items, e.field, e.item);
    if (!it) {
      item_absent = true;  // the set's expectation says so
      return std::nullopt;
    }
    if (e.field == Field::listed_agent_state) return state_text(n, *it);
    if (e.field == Field::listed_tag) return api::tag_of(n, *it);
    return field_text(*it, n.alias_bound_caller);
  }

  void field(const FieldExpectation& e) {
    std::optional<std::vector<std::string>> set;
    bool item_absent = false;
    auto got = shown(e, set, item_absent);
    if (item_absent) return;
    std::string expected = e.what + " ";
    if (is_set(e.field)) expected += joined(e.values, true);
    else if (e.values.size() == 1) expected += in_quotes(e.values[0]);
    else if (!e.values.empty()) expected += "one of " + joined(e.values, false);
    else if (!e.excluded.empty()) {
      std::vector<std::string> ruled_out;
      for (const auto& x : e.excluded) ruled_out.push_back(x.value);
      expected += "any but " + joined(ruled_out, false);
    } else {
      expected += "(any value)";
    }
    if (!got) {
      if (!e.missing) return;
      if (is_listed(e.field)) {
        if (list_missing_said && !list(e.field)) return;
        if (!list(e.field)) {
          list_missing_said = true;
          return add(*e.missing, e.rule, expected, "no list in the answer (under " + name_of(e.field, p.names) + ")");
        }
      }
      return add(*e.missing, e.rule, expected, "none shown under " + name_of(e.field, p.names));
    }
    if (set) {
      auto want = e.values;
      std::sort(want.begin(), want.end());
      auto have = *set;
      std::sort(have.begin(), have.end());
      if (want != have) add(e.wrong, e.rule, expected, core::from_target(joined(have, false), 200));
      return;
    }
    const std::string show = in_quotes(core::from_target(*got, 80));
    for (const auto& x : e.excluded)
      if (x.value == *got) return add(e.wrong, x.rule, expected, show + ", but " + x.why);
    if (!e.values.empty() && std::find(e.values.begin(), e.values.end(), *got) == e.values.end())
      add(e.wrong, e.rule, expected, show);
  }
};

}  // namespace

std::vector<Divergence> check(const Prediction& p, const ObservedAnswer& answer) {
  std::vector<Divergence> out;
  if (!answer.answered) return out;
  const auto& s = p.status;
  if (answer.status == 429 && s.throttle) return out;  // not now: rate limits are not shown (spec 8)
  const std::string got = "HTTP " + std::to_string(answer.status);
  const std::string why = s.why.empty() ? "" : " (" + s.why + ")";
  static const json::value kNull;
  Judge j{p, kNull, out};
  if (answer.status >= 500) {
    j.add(Severity::must, "X1", s.ok ? "HTTP 200" + why : statuses_text(s.statuses) + why,
          got + ": a server error is never a contract answer");
    return out;
  }
  if (answer.status != 200) {
    if (std::find(s.unexplained.begin(), s.unexplained.end(), answer.status) != s.unexplained.end())
      j.add(Severity::must, s.unexplained_rule, "HTTP 200" + why, got + ", which no cause named explains");
    else if (!s.refusal) j.add(Severity::must, s.refusal_rule, "HTTP 200" + why, got);
    else if (!s.statuses.empty() && std::find(s.statuses.begin(), s.statuses.end(), answer.status) == s.statuses.end())
      j.add(Severity::should, s.status_rule, "a refusal with " + statuses_text(s.statuses) + why, got);
    else if (s.statuses.empty() && s.ok_expected) j.add(Severity::should, s.refusal_rule, "HTTP 200" + why, got);
    return out;
  }
  if (!s.ok) {
    j.add(Severity::must, s.ok_rule, "a refusal (" + statuses_text(s.statuses) + ")" + why, got);
    return out;
  }
  if (!s.ok_expected) j.add(Severity::should, s.ok_rule, "a refusal (" + statuses_text(s.statuses) + ")" + why, got);
  const auto body = model_parts::json_body(answer);
  if (!body) {
    j.add(Severity::must, "C1", "a JSON body", got + " with " + excerpt(answer.body));
    return out;
  }
  Judge fields{p, *body, out};
  for (const auto& e : p.fields) fields.field(e);
  return out;
}

}  // namespace crh::oracle
