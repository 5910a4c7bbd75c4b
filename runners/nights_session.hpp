// --nights DIR for `crh run` and `crh report` (DESIGN.md §7): tonight judged
// against the record of comparable nights, and tonight written into it.
#pragma once

#include <optional>
#include <string>

#include <boost/json/object.hpp>

#include "reports/run_document.hpp"

namespace CLI {
class App;
}

namespace crh::runners {

// The nightly settings: what `crh run --nights` uses unless told otherwise,
// the ones that measured best on the 2-core machine (README, The nightly
// gate: the gate's false alarms by repetitions and load length).
inline constexpr int kNightRepeat = 9;
inline constexpr double kNightLoadDuration = 4;

struct NightsFlags {
  std::string dir;     // empty: no record
  std::string accept;  // crh report: a night that starts a new level
  std::size_t keep = 400;

  // `with_accept`: crh report only.
  void add_to(CLI::App* sub, bool with_accept);
};

// The comparison of tonight's parts against the record in `flags.dir`, for
// the run document. `provisional`: the run document without a comparison
// (its loads, config, target and environment make the fingerprint). Problems
// reading the record are printed on stderr; bad files are left out.
// With a control arm, `control` is the loads' comparison with the control
// (mode "against"): tonight's figures are its ratios target / control, the
// control's own failed loads make tonight unreliable, and it is kept in the
// result as comparison.control.
boost::json::object compare_with_record(const NightsFlags& flags, const reports::RunParts& parts,
                                        const boost::json::object& provisional, double max_regression_pct,
                                        const boost::json::object* control = nullptr);

// Writes tonight's night file (its run document, the HTML report written for
// it, "" for none). Returns what went wrong, or nothing.
std::optional<std::string> record_night(const NightsFlags& flags, const boost::json::object& run_document,
                                        const std::string& html_report);

// The trend page of the record in `dir` (crh report --nights DIR --html F).
// Returns the exit code: 0 written, 2 when the record is empty or unwritable.
int write_trend_page(const std::string& dir, const std::string& html_file, double max_regression_pct,
                     const std::string& command);

}  // namespace crh::runners
