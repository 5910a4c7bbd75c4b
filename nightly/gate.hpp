// The nightly gate (DESIGN.md §7): one figure of tonight's run judged against
// the record of comparable passed nights, and change points over that record.
// Pure functions of numbers: no I/O, no documents, deterministic.
//
// The rule (gate.cpp has the why; bench/gate_false_alarms.sh measures it):
// every figure is judged on log values, so a change is a ratio.
//  * Window (>= kMinNights nights): nights further than 3.5 robust SDs
//    (1.4826 x MAD) from the median are set aside as outliers; the level is the
//    mean of the rest and s their SD (floored at kSpreadFloor and at tonight's
//    own interval); sp = s * sqrt(1 + 1/n), df = n - 1.
//  * Single baseline (< kMinNights): the change's SD from the two nights'
//    repetitions (the median of K has variance pi/2 * s^2 / K) and intervals,
//    Welch's df; with no repetitions on either side night-to-night noise is
//    unknown and a change beyond the limit is inconclusive, never regressed.
//  * e = the log change in the bad direction. band = t_df(1 - kAlpha) * sp.
//    regressed: e > band and e > log of the limit, and (K >= 3) at least 3/4
//    of tonight's repetitions worse by half the limit (else inconclusive: they
//    disagree; a majority of outlier runs, not a slower service); improved: mirrored;
//    inconclusive: neither, and e beyond the limit but within the band (worse
//    than the limit on its face, yet the nights' noise could explain it);
//    too noisy: neither, and the band is wider than a worsening of 1.5 x the
//    limit (the gate would catch that worsening less than half the time: a
//    crossing of the limit within such a band is no evidence either way);
//    otherwise no change, its reason saying when the 95% interval
//    e + t_df(0.975) * sp reaches the limit. (An earlier rule called that
//    inconclusive: on real nights at the nightly settings every night was,
//    bench/nightly/nights.sh, 14 of 14.)
//  * Minimum detectable change: analytic, at the estimated spread:
//    max(band, limit) + z(0.80) * sp, as a worsening in percent.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crh::nightly {

enum class Better { lower, higher };  // latency: lower; throughput: higher

enum class Verdict { regressed, improved, no_change, inconclusive, not_backed, too_noisy };
// "regressed", "improved", "no change", "inconclusive", "not backed", "too noisy"
std::string_view to_string(Verdict v);

// A figure as one night measured it.
struct Estimate {
  double value = 0;                    // the night's figure (the median over repetitions when repeated)
  std::optional<double> lower, upper;  // its 95% interval, when known
  bool backed = true;                  // false: too few samples beyond the percentile; never fails
  std::vector<double> repetitions;     // each repetition's value (empty: not repeated)
};

struct GateInput {
  Estimate tonight;
  // The figure in the comparable passed nights, oldest first (leave out
  // nights where it was not backed; values <= 0 are ignored). The gate uses
  // the last kWindow of them; with fewer than kMinNights it judges against
  // `last_night` alone (its interval and repetitions), or nights.back() when
  // last_night is empty.
  std::vector<double> nights;
  std::optional<Estimate> last_night;  // the last comparable passed night, as measured
  Better better = Better::lower;
  double limit_pct = 20;  // the practical limit, --max-regression
  // How the reason writes a value of the figure (its unit: "1.24 ms",
  // "1520/s"); empty: the bare number.
  std::function<std::string(double)> format;
};

inline constexpr std::size_t kWindow = 20;
inline constexpr std::size_t kMinNights = 5;
// One-sided false-alarm rate of the band per figure: 1% of nights over ~30
// independent figures (the figures of a night are correlated: fewer in effect).
inline constexpr double kAlpha = 0.01 / 30;
// Nights never agree better than 1% (histogram buckets, timers): a window of
// identical values is judged with this spread (then the limit decides).
inline constexpr double kSpreadFloor = 0.01;  // on log values
inline constexpr double kOutlierMads = 3.5;   // window nights beyond this many robust SDs are set aside

struct GateResult {
  Verdict verdict = Verdict::no_change;
  bool compared = false;          // false: nothing to compare with (no night), verdict no_change
  double reference = 0;           // what tonight is compared with: the window's level, or the last night
  std::optional<double> band_lower, band_upper;  // the nights' own spread, in the figure's unit
  double change_pct = 0;          // (tonight - reference) / reference * 100; signed
  double change_lower_pct = 0, change_upper_pct = 0;  // 95% interval of the change
  // The smallest true worsening (percent, as change_pct would show it in the
  // bad direction, given positive) the rule flags with 80% probability at this
  // noise; never below the limit. Analytic, at the estimated spread.
  double min_detectable_pct = 0;
  std::size_t nights_used = 0;    // 0: judged against last_night
  std::size_t outliers = 0;       // window nights set aside as outliers
  double spread_pct = 0;          // one night's SD (exp(s) - 1) * 100 as estimated
  std::string rule;               // the rule in a few words, for the report
  std::string reason;             // why this verdict, with numbers (unit-free: the caller may add units)
};

GateResult judge(const GateInput& in);

// A lasting shift in a series of nights (oldest first).
struct ChangePoint {
  std::size_t index = 0;    // the first night of the new level
  std::size_t end = 0;      // one past its last night (the next change point, or the series' size)
  bool drift = false;       // a level rising (or falling) night by night from `index`, not a step
  double before = 0;        // the level before (robust: median of the nights since the previous change point)
  double after = 0;         // the level from `index` on (a step: its median; a drift: where it got to)
  double change_pct = 0;    // (after - before) / before * 100
  bool worse = false;       // in the figure's bad direction
  // worse by more than the limit, and the series' last level and its last
  // night are still beyond the limit against `before` (a level later undone,
  // or a night back at the old level, does not fail tonight), and the last
  // night beyond what the nights before `index` produce (not chance).
  bool beyond_limit = false;
  std::size_t nights_at_level = 0;  // from `index` to the series' last night
  bool lasting = false;             // at least kLastingNights of them (change_points.cpp)
  // Fails the last night (tonight): beyond the limit and lasting. Beyond the
  // limit but not lasting yet, the night could not tell.
  bool fails() const { return beyond_limit && lasting; }
};

// Change points of `series` (method in change_points.cpp: CUSUM on log values
// with a robust scale, the start located by least squares; deterministic). A
// drift of a few percent a night that no single night shows is found once its
// sum is.
std::vector<ChangePoint> change_points(const std::vector<double>& series, Better better, double limit_pct);

}  // namespace crh::nightly
