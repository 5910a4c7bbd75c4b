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
#include "contracts/profile.hpp"
#include "core/http_client.hpp"
#include "core/target.hpp"

namespace crh::contracts {

struct RunOptions {
  core::Target target;
  Profile profile;
  core::ClientConfig client;        // timeout and caps of every exchange
  std::vector<std::string> suites;  // empty: every suite
  std::vector<std::string> checks;  // ids, or prefixes ending in '*'; empty: every check of the suites
  bool slow = false;                // run the expiry checks (they wait a tag lifetime)
  bool strict = false;              // SHOULD findings fail
  // When set, checks not yet started are skipped as interrupted (Ctrl-C);
  // the target is still restored.
  const std::atomic<bool>* stop = nullptr;
  // Called after each check, from the thread that ran it, one call at a time.
  std::function<void(const CheckResult&)> on_result;
};

struct RunReport {
  std::vector<CheckResult> results;  // in registry order
  bool unreachable = false;          // nothing could be asked: exit 3
  std::string unreachable_reason;
  std::vector<std::string> notes;    // what a reader must know: key refused, restore problems
  std::chrono::system_clock::time_point started;
  std::chrono::microseconds duration{0};
  int exit_code = 0;                 // 0 held, 1 a check failed, 3 unreachable
};

// The checks the options select, in run order. Throws std::invalid_argument
// naming an unknown suite or a check pattern that matches nothing.
std::vector<const Check*> select_checks(const std::vector<std::string>& suites,
                                        const std::vector<std::string>& checks);

RunReport run_contract(const RunOptions& options);

// The result document: schema-versioned JSON with every check, its evidence
// and the rule coverage. Text from the target is made valid UTF-8.
boost::json::value result_document(const RunReport& report, const RunOptions& options, bool embedded);



}  // namespace crh::contracts
