// Shape detection and the error-shape rule.
#include "oracle/shapes.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "core/outside.hpp"

namespace crh::oracle {
namespace json = boost::json;

std::optional<json::value> parse_json(std::string_view body, std::string& why) {
  if (body.empty()) {
    why = "the body is empty";
    return std::nullopt;
  }
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    why = "the body is not JSON (" + ec.message() + "): " + excerpt(body);
    return std::nullopt;
  }
  return v;
}

std::optional<json::value> parse_json_shown(std::string_view body, std::string_view shown, std::string& why) {
  auto v = parse_json(body, why);
  if (v || shown.empty() || shown.data() == body.data()) return v;
  if (parse_json(shown, why)) why = "the body is not JSON: " + excerpt(shown);
  return v;
}

bool is_json_content_type(std::string_view ct) {
  auto semi = ct.find(';');
  std::string type(ct.substr(0, semi));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.erase(0, 1);
  for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type == "application/json" ||
         (type.rfind("application/", 0) == 0 && type.size() > 17 && type.ends_with("+json"));
}

Finding server_error_finding(unsigned status) {
  return {Severity::must, "X1",
          "expected an answer of the API (200, or an error status with a msg), got the server error HTTP " +
              std::to_string(status) + ": a server error is never a contract answer"};
}

std::optional<Finding> content_type_finding(unsigned status, std::string_view content_type) {
  if (is_json_content_type(content_type)) return std::nullopt;
  return Finding{Severity::should, "C1",
                 "expected Content-Type application/json (responses are JSON), got \"" +
                     core::from_target(content_type, 120) + "\" with HTTP " + std::to_string(status)};
}

std::optional<Finding> error_body_finding(unsigned status, std::string_view body, std::string_view shown) {
  if (shown.empty()) shown = body;
  const std::string got = "HTTP " + std::to_string(status);
  std::string why;
  auto v = parse_json_shown(body, shown, why);
  if (!v)
    return Finding{Severity::must, "X2", "expected a JSON object with a string msg, got " + got + " where " + why};
  const std::string with = got + " with " + excerpt(shown);
  if (!v->is_object()) return Finding{Severity::must, "X2", "expected a JSON object with a string msg, got " + with};
  auto* msg = v->get_object().if_contains("msg");
  if (!msg) return Finding{Severity::must, "X2", "expected a field msg in the error body, got " + with};
  if (!msg->is_string()) return Finding{Severity::must, "X2", "expected msg to be a string, got " + with};
  if (msg->get_string().empty())
    return Finding{Severity::should, "X2", "expected a non-empty msg, got " + got + " with msg \"\""};
  return std::nullopt;
}

std::vector<Finding> error_shape_findings(unsigned status, std::string_view content_type, std::string_view body) {
  std::vector<Finding> out;
  if (status >= 500) out.push_back(server_error_finding(status));
  if (auto f = error_body_finding(status, body)) out.push_back(std::move(*f));
  if (auto f = content_type_finding(status, content_type)) out.push_back(std::move(*f));
  return out;
}

bool malformed_target(std::string_view target) {
  if (target.size() > kLongTarget) return true;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto c = static_cast<unsigned char>(target[i]);
    if (c <= 0x20 || c >= 0x7f) return true;
    if (c == '%' && (i + 2 >= target.size() || !hex(target[i + 1]) || !hex(target[i + 2]))) return true;
  }
  return false;
}

bool protocol_level_refusal(std::string_view target, unsigned status, std::string_view content_type,
                            std::string_view body) {
  if (status != 400 && status != 413 && status != 414 && status != 431) return false;
  if (!malformed_target(target)) return false;
  const auto findings = error_shape_findings(status, content_type, body);
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::must; });
}

std::vector<Finding> judged_apart(std::vector<Finding> findings) {
  for (auto& f : findings) {
    f.severity = Severity::should;
    f.apart = true;
    f.text = "judged apart: the HTTP layer refused a malformed request before the API saw it, " + f.text +
             " (a SHOULD that stays a warning under --strict: the API's error shape here too would help clients)";
  }
  return findings;
}

std::string_view json_type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string: return "string";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "number";
    case json::kind::bool_: return "bool";
    case json::kind::object: return "object";
    case json::kind::array: return "array";
    case json::kind::null: return "null";
  }
  return "?";
}

std::vector<std::string> field_type_differences(const json::object& reference, const json::object& other) {
  std::vector<std::string> out;
  for (const auto& [name, value] : reference) {
    const auto* there = other.if_contains(name);
    if (!there || value.is_null() || there->is_null()) continue;
    auto a = json_type_name(value), b = json_type_name(*there);
    if (a != b)
      out.push_back(core::from_target(std::string_view(name), 60) + " (" + std::string(a) + ", then " + std::string(b) +
                    ")");
  }
  return out;
}

std::optional<std::string> form_difference(const json::object& get, const json::object& answer) {
  const auto only = [](const json::object& a, const json::object& b) {
    std::string names;
    for (const auto& [name, value] : a)
      if (!value.is_null() && !b.if_contains(name)) names += (names.empty() ? "" : ", ") + core::from_target(std::string_view(name), 60);
    return names;
  };
  std::string out;
  if (auto n = only(get, answer); !n.empty()) out = "fields only the GET has: " + n;
  if (auto n = only(answer, get); !n.empty()) out += (out.empty() ? "" : "; ") + std::string("fields only this answer has: ") + n;
  std::string types;
  for (const auto& d : field_type_differences(get, answer)) types += (types.empty() ? "" : ", ") + d;
  if (!types.empty()) out += (out.empty() ? "" : "; ") + std::string("types that differ (the GET's, then this answer's): ") + types;
  if (out.empty()) return std::nullopt;
  return out;
}

bool value_may_be_refused(std::string_view v) {
  return v.empty() || v.size() > 255 ||
         std::any_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string excerpt(std::string_view body, std::size_t max) {
  std::string out;
  // Redacted before it is cut: a key near the cut leaves no prefix behind.
  for (unsigned char c : core::from_target(body, max)) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) out += "?";
    else out.push_back(static_cast<char>(c));
  }
  if (body.size() > max) out += "... (" + std::to_string(body.size()) + " bytes)";
  return body.empty() ? "an empty body" : "body " + out;
}

std::string_view outcome_for_rule(std::string_view check_outcome, const std::vector<Finding>& findings,
                                  std::string_view rule) {
  if (check_outcome != "fail" && check_outcome != "warn") return check_outcome;
  const auto names = [&](Severity s, bool on_rule) {
    return std::any_of(findings.begin(), findings.end(),
                       [&](const Finding& f) { return f.severity == s && (!on_rule || f.rule == rule); });
  };
  if (check_outcome == "fail" && !names(Severity::must, false)) return "fail";
  if (names(Severity::must, true)) return check_outcome;  // a MUST finding warns only where the check warns
  if (names(Severity::should, true)) return "warn";
  // A failed check stopped where it failed: its other rules were not reached.
  return check_outcome == "fail" ? "skip" : "pass";
}

}  // namespace crh::oracle
