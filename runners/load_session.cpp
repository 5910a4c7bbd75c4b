#include "load_session.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "core/outside.hpp"
#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "loadgen/result.hpp"
#include "loadgen/setup.hpp"

namespace crh::runners {

LoadSession run_load_session(const loadgen::LoadConfig& config, const std::vector<loadgen::Threshold>& thresholds,
                             bool embedded, bool show_progress) {
  LoadSession session;
  loadgen::FoundState found;
  loadgen::Discovery discovery;
  try {
    discovery = loadgen::discover(config, found);
  } catch (const loadgen::SetupError& e) {
    session.exit_code = kExitUnreachable;
    session.error = core::composed(e.what());
    return session;
  }

  loadgen::Progress progress;
  std::atomic<bool> done{false};
  // Polls Ctrl-C (the engine stops on progress.stop) and draws the progress line.
  std::thread ticker([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!done.load()) {
      if (InterruptScope::requested().load()) progress.stop = true;
      if (show_progress) {
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        char line[160];
        std::snprintf(line, sizeof line, "\r\x1b[2K[%5.1f s%s] %llu requests, %llu errors, %llu rounds, %llu violations", t,
                      progress.measuring ? "" : " warm-up", static_cast<unsigned long long>(progress.requests.load()),
                      static_cast<unsigned long long>(progress.errors.load()),
                      static_cast<unsigned long long>(progress.rounds.load()),
                      static_cast<unsigned long long>(progress.violations.load()));
        std::cout << line << std::flush;
      }
      for (int i = 0; i < 5 && !done.load() && !InterruptScope::requested().load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (show_progress) std::cout << "\r\x1b[2K" << std::flush;
  });

  loadgen::RunInfo info;
  info.started = std::chrono::system_clock::now();
  info.embedded = embedded;
  loadgen::LoadResult result;
  std::string failure;
  try {
    result = loadgen::run_load(config, discovery, progress);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  done = true;
  ticker.join();
  info.restore_problems = loadgen::restore(config, found);
  if (!failure.empty()) {
    session.error = core::composed(failure);
    session.exit_code = failure.find("history") != std::string::npos ? kExitUsage : kExitUnreachable;
    return session;
  }
  const auto verdicts = loadgen::evaluate(thresholds, result);
  session.exit_code = loadgen::exit_code_of(result, verdicts);
  boost::json::value doc = loadgen::result_document(config, result, verdicts, info);
  core::redact_values(doc);  // a value the target sent that a message quotes whole
  session.document = std::move(doc.as_object());
  return session;
}

}  // namespace crh::runners
