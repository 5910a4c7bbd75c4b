// crh load: runs a load scenario (race, mixed, get) against a base URL, or
// against the embedded reference service when none is given; prints the
// summary, writes --json and --history, and exits 1 on a violation or a
// breached threshold.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
#include "contracts/profile.hpp"
#include "core/outside.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
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
  std::string base_url;
  std::string channel = "1";
  std::string scenario = "race";
  int connections = 0;
  std::string rate;
  int threads = 1;
  double duration_s = 10;
  double warmup_s = 0;
  int callers = 8;
  std::string path = "/api/v1/local-agents";
  std::string mix;
  std::vector<std::string> thresholds;
  std::uint64_t seed = 1;
  std::string json_file;
  std::string html_file;
  std::string junit_file;
  std::string history_file;
  long timeout_ms = 5000;
  int tag_minutes = 60;
  long minute_ms = 60'000;
  int aliases = 0;
  std::string profile_file;
  std::string api_key_file;
  bool verbose = false;
  bool quiet = false;
};

int run_load_command(const LoadOptions& o) {
  loadgen::LoadConfig config;
  std::vector<loadgen::Threshold> thresholds;
  try {
    if (o.scenario == "race") config.scenario = loadgen::Scenario::race;
    else if (o.scenario == "mixed") config.scenario = loadgen::Scenario::mixed;
    else if (o.scenario == "get") config.scenario = loadgen::Scenario::get;
    else throw std::invalid_argument("--scenario: expected race, mixed or get, got \"" + o.scenario + "\"");
    if (!o.rate.empty()) {
      if (config.scenario == loadgen::Scenario::race)
        throw std::invalid_argument("--rate: the race is paced by its rounds; use --connections for rounds in flight");
      config.rate = loadgen::parse_rate(o.rate);
    }
    config.mix = loadgen::parse_mix(o.mix.empty() ? loadgen::kDefaultMix : std::string_view(o.mix));
    thresholds = loadgen::parse_thresholds(o.thresholds);
    if (!o.profile_file.empty()) {
      auto profile = contracts::load_profile(o.profile_file);
      config.target.encoding = profile.encoding;
      config.target.call_hook = profile.call_hook;
    }
  } catch (const std::exception& e) {
    std::cerr << "crh load: " << e.what() << "\n";
    return kExitUsage;
  }
  config.connections = o.connections;
  config.threads = o.threads;
  config.duration = std::chrono::milliseconds(static_cast<long>(o.duration_s * 1000));
  config.warmup = std::chrono::milliseconds(static_cast<long>(o.warmup_s * 1000));
  config.callers = o.callers;
  config.path = o.path.starts_with('/') ? o.path : "/" + o.path;
  config.seed = o.seed;
  config.history_file = o.history_file;
  config.timeout = std::chrono::milliseconds(o.timeout_ms);
  config.tag_minutes = o.tag_minutes;
  config.target.channel = o.channel;
  config.target.minute = std::chrono::milliseconds(o.minute_ms);

  // The embedded service gets enough aliases for every round in flight, and the LRU choice still free.
  std::unique_ptr<reference::Server> embedded;
  const int aliases = o.aliases > 0 ? o.aliases : std::max(16, 2 * std::max(8, o.connections));
  if (int code = set_up_target({"crh load", o.base_url, o.api_key_file, aliases}, config.target, embedded)) return code;

  if (!o.quiet)
    std::cout << "crh load: " << o.scenario << " on " << config.target.base.to_string()
              << (embedded ? " (embedded reference service)" : "") << ", channel " << config.target.channel << ", "
              << o.duration_s << " s" << (o.warmup_s > 0 ? " after " + std::to_string(o.warmup_s).substr(0, 4) + " s warm-up" : "")
              << "\n"
              << std::flush;
  InterruptScope interrupt;
  auto session = run_load_session(config, thresholds, embedded != nullptr, ::isatty(STDOUT_FILENO) == 1 && !o.quiet);
  if (embedded) embedded->stop();
  if (!session.document) {
    std::cerr << "crh load: " << session.error << "\n";
    return session.exit_code;
  }
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  int exit_code = session.exit_code;
  const boost::json::value doc = std::move(*session.document);
  for (const auto& problem :
       write_single_result_outputs(doc.as_object(), {o.json_file, o.html_file, o.junit_file})) {
    std::cerr << "crh load: " << problem << "\n";
    exit_code = std::max(exit_code, static_cast<int>(kExitUsage));
  }
  std::cout << reports::load_summary(doc, {.color = tty, .verbose = o.verbose, .quiet = o.quiet});
  return exit_code;
}

}  // namespace

Command add_load_command(CLI::App& app) {
  auto o = std::make_shared<LoadOptions>();
  CLI::App* sub = app.add_subcommand(
      "load", "Run a load scenario against a Call-Routing Service (with no --base-url: the embedded reference service)");
  sub->add_option("--base-url", o->base_url, "the target, e.g. http://127.0.0.1:8080 (key from CRH_API_KEY)");
  sub->add_option("--channel", o->channel, "the channel whose aliases are tagged and called")->capture_default_str();
  sub->add_option("--scenario", o->scenario,
                  "race: callers race for freshly tagged aliases; mixed: every endpoint, weighted; get: one path, as wrk")
      ->capture_default_str();
  sub->add_option("--connections", o->connections,
                  "connections (get, mixed) or rounds in flight (race; each uses --callers + 1 connections)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--rate", o->rate, "open loop: requests per second over all connections (e.g. 2000 or 2000/s)");
  sub->add_option("--threads", o->threads, "generator threads, each with its own event loop")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--duration", o->duration_s, "seconds measured")->capture_default_str()->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--warmup", o->warmup_s, "seconds run before measuring, not counted")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--callers", o->callers, "race: callers per round, distinct numbers")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  sub->add_option("--path", o->path, "get: the path requested, under the base URL")->capture_default_str();
  sub->add_option("--mix", o->mix, "mixed: op=weight,... (default " + std::string(loadgen::kDefaultMix) + ")");
  sub->add_option("--threshold", o->thresholds,
                  "a limit in the k6 manner, e.g. 'call.p99<20ms', 'errors<0.1%', 'violations==0' (repeatable)");
  sub->add_option("--seed", o->seed, "seed of the mixed scenario's operation sequence")->capture_default_str();
  sub->add_option("--json", o->json_file, "write the result document here");
  sub->add_option("--html", o->html_file, "write the HTML report here");
  sub->add_option("--junit", o->junit_file, "write JUnit XML here (a testcase per threshold, and the race's invariant)");
  sub->add_option("--history", o->history_file, "write every operation here as JSON lines");
  sub->add_option("--timeout", o->timeout_ms, "deadline of one request in ms")
      ->capture_default_str()
      ->check(CLI::Range(10L, 600'000L));
  sub->add_option("--tag-minutes", o->tag_minutes, "race and mixed: the minutes asked for each tag")
      ->capture_default_str()
      ->check(CLI::Range(1, 1440));
  sub->add_option("--minute-ms", o->minute_ms, "length of one tag minute on the target in ms (the embedded service is started with it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 3'600'000L));
  sub->add_option("--aliases", o->aliases, "embedded service: aliases per channel (default: enough for the rounds in flight)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--profile", o->profile_file, "profile JSON: parameter encoding and call hook")->check(CLI::ExistingFile);
  sub->add_option("--api-key-file", o->api_key_file, "file holding the API key (else CRH_API_KEY)")->check(CLI::ExistingFile);
  auto* verbose = sub->add_flag("--verbose", o->verbose, "list every violation");
  sub->add_flag("--quiet", o->quiet, "print only the race, thresholds and verdict")->excludes(verbose);
  return {sub, [o] { return run_load_command(*o); }};
}

}  // namespace crh::runners
