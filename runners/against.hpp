// `crh load --against URL` (issue 38): the candidate (--base-url, tonight's
// build) and a baseline deployment (--against, the last release) loaded in
// short trials, a pair at a time in a random order within each pair, and
// every figure judged on the pairs' ratios, candidate / baseline
// (nightly/paired.hpp). A slow spell of the machine longer than a pair
// touches both of its trials alike and cancels in the ratio.
#pragma once

#include <string>
#include <vector>

#include "loadgen/engine.hpp"
#include "loadgen/thresholds.hpp"

namespace crh::runners {

struct LoadOptions;

// Runs the pairs and prints the comparison. `config` is the candidate's load
// with its texts parsed and numbers applied, its target not yet set up.
// Returns the exit code: 1 a figure regressed (or the candidate's own load
// failed its invariant or a threshold), 4 could not tell, 0 otherwise.
int run_load_against(const LoadOptions& o, loadgen::LoadConfig config, const std::vector<loadgen::Threshold>& thresholds);

}  // namespace crh::runners
