// The keys of a run document (DESIGN.md §1): body, config, environment, the comparison with a baseline or the nights.
#pragma once

#include "results/keys_load.hpp"

namespace crh::results::keys {

// ---- run: the body of a run document (reports/run_document.cpp)
namespace run {
inline constexpr Key environment = "environment";
inline constexpr Key skipped = "skipped";
inline constexpr Key problems = "problems";
inline constexpr Key contract = kind_contract;   // a contract document, or null
inline constexpr Key loads = "loads";            // load documents
inline constexpr Key comparison = "comparison";  // or null
}  // namespace run

// run config: what `crh run` was asked (runners/run_command.cpp), or what
// `crh report` was given (runners/report_command.cpp)
namespace run_config {
inline constexpr Key load_duration_s = "load_duration_s";
inline constexpr Key scenarios = "scenarios";
using contract::suites;
using contract_config::minute_ms;
using contract_config::profile;
using contract_config::slow;
using contract_config::strict;
using contract_config::timeout_ms;
using contract_config::call_driver;
using contract_config::sip_target;
using load::thresholds;
using load_config::callers;
using load_config::connections;
using load_config::rate;
inline constexpr Key baseline = "baseline";
inline constexpr Key max_regression_pct = "max_regression_pct";
inline constexpr Key report_inputs = "report_inputs";
}  // namespace run_config

// environment: where the run happened
namespace environment {
inline constexpr Key host = "host";
inline constexpr Key os = "os";
inline constexpr Key machine = "machine";
inline constexpr Key cpus = "cpus";
inline constexpr Key compiler = "compiler";
inline constexpr Key build = "build";
inline constexpr Key note = "note";  // when it is the renderer's, not the run's
}  // namespace environment

// ---- comparison: the figures of a run beside a baseline's (reports/run_document.cpp)
namespace comparison {
using run_config::baseline;
using run_config::max_regression_pct;
inline constexpr Key figures = "figures";
inline constexpr Key regressions = "regressions";
using contract::notes;
// An error rate regresses only when it also rose by this fraction (absent in older documents).
inline constexpr Key min_error_rate_rise = "min_error_rate_rise";
}  // namespace comparison

// comparison.baseline
namespace baseline {
using envelope::started_at;
using history::file;
using target::base_url;
}  // namespace baseline

// comparison.figures[]
namespace figure {
using load_config::scenario;
inline constexpr Key operation = "operation";
inline constexpr Key figure = "figure";
using threshold::unit;
inline constexpr Key better = "better";
using run_config::baseline;
inline constexpr Key current = "current";
inline constexpr Key change_pct = "change_pct";  // null when the baseline was 0
inline constexpr Key worse_pct = "worse_pct";    // null when the baseline was 0
inline constexpr Key limit_pct = "limit_pct";
inline constexpr Key regressed = "regressed";
using environment::note;  // absent without one
}  // namespace figure

// ---- the record of nights (nightly/, `--nights DIR`) and what a run adds for it

// run config: repetitions of each load (absent: 1), the profile's content hash
namespace run_config {
inline constexpr Key repeat = "repeat";
inline constexpr Key profile_hash = "profile_hash";
inline constexpr Key nights = "nights";
inline constexpr Key against = "against";  // the baseline deployment's URL, or ""
inline constexpr Key design = "design";    // with --against: "trials" or "duet"
inline constexpr Key control = "control";  // with --nights: the control arm's URL, or ""
}  // namespace run_config

// environment.cpu_model: what the record marks when it changes
namespace environment {
inline constexpr Key cpu_model = "cpu_model";
}  // namespace environment

// comparison against a record of nights: what it adds to the baseline comparison
namespace comparison {
inline constexpr Key mode = "mode";  // "nights" or "baseline" (absent in older documents: baseline)
inline constexpr Key nights = "nights";
inline constexpr Key inconclusive = "inconclusive";
inline constexpr Key change_points = "change_points";
inline constexpr Key changes = "changes";  // machine or version changes within the window
inline constexpr Key unreliable = "unreliable";  // why tonight's figures cannot be trusted, if so
}  // namespace comparison

// comparison against a baseline deployment loaded side by side (--against, issue 38)
namespace comparison {
inline constexpr Key against = "against";  // mode "against": how both sides were loaded
// mode "nights" with a control arm (--control): the target side by side with
// the control (a comparison of mode "against"), whose ratios were judged
using run_config::control;
}  // namespace comparison

// comparison.against
namespace against {
using baseline::base_url;                          // the baseline deployment's
using run_config::design;                          // "trials" or "duet"
inline constexpr Key pairs = "pairs";              // trial pairs asked for (duet: 0, each second is a pair)
inline constexpr Key duration_s = "duration_s";    // of a trial, or of the duet
using load_config::seed;                           // drew the order within each pair
inline constexpr Key confidence = "confidence";    // of the intervals the figures are judged on
}  // namespace against

// comparison.figures[] judged on pairs (mode "against"): candidate / baseline
namespace figure {
using against::pairs;  // pairs with the figure measured on both sides
inline constexpr Key ratio = "ratio";
inline constexpr Key ratio_lower = "ratio_lower";
inline constexpr Key ratio_upper = "ratio_upper";
using against::confidence;  // the interval's exact coverage
}  // namespace figure

// comparison.nights
namespace nights_window {
inline constexpr Key dir = "dir";
inline constexpr Key recorded = "recorded";
inline constexpr Key window = "window";
inline constexpr Key fingerprint = "fingerprint";
inline constexpr Key accepted_from = "accepted_from";
}  // namespace nights_window

// comparison.figures[] judged against nights
namespace figure {
inline constexpr Key verdict = "verdict";
inline constexpr Key current_lower = "current_lower";
inline constexpr Key current_upper = "current_upper";
inline constexpr Key n = "n";
inline constexpr Key backed = "backed";
using repetition::repetitions;
inline constexpr Key band_lower = "band_lower";
inline constexpr Key band_upper = "band_upper";
inline constexpr Key change_lower_pct = "change_lower_pct";
inline constexpr Key change_upper_pct = "change_upper_pct";
inline constexpr Key min_detectable_pct = "min_detectable_pct";
inline constexpr Key nights_used = "nights_used";
inline constexpr Key rule = "rule";
inline constexpr Key reason = "reason";
}  // namespace figure

// comparison.change_points[]
namespace change_point {
using figure::scenario;
using figure::operation;
using figure::figure;
inline constexpr Key night = "night";
using envelope::started_at;
inline constexpr Key before = "before";
inline constexpr Key after = "after";
using figure::change_pct;
inline constexpr Key beyond_limit = "beyond_limit";  // a lasting level beyond the limit: fails the night
inline constexpr Key pending = "pending";            // beyond the limit, not lasting yet: could not tell
inline constexpr Key nights_at_level = "nights_at_level";
}  // namespace change_point

// comparison.changes[]
namespace change {
using change_point::night;
inline constexpr Key what = "what";
inline constexpr Key from = "from";
inline constexpr Key to = "to";
}  // namespace change

}  // namespace crh::results::keys
