// crh run: the nightly job in one command: the contract suites, then a race
// load and a mixed load, then the report (terminal, --html, --json, --junit),
// compared with --baseline when given. With no --base-url, on the embedded
// reference service. Ctrl-C writes what was gathered, marked incomplete.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
#include "contracts/profile.hpp"
#include "contracts/runner.hpp"
#include "core/outside.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "load_session.hpp"
#include "loadgen/options.hpp"
#include "loadgen/result.hpp"
#include "reference/server.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace {

struct RunCommandOptions {
  std::string base_url;
  std::string channel = "1";
  double load_duration_s = 10;
  std::vector<std::string> scenarios{"race", "mixed"};
  int connections = 0;
  int callers = 8;
  std::string rate;
  std::vector<std::string> thresholds;
  std::vector<std::string> suites;
  bool slow = false;
  long minute_ms = 60'000;
  bool strict = false;
  std::string profile_file;
  long timeout_ms = 5000;
  std::string baseline;
  double max_regression = 20;
  std::string html_file;
  std::string json_file;
  std::string junit_file;
  std::string api_key_file;
  bool verbose = false;
  bool quiet = false;
};

// "race:call.p99<20ms" applies to the race only; without a scenario, to every load.
std::vector<loadgen::Threshold> thresholds_for(const std::string& scenario, const std::vector<std::string>& texts) {
  std::vector<std::string> mine;
  for (const auto& t : texts) {
    const auto colon = t.find(':');
    const std::string prefix = colon == std::string::npos ? "" : t.substr(0, colon);
    if (prefix == "race" || prefix == "mixed" || prefix == "get") {
      if (prefix == scenario) mine.push_back(t.substr(colon + 1));
    } else {
      mine.push_back(t);
    }
  }
  return loadgen::parse_thresholds(mine);
}

int run_run_command(const RunCommandOptions& o) {
  const auto started = std::chrono::system_clock::now();
  const auto clock_start = std::chrono::steady_clock::now();
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  const bool progress = tty && !o.quiet;

  // Everything a typo can break is checked before the target is touched.
  contracts::Profile profile;
  std::optional<json::object> baseline;
  double rate = 0;
  try {
    for (const auto& s : o.scenarios)
      if (s != "race" && s != "mixed" && s != "get")
        throw std::invalid_argument("--scenario: expected race, mixed or get, got \"" + s + "\"");
    for (const auto& s : o.scenarios) (void)thresholds_for(s, o.thresholds);
    contracts::select_checks(o.suites, {});
    if (!o.profile_file.empty()) profile = contracts::load_profile(o.profile_file);
    if (!o.rate.empty()) rate = loadgen::parse_rate(o.rate);
    if (!o.baseline.empty()) baseline = read_result_file(o.baseline);
  } catch (const std::exception& e) {
    std::cerr << "crh run: " << e.what() << "\n";
    return kExitUsage;
  }

  core::Target target;
  target.channel = o.channel;
  target.minute = std::chrono::milliseconds(o.minute_ms);
  target.encoding = profile.encoding;
  target.call_hook = profile.call_hook;
  std::unique_ptr<reference::Server> embedded;
  const int aliases = std::max(16, 2 * std::max(8, o.connections));
  if (int code = set_up_target({"crh run", o.base_url, o.api_key_file, aliases}, target, embedded)) return code;

  if (!o.quiet)
    std::cout << "crh run: " << target.base.to_string() << (embedded ? " (embedded reference service)" : "") << ", channel "
              << target.channel << ": contract suites" << (o.slow ? " (with the slow checks)" : "") << ", then "
              << (o.load_duration_s > 0 ? std::to_string(o.scenarios.size()) + " load(s) of " + std::to_string(o.load_duration_s).substr(0, 4) + " s" : std::string("no load"))
              << (baseline ? ", compared with " + o.baseline : "") << "\n"
              << std::flush;

  InterruptScope interrupt;
  reports::RunParts parts;
  reports::RunMeta meta;

  // 1. The contract suites.
  contracts::RunOptions run;
  run.target = target;
  run.profile = profile;
  run.slow = o.slow;
  run.strict = o.strict;
  run.suites = o.suites;
  run.client.timeout = std::chrono::milliseconds(o.timeout_ms);
  run.stop = &InterruptScope::requested();
  std::size_t done = 0;
  const std::size_t total = contracts::select_checks(o.suites, {}).size();
  if (progress)
    run.on_result = [&](const contracts::CheckResult& r) {
      std::cout << "\r\x1b[2K[contract " << ++done << "/" << total << "] " << r.id << std::flush;
    };
  auto report = contracts::run_contract(run);
  if (progress) std::cout << "\r\x1b[2K" << std::flush;
  parts.contract = contracts::result_document(report, run, embedded != nullptr).as_object();

  // 2. The loads, unless the target is gone or the run was interrupted.
  for (const auto& scenario : o.scenarios) {
    if (o.load_duration_s <= 0) break;
    if (report.unreachable) {
      meta.skipped.push_back(scenario + " load: not run, the target could not be reached");
      continue;
    }
    if (InterruptScope::requested()) {
      meta.skipped.push_back(scenario + " load: not run, the run was interrupted");
      continue;
    }
    if (scenario == "race" && !target.call_hook.enabled) {
      meta.skipped.push_back("race load: not run, the profile says the target has no call hook (DESIGN.md §4)");
      continue;
    }
    loadgen::LoadConfig config;
    config.target = target;
    config.scenario = scenario == "race" ? loadgen::Scenario::race : scenario == "mixed" ? loadgen::Scenario::mixed : loadgen::Scenario::get;
    config.connections = o.connections;
    config.callers = o.callers;
    if (scenario != "race") config.rate = rate;
    config.duration = std::chrono::milliseconds(static_cast<long>(o.load_duration_s * 1000));
    config.timeout = std::chrono::milliseconds(o.timeout_ms);
    config.mix = loadgen::parse_mix(loadgen::kDefaultMix);
    if (!target.call_hook.enabled) std::erase_if(config.mix, [](const loadgen::MixEntry& m) { return m.op == loadgen::OpKind::call; });
    if (!o.quiet) std::cout << "crh run: " << scenario << " load, " << o.load_duration_s << " s\n" << std::flush;
    auto session = run_load_session(config, thresholds_for(scenario, o.thresholds), embedded != nullptr, progress);
    if (session.document) parts.loads.push_back(std::move(*session.document));
    else meta.problems.push_back(scenario + " load: " + session.error);
  }
  if (embedded) embedded->stop();

  // 3. The report.
  meta.started = started;
  meta.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clock_start).count();
  meta.base_url = target.base.to_string();
  meta.channel = target.channel;
  meta.embedded = embedded != nullptr;
  meta.incomplete = InterruptScope::requested();
  meta.environment = reports::environment();
  meta.config = json::object{{"load_duration_s", o.load_duration_s},
                             {"scenarios", json::value_from(o.scenarios)},
                             {"connections", o.connections},
                             {"callers", o.callers},
                             {"rate", o.rate},
                             {"thresholds", json::value_from(o.thresholds)},
                             {"suites", json::value_from(o.suites)},
                             {"slow", o.slow},
                             {"minute_ms", o.minute_ms},
                             {"strict", o.strict},
                             {"profile", o.profile_file},
                             {"timeout_ms", o.timeout_ms},
                             {"baseline", o.baseline},
                             {"max_regression_pct", o.max_regression}};
  std::optional<json::object> comparison;
  int exit_code = kExitOk;
  try {
    if (baseline)
      comparison = reports::compare(parts, reports::parts_of(*baseline), o.max_regression, o.baseline, *baseline);
  } catch (const std::exception& e) {
    std::cerr << "crh run: --baseline " << o.baseline << ": cannot be compared (" << e.what() << ")\n";
    exit_code = kExitUsage;
  }
  json::value doc = reports::run_document(std::move(parts), std::move(comparison), meta);
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  exit_code = std::max(exit_code, static_cast<int>(doc.at("verdict").at("exit_code").to_number<long>()));
  for (const auto& problem : write_outputs(doc.as_object(), {o.json_file, o.html_file, o.junit_file})) {
    std::cerr << "crh run: " << problem << "\n";
    exit_code = std::max(exit_code, static_cast<int>(kExitUsage));
  }
  std::cout << reports::run_summary(doc.as_object(), {.color = tty, .verbose = o.verbose, .quiet = o.quiet});
  for (const auto& [flag, file] : {std::pair{"HTML report", o.html_file}, {"result", o.json_file}, {"JUnit", o.junit_file}})
    if (!file.empty() && !o.quiet) std::cout << flag << ": " << file << "\n";
  return exit_code;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "The nightly job: contract suites, a race and a mixed load, the report (with no --base-url: the embedded reference service)");
  sub->add_option("--base-url", o->base_url, "the target, e.g. http://127.0.0.1:8080 (key from CRH_API_KEY)");
  sub->add_option("--channel", o->channel, "the channel whose aliases are tagged and called")->capture_default_str();
  sub->add_option("--load-duration", o->load_duration_s, "seconds each load is measured (0: no load)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--scenario", o->scenarios, "the loads, in order (repeatable): race, mixed, get")->capture_default_str();
  sub->add_option("--connections", o->connections, "race: rounds in flight; mixed, get: connections")->check(CLI::Range(1, 100000));
  sub->add_option("--callers", o->callers, "race: callers per round")->capture_default_str()->check(CLI::Range(2, 1000));
  sub->add_option("--rate", o->rate, "mixed and get: open loop at this many requests per second (default: closed loop)");
  sub->add_option("--threshold", o->thresholds,
                  "a load limit, e.g. 'race:call.p99<20ms' or 'errors<0.1%' (no scenario: every load) (repeatable)");
  sub->add_option("--suite", o->suites, "only these contract suites (repeatable)");
  sub->add_flag("--slow", o->slow, "also run the expiry checks (they wait one tag lifetime)");
  sub->add_option("--minute-ms", o->minute_ms, "length of one tag minute on the target in ms (the embedded service is started with it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 3'600'000L));
  sub->add_flag("--strict", o->strict, "SHOULD findings fail the run");
  sub->add_option("--profile", o->profile_file, "profile JSON: what to expect where the spec is silent")->check(CLI::ExistingFile);
  sub->add_option("--timeout", o->timeout_ms, "deadline of one exchange in ms")->capture_default_str()->check(CLI::Range(10L, 600'000L));
  sub->add_option("--baseline", o->baseline, "an earlier --json result: a figure worse beyond --max-regression fails the run (exit 1)")
      ->check(CLI::ExistingFile);
  sub->add_option("--max-regression", o->max_regression, "how much worse a figure may get, in percent of the baseline")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--html", o->html_file, "write the HTML report here");
  sub->add_option("--json", o->json_file, "write the run document here (the next run's --baseline)");
  sub->add_option("--junit", o->junit_file, "write JUnit XML here");
  sub->add_option("--api-key-file", o->api_key_file, "file holding the API key (else CRH_API_KEY)")->check(CLI::ExistingFile);
  auto* verbose = sub->add_flag("--verbose", o->verbose, "every check, violation and compared figure");
  sub->add_flag("--quiet", o->quiet, "only failures, regressions and the verdict")->excludes(verbose);
  return {sub, [o] { return run_run_command(*o); }};
}

}  // namespace crh::runners
