// One load against a target that is set up: the preflight, the run with its
// progress line (stopped early by Ctrl-C), restoring the target, and the
// result document. Shared by `crh load` and `crh run`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "loadgen/engine.hpp"
#include "loadgen/thresholds.hpp"

namespace crh::runners {

struct LoadSession {
  std::optional<boost::json::object> document;  // the result, unless it could not run
  int exit_code = 0;  // 0 held, 1 violation or breached threshold, 2 history unwritable, 3 cannot set up
  std::string error;  // why there is no document, or why the preflight stopped it (the key redacted)
  bool stopped = false;  // the preflight stopped it: the document says why, and no load ran
};

class CaptureSession;

// `capture` (optional): stopped once the load's traffic ends, before the
// restore and the document; its section goes into the document.
LoadSession run_load_session(const loadgen::LoadConfig& config, const std::vector<loadgen::Threshold>& thresholds,
                             bool embedded, bool show_progress, CaptureSession* capture = nullptr);

// The scenario called "race", "mixed" or "get"; nothing for any other name.
std::optional<loadgen::Scenario> scenario_by_name(std::string_view name);
// The same, for --scenario: throws std::invalid_argument naming the flag.
loadgen::Scenario parse_scenario(const std::string& name);

// Says which shard of which run this is, and when measuring starts (--start-at).
void announce_scale_out(std::string_view command, const loadgen::LoadConfig& config);

// Aliases per channel for the embedded service: enough for every race round
// in flight, and the least recently used choice still free.
int embedded_aliases_for(int connections);

}  // namespace crh::runners
