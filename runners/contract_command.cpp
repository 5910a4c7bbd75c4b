// crh contract: runs the contract suites against a base URL, or against the
// embedded reference service when none is given; writes --json and --junit.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
#include "contracts/rules.hpp"
#include "contracts/runner.hpp"
#include "core/outside.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "reference/server.hpp"
#include "reports/terminal.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace {

struct ContractOptions {
  std::string base_url;
  std::string channel = "1";
  std::vector<std::string> suites;
  std::vector<std::string> checks;
  bool list_checks = false;
  std::string profile_file;
  bool slow = false;
  long minute_ms = 60'000;
  bool strict = false;
  std::string json_file;
  std::string junit_file;
  std::string html_file;
  long timeout_ms = 5000;
  bool verbose = false;
  bool quiet = false;
  std::string api_key_file;
};

int list_checks() {
  std::string suite;
  for (const auto& c : contracts::all_checks()) {
    if (c.suite != suite) std::cout << (suite.empty() ? "" : "\n") << (suite = c.suite) << "\n";
    std::string rules;
    for (const auto& r : c.rules) rules += " " + r;
    std::cout << "  " << c.id << "  [" << contracts::to_string(c.severity) << rules << "]"
              << (c.slow ? " (--slow)" : "") << "\n      " << c.summary << "\n";
  }
  return kExitOk;
}

int run_contract_command(const ContractOptions& o) {
  if (o.list_checks) return list_checks();
  contracts::RunOptions run;
  run.slow = o.slow;
  run.strict = o.strict;
  run.suites = o.suites;
  run.checks = o.checks;
  run.client.timeout = std::chrono::milliseconds(o.timeout_ms);
  run.target.channel = o.channel;
  run.target.minute = std::chrono::milliseconds(o.minute_ms);
  try {
    contracts::select_checks(o.suites, o.checks);
    if (!o.profile_file.empty()) run.profile = contracts::load_profile(o.profile_file);
  } catch (const std::exception& e) {
    std::cerr << "crh contract: " << e.what() << "\n";
    return kExitUsage;
  }
  run.target.encoding = run.profile.encoding;
  run.target.call_hook = run.profile.call_hook;

  std::unique_ptr<reference::Server> embedded;
  if (int code = set_up_target({"crh contract", o.base_url, o.api_key_file}, run.target, embedded)) return code;

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  std::size_t done = 0;
  const std::size_t total = contracts::select_checks(o.suites, o.checks).size();
  if (tty && !o.quiet)
    run.on_result = [&](const contracts::CheckResult& r) {
      ++done;
      std::cout << "\r\x1b[2K[" << done << "/" << total << "] " << r.id << std::flush;
    };
  if (!o.quiet)
    std::cout << "crh contract: checking " << run.target.base.to_string()
              << (embedded ? " (embedded reference service)" : "") << ", channel " << run.target.channel
              << (o.slow ? ", with the slow checks" : "") << "\n"
              << std::flush;

  InterruptScope interrupt;  // Ctrl-C: skip the checks not started, restore, write what was gathered
  run.stop = &InterruptScope::requested();
  auto report = contracts::run_contract(run);
  if (tty && !o.quiet) std::cout << "\r\x1b[2K" << std::flush;
  if (embedded) embedded->stop();

  auto doc = contracts::result_document(report, run, embedded != nullptr);
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  int exit_code = report.exit_code;
  for (const auto& problem :
       write_single_result_outputs(doc.as_object(), {o.json_file, o.html_file, o.junit_file})) {
    std::cerr << "crh contract: " << problem << "\n";
    exit_code = std::max(exit_code, static_cast<int>(kExitUsage));
  }
  std::cout << reports::contract_summary(doc, {.color = tty, .verbose = o.verbose, .quiet = o.quiet});
  return exit_code;
}

}  // namespace

Command add_contract_command(CLI::App& app) {
  auto o = std::make_shared<ContractOptions>();
  CLI::App* sub = app.add_subcommand(
      "contract",
      "Check a Call-Routing Service against its contract (with no --base-url: the embedded reference service)");
  sub->add_option("--base-url", o->base_url, "the target, e.g. http://127.0.0.1:8080 (key from CRH_API_KEY)");
  sub->add_option("--channel", o->channel, "the channel whose aliases the checks use")->capture_default_str();
  sub->add_option("--suite", o->suites, "run only this suite (repeatable): endpoints, auth, errors, agents, database, aliases, binding, expiry");
  sub->add_option("--check", o->checks, "run only this check id, or ids starting with a prefix ending in * (repeatable)");
  sub->add_flag("--list-checks", o->list_checks, "print every check with its rules and exit");
  sub->add_option("--profile", o->profile_file, "profile JSON: what to expect where the spec is silent")
      ->check(CLI::ExistingFile);
  sub->add_flag("--slow", o->slow, "also run the expiry checks (they wait one tag lifetime)");
  sub->add_option("--minute-ms", o->minute_ms,
                  "length of one tag minute on the target in ms (the embedded service is started with it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 3'600'000L));
  sub->add_flag("--strict", o->strict, "SHOULD findings (profile defaults) fail the run");
  sub->add_option("--json", o->json_file, "write the result document here");
  sub->add_option("--junit", o->junit_file, "write JUnit XML here");
  sub->add_option("--html", o->html_file, "write the HTML report here");
  sub->add_option("--timeout", o->timeout_ms, "deadline of one exchange in ms")
      ->capture_default_str()
      ->check(CLI::Range(10L, 600'000L));
  auto* verbose = sub->add_flag("--verbose", o->verbose, "list every check with its exchanges");
  sub->add_flag("--quiet", o->quiet, "print only failures and the verdict")->excludes(verbose);
  sub->add_option("--api-key-file", o->api_key_file, "file holding the API key (else CRH_API_KEY)")
      ->check(CLI::ExistingFile);
  return {sub, [o] { return run_contract_command(*o); }};
}

}  // namespace crh::runners
