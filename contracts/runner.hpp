// Runs the selected checks against a target (DESIGN.md §5): quick checks in
// order, slow ones in the background, run-wide ones last, then restores the
// target; and the result document (DESIGN.md §1) of such a run.
#pragma once

#include <atomic>
#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "contracts/check.hpp"
#include "core/preflight.hpp"
#include "core/profile.hpp"
#include "core/http_client.hpp"
#include "core/target.hpp"
#include "results/verdict.hpp"

namespace crh::contracts {

struct RunOptions {
  core::Target target;
  core::ExpectedStatuses statuses;  // from the profile; the dialect is in target
  core::ClientConfig client;        // timeout and caps of every exchange
  std::vector<std::string> suites;  // empty: every suite
  std::vector<std::string> checks;  // ids, or prefixes ending in '*'; empty: every check of the suites
  bool slow = false;                // run the expiry checks (they wait a tag lifetime)
  bool strict = false;              // SHOULD findings fail
  ExploreSettings explore;          // the explore suite's count and seed (DESIGN.md §5, issue 25)
  // The profile does not say how parameters travel: when the target refuses
  // the default, the preflight tries the other encodings and uses the one it
  // takes, with a note (RunReport::encoding says which).
  bool detect_encoding = false;
  // When set, checks not yet started are skipped as interrupted (Ctrl-C);
  // the target is still restored.
  const std::atomic<bool>* stop = nullptr;
  // Called after each check, from the thread that ran it, one call at a time.
  std::function<void(const CheckResult&)> on_result;
};

// Checks in a row that end undecided on --timeout before the run decides the
// target stopped answering: one slow answer is not a stall, and three keep a
// deadlocked target's run within about 4 × --timeout (the restore's try is
// the fourth).
inline constexpr int kStallChecks = 3;

struct RunReport {
  std::vector<CheckResult> results;  // in registry order
  bool unreachable = false;          // nothing could be asked: exit 3
  bool interrupted = false;          // stopped early (RunOptions::stop): incomplete, exit 1
  // Three checks in a row ran out of the timeout: the target stopped
  // answering, the rest were not run (exit 1).
  bool stalled = false;
  std::chrono::milliseconds timeout{0};  // each exchange's deadline (ClientConfig::timeout), for the stall's message
  std::string unreachable_reason;
  // The preflight found the run cannot test the target (a user's mistake, or
  // nothing answered): no check ran.
  std::optional<core::PreflightStop> preflight_stop;
  std::vector<std::string> notes;                            // what a reader must know: key refused, restore problems
  core::ParamEncoding encoding = core::ParamEncoding::form;  // what the checks sent (detected or given)
  std::chrono::system_clock::time_point started;
  std::chrono::microseconds duration{0};
  int exit_code = 0;  // verdict_of(...).exit_code()
};

// The verdict of a run, first match wins: exit 1 "incomplete" when it was
// interrupted; exit 3 "untested" (or "unreachable" when nothing answered)
// when the preflight stopped it; exit 3 "unreachable" when nothing could be asked; exit 1
// "failed" when the target stopped answering (3 checks in a row timed out) or
// a check failed; exit 3 "untested" when the run proved nothing (no check
// ran, or more than half of the checks that ran got no usable answer); else
// 0 "passed". `reason` says which, with the counts, the MUST checks the
// target's answers made skip themselves, and the framework refusals judged
// apart.
results::Verdict verdict_of(const RunReport& report, bool strict);

// The checks the options select, in run order. Throws std::invalid_argument
// naming an unknown suite or a check pattern that matches nothing.
std::vector<const Check*> select_checks(const std::vector<std::string>& suites, const std::vector<std::string>& checks);

RunReport run_contract(const RunOptions& options);

// The result document: schema-versioned JSON with every check, its evidence
// and the rule coverage. Text from the target is made valid UTF-8.
boost::json::value result_document(const RunReport& report, const RunOptions& options, bool embedded);

}  // namespace crh::contracts
