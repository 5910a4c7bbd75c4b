// Shape detection and the error-shape rule.
#include "contracts/shapes.hpp"

#include <boost/json.hpp>

#include "core/outside.hpp"

namespace crh::contracts {
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

bool is_json_content_type(std::string_view ct) {
  auto semi = ct.find(';');
  std::string type(ct.substr(0, semi));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.erase(0, 1);
  for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type == "application/json" ||
         (type.rfind("application/", 0) == 0 && type.size() > 17 && type.ends_with("+json"));
}

std::vector<Finding> error_shape_findings(unsigned status, std::string_view content_type, std::string_view body) {
  std::vector<Finding> out;
  const std::string got = "HTTP " + std::to_string(status);
  if (status >= 500)
    out.push_back({Severity::must, "X1",
                   "expected a 4xx error answer, got " + got + ": a server error is never a contract answer"});
  std::string why;
  auto v = parse_json(body, why);
  if (!v) {
    out.push_back({Severity::must, "X2", "expected a JSON object with a string msg, got " + got + " where " + why});
  } else if (!v->is_object()) {
    out.push_back(
        {Severity::must, "X2", "expected a JSON object with a string msg, got " + got + " with " + excerpt(body)});
  } else if (auto* msg = v->get_object().if_contains("msg"); !msg) {
    out.push_back(
        {Severity::must, "X2", "expected a field msg in the error body, got " + got + " with " + excerpt(body)});
  } else if (!msg->is_string()) {
    out.push_back({Severity::must, "X2", "expected msg to be a string, got " + got + " with " + excerpt(body)});
  } else if (msg->get_string().empty()) {
    out.push_back({Severity::should, "X2", "expected a non-empty msg, got " + got + " with msg \"\""});
  }
  if (!is_json_content_type(content_type))
    out.push_back({Severity::should, "C1",
                   "expected Content-Type application/json on an error, got \"" + core::from_target(content_type, 120) +
                       "\" with " + got});
  return out;
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

}  // namespace crh::contracts
