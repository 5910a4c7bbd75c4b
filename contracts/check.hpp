// What a contract check is and what it yields (DESIGN.md §5): an id, the
// rules it covers, MUST or SHOULD, and an outcome with its evidence.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "core/http.hpp"

#include "oracle/rules.hpp"
#include "oracle/shapes.hpp"

namespace crh::contracts {

// A check's findings are the oracle's (what did not hold, MUST or SHOULD), and
// the rules it covers are ids of the oracle's catalogue.
using oracle::Finding;
using oracle::rule_catalogue;
using oracle::Severity;

enum class Outcome {
  pass,
  warn,           // only SHOULD findings (a profile default did not hold); a failure with --strict
  fail,           // a MUST finding
  skip,           // not run, with the reason (no call hook, needs --slow, ...)
  indeterminate,  // our deadline passed, or nothing of the run was answered: the outcome is unknown
};

std::string_view to_string(Outcome o);
std::string_view to_string(Severity s);  // "MUST", "SHOULD"

// One exchange as a script sends it again (contracts/reproducer.hpp): the
// request as sent and what came back.
struct ReplayStep {
  core::HttpRequest request;
  unsigned status = 0;  // 0: no answer
  std::string content_type;
  std::string body;
  std::chrono::microseconds at{0};  // when it was sent, since the check began
  // A word in the request that stands for a variant of the key (the auth
  // offers), and the POSIX shell expression that makes that variant.
  std::string stand_in, stand_in_shell;
  bool cited = false;  // made by another check (a run-wide check cites it)
};

// One exchange as people can rerun it.
struct Evidence {
  std::string curl;    // the request, the key shown as $CRH_API_KEY
  std::string answer;  // "HTTP 401 application/json, 31 bytes: {...}" or "no answer: timeout (...)"
  std::chrono::microseconds elapsed{0};
  std::optional<ReplayStep> replay;  // none: not an HTTP exchange of this check (a SIP call, a note)
};

struct CheckResult {
  std::string id;
  std::string suite;
  std::vector<std::string> rules;
  Severity severity = Severity::must;
  Outcome outcome = Outcome::pass;
  std::string message;              // the first finding, or why it was skipped / undecided
  std::vector<Finding> findings;    // everything that did not hold, MUST and SHOULD
  std::vector<Evidence> evidence;   // the exchanges the check made, in order
  std::chrono::microseconds duration{0};
  // Skipped by its own body, on what the target answered or holds (no free
  // alias, no call hook, ids under other names), not by the run's options:
  // a rule the target could have had tested was not.
  bool skipped_by_target = false;
  // Ended undecided because an exchange ran out of --timeout: three such
  // checks in a row mean the target stopped answering.
  bool timed_out = false;
  // The evidence whose answer the first MUST finding rests on (the last
  // exchange before it); none when the check failed before any exchange.
  std::optional<std::size_t> failing_step;
  // Its failure shows only when callers are released at one instant (a race):
  // no shell script can do that.
  bool needs_one_instant = false;
  // A failed check's shell script (contracts/reproducer.hpp).
  std::string reproducer;
};

class CheckContext;

// Exploration (issue 25): how many operations, from which seed.
struct ExploreSettings {
  std::size_t operations = 0;  // 0: off
  std::uint64_t seed = 0;
  bool slow = false;           // --slow: waits for tags of a long minute to end (at most twice)
};

struct Check {
  std::string id;                     // "auth.missing-key.database-get"
  std::string suite;                  // "auth"
  std::vector<std::string> rules;     // catalogue ids it covers
  Severity severity = Severity::must; // MUST: rests on the spec; SHOULD: on a profile default
  std::string summary;                // what it checks, one line
  std::function<void(CheckContext&)> body;
  bool slow = false;               // runs only with --slow, in the background
  bool owns_channel = false;       // compares the whole alias list: runs before slow checks start
  bool needs_call_hook = false;    // skipped when the profile has no call hook
  bool calls_by_driver = false;    // its calls go through the call driver: with SIP it needs no HTTP hook
  bool run_wide = false;           // judges every exchange of the run: runs last
  // Needs the target to itself for long (exploration): runs once every other
  // check but the run-wide ones is done, so nothing runs beside it and what
  // it leaves (the order of the aliases' uses) shapes no other check.
  bool alone = false;
};

// Every check of every suite, in the order they run and are reported.
const std::vector<Check>& all_checks();

// The suites, in order.
const std::vector<std::string>& all_suites();

}  // namespace crh::contracts
