// The nightly run's document (kind "run"): a contract result, the load
// results, the comparison with a baseline and one verdict over all of them.
// Built from documents only, so `crh report` renders it the same way
// whether the results were made by `crh run` or merged from shards.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

namespace crh::reports {

struct RunParts {
  std::optional<boost::json::object> contract;  // kind "contract"
  std::vector<boost::json::object> loads;       // kind "load", one per scenario
};

// The parts a document holds: itself for a contract or load result, its
// parts for a run. Throws std::runtime_error for anything else.
RunParts parts_of(const boost::json::object& doc);

// Every figure of `current` beside the same figure of `baseline` (p50, p99
// and throughput per operation and scenario, error rates), with its change
// and whether it worsened beyond `max_regression_pct`:
//   latency     (current - baseline) / baseline > limit
//   throughput  (baseline - current) / baseline > limit
//   error rate  (current - baseline) / baseline > limit and up by at least
//               0.1 percentage point (one error in a thousand requests), so
//               one stray error against a clean baseline is not a regression.
boost::json::object compare(const RunParts& current, const RunParts& baseline, double max_regression_pct,
                            const std::string& baseline_label, const boost::json::object& baseline_envelope);

struct RunMeta {
  std::chrono::system_clock::time_point started;
  double duration_ms = 0;
  std::string base_url;
  std::string channel;
  bool embedded = false;
  bool incomplete = false;                // interrupted: what was gathered so far
  boost::json::object config;             // what the run was asked to do
  boost::json::object environment;        // where it ran
  std::vector<std::string> problems;      // a part could not run at all (exit 3)
  std::vector<std::string> skipped;       // a part left out, with why (not a failure)
};

// The run document; its verdict is the worst of its parts', the comparison's
// and the problems' (3 unreachable, 1 failed or incomplete, 0 passed).
boost::json::object run_document(RunParts parts, std::optional<boost::json::object> comparison, const RunMeta& meta);

// The machine and build a run happened on.
boost::json::object environment();

}  // namespace crh::reports
