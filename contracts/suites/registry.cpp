// The registry: every suite's checks in run order, and the names of outcomes.
#include "contracts/suites/suites.hpp"

namespace crh::contracts {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::warn: return "warn";
    case Outcome::fail: return "fail";
    case Outcome::skip: return "skip";
    case Outcome::indeterminate: return "indeterminate";
  }
  return "?";
}

std::string_view to_string(Severity s) { return s == Severity::must ? "MUST" : "SHOULD"; }

const std::vector<Check>& all_checks() {
  static const std::vector<Check> checks = [] {
    std::vector<Check> out;
    suites::add_endpoint_checks(out);
    suites::add_auth_checks(out);
    suites::add_auth_offer_checks(out);
    suites::add_error_checks(out);
    suites::add_agent_checks(out);
    suites::add_database_checks(out);
    suites::add_alias_checks(out);
    suites::add_binding_checks(out);
    suites::add_expiry_checks(out);
    suites::add_explore_checks(out);
    return out;
  }();
  return checks;
}

const std::vector<std::string>& all_suites() {
  static const std::vector<std::string> names{"endpoints", "auth",    "errors",  "agents",
                                              "database",  "aliases", "binding", "expiry", "explore"};
  return names;
}

}  // namespace crh::contracts
