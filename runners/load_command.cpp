// crh load: runs a load scenario (race, mixed, get) against a base URL, or
// against the embedded reference service when none is given; prints the
// summary, writes --json and --history, and exits 1 on a violation or a
// breached threshold.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <unistd.h>

#include <boost/json.hpp>

#include "capture_session.hpp"
#include "commands.hpp"
#include "core/profile.hpp"
#include "core/outside.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
#include "flags.hpp"
#include "interrupt.hpp"
#include "load_session.hpp"
#include "loadgen/options.hpp"
#include "loadgen/result.hpp"
#include "reference/server.hpp"
#include "reports/load_terminal.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace {

struct LoadOptions {
  TargetFlags target;
  LoadFlags load;
  OutputFlags output;
  CaptureFlags capture;
  std::string scenario = "race";
  int threads = 1;
  double duration_s = 10;
  double warmup_s = 0;
  std::string path = core::api::agents_path();
  std::string mix;
  std::uint64_t seed = 1;
  std::string history_file;
  int tag_minutes = 60;
  int aliases = 0;  // 0: embedded_aliases_for(--connections)
};

// The texts a typo can break, read before the target is touched. Returns
// kExitUsage after printing why.
int parse_load_texts(const LoadOptions& o, loadgen::LoadConfig& config, std::vector<loadgen::Threshold>& thresholds) {
  try {
    config.scenario = parse_scenario(o.scenario);
    if (!o.load.rate.empty()) {
      config.rate = loadgen::parse_rate(o.load.rate);
      if (config.scenario == loadgen::Scenario::race && config.rate > 0)
        throw std::invalid_argument("--rate: the race is paced by its rounds; use --connections for rounds in flight");
    }
    config.mix = loadgen::parse_mix(o.mix.empty() ? loadgen::kDefaultMix : std::string_view(o.mix));
    thresholds = loadgen::parse_thresholds(o.load.thresholds);
    o.load.apply_scale_out(config, {"load", o.target.base_url, o.target.channel, o.scenario,
                                    "duration " + std::to_string(o.duration_s), "warmup " + std::to_string(o.warmup_s),
                                    "path " + o.path, "mix " + o.mix, "seed " + std::to_string(o.seed),
                                    "tag minutes " + std::to_string(o.tag_minutes)});
    if (!o.target.profile_file.empty()) {
      const auto profile = core::load_profile(o.target.profile_file);
      config.target.dialect = profile.dialect;
      config.statuses = profile.statuses;
    }
  } catch (const std::exception& e) {
    std::cerr << "crh load: " << e.what() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

void apply_load_numbers(const LoadOptions& o, loadgen::LoadConfig& config) {
  o.load.apply_to(config);
  config.threads = o.threads;
  config.duration = std::chrono::milliseconds(static_cast<long>(o.duration_s * 1000));
  config.warmup = std::chrono::milliseconds(static_cast<long>(o.warmup_s * 1000));
  config.path = o.path.starts_with('/') ? o.path : "/" + o.path;
  config.seed = o.seed;
  config.history_file = o.history_file;
  config.timeout = o.target.timeout();
  config.tag_minutes = o.tag_minutes;
}

void announce(const LoadOptions& o, const loadgen::LoadConfig& config, bool embedded) {
  const std::string warmup = o.warmup_s > 0 ? " after " + std::to_string(o.warmup_s).substr(0, 4) + " s warm-up" : "";
  std::cout << "crh load: " << o.scenario << " on " << config.target.base.to_string()
            << (embedded ? " (embedded reference service)" : "") << ", channel " << config.target.channel << ", "
            << o.duration_s << " s" << warmup << "\n";
  if (config.target.calls.sip)
    std::cout << "crh load: calls are SIP INVITEs to " << config.target.calls.sip_target.text()
              << " (--timeout " << config.timeout.count() << " ms is each INVITE's Timer B)\n";
  announce_scale_out("crh load", config);
  std::cout << std::flush;
}

int run_load_command(const LoadOptions& o) {
  loadgen::LoadConfig config;
  config.target = o.target.target();
  std::vector<loadgen::Threshold> thresholds;
  if (int code = parse_load_texts(o, config, thresholds)) return code;
  apply_load_numbers(o, config);

  std::unique_ptr<reference::Server> embedded;
  const int aliases = o.aliases > 0 ? o.aliases : embedded_aliases_for(o.load.connections);
  TargetChoice choice{"crh load", o.target.base_url, o.target.api_key_file, aliases};
  choice.call_driver_problem = o.target.call_driver_problem();
  if (int code = set_up_target(choice, config.target, embedded)) return code;
  CaptureSession capture;  // before any request of the run, discovery included
  if (int code = capture.start(o.capture, config.target, "crh load")) return code;

  if (!o.output.quiet) announce(o, config, embedded != nullptr);
  InterruptScope interrupt;
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  auto session = run_load_session(config, thresholds, embedded != nullptr, tty && !o.output.quiet, &capture);
  if (embedded) embedded->stop();
  if (!session.document) {
    std::cerr << "crh load: " << session.error << "\n";
    return session.exit_code;
  }
  const boost::json::value doc = std::move(*session.document);
  const auto problems = write_single_result_outputs(doc.as_object(), o.output.files());
  const int exit_code = with_output_problems("crh load", problems, session.exit_code);
  std::cout << reports::load_summary(doc, {.color = tty, .verbose = o.output.verbose, .quiet = o.output.quiet});
  return exit_code;
}

}  // namespace

Command add_load_command(CLI::App& app) {
  auto o = std::make_shared<LoadOptions>();
  CLI::App* sub = app.add_subcommand(
      "load",
      "Run a load scenario against a Call-Routing Service (with no --base-url: the embedded reference service)");
  o->target.add_to(
      sub, {.profile = "profile JSON: parameter encoding and call hook", .timeout = "deadline of one request in ms"});
  sub->add_option("--scenario", o->scenario,
                  "race: callers race for freshly tagged aliases; mixed: every endpoint, weighted; "
                  "get: one path, as wrk")
      ->capture_default_str();
  o->load.add_to(sub);
  sub->add_option("--threads", o->threads, "generator threads, each with its own event loop")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--duration", o->duration_s, "seconds measured")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--warmup", o->warmup_s, "seconds run before measuring, not counted")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--path", o->path, "get: the path requested, under the base URL")->capture_default_str();
  sub->add_option("--mix", o->mix, "mixed: op=weight,... (default " + std::string(loadgen::kDefaultMix) + ")");
  sub->add_option("--seed", o->seed, "seed of the mixed scenario's operation sequence")->capture_default_str();
  sub->add_option("--history", o->history_file, "write every operation here as JSON lines");
  sub->add_option("--tag-minutes", o->tag_minutes, "race and mixed: the minutes asked for each tag")
      ->capture_default_str()
      ->check(CLI::Range(1, 1440));
  sub->add_option("--aliases", o->aliases,
                  "embedded service: aliases per channel (default: enough for the rounds in flight)")
      ->check(CLI::Range(1, 100000));
  o->capture.add_to(sub);
  o->output.add_to(sub, {.junit = "write JUnit XML here (a testcase per threshold, and the race's invariant)",
                         .verbose = "list every violation",
                         .quiet = "print only the race, thresholds and verdict"});
  return {sub, [o] { return run_load_command(*o); }};
}

}  // namespace crh::runners
