// crh contract: runs the contract suites against a base URL, or against the
// embedded reference service when none is given; writes --json and --junit.
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

#include <boost/json.hpp>

#include "capture_session.hpp"
#include "commands.hpp"
#include "oracle/rules.hpp"
#include "contracts/runner.hpp"
#include "core/outside.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "documents.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"
#include "interrupt.hpp"
#include "reference/server.hpp"
#include "reports/terminal.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace {

int list_checks() {
  std::string suite;
  for (const auto& c : contracts::all_checks()) {
    if (c.suite != suite) std::cout << (suite.empty() ? "" : "\n") << (suite = c.suite) << "\n";
    std::string rules;
    for (const auto& r : c.rules) rules += " " + r;
    std::cout << "  " << c.id << "  [" << contracts::to_string(c.severity) << rules << "]"
              << (c.slow ? " (--slow)" : "") << "\n      " << c.summary << "\n";
  }
  return results::kExitOk;
}

// The run's options from the flags. Returns results::kExitUsage after printing why
// when a suite, check or profile is wrong.
int prepare_run(const ContractOptions& o, contracts::RunOptions& run) {
  o.contract.apply_to(run);
  run.checks = o.checks;
  run.client.timeout = o.target.timeout();
  run.target = o.target.target();
  run.detect_encoding = true;  // unless a profile says the encoding
  try {
    contracts::select_checks(o.contract.suites, o.checks);
    if (!o.target.profile_file.empty()) {
      const auto profile = core::load_profile(o.target.profile_file);
      run.target.dialect = profile.dialect;
      run.statuses = profile.statuses;
      run.detect_encoding = !profile.encoding_given;
    }
  } catch (const std::exception& e) {
    std::cerr << "crh contract: " << e.what() << "\n";
    return results::kExitUsage;
  }
  return results::kExitOk;
}

// The explore suite runs: selected and given operations.
bool explores(const contracts::RunOptions& run) {
  if (run.explore.operations == 0) return false;
  for (const auto* c : contracts::select_checks(run.suites, run.checks))
    if (c->suite == "explore") return true;
  return false;
}

}  // namespace

int run_contract_command(const ContractOptions& o) {
  if (o.list_checks) return list_checks();
  contracts::RunOptions run;
  if (int code = prepare_run(o, run)) return code;

  std::unique_ptr<reference::Server> embedded;
  TargetChoice choice{"crh contract", o.target.base_url, o.target.api_key_file};
  choice.call_driver_problem = o.target.call_driver_problem();
  if (int code = set_up_target(choice, run.target, embedded)) return code;
  CaptureSession capture;  // before any request of the run
  if (int code = capture.start(o.capture, run.target, "crh contract")) return code;

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  const bool quiet = o.output.quiet;
  std::size_t done = 0;
  const std::size_t total = contracts::select_checks(run.suites, run.checks).size();
  if (tty && !quiet)
    run.on_result = [&](const contracts::CheckResult& r) {
      ++done;
      std::cout << "\r\x1b[2K[" << done << "/" << total << "] " << r.id << std::flush;
    };
  if (!quiet)
    std::cout << "crh contract: checking " << run.target.base.to_string()
              << (embedded ? " (embedded reference service)" : "") << ", channel " << run.target.channel
              << (o.contract.slow ? ", with the slow checks" : "")
              << (run.target.calls.sip ? ", calls as SIP INVITEs to " + run.target.calls.sip_target.text() : "")
              << (explores(run) ? ", exploring " + std::to_string(run.explore.operations) + " operations from seed " +
                                      std::to_string(run.explore.seed) + " (--seed " +
                                      std::to_string(run.explore.seed) + " replays them)"
                                : "")
              << "\n"
              << std::flush;

  InterruptScope interrupt;  // Ctrl-C: skip the checks not started, restore, write what was gathered
  run.stop = &InterruptScope::requested();
  auto report = contracts::run_contract(run);
  if (tty && !quiet) std::cout << "\r\x1b[2K" << std::flush;
  capture.stop();
  if (embedded) embedded->stop();

  auto doc = contracts::result_document(report, run, embedded != nullptr);
  namespace k = results::keys;
  doc.as_object()[k::envelope::config].as_object()[k::contract_config::rerun] =
      contract_rerun(o.target, o.contract, embedded != nullptr);
  capture.add_to(doc.as_object());
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  const auto problems = write_single_result_outputs(doc.as_object(), o.output.files());
  const int exit_code = with_output_problems("crh contract", problems, report.exit_code);
  std::cout << reports::contract_summary(doc, {.color = tty, .verbose = o.output.verbose, .quiet = quiet});
  return exit_code;
}

}  // namespace crh::runners
