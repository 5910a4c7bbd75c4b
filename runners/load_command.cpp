// crh load: runs a load scenario (race, mixed, get) against a base URL, or
// against the embedded reference service when none is given; prints the
// summary, writes --json and --history, and exits 1 on a violation or a
// breached threshold.
#include <iostream>
#include <memory>
#include <unistd.h>

#include <boost/json.hpp>

#include "against.hpp"
#include "capture_session.hpp"
#include "commands.hpp"
#include "core/profile.hpp"
#include "core/outside.hpp"
#include "documents.hpp"
#include "results/verdict.hpp"
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

// The texts a typo can break, read before the target is touched. Returns
// results::kExitUsage after printing why.
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
    return results::kExitUsage;
  }
  return results::kExitOk;
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

}  // namespace

int run_load_command(const LoadOptions& o) {
  loadgen::LoadConfig config;
  config.target = o.target.target();
  std::vector<loadgen::Threshold> thresholds;
  if (int code = parse_load_texts(o, config, thresholds)) return code;
  apply_load_numbers(o, config);
  if (!o.against.base_url.empty()) return run_load_against(o, std::move(config), thresholds);

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

}  // namespace crh::runners
