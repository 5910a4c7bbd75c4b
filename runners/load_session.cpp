#include "load_session.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "capture/wire_timing.hpp"
#include "capture_session.hpp"
#include "core/outside.hpp"
#include "core/preflight.hpp"
#include "results/envelope.hpp"
#include "results/keys_envelope.hpp"
#include "results/verdict.hpp"
#include "interrupt.hpp"
#include "loadgen/history.hpp"
#include "loadgen/result.hpp"
#include "loadgen/setup.hpp"

namespace crh::runners {
namespace {

// While the load runs: polls Ctrl-C (the engine stops on progress.stop) and
// draws the progress line. Stops and clears the line when destroyed.
class ProgressTicker {
 public:
  ProgressTicker(loadgen::Progress& progress, bool show)
      : progress_(progress), show_(show), thread_([this] { tick(); }) {}
  ~ProgressTicker() {
    done_ = true;
    thread_.join();
  }
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

 private:
  void tick() {
    const auto start = std::chrono::steady_clock::now();
    while (!done_.load()) {
      if (InterruptScope::requested().load()) progress_.stop = true;
      if (show_) draw(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      for (int i = 0; i < 5 && !done_.load() && !InterruptScope::requested().load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (show_) std::cout << "\r\x1b[2K" << std::flush;
  }

  void draw(double seconds) const {
    char line[160];
    std::snprintf(line, sizeof line, "\r\x1b[2K[%5.1f s%s] %llu requests, %llu errors, %llu rounds, %llu violations",
                  seconds, progress_.measuring ? "" : " warm-up",
                  static_cast<unsigned long long>(progress_.requests.load()),
                  static_cast<unsigned long long>(progress_.errors.load()),
                  static_cast<unsigned long long>(progress_.rounds.load()),
                  static_cast<unsigned long long>(progress_.violations.load()));
    std::cout << line << std::flush;
  }

  loadgen::Progress& progress_;
  const bool show_;
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it starts once the rest is set
};

// Wire latency and the harness's overhead from the capture, joined into the
// load's result (per operation, and for the run); a capture that cannot be
// read costs the run its wire figures only, said once.
void attach_wire_timing(const std::string& file, loadgen::LoadResult& result) {
  try {
    auto figures = capture::wire_timing(file, result.client_connections, result.client_exchanges);
    for (std::size_t i = 0; i < result.stats.ops.size(); ++i) result.stats.ops[i].wire = std::move(figures.ops[i]);
    result.wire = std::move(figures.summary);
  } catch (const std::exception& e) {
    std::cerr << "crh load: no wire timing: the capture " << file << " could not be read: "
              << core::composed(e.what()) << "\n";
  }
  result.client_exchanges = {};  // no longer needed: free them before the document is built
  result.client_connections = {};
}

}  // namespace

LoadSession run_load_session(const loadgen::LoadConfig& config, const std::vector<loadgen::Threshold>& thresholds,
                             bool embedded, bool show_progress, CaptureSession* capture) {
  LoadSession session;
  core::add_run_key(config.target.api_key);  // before the preflight quotes the target (beside a compared one's)
  if (auto stop = core::preflight(config.target, config.statuses, config.timeout)) {
    // The load cannot measure this target: a document that says why, and nothing run.
    loadgen::RunInfo info;
    info.started = std::chrono::system_clock::now();
    info.embedded = embedded;
    if (capture) capture->stop();
    boost::json::value doc = loadgen::result_document(config, loadgen::LoadResult{}, {}, info);
    const auto verdict = results::preflight_verdict(*stop);
    doc.as_object()[results::keys::envelope::verdict] = results::verdict_json(verdict);
    doc.as_object()[results::keys::envelope::preflight] = results::preflight_json(*stop);
    core::redact_values(doc);
    session.exit_code = verdict.exit_code();
    session.error = "not tested: " + core::composed(stop->line());
    session.document = std::move(doc.as_object());
    session.stopped = true;
    return session;
  }
  loadgen::FoundState found;
  loadgen::Discovery discovery;
  try {
    discovery = loadgen::discover(config, found);
  } catch (const loadgen::SetupError& e) {
    session.exit_code = results::kExitUnreachable;
    session.error = core::composed(e.what());
    return session;
  }

  loadgen::RunInfo info;
  info.started = std::chrono::system_clock::now();
  info.embedded = embedded;
  loadgen::LoadResult result;
  loadgen::Progress progress;
  bool failed = true;
  // With a capture, the engine keeps a record of every request it writes, so
  // that the capture's exchanges pair with them (wire timing).
  loadgen::LoadConfig run_config = config;
  // Only while a capture runs: without one the records would pair with nothing
  // and cost memory for the whole run.
  run_config.keep_client_exchanges = capture && capture->running();
  try {
    ProgressTicker ticker(progress, show_progress);
    result = loadgen::run_load(run_config, discovery, progress);
    failed = false;
  } catch (const loadgen::HistoryError& e) {
    session.exit_code = results::kExitUsage;  // --history names a file that cannot be written: the run's own configuration
    session.error = core::composed(e.what());
  } catch (const std::exception& e) {
    session.exit_code = results::kExitUnreachable;
    session.error = core::composed(e.what());
  }
  if (capture) capture->stop();  // the file is whole from here on
  info.restore_problems = loadgen::restore(config, found);
  if (failed) return session;
  if (capture && capture->made()) attach_wire_timing(capture->file(), result);

  auto verdicts = loadgen::evaluate(thresholds, result);
  for (auto& v : verdicts) v.deferred = config.shard.sharded();  // judged once, on the merged shards
  session.exit_code = loadgen::exit_code_of(result, verdicts);
  boost::json::value doc = loadgen::result_document(config, result, verdicts, info);
  if (capture) capture->add_to(doc.as_object());
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  session.document = std::move(doc.as_object());
  return session;
}

std::optional<loadgen::Scenario> scenario_by_name(std::string_view name) {
  for (auto s : {loadgen::Scenario::race, loadgen::Scenario::mixed, loadgen::Scenario::get})
    if (loadgen::to_string(s) == name) return s;
  return std::nullopt;
}

loadgen::Scenario parse_scenario(const std::string& name) {
  if (auto scenario = scenario_by_name(name)) return *scenario;
  throw std::invalid_argument("--scenario: expected race, mixed or get, got \"" + name + "\"");
}

void announce_scale_out(std::string_view command, const loadgen::LoadConfig& config) {
  if (config.shard.sharded())
    std::cout << command << ": shard " << config.shard.index << "/" << config.shard.count << " of run " << config.run_id
              << "; thresholds are judged on the merged shards (crh report)\n";
  if (config.start_at) {
    const auto wait = std::chrono::duration<double>(*config.start_at - std::chrono::system_clock::now()).count();
    char in[48];
    std::snprintf(in, sizeof in, " (in %.1f s)", wait);
    std::cout << command << ": measuring starts at " << results::iso8601(*config.start_at)
              << (wait > 0 ? in : " (already passed: this run starts now, marked late)") << "\n";
  }
}

int embedded_aliases_for(int connections) { return std::max(16, 2 * std::max(8, connections)); }

}  // namespace crh::runners
