// Change points over a record of nights. Method, and why:
//  * Log values; one robust scale for the series, sigma = 1.4826 x MAD of the
//    night-to-night differences / sqrt(2) (floored at kSpreadFloor): a step
//    moves one difference and a drift all of them by the same amount, so
//    neither inflates it; an outlier night moves two.
//  * A two-sided CUSUM (Page) against the median of the segment's first
//    kMinNights nights, on z = (x - level) / sigma clipped to +-kClip so one
//    outlier night adds at most kClip - kSlack: S = max(0, S + z - kSlack),
//    alarm when S > kAlarm. kSlack = 1 (shifts of 2 sigma and more) and
//    kAlarm = 5: a drift of one sigma a night alarms on its 4th-5th night
//    (1 + 2 + 2 + 2 after the slack), a pure-noise record of 60 nights
//    has one in about 16% of records (a level within the limit: harmless) and
//    none beyond the limit (measured: tests and bench/gate_false_alarms.sh).
//  * The start is located by a robust least-squares fit over the segment up
//    to the alarm of two models, a step and a drift (a hinge: flat, then
//    rising linearly from the start), at every start from 3 nights before the
//    CUSUM's last reset to the alarm; the best fit names the night (Page's
//    last-reset alone names it early whenever noise lifted S before it).
//  * Then the search restarts at that night. No randomness: deterministic.
#include <algorithm>
#include <cmath>
#include <optional>

#include <boost/math/distributions/students_t.hpp>

#include "nightly/gate.hpp"
#include "nightly/median.hpp"

namespace crh::nightly {

namespace {

constexpr double kSlack = 1.0, kAlarm = 5.0, kClip = 3.0;
constexpr std::size_t kLookBack = 3;

// A change point fails a night only when tonight is also beyond what the
// nights before it produce (a prediction interval of the earlier level, one-
// sided at 1%), not only beyond the limit: a figure whose nights fall in two
// clusters (race untag p50 on this machine: 170-220 us or 250-290 us, night
// by night) otherwise shows a "step" wherever a few nights of one cluster come
// first (bench/nightly: 2 false failures in 30 unchanged nights). A drift of
// a quiet figure passes this as soon as it passes the limit.
constexpr double kChangePointAlpha = 0.01;
constexpr std::size_t kMinBefore = 3;

// A change point fails a night only once its level has lasted this many nights
// (tonight included). A level of one or two nights is what the single-night
// rule judges; as a change point it only makes the night could-not-tell. On
// 30 unchanged nights (bench/nightly, --repeat 9) a slow spell of the machine
// over two consecutive nights (p50s +23-30%) otherwise failed the second one.
// A drift of 5% a night still fails within 5 nights of its start.
constexpr std::size_t kLastingNights = 3;

bool beyond_earlier_level(const std::vector<double>& series, std::size_t at, Better better) {
  if (at < kMinBefore || at >= series.size()) return false;
  for (double v : series)
    if (!(v > 0)) return false;
  double m = 0, ss = 0;
  for (std::size_t i = 0; i < at; ++i) m += std::log(series[i]);
  const double n = static_cast<double>(at);
  m /= n;
  for (std::size_t i = 0; i < at; ++i) ss += (std::log(series[i]) - m) * (std::log(series[i]) - m);
  const double sd = std::sqrt(ss / (n - 1));
  const double tonight = std::log(series.back());
  const double worse = better == Better::lower ? tonight - m : m - tonight;
  const double t = boost::math::quantile(boost::math::students_t(n - 1), 1 - kChangePointAlpha);
  return worse > t * sd * std::sqrt(1 + 1 / n);
}

double median_range(const std::vector<double>& x, std::size_t a, std::size_t b) {
  return median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(a), x.begin() + static_cast<std::ptrdiff_t>(b)));
}

struct Fit {
  double loss = INFINITY;
  std::size_t tau = 0;
  bool drift = false;
};

// Least-squares slope through the origin of (x_i - a) on (i - tau + 1), i in [tau, end).
double hinge_slope(const std::vector<double>& x, std::size_t tau, std::size_t end, double a) {
  double num = 0, den = 0;
  for (std::size_t i = tau; i < end; ++i) {
    const double g = static_cast<double>(i - tau + 1);
    num += g * (x[i] - a);
    den += g * g;
  }
  return den > 0 ? num / den : 0;
}

// The start of the shift that alarmed at `t`, searched in [lo, t], over [seg, t].
Fit locate(const std::vector<double>& x, std::size_t seg, std::size_t lo, std::size_t t, double sigma) {
  const double cap = kClip * sigma * kClip * sigma;  // robust loss: a residual counts at most 3 sigma
  auto rho = [&](double r) { return std::min(r * r, cap); };
  Fit best;
  for (std::size_t tau = lo; tau <= t; ++tau) {
    const double a = median_range(x, seg, tau);
    double before = 0;
    for (std::size_t i = seg; i < tau; ++i) before += rho(x[i] - a);
    const double level = median_range(x, tau, t + 1);
    const double b = hinge_slope(x, tau, t + 1, a);
    double step = before, hinge = before;
    for (std::size_t i = tau; i <= t; ++i) {
      step += rho(x[i] - level);
      hinge += rho(x[i] - a - b * static_cast<double>(i - tau + 1));
    }
    // Ties go to the later night and to the step: the simpler story.
    if (step <= best.loss) best = {step, tau, false};
    if (hinge < best.loss) best = {hinge, tau, true};
  }
  return best;
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, Better better, double limit_pct) {
  std::vector<double> x;
  std::vector<std::size_t> at;  // x[i] is series[at[i]]
  for (std::size_t i = 0; i < series.size(); ++i)
    if (std::isfinite(series[i]) && series[i] > 0) {
      x.push_back(std::log(series[i]));
      at.push_back(i);
    }
  const std::size_t n = x.size();
  if (n <= kMinNights) return {};
  std::vector<double> diff;
  for (std::size_t i = 1; i < n; ++i) diff.push_back(x[i] - x[i - 1]);
  const double dm = median(diff);
  for (double& d : diff) d = std::fabs(d - dm);
  const double sigma = std::max(1.4826 * median(diff) / std::sqrt(2.0), kSpreadFloor);

  std::vector<Fit> found;
  std::size_t seg = 0;
  while (seg + kMinNights < n) {
    const double mu = median_range(x, seg, seg + kMinNights);
    double up = 0, down = 0;
    std::size_t up_from = seg, down_from = seg;  // first night of the current excursion
    std::optional<std::size_t> alarm;
    std::size_t from = seg;
    for (std::size_t t = seg; t < n; ++t) {
      const double z = std::clamp((x[t] - mu) / sigma, -kClip, kClip);
      if (up == 0) up_from = t;
      if (down == 0) down_from = t;
      up = std::max(0.0, up + z - kSlack);
      down = std::max(0.0, down - z - kSlack);
      if (up > kAlarm || down > kAlarm) {
        alarm = t;
        from = up > kAlarm ? up_from : down_from;
        break;
      }
    }
    if (!alarm) break;
    const std::size_t lo = std::max(seg + 1, from > kLookBack ? from - kLookBack : 0);
    const Fit f = locate(x, seg, lo, *alarm, sigma);
    found.push_back(f);
    seg = f.tau;
  }

  const double limit = std::max(limit_pct, 0.0) / 100;
  const double bad = better == Better::lower ? std::log1p(limit) : (limit < 1 ? -std::log1p(-limit) : INFINITY);
  std::vector<ChangePoint> out;
  for (std::size_t k = 0; k < found.size(); ++k) {
    const std::size_t tau = found[k].tau, end = k + 1 < found.size() ? found[k + 1].tau : n;
    const std::size_t prev = k ? found[k - 1].tau : 0;
    const double a = median_range(x, prev, tau);  // the whole level before: a few nights' median is too noisy
    const double after = found[k].drift ? a + hinge_slope(x, tau, end, a) * static_cast<double>(end - tau)
                                        : median_range(x, tau, end);
    ChangePoint cp;
    cp.index = at[tau];
    cp.end = end < n ? at[end] : series.size();
    cp.drift = found[k].drift;
    cp.before = std::exp(a);
    cp.after = std::exp(after);
    cp.change_pct = std::expm1(after - a) * 100;
    const double worse = better == Better::lower ? after - a : a - after;
    cp.worse = worse > 0;
    // Also against every night before it: a lucky low level (an improvement
    // undone, or noise named a change point) is not the base of a regression.
    const double all = median_range(x, 0, tau);
    cp.beyond_limit = worse > bad && (better == Better::lower ? after - all : all - after) > bad;
    out.push_back(cp);
  }
  // A level later undone does not fail tonight: the last level, and the last
  // night itself, must still be beyond the limit. (Without the last night a
  // change point named by chance would fail every night after it: failed
  // nights never join the record, so nothing would dilute it.)
  if (!out.empty()) {
    const double last = std::log(out.back().after), now = x.back();
    for (auto& cp : out) {
      const double b = std::log(cp.before);
      const double still = better == Better::lower ? std::min(last, now) - b : b - std::max(last, now);
      cp.beyond_limit = cp.beyond_limit && still > bad && beyond_earlier_level(series, cp.index, better);
      cp.nights_at_level = series.size() - cp.index;
      cp.lasting = cp.nights_at_level >= kLastingNights;
    }
  }
  return out;
}

}  // namespace crh::nightly
