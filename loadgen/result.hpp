// A load run as the schema-versioned result document (DESIGN.md §1):
// figures per operation and outcome, histograms that merge exactly, the time
// series, the race and its violations, and the thresholds with their verdicts.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "loadgen/engine.hpp"
#include "loadgen/thresholds.hpp"

namespace crh::loadgen {

struct ThresholdVerdict {
  Threshold threshold;
  double actual = 0;  // NaN when nothing was measured
  bool held = false;
  // A shard's part of a load: judged on the merged shards (crh report), so
  // its own figure neither fails nor passes the shard.
  bool deferred = false;
};

// Parses every expression; throws std::invalid_argument naming the bad one,
// including a subject that is no operation of the generator. Adds the
// implicit kDefaultErrorLimit unless the user limited the run's errors.
std::vector<Threshold> parse_thresholds(const std::vector<std::string>& texts);

// Why the run proved nothing, if it did: no request got a successful answer
// (the target answered only errors, redirects or nothing at all).
std::optional<std::string> proved_nothing(const LoadResult& r);

// The measured value a threshold speaks of, in its unit (NaN when none).
double measured(const Threshold& t, const LoadResult& r);

std::vector<ThresholdVerdict> evaluate(const std::vector<Threshold>& thresholds, const LoadResult& r);

// 1 when an invariant broke, a threshold was breached or the run proved
// nothing; else 4 when the load is INVALID (the generator, not the target,
// limited its figures: they cannot tell); else 0.
int exit_code_of(const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts);

// Why a merge of shards (crh report) is not the whole load: an index
// missing, or given twice. Nothing for a run's own result.
std::optional<std::string> incomplete_shards(const LoadResult& r);

struct RunInfo {
  std::chrono::system_clock::time_point started;
  bool embedded = false;
  std::vector<std::string> restore_problems;
};

// What the document says the generator ran with: result.connections (which
// differs from config.connections when that is 0, the scenario's default),
// else the configured connections; 0 when neither is known (left out).
int connections_run(const LoadConfig& config, const LoadResult& result);

boost::json::object result_document(const LoadConfig& config, const LoadResult& result,
                                    const std::vector<ThresholdVerdict>& verdicts, const RunInfo& info);

}  // namespace crh::loadgen
