// JUnit XML rendering.
#include "reports/junit.hpp"

#include <boost/json.hpp>
#include <cstdio>

#include "reports/text.hpp"

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

struct Totals {
  long total = 0, failures = 0, errors = 0, skipped = 0;
};

std::string suite_xml(const std::string& name, long n, long f, long e, long s, double ms, const std::string& timestamp,
                      const std::string& cases, Totals& totals) {
  totals.total += n;
  totals.failures += f;
  totals.errors += e;
  totals.skipped += s;
  return "  <testsuite name=\"" + xml_escape(name) + "\" tests=\"" + std::to_string(n) + "\" failures=\"" + std::to_string(f) +
         "\" errors=\"" + std::to_string(e) + "\" skipped=\"" + std::to_string(s) + "\" time=\"" + seconds(ms) +
         "\" timestamp=\"" + xml_escape(timestamp) + "\">\n" + cases + "  </testsuite>\n";
}

// A testsuite per contract suite, and one of the rules.
std::string contract_suites(const json::value& result, Totals& totals) {
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
  totals.total += total;
  totals.failures += failures;
  totals.errors += errors;
  totals.skipped += skipped;
  (void)total_ms;
  return body;
}

// A load result: the race's invariant, each threshold, and what was measured.
std::string load_suite(const json::value& load, Totals& totals) {
  const std::string scenario = str(load.at("config"), "scenario");
  const std::string timestamp = str(load, "started_at").substr(0, 19);
  const std::string classname = "crh.load." + xml_escape(scenario);
  std::string cases;
  long n = 0, f = 0, e = 0;
  const auto& totals_json = load.at("totals");
  const auto& verdict = load.at("verdict");
  ++n;
  cases += "    <testcase classname=\"" + classname + "\" name=\"completed\" time=\"" + seconds(num(totals_json, "measured_s") * 1000) + "\">\n";
  std::string summary = fixed(num(totals_json, "requests"), 0) + " requests, " + fixed(num(totals_json, "achieved_rate"), 0) +
                        "/s, " + fixed(num(totals_json, "errors"), 0) + " errors\n";
  for (const auto& why : verdict.at("invalid_reasons").as_array()) summary += "INVALID: " + std::string(why.as_string()) + "\n";
  if (verdict.at("interrupted").as_bool()) {
    ++e;
    cases += "      <error type=\"interrupted\" message=\"the load was interrupted (Ctrl-C)\">" + xml_escape(summary) + "</error>\n";
  } else {
    cases += "      <system-out>" + xml_escape(summary) + "</system-out>\n";
  }
  cases += "    </testcase>\n";
  if (const auto* race = load.as_object().if_contains("race")) {
    ++n;
    const double count = num(*race, "violation_count");
    cases += "    <testcase classname=\"" + classname + "\" name=\"first caller wins: exactly one winner per round\" time=\"0\">\n";
    std::string listing = fixed(num(*race, "rounds"), 0) + " rounds, " + fixed(count, 0) + " violation(s)\n";
    for (const auto& v : race->at("violations").as_array()) listing += str(v, "kind") + " (round " + fixed(num(v, "round"), 0) + "): " + str(v, "explanation") + "\n";
    if (count > 0) {
      ++f;
      cases += "      <failure type=\"violation\" message=\"" + fixed(count, 0) + " invariant violation(s)\">" + xml_escape(listing) + "</failure>\n";
    } else {
      cases += "      <system-out>" + xml_escape(listing) + "</system-out>\n";
    }
    cases += "    </testcase>\n";
  }
  for (const auto& t : load.at("thresholds").as_array()) {
    ++n;
    cases += "    <testcase classname=\"" + classname + ".thresholds\" name=\"" + xml_escape(str(t, "expression")) + "\" time=\"0\">\n";
    if (!t.at("held").as_bool()) {
      ++f;
      cases += "      <failure type=\"threshold\" message=\"" + xml_escape(str(t, "description")) + "\"/>\n";
    } else {
      cases += "      <system-out>" + xml_escape(str(t, "description")) + "</system-out>\n";
    }
    cases += "    </testcase>\n";
  }
  return suite_xml("load." + scenario, n, f, e, 0, num(totals_json, "measured_s") * 1000, timestamp, cases, totals);
}

// A testcase per compared figure, failing where it regressed beyond the limit.
std::string regression_suite(const json::value& comparison, const std::string& timestamp, Totals& totals) {
  std::string cases;
  long n = 0, f = 0;
  const double limit = num(comparison, "max_regression_pct");
  for (const auto& fig : comparison.at("figures").as_array()) {
    ++n;
    const std::string name = str(fig, "scenario") + " " + str(fig, "operation") + " " + str(fig, "figure");
    const std::string change = fig.at("change_pct").is_number() ? fixed(fig.at("change_pct").to_number<double>(), 1) + "%" : "new";
    const std::string line = str(fig, "figure") + " of " + str(fig, "operation") + " (" + str(fig, "scenario") + " load) was " +
                             format_figure(str(fig, "unit"), num(fig, "baseline")) + " in the baseline and is " +
                             format_figure(str(fig, "unit"), num(fig, "current")) + " now (" + (change[0] == '-' || change == "new" ? "" : "+") +
                             change + "; limit " + fixed(limit, 1) + "% worse)";
    cases += "    <testcase classname=\"crh.regressions\" name=\"" + xml_escape(name) + "\" time=\"0\">\n";
    if (fig.at("regressed").as_bool()) {
      ++f;
      cases += "      <failure type=\"regression\" message=\"" + xml_escape(line) + "\"/>\n";
    } else {
      cases += "      <system-out>" + xml_escape(line) + "</system-out>\n";
    }
    cases += "    </testcase>\n";
  }
  return suite_xml("regressions", n, f, 0, 0, 0, timestamp, cases, totals);
}

}  // namespace

std::string junit_xml(const json::value& result) {
  Totals totals;
  std::string body;
  const std::string kind = str(result, "kind");
  const std::string timestamp = str(result, "started_at").substr(0, 19);
  if (kind == "contract") body = contract_suites(result, totals);
  else if (kind == "load") body = load_suite(result, totals);
  else {
    if (const auto* c = result.as_object().if_contains("contract"); c && c->is_object()) body += contract_suites(*c, totals);
    for (const auto& l : result.at("loads").as_array()) body += load_suite(l, totals);
    if (const auto* c = result.as_object().if_contains("comparison"); c && c->is_object())
      body += regression_suite(*c, timestamp, totals);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crh " + xml_escape(kind) + "\" tests=\"" +
         std::to_string(totals.total) + "\" failures=\"" + std::to_string(totals.failures) + "\" errors=\"" +
         std::to_string(totals.errors) + "\" skipped=\"" + std::to_string(totals.skipped) + "\" time=\"" +
         seconds(result.at("duration_ms").to_number<double>()) + "\">\n" + body + "</testsuites>\n";
}

}  // namespace crh::reports
