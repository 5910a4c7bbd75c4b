// Two deployments compared side by side (issue 38): the candidate
// (--base-url, tonight's build) and a baseline deployment (--against, the
// last release) loaded in short trials, a pair at a time in a random order
// within each pair (design "trials"), or both at once from one instant
// (design "duet", each second a pair); every figure judged on the pairs'
// ratios, candidate / baseline (nightly/paired.hpp). A slow spell of the
// machine touches both sides of a pair alike and cancels in the ratio.
// `crh load --against` prints the table; `crh run --against` puts the
// comparison in its run document (mode "against").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "loadgen/engine.hpp"
#include "loadgen/thresholds.hpp"
#include "nightly/paired.hpp"
#include "nightly/record.hpp"

namespace crh::contracts {
struct RunReport;
}

namespace crh::runners {

struct LoadOptions;
struct AgainstFlags;
struct CaptureFlags;
struct LoadFlags;
struct TargetFlags;

// How the two deployments are loaded and judged.
struct AgainstPlan {
  std::string command;            // "crh load", "crh run": the prefix of its messages
  std::string design = "trials";  // trials | duet
  std::size_t pairs = 10;         // trials
  std::uint64_t seed = 1;         // draws the order within each pair
  double limit_pct = 5;           // --max-regression
  bool quiet = false;             // no line per pair
  bool control = false;           // the other side is --control's (its messages name it so), not a baseline
};

// One figure judged on its pairs.
struct JudgedFigure {
  nightly::NightFigure figure;         // its scenario, operation, name, unit and direction
  double candidate = 0, baseline = 0;  // the median over the pairs (seconds or trials without answers left out)
  nightly::PairedResult result;
};

// One scenario loaded on both sides and judged.
struct SideBySide {
  std::string scenario;
  std::vector<boost::json::object> candidate_loads;  // the candidate's documents: a trial's each, or the duet's one
  std::vector<JudgedFigure> figures;
  std::size_t pairs = 0;  // trial pairs, or seconds of the duet, measured
  std::size_t candidate_failed = 0, baseline_failed = 0;  // loads whose own verdict failed (invariant, threshold)
  bool interrupted = false;
  int code = 0;       // a side's load could not run at all: its exit code (3 unreachable, 4 late); else 0
  std::string error;  // why, when code != 0
};

// The flags --against does not go with yet, refused by name rather than
// ignored: SIP calls, a capture, sharding, then `extra` (a command's own).
// Empty when none was given.
std::string refused_with_against(const TargetFlags& target, const CaptureFlags& capture, const LoadFlags& load,
                                 std::vector<std::string> extra = {});

// The baseline's load: the candidate's with --against's base URL, channel,
// profile and key. Returns 0, or 2 after printing why.
int baseline_config(const AgainstFlags& against, const std::string& command, const loadgen::LoadConfig& candidate,
                    loadgen::LoadConfig& baseline, const std::string& flag = "--against");

// --control URL (the control arm of single-target nights): the control's
// load, the candidate's with the control's URL and the key from
// CRH_AGAINST_API_KEY, else the candidate's (its channel, dialect and
// expected refusals the candidate's). "embedded" is refused: measured, the
// embedded reference service as a control widened the nights' spread.
// Returns 0, or 2 after printing why.
int control_target(const std::string& control, const std::string& command, const loadgen::LoadConfig& candidate,
                   loadgen::LoadConfig& out);

// Why the plan cannot run with this load duration (a duet shorter than
// nightly::kMinPairs seconds), or "".
std::string plan_problem(const AgainstPlan& plan, double duration_s);

// Loads both sides of one scenario as the plan says and judges the figures.
// `candidate` and `baseline` are set up (discovered targets, parsed load).
SideBySide load_side_by_side(const AgainstPlan& plan, loadgen::LoadConfig candidate, loadgen::LoadConfig baseline,
                             bool candidate_embedded, const std::vector<loadgen::Threshold>& thresholds);

// The run document's comparison (results/keys_run.hpp, mode "against") of
// the scenarios' judged figures; the baseline's own failures and a night
// with every figure too noisy are its `unreliable` reasons.
boost::json::object against_comparison(const std::vector<SideBySide>& scenarios, const AgainstPlan& plan,
                                       const std::string& baseline_url, double duration_s);

// --contract-both: a note per check that fails on one deployment and not on
// the other (or one note that none does).
boost::json::array contract_differences(const contracts::RunReport& candidate, const contracts::RunReport& baseline);

// crh load --against: runs the pairs and prints the comparison. `config` is
// the candidate's load with its texts parsed and numbers applied, its target
// not yet set up. Returns the exit code: 1 a figure regressed (or the
// candidate's own load failed its invariant or a threshold), 4 could not
// tell, 0 otherwise.
int run_load_against(const LoadOptions& o, loadgen::LoadConfig config, const std::vector<loadgen::Threshold>& thresholds);

}  // namespace crh::runners
