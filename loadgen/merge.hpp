// Load results merged, in the two ways a load is split: shards run side by
// side (`crh report` of sharded results) and repetitions run one after
// another (`crh run --repeat K`). What both add up is merged in one place, so
// a figure a merge forgets is forgotten by neither; they differ only in time.
#pragma once

#include <vector>

#include <boost/json/object.hpp>

#include "loadgen/readback.hpp"

namespace crh::loadgen {

// Two shards of one run, run side by side: counts, rates and connections add,
// histograms and the per-second series merge, the measured time is the
// longer one, thresholds are the union (evaluated again on the merged data).
// Throws std::invalid_argument when the scenarios differ.
LoadRun merge_load_runs(LoadRun a, const LoadRun& b);

// b run after a: counts and histograms add, measured times add (rates are the
// whole time's), b's outages follow a's measured time; connections are each
// one's. Throws std::invalid_argument when the scenarios differ.
LoadRun append_load_run(LoadRun a, const LoadRun& b);

// The repetitions' documents merged (append_load_run): thresholds are judged
// again on the merged histograms; under "repetitions", each repetition's own
// verdict, totals and per-operation figures, so a night's figure can be their
// median and spread. Never marked as shards. Throws std::runtime_error when a
// document cannot be read back.
boost::json::object merge_repetitions(const std::vector<boost::json::object>& documents);

}  // namespace crh::loadgen
