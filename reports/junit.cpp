// JUnit XML rendering.
#include "reports/junit.hpp"

#include <boost/json.hpp>
#include <cstdio>

namespace crh::reports {
namespace json = boost::json;

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': case '\n': case '\r': out.push_back(static_cast<char>(c)); break;
      default: out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));  // not allowed in XML 1.0
    }
  }
  return out;
}

namespace {

std::string str(const json::value& v, std::string_view key) {
  if (auto* p = v.as_object().if_contains(key); p && p->is_string()) return std::string(p->get_string());
  return {};
}

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

std::string evidence_text(const json::value& check) {
  std::string out;
  for (const auto& f : check.at("findings").as_array())
    out += str(f, "severity") + " " + str(f, "rule") + ": " + str(f, "text") + "\n";
  if (!check.at("evidence").as_array().empty()) out += "Exchanges (export CRH_API_KEY to rerun):\n";
  for (const auto& e : check.at("evidence").as_array()) out += "$ " + str(e, "curl") + "\n  -> " + str(e, "answer") + "\n";
  return out;
}

std::string rules_text(const json::value& check) {
  std::string out;
  for (const auto& r : check.at("rules").as_array()) out += (out.empty() ? "" : " ") + std::string(r.as_string());
  return out;
}

}  // namespace

std::string junit_xml(const json::value& result) {
  const auto& checks = result.at("checks").as_array();
  std::string body;
  long total = 0, failures = 0, errors = 0, skipped = 0;
  double total_ms = 0;
  const std::string timestamp = str(result, "started_at").substr(0, 19);

  for (const auto& suite : result.at("suites").as_array()) {
    const std::string name = str(suite, "name");
    std::string cases;
    long n = 0, f = 0, e = 0, s = 0;
    double suite_ms = 0;
    for (const auto& c : checks) {
      if (str(c, "suite") != name) continue;
      ++n;
      const std::string outcome = str(c, "outcome");
      const double ms = c.at("duration_ms").to_number<double>();
      suite_ms += ms;
      cases += "    <testcase classname=\"crh.contract." + xml_escape(name) + "\" name=\"" + xml_escape(str(c, "id")) +
               "\" time=\"" + seconds(ms) + "\">\n";
      const std::string header = str(c, "severity") + " check covering " + rules_text(c) + ": " + str(c, "summary") + "\n";
      if (outcome == "fail") {
        ++f;
        cases += "      <failure type=\"" + str(c, "severity") + "\" message=\"" + xml_escape(str(c, "message")) + "\">" +
                 xml_escape(header + evidence_text(c)) + "</failure>\n";
      } else if (outcome == "indeterminate") {
        ++e;
        cases += "      <error type=\"indeterminate\" message=\"" + xml_escape(str(c, "message")) + "\">" +
                 xml_escape(header + "The outcome is unknown (no answer); this is not a failure of the target.\n" +
                            evidence_text(c)) +
                 "</error>\n";
      } else if (outcome == "skip") {
        ++s;
        cases += "      <skipped message=\"" + xml_escape(str(c, "message")) + "\"/>\n";
      } else if (outcome == "warn") {
        cases += "      <system-out>" +
                 xml_escape("WARNING (SHOULD, a failure with --strict): " + str(c, "message") + "\n" + header +
                            evidence_text(c)) +
                 "</system-out>\n";
      } else {
        cases += "      <system-out>" + xml_escape(header) + "</system-out>\n";
      }
      cases += "    </testcase>\n";
    }
    body += "  <testsuite name=\"" + xml_escape(name) + "\" tests=\"" + std::to_string(n) + "\" failures=\"" +
            std::to_string(f) + "\" errors=\"" + std::to_string(e) + "\" skipped=\"" + std::to_string(s) +
            "\" time=\"" + seconds(suite_ms) + "\" timestamp=\"" + xml_escape(timestamp) + "\">\n" + cases +
            "  </testsuite>\n";
    total += n;
    failures += f;
    errors += e;
    skipped += s;
    total_ms += suite_ms;
  }

  // The rule coverage: one testcase per rule, failing when a check covering it failed.
  std::string cases;
  long n = 0, f = 0, e = 0, s = 0;
  for (const auto& rule : result.at("rules").as_array()) {
    ++n;
    const std::string outcome = str(rule, "outcome");
    std::string listing = "Spec section " + str(rule, "section") + ": " + str(rule, "text") + "\nChecks:\n";
    for (const auto& c : rule.at("checks").as_array())
      listing += "  " + str(c, "outcome") + "  " + str(c, "id") + " (" + str(c, "severity") + ")\n";
    if (rule.at("checks").as_array().empty()) listing += "  (none selected)\n";
    cases += "    <testcase classname=\"crh.contract.rules\" name=\"" + xml_escape(str(rule, "id") + " " + str(rule, "text")) +
             "\" time=\"0\">\n";
    if (outcome == "fail") {
      ++f;
      cases += "      <failure type=\"rule\" message=\"a check covering " + xml_escape(str(rule, "id")) + " failed\">" +
               xml_escape(listing) + "</failure>\n";
    } else if (outcome == "indeterminate") {
      ++e;
      cases += "      <error type=\"indeterminate\" message=\"a check covering " + xml_escape(str(rule, "id")) +
               " got no answer\">" + xml_escape(listing) + "</error>\n";
    } else if (outcome == "warn") {
      cases += "      <system-out>" + xml_escape("WARNING (SHOULD): a check covering it warned\n" + listing) +
               "</system-out>\n";
    } else if (outcome == "uncovered" || outcome == "skip") {
      ++s;
      cases += "      <skipped message=\"" +
               xml_escape(outcome == "skip" ? "every check covering it was skipped" : "no selected check covers it") +
               "\"/>\n      <system-out>" + xml_escape(listing) + "</system-out>\n";
    } else {
      cases += "      <system-out>" + xml_escape(listing) + "</system-out>\n";
    }
    cases += "    </testcase>\n";
  }
  body += "  <testsuite name=\"rules\" tests=\"" + std::to_string(n) + "\" failures=\"" + std::to_string(f) +
          "\" errors=\"" + std::to_string(e) + "\" skipped=\"" + std::to_string(s) + "\" time=\"0\" timestamp=\"" + xml_escape(timestamp) +
          "\">\n" + cases + "  </testsuite>\n";
  total += n;
  failures += f;
  errors += e;
  skipped += s;

  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crh contract\" tests=\"" +
         std::to_string(total) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
         "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + seconds(result.at("duration_ms").to_number<double>()) +
         "\">\n" + body + "</testsuites>\n";
}

}  // namespace crh::reports
