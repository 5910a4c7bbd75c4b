// crh run: the nightly job in one command: the contract suites, then a race
// load and a mixed load (each summed up as it ends), then the report
// (terminal, --html, --json, --junit), compared with --baseline when given,
// or with a baseline deployment loaded side by side (--against, against.hpp).
// With no --base-url, on the embedded reference service. Ctrl-C writes what
// was gathered, marked incomplete.
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>
#include <unistd.h>

#include <boost/json.hpp>

#include "against.hpp"
#include "commands.hpp"
#include "core/profile.hpp"
#include "contracts/runner.hpp"
#include "core/outside.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_run.hpp"
#include "documents.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"
#include "interrupt.hpp"
#include "load_session.hpp"
#include "nights_session.hpp"
#include "loadgen/merge.hpp"
#include "loadgen/options.hpp"
#include "loadgen/result.hpp"
#include "nightly/figures.hpp"
#include "reference/server.hpp"
#include "capture_session.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"
#include "reports/text.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace {

// What the command line names, read and checked before the target is touched.
struct RunInputs {
  core::Profile profile;
  std::optional<json::object> baseline;
  double rate = 0;  // 0: closed loop
  loadgen::LoadConfig scale_out;  // the shard, the start instant and the run id
};

// The target once set up, and how the run talks to the terminal.
struct RunContext {
  const RunCommandOptions& o;
  core::Target target;
  core::ExpectedStatuses statuses;  // the profile's, for the loads' expected refusals
  bool detect_encoding = false;     // the profile does not say the encoding: the contract finds it
  bool embedded = false;
  bool tty = false;
  bool progress = false;  // progress lines on the terminal
  // --against: the baseline deployment's target and expected refusals.
  core::Target against;
  core::ExpectedStatuses against_statuses;
};

// "race:call.p99<20ms" applies to the race only; without a scenario, to every load.
std::vector<loadgen::Threshold> thresholds_for(const std::string& scenario, const std::vector<std::string>& texts) {
  std::vector<std::string> mine;
  for (const auto& t : texts) {
    const auto colon = t.find(':');
    const std::string prefix = colon == std::string::npos ? "" : t.substr(0, colon);
    if (scenario_by_name(prefix)) {
      if (prefix == scenario) mine.push_back(t.substr(colon + 1));
    } else {
      mine.push_back(t);
    }
  }
  return loadgen::parse_thresholds(mine);
}

// Everything a typo can break is checked before the target is touched. Prints
// why and returns nothing on a usage error.
std::optional<RunInputs> read_inputs(const RunCommandOptions& o) {
  RunInputs in;
  try {
    for (const auto& s : o.scenarios) (void)parse_scenario(s);
    for (const auto& s : o.scenarios) (void)thresholds_for(s, o.load.thresholds);
    contracts::select_checks(o.contract.suites, {});
    if (!o.target.profile_file.empty()) in.profile = core::load_profile(o.target.profile_file);
    if (!o.load.rate.empty()) in.rate = loadgen::parse_rate(o.load.rate);
    if (!o.baseline.file.empty()) in.baseline = read_result_file(o.baseline.file);
    std::string scenarios;
    for (const auto& s : o.scenarios) scenarios += s + ",";
    o.load.apply_scale_out(in.scale_out, {"run", o.target.base_url, o.target.channel, scenarios,
                                          "duration " + std::to_string(o.load_duration_s)});
  } catch (const std::exception& e) {
    std::cerr << "crh run: " << e.what() << "\n";
    return std::nullopt;
  }
  return in;
}

void announce(const RunContext& ctx, bool comparing) {
  const auto& o = ctx.o;
  const std::string loads = o.load_duration_s > 0 ? std::to_string(o.scenarios.size()) + " load(s) of " +
                                                        std::to_string(o.load_duration_s).substr(0, 4) + " s"
                                                  : std::string("no load");
  std::cout << "crh run: " << ctx.target.base.to_string() << (ctx.embedded ? " (embedded reference service)" : "")
            << ", channel " << ctx.target.channel
            << (ctx.target.calls.sip ? ", calls as SIP INVITEs to " + ctx.target.calls.sip_target.text() : "")
            << ": contract suites"
            << (o.contract.slow ? " (with the slow checks)" : "") << ", then " << loads
            << (comparing ? ", compared with " + o.baseline.file : "")
            << (o.against.base_url.empty() ? ""
                                           : ", side by side with the baseline deployment " + ctx.against.base.to_string() +
                                                 (o.contract_both ? " (its contract suites too)" : ""))
            << (o.control.empty() ? "" : ", each in trials interleaved with the control " + ctx.against.base.to_string())
            << "\n"
            << std::flush;
}

reports::TerminalStyle style_of(const RunContext& ctx) {
  return {.color = ctx.tty, .verbose = ctx.o.output.verbose, .quiet = ctx.o.output.quiet};
}

// A part's document, its values redacted, summed up as soon as the part ends,
// so that a log reads in order (the comparison and the verdict of the run wait
// for the end). Flushed: what goes to stderr next must come after it.
void show_part(const RunContext& ctx, json::object& part) {
  json::value redacted(std::move(part));
  core::redact_values(redacted);  // a value the target sent that a message quotes whole
  part = std::move(redacted.as_object());
  std::cout << reports::run_part_summary(part, style_of(ctx)) << std::flush;
}

// 1. The contract suites on `target`; their document goes into `parts`.
contracts::RunReport run_contract_suites(const RunContext& ctx, const core::Target& target,
                                         const core::ExpectedStatuses& statuses, reports::RunParts& parts) {
  contracts::RunOptions run;
  run.target = target;
  run.statuses = statuses;
  run.detect_encoding = ctx.detect_encoding;
  ctx.o.contract.apply_to(run);
  run.client.timeout = ctx.o.target.timeout();
  run.stop = &InterruptScope::requested();
  if (!ctx.o.output.quiet && run.explore.operations > 0 &&
      (run.suites.empty() || std::find(run.suites.begin(), run.suites.end(), "explore") != run.suites.end()))
    std::cout << "crh run: exploring " << run.explore.operations << " operations from seed " << run.explore.seed
              << " (--seed " << run.explore.seed << " replays them)\n"
              << std::flush;
  std::size_t done = 0;
  const std::size_t total = contracts::select_checks(run.suites, {}).size();
  if (ctx.progress)
    run.on_result = [&](const contracts::CheckResult& r) {
      std::cout << "\r\x1b[2K[contract " << ++done << "/" << total << "] " << r.id << std::flush;
    };
  auto report = contracts::run_contract(run);
  if (ctx.progress) std::cout << "\r\x1b[2K" << std::flush;
  core::add_run_key(ctx.target.api_key);  // the contract run made its target's key the only one
  if (!ctx.against.api_key.empty()) core::add_run_key(ctx.against.api_key);  // --against's or --control's
  const bool candidate = &target == &ctx.target;
  parts.contract = contracts::result_document(report, run, ctx.embedded && candidate).as_object();
  // A failed check of the baseline deployment reruns there.
  TargetFlags rerun_target = ctx.o.target;
  if (!candidate) {
    const auto& a = ctx.o.against;
    rerun_target.base_url = a.base_url;
    rerun_target.api_key_file = a.api_key_file;
    if (!a.channel.empty()) rerun_target.channel = a.channel;
    if (!a.profile_file.empty()) rerun_target.profile_file = a.profile_file;
  }
  namespace k = results::keys;
  (*parts.contract)[k::envelope::config].as_object()[k::contract_config::rerun] =
      contract_rerun(rerun_target, ctx.o.contract, ctx.embedded && candidate);
  show_part(ctx, *parts.contract);
  return report;
}

// Why the load of `scenario` is left out, or nothing when it runs.
std::optional<std::string> reason_to_skip(const std::string& scenario, const contracts::RunReport& contract,
                                          const core::Target& target) {
  if (contract.preflight_stop) return scenario + " load: not run, the target could not be tested (above)";
  if (contract.unreachable) return scenario + " load: not run, the target could not be reached";
  if (InterruptScope::requested()) return scenario + " load: not run, the run was interrupted";
  if (scenario == "race" && !target.can_place_calls())
    return "race load: not run, the profile says the target has no call hook (call_hook: null)";
  return std::nullopt;
}

loadgen::LoadConfig load_config_for(const std::string& scenario, const RunContext& ctx, const RunInputs& in) {
  loadgen::LoadConfig config;
  config.shard = in.scale_out.shard;
  config.run_id = in.scale_out.run_id;
  const double rate = in.rate;
  config.target = ctx.target;
  config.statuses = ctx.statuses;
  config.scenario = parse_scenario(scenario);
  ctx.o.load.apply_to(config);
  if (config.scenario != loadgen::Scenario::race) config.rate = rate;
  config.duration = std::chrono::milliseconds(static_cast<long>(ctx.o.load_duration_s * 1000));
  config.timeout = ctx.o.target.timeout();
  config.mix = loadgen::parse_mix(loadgen::kDefaultMix);
  // A target without the call hook (and no SIP driver) cannot be called: the mix leaves calls out.
  if (!ctx.target.can_place_calls())
    std::erase_if(config.mix, [](const loadgen::MixEntry& m) { return m.op == oracle::OpKind::call; });
  return config;
}

// 2. The loads, unless the target is gone or the run was interrupted; their
// documents go into `parts`, what was left out or failed into `meta`.
// Sharded: every shard runs the same loads in the same order, the first at
// --start-at; each load records when it began, so the skew of each is known.
// --repeat K: the scenarios run K times, interleaved (race, mixed, race,
// mixed...), so a slow spell of the machine falls on every scenario alike;
// each scenario's repetitions then merge into one document.
void run_loads(const RunContext& ctx, const contracts::RunReport& contract, const RunInputs& in,
               reports::RunParts& parts, reports::RunMeta& meta) {
  const auto& o = ctx.o;
  if (o.load_duration_s <= 0) return;
  bool first = true;
  std::vector<std::vector<json::object>> runs(o.scenarios.size());  // per scenario, its repetitions
  std::vector<bool> failed(o.scenarios.size(), false);
  for (int rep = 1; rep <= o.repeat; ++rep)
    for (std::size_t s = 0; s < o.scenarios.size(); ++s) {
      const auto& scenario = o.scenarios[s];
      if (failed[s]) continue;
      if (auto why = reason_to_skip(scenario, contract, ctx.target)) {
        if (runs[s].empty() && rep == 1) meta.skipped.push_back(std::move(*why));
        failed[s] = true;
        continue;
      }
      auto config = load_config_for(scenario, ctx, in);
      if (first) config.start_at = in.scale_out.start_at;
      first = false;
      if (!o.output.quiet) {
        std::cout << "crh run: " << scenario << " load, " << o.load_duration_s << " s"
                  << (o.repeat > 1 ? ", repetition " + std::to_string(rep) + " of " + std::to_string(o.repeat) : "")
                  << "\n";
        announce_scale_out("crh run", config);
        std::cout << std::flush;
      }
      auto session =
          run_load_session(config, thresholds_for(scenario, o.load.thresholds), ctx.embedded, ctx.progress);
      if (session.document && !session.stopped) {
        show_part(ctx, *session.document);
        runs[s].push_back(std::move(*session.document));
      } else {
        meta.problems.push_back(scenario + " load" +
                                (o.repeat > 1 ? " (repetition " + std::to_string(rep) + ")" : "") + ": " +
                                session.error);
        failed[s] = true;
      }
    }
  for (std::size_t s = 0; s < o.scenarios.size(); ++s) {
    if (runs[s].empty()) continue;
    try {
      parts.loads.push_back(loadgen::merge_repetitions(runs[s]));
    } catch (const std::exception& e) {
      meta.problems.push_back(o.scenarios[s] + " load: its repetitions could not be merged (" + e.what() + ")");
    }
  }
}

// 2b. --against: each load on the candidate and the baseline deployment side
// by side; the candidate's documents go into `parts` (its trials merged as
// repetitions), the comparison of both is returned. A load that could not
// run on a side is a problem (exit 3); a duet whose sides did not start
// together is unreliable.
json::object run_loads_against(const RunContext& ctx, const contracts::RunReport& contract, const RunInputs& in,
                               reports::RunParts& parts, reports::RunMeta& meta, json::array contract_notes) {
  const auto& o = ctx.o;
  const AgainstPlan plan{.command = "crh run",
                         .design = o.against.design,
                         .pairs = static_cast<std::size_t>(o.against.pairs),
                         .seed = o.contract.seed.value_or(1),  // drawn by the contract run unless given
                         .limit_pct = o.against.max_regression,
                         .quiet = o.output.quiet,
                         .control = !o.control.empty()};
  std::vector<SideBySide> scenarios;
  for (const auto& scenario : o.scenarios) {
    auto why = reason_to_skip(scenario, contract, ctx.target);
    if (!why && scenario == "race" && !ctx.against.can_place_calls())
      why = "race load: not run, the " + std::string(o.control.empty() ? "baseline deployment" : "control") +
            "'s profile says it has no call hook (call_hook: null)";
    if (why) {
      meta.skipped.push_back(std::move(*why));
      continue;
    }
    auto config = load_config_for(scenario, ctx, in);
    // Both sides run the same mix: without the baseline's call hook, neither calls.
    if (!ctx.against.can_place_calls())
      std::erase_if(config.mix, [](const loadgen::MixEntry& m) { return m.op == oracle::OpKind::call; });
    auto baseline = config;
    baseline.target = ctx.against;
    baseline.statuses = ctx.against_statuses;
    if (!o.output.quiet)
      std::cout << "crh run: " << scenario << (o.control.empty() ? " load on both deployments, " : " load on the target and the control, ")
                << reports::side_by_side_design(plan.design, plan.pairs, o.load_duration_s)
                << "\n"
                << std::flush;
    auto side = load_side_by_side(plan, std::move(config), std::move(baseline), ctx.embedded,
                                  thresholds_for(scenario, o.load.thresholds));
    if (side.code && side.code != results::kExitCouldNotTell) {
      meta.problems.push_back(scenario + " load: " + side.error);
      continue;
    }
    try {
      if (!side.candidate_loads.empty()) {
        auto doc = side.candidate_loads.size() == 1 ? side.candidate_loads.front()
                                                    : loadgen::merge_repetitions(side.candidate_loads);
        show_part(ctx, doc);
        parts.loads.push_back(std::move(doc));
      }
    } catch (const std::exception& e) {
      meta.problems.push_back(scenario + " load: the candidate's trials could not be merged (" + e.what() + ")");
    }
    scenarios.push_back(std::move(side));
  }
  auto comparison = against_comparison(scenarios, plan, ctx.against.base.to_string(), o.load_duration_s);
  auto& notes = comparison[results::keys::comparison::notes].as_array();
  for (auto& n : contract_notes) notes.push_back(std::move(n));
  return comparison;
}

// The command line as the run document records it.
// The profile's content, hashed: nights measured with another profile are another series.
std::string profile_hash(const std::string& file) {
  if (file.empty()) return "";
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return nightly::hash_text(text.str());
}

json::object config_of(const RunCommandOptions& o) {
  namespace rc = results::keys::run_config;
  return json::object{{rc::load_duration_s, o.load_duration_s},
                      {rc::scenarios, json::value_from(o.scenarios)},
                      {rc::connections, o.load.connections},
                      {rc::callers, o.load.callers},
                      {rc::rate, o.load.rate},
                      {rc::thresholds, json::value_from(o.load.thresholds)},
                      {rc::suites, json::value_from(o.contract.suites)},
                      {rc::slow, o.contract.slow},
                      {rc::minute_ms, o.target.minute_ms},
                      {rc::strict, o.contract.strict},
                      {rc::profile, o.target.profile_file},
                      {rc::timeout_ms, o.target.timeout_ms},
                      {rc::call_driver, o.target.call_driver},
                      {rc::baseline, o.baseline.file},
                      {rc::max_regression_pct, o.baseline.max_regression},
                      {rc::repeat, o.repeat},
                      {rc::nights, o.nights.dir},
                      {rc::profile_hash, profile_hash(o.target.profile_file)},
                      {rc::against, o.against.base_url},
                      {rc::design, o.against.base_url.empty() ? "" : o.against.design},
                      {rc::control, o.control}};
}

// 3. The report: compared with the baseline, written, summed up. Returns the exit code.
int report_run(const RunContext& ctx, reports::RunParts parts, const reports::RunMeta& meta,
               const std::optional<json::object>& baseline, std::optional<json::object> comparison,
               CaptureSession& capture) {
  const auto& o = ctx.o;
  int exit_code = results::kExitOk;
  try {
    if (baseline)
      comparison =
          reports::compare(parts, reports::parts_of(*baseline), o.baseline.max_regression, o.baseline.file, *baseline);
    // Side by side, tonight was judged against the baseline deployment; the record only keeps it.
    if (!o.nights.dir.empty() && o.against.base_url.empty()) {
      const auto control = std::move(comparison);  // --control: the loads side by side with the control
      comparison.reset();
      if (!meta.incomplete)
        comparison = compare_with_record(o.nights, parts, reports::run_document(parts, std::nullopt, meta),
                                         o.baseline.max_regression, control ? &*control : nullptr);
    }
  } catch (const std::exception& e) {
    std::cerr << "crh run: " << (baseline ? "--baseline " + o.baseline.file : "--nights " + o.nights.dir)
              << ": cannot be compared (" << e.what() << ")\n";
    exit_code = results::kExitUsage;
  }
  json::value doc = reports::run_document(std::move(parts), std::move(comparison), meta);
  capture.add_to(doc.as_object());  // one capture of the whole run
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  namespace keys = results::keys;
  const auto& verdict = doc.at(keys::envelope::verdict);
  exit_code = results::worse_exit(exit_code, static_cast<int>(verdict.at(keys::verdict::exit_code).to_number<long>()));
  exit_code = with_output_problems("crh run", write_outputs(doc.as_object(), o.output.files()), exit_code);
  if (!o.nights.dir.empty())  // every night is recorded, the failed and the interrupted too
    if (auto problem = record_night(o.nights, doc.as_object(), o.output.html_file)) {
      std::cerr << "crh run: " << *problem << "\n";
      exit_code = results::worse_exit(exit_code, results::kExitUsage);
    }
  const auto& out = o.output;
  std::cout << reports::run_closing(doc.as_object(), style_of(ctx));  // the parts were shown as they ended
  const std::pair<const char*, const std::string&> written[] = {
      {"HTML report", out.html_file}, {"result", out.json_file}, {"JUnit", out.junit_file}};
  for (const auto& [what, file] : written)
    if (!file.empty() && !out.quiet) std::cout << what << ": " << file << "\n";
  return exit_code;
}

}  // namespace

int run_run_command(const RunCommandOptions& o) {
  const auto started = std::chrono::system_clock::now();
  const auto clock_start = std::chrono::steady_clock::now();
  const auto inputs = read_inputs(o);
  if (!inputs) return results::kExitUsage;
  const bool against = !o.against.base_url.empty(), control = !o.control.empty();
  if (against || control) {
    const std::string refused = refused_with_against(o.target, o.capture, o.load);
    const std::string problem = plan_problem({.design = o.against.design}, o.load_duration_s);
    if (!refused.empty() || !problem.empty()) {
      std::cerr << "crh run: "
                << (refused.empty() ? problem : (against ? "not with --against (yet): " : "not with --control (yet): ") + refused)
                << "\n";
      return results::kExitUsage;
    }
  }

  RunContext ctx{.o = o, .target = o.target.target()};
  ctx.target.dialect = inputs->profile.dialect;
  ctx.statuses = inputs->profile.statuses;
  ctx.detect_encoding = !inputs->profile.encoding_given;
  ctx.tty = ::isatty(STDOUT_FILENO) == 1;
  ctx.progress = ctx.tty && !o.output.quiet;
  std::unique_ptr<reference::Server> embedded;
  const int aliases = embedded_aliases_for(o.load.connections);
  TargetChoice choice{"crh run", o.target.base_url, o.target.api_key_file, aliases};
  choice.call_driver_problem = o.target.call_driver_problem();
  if (int code = set_up_target(choice, ctx.target, embedded)) return code;
  if (against || control) {
    loadgen::LoadConfig candidate, baseline;
    candidate.target = ctx.target;
    candidate.statuses = ctx.statuses;
    if (int code = against ? baseline_config(o.against, "crh run", candidate, baseline)
                           : control_target(o.control, "crh run", candidate, baseline))
      return code;
    ctx.against = baseline.target;
    ctx.against_statuses = baseline.statuses;
    core::add_run_key(ctx.against.api_key);
  }
  CaptureSession capture;  // the whole run, before its first request
  if (int code = capture.start(o.capture, ctx.target, "crh run")) return code;
  ctx.embedded = embedded != nullptr;
  if (!o.output.quiet) announce(ctx, inputs->baseline.has_value());

  InterruptScope interrupt;
  reports::RunParts parts;
  reports::RunMeta meta;
  // Sharded, the contract suites run in shard 0 only: the others send the
  // load's parameters as the profile says (or the default encoding).
  const auto& shard = inputs->scale_out.shard;
  contracts::RunReport contract;
  contract.encoding = ctx.target.dialect.encoding;
  if (shard.index == 0) {
    contract = run_contract_suites(ctx, ctx.target, inputs->profile.statuses, parts);
  } else {
    meta.skipped.push_back("contract suites: run by shard 0 of " + std::to_string(shard.count) + " only");
  }
  ctx.target.dialect.encoding = contract.encoding;  // the loads send parameters as the checks did
  std::optional<json::object> comparison;
  if (against || control) {
    json::array contract_notes;
    if (o.against.profile_file.empty()) ctx.against.dialect.encoding = contract.encoding;
    if (o.contract_both && !InterruptScope::requested()) {
      if (!o.output.quiet) std::cout << "crh run: contract suites on the baseline deployment\n" << std::flush;
      reports::RunParts theirs;
      const auto baseline_contract = run_contract_suites(ctx, ctx.against, ctx.against_statuses, theirs);
      ctx.against.dialect.encoding = baseline_contract.encoding;
      contract_notes = contract_differences(contract, baseline_contract);
    }
    comparison = run_loads_against(ctx, contract, *inputs, parts, meta, std::move(contract_notes));
  } else {
    run_loads(ctx, contract, *inputs, parts, meta);
  }
  capture.stop();
  if (embedded) embedded->stop();

  meta.started = started;
  meta.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clock_start).count();
  meta.base_url = ctx.target.base.to_string();
  meta.channel = ctx.target.channel;
  meta.embedded = ctx.embedded;
  meta.incomplete = InterruptScope::requested();
  meta.environment = reports::environment();
  meta.config = config_of(o);
  return report_run(ctx, std::move(parts), meta, inputs->baseline, std::move(comparison), capture);
}

}  // namespace crh::runners
