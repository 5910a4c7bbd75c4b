// The comparison of a run document as every rendering reads it (terminal,
// HTML, JUnit): against one baseline, or against a record of nights with a
// verdict, interval, band and minimum detectable change per figure. Older
// comparisons (a baseline, `regressed` alone) read as verdicts too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/view.hpp"

namespace crh::reports {

struct ShownFigure {
  std::string scenario, operation, figure, unit;
  std::string verdict;  // "regressed", "improved", "no change", "inconclusive", "not backed", "too noisy"
  double current = 0;
  double reference = 0;  // the baseline's value, or the nights' level
  std::optional<double> current_lower, current_upper, band_lower, band_upper;
  std::optional<double> change_pct, change_lower_pct, change_upper_pct, min_detectable_pct;
  std::optional<double> worse_pct;  // how much worse, in percent; negative when better
  std::uint64_t n = 0;
  bool backed = true;
  std::vector<double> repetitions;
  std::uint64_t nights_used = 0;
  std::uint64_t pairs = 0;  // against a baseline deployment: pairs with the figure on both sides
  std::string rule, reason, note;

  std::string name() const { return scenario + " " + operation + " " + figure; }
  std::string format(double v) const;                 // in the figure's unit
  std::string current_text() const;                   // "1.24 ms [1.19, 1.31]"
  std::string band_text() const;                      // "[1.12, 1.29] ms" or ""
  std::string change_text() const;                    // "+26.7% [+22.1, +31.0]" or "new"
  // Against a baseline deployment: "+26.7% [+22.1, +31.0%]", or "not measured on both sides".
  std::string paired_change_text() const;
  std::string shown_or_unmeasured(double v) const;    // "1.24 ms", or "not measured" for 0
};

struct ShownChangePoint {
  std::string scenario, operation, figure, night, started_at;
  std::string unit;  // the compared figure's
  double before = 0, after = 0;
  std::optional<double> change_pct;
  bool beyond_limit = false;  // a lasting level beyond the limit: failed the night
  bool pending = false;       // beyond the limit, not lasting yet: the night could not tell
  std::uint64_t nights_at_level = 0;
  std::string status() const;  // "beyond the limit", "beyond the limit for 2 night(s), ..." or "within the limit"
};

struct ShownChange {
  std::string night, what, from, to;  // what: "machine" or "version"
};

struct ShownComparison {
  bool nights = false;   // judged against a record of nights
  bool against = false;  // judged against a baseline deployment loaded side by side (crh run --against)
  std::string design;    // against: "trials" or "duet"
  std::uint64_t pairs = 0;  // against, trials: pairs asked for
  double duration_s = 0;    // against: of a trial, or of the duet
  double confidence = 0;    // against: of the intervals judged on; nights with a control: of the ratios'
  std::string control_url;  // nights with a control arm: every figure is target ÷ this control
  double limit_pct = 0;
  std::string baseline_file, baseline_started_at, baseline_url;
  std::string dir, fingerprint, accepted_from;
  std::uint64_t recorded = 0, window = 0;
  std::uint64_t regressions = 0, inconclusive = 0;
  std::optional<double> min_error_rate_rise;
  std::vector<ShownFigure> figures;  // regressed, inconclusive, not backed, improved, no change
  std::vector<ShownChangePoint> change_points;
  std::vector<ShownChange> changes;
  std::vector<std::string> notes;
  std::vector<std::string> unreliable;  // why tonight cannot be trusted (the night could not tell)
};

ShownComparison read_comparison(const results::DocView& comparison);

// Rank of a verdict in the order shown: regressed 0, inconclusive 1, not backed 2, improved 3, no change 4.
int verdict_rank(std::string_view verdict);

// "comparison with 14 nights of DIR (...)", "comparison with the baseline FILE (...)" or "comparison with the
// baseline deployment URL (...)", and the limit.
std::string comparison_heading(const ShownComparison& c);

}  // namespace crh::reports
