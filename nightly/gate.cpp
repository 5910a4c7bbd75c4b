// The gate: one figure of tonight against the record (rule summarised in
// gate.hpp). Why these choices:
//  * Log values: latency and throughput vary by ratios; a 1.6x night is as far
//    above as a 0.625x night is below.
//  * Screen with the median/MAD, then mean/SD of the rest: the median and MAD
//    alone are robust but MAD has 37% efficiency (a band of 20 nights would be
//    as wide as one of 7); screening at 3.5 robust SDs keeps the SD's
//    efficiency while an outlier night (1.6-1.9x, about 1 in 8 at K=1) neither
//    moves the level nor blows up the spread.
//  * Student's t with n-1 df: the spread is itself estimated from few nights.
//  * kAlpha = 1/3000 one-sided: the band alone keeps false alarms at 1% of
//    nights over 30 independent figures at any noise; the limit then decides
//    only what matters in practice.
#include "nightly/gate.hpp"
#include "nightly/format.hpp"
#include "nightly/median.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace crh::nightly {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::regressed: return "regressed";
    case Verdict::improved: return "improved";
    case Verdict::no_change: return "no change";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::not_backed: return "not backed";
    case Verdict::too_noisy: return "too noisy";
  }
  return "?";
}

namespace {

// The p-quantile of Student's t with df degrees of freedom (df infinite or
// huge: the normal).
double t_quantile(double df, double p) {
  if (!std::isfinite(df) || df > 1e6) return boost::math::quantile(boost::math::normal(), p);
  return boost::math::quantile(boost::math::students_t(std::max(df, 1.0)), p);
}

double sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

bool usable(double x) { return std::isfinite(x) && x > 0; }

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (usable(x)) out.push_back(std::log(x));
  return out;
}

// Half the log width of a 95% interval, as an SD (within-run uncertainty).
double interval_sd(const Estimate& e) {
  if (!e.lower || !e.upper || !usable(*e.lower) || !usable(*e.upper) || *e.upper < *e.lower) return 0;
  return (std::log(*e.upper) - std::log(*e.lower)) / (2 * 1.959964);
}

std::string num(double x) {
  const double a = std::fabs(x);
  return formatted(a >= 100 || a == 0 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3g", x);
}

std::string pct(double p) { return formatted("%+.0f%%", p); }

// The spread of the change in log terms, however it was estimated.
struct Spread {
  double level = 0;  // log of the reference
  double sp = 0;     // SD of tonight's log value minus the level
  double df = 0;
  bool known = true;  // false: night-to-night noise unknown (single baseline, no repetitions)
  std::size_t nights = 0, outliers = 0;
  double night_sd = 0;
};

Spread window_spread(const std::vector<double>& x, double tonight_sd) {
  const double m = median(x);
  std::vector<double> dev;
  for (double v : x) dev.push_back(std::fabs(v - m));
  const double robust = std::max(1.4826 * median(dev), kSpreadFloor);
  std::vector<double> kept;
  for (double v : x)
    if (std::fabs(v - m) <= kOutlierMads * robust) kept.push_back(v);
  double level = 0;
  for (double v : kept) level += v;
  level /= static_cast<double>(kept.size());
  Spread s;
  s.level = level;
  s.nights = kept.size();
  s.outliers = x.size() - kept.size();
  s.night_sd = std::max({sd(kept), kSpreadFloor, tonight_sd});
  s.sp = s.night_sd * std::sqrt(1 + 1.0 / static_cast<double>(kept.size()));
  s.df = static_cast<double>(kept.size() - 1);
  return s;
}

// A night's own variance and df: its repetitions' median (pi/2 s^2 / K),
// at least its interval's; df infinite when from the interval alone.
struct Own {
  double var = 0, df = 0;
  bool reps = false;
};

Own own(const Estimate& e) {
  Own o;
  const auto r = logs(e.repetitions);
  if (r.size() >= 2) {
    const double s = sd(r);
    o.var = std::numbers::pi / 2 * s * s / static_cast<double>(r.size());
    o.df = static_cast<double>(r.size() - 1);
    o.reps = true;
  }
  const double i = interval_sd(e);
  if (i * i > o.var) {
    o.var = i * i;
    if (!o.reps) o.df = INFINITY;
  }
  return o;
}

Spread single_spread(const Estimate& tonight, const Estimate& last) {
  Own a = own(tonight), b = own(last);
  // One side repeated, the other not: assume the same noise on both.
  if (a.reps && !b.reps) b = Own{std::max(a.var, b.var), a.df, true};
  if (b.reps && !a.reps) a = Own{std::max(a.var, b.var), b.df, true};
  Spread s;
  s.level = std::log(last.value);
  s.known = a.reps && b.reps;
  const double var = std::max(a.var + b.var, kSpreadFloor * kSpreadFloor);
  s.sp = std::sqrt(var);
  s.night_sd = s.sp / std::sqrt(2.0);
  // Welch-Satterthwaite; infinite df terms drop out.
  double den = 0;
  if (std::isfinite(a.df) && a.df > 0) den += a.var * a.var / a.df;
  if (std::isfinite(b.df) && b.df > 0) den += b.var * b.var / b.df;
  s.df = den > 0 ? (a.var + b.var) * (a.var + b.var) / den : INFINITY;
  return s;
}

}  // namespace

GateResult judge(const GateInput& in) {
  GateResult r;
  const bool lower_better = in.better == Better::lower;
  const double limit = std::max(in.limit_pct, 0.0) / 100;
  // The limit in log terms, per direction: worse by limit_pct means x(1+l)
  // for latency, x(1-l) for throughput; improved likewise mirrored.
  const double up = std::log1p(limit), down = limit < 1 ? -std::log1p(-limit) : INFINITY;
  const double bad_limit = lower_better ? up : down, good_limit = lower_better ? down : up;
  // A worsening of 1.5 x the limit (the size the gate is meant to catch on its first night).
  const double bad_step = lower_better ? std::log1p(1.5 * limit) : (1.5 * limit < 1 ? -std::log1p(-1.5 * limit) : INFINITY);

  auto x = logs(in.nights);
  if (x.size() > kWindow) x.erase(x.begin(), x.end() - static_cast<std::ptrdiff_t>(kWindow));
  std::optional<Estimate> last = in.last_night;
  if ((!last || !usable(last->value)) && !x.empty()) last = Estimate{.value = std::exp(x.back())};
  if (x.size() < kMinNights && (!last || !usable(last->value))) {
    r.reason = "no comparable night to compare with";
    r.rule = "none";
    r.verdict = in.tonight.backed ? Verdict::no_change : Verdict::not_backed;
    return r;
  }
  const bool window = x.size() >= kMinNights;
  const Spread s = window ? window_spread(x, interval_sd(in.tonight)) : single_spread(in.tonight, *last);
  r.compared = true;
  r.reference = std::exp(s.level);
  r.nights_used = window ? x.size() : 0;
  r.outliers = s.outliers;
  r.spread_pct = std::expm1(s.night_sd) * 100;

  const double q_band = t_quantile(s.df, 1 - kAlpha), q95 = t_quantile(s.df, 0.975);
  const double half = q_band * s.sp, half95 = q95 * s.sp;
  r.band_lower = std::exp(s.level - half);
  r.band_upper = std::exp(s.level + half);
  const double mdc = std::max(half, bad_limit) + 0.841621 * s.sp;  // z(0.80)
  r.min_detectable_pct = (lower_better ? std::expm1(mdc) : -std::expm1(-mdc)) * 100;
  {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s; band t(%.0f df, 1-1/%.0f) on log values; limit %.0f%%",
                  window ? "level and spread of the last nights (median/MAD screen, mean/SD)"
                         : "the last night, spread from repetitions and intervals",
                  std::isfinite(s.df) ? s.df : 999.0, 1 / kAlpha, limit * 100);
    r.rule = buf;
  }

  if (!usable(in.tonight.value)) {
    // Throughput fell to nothing: worse than any limit. Anything else cannot be put on a log scale.
    const bool zero_throughput = !lower_better && in.tonight.value == 0 && in.tonight.backed;
    r.verdict = zero_throughput ? Verdict::regressed : in.tonight.backed ? Verdict::inconclusive : Verdict::not_backed;
    r.change_pct = r.change_lower_pct = r.change_upper_pct = zero_throughput ? -100 : 0;
    r.reason = "tonight's value " + num(in.tonight.value) + (zero_throughput ? " (nothing got through)" : " cannot be judged");
    return r;
  }
  const double d = std::log(in.tonight.value) - s.level;
  const double e = lower_better ? d : -d;  // the change in the bad direction
  r.change_pct = std::expm1(d) * 100;
  r.change_lower_pct = std::expm1(d - half95) * 100;
  r.change_upper_pct = std::expm1(d + half95) * 100;

  auto num = [&](double v) { return in.format ? in.format(v) : crh::nightly::num(v); };
  const std::string against =
      num(in.tonight.value) + " is " + pct(r.change_pct) + " against " +
      (window ? "the level " + num(r.reference) + " of " + std::to_string(x.size()) + " nights" +
                    (s.outliers ? " (" + std::to_string(s.outliers) + " outlier(s) set aside)" : "")
              : "the last night's " + num(r.reference)) +
      " (band " + num(*r.band_lower) + "-" + num(*r.band_upper) + ", change " + pct(r.change_lower_pct) + " to " +
      pct(r.change_upper_pct) + ")";
  char lim_buf[32];
  std::snprintf(lim_buf, sizeof lim_buf, " the %g%% limit", limit * 100);
  const std::string lim = lim_buf;
  // The repetitions must agree: a median pulled up by a majority of slow runs
  // (an outlier run is 1.6-1.9x, 1 in 8) is not a slower service, whose runs
  // all move. Three quarters of them worse by half the limit, or it cannot
  // tell (half: a run's own noise must not veto a real 30% worsening).
  std::size_t reps = 0, agree = 0;
  for (double v : in.tonight.repetitions)
    if (usable(v)) {
      ++reps;
      const double er = std::log(v) - s.level;
      agree += (lower_better ? er : -er) > bad_limit / 2;
    }
  const bool reps_agree = reps < 3 || 4 * agree >= 3 * reps;
  if (!in.tonight.backed) {
    r.verdict = Verdict::not_backed;
    r.reason = against + "; not backed (too few samples beyond the percentile): not judged";
  } else if (!s.known && e > bad_limit) {
    r.verdict = Verdict::inconclusive;
    r.reason = against + "; beyond" + lim + ", but with no repetitions night-to-night noise is unknown";
  } else if (e > half && e > bad_limit && reps_agree) {
    r.verdict = Verdict::regressed;
    r.reason = against + "; beyond the band and" + lim;
  } else if (e > half && e > bad_limit) {
    r.verdict = Verdict::inconclusive;
    r.reason = against + "; beyond the band and" + lim + ", but only " + std::to_string(agree) + " of " +
               std::to_string(reps) + " repetitions are worse by half of it: they disagree";
  } else if (-e > half && -e > good_limit) {
    r.verdict = Verdict::improved;
    r.reason = against + "; better, beyond the band and" + lim;
  } else if (half > bad_step) {
    // The band is wider than a worsening of 1.5 x the limit: the gate would
    // catch that less than half the time, and a crossing of the limit within
    // the band is no evidence either way (unpinned nights on the 2-core
    // machine: p99s +20-48% night after night, each band +150% and more;
    // calling them could-not-tell made 4 of 30 unchanged nights exit 4).
    r.verdict = Verdict::too_noisy;
    r.reason = against + "; within the band, which is wider than a worsening of 1.5 x" + lim +
               ": too noisy to judge at this limit (more repetitions or a longer load narrow it)";
  } else if (e > bad_limit) {
    // Worse than the limit on its face, but the nights' noise could explain it.
    r.verdict = Verdict::inconclusive;
    r.reason = against + "; beyond" + lim + " but within the band: the nights' noise could explain it";
  } else {
    // Within the limit. Where the interval of the change reaches the limit a
    // worsening of that size could hide in the noise: said, but no alarm
    // (at a night's usual spread nearly every night would be one; the
    // smallest detectable change states what the gate can see).
    r.verdict = Verdict::no_change;
    r.reason = against + "; within" + lim +
               (e + half95 > bad_limit ? " (its interval reaches it: a change that size could hide in the noise)" : "");
  }
  r.reason += "; smallest worsening it would catch: " + crh::nightly::num(r.min_detectable_pct) + "%";
  return r;
}

}  // namespace crh::nightly
