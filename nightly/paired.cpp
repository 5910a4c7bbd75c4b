#include "nightly/paired.hpp"
#include "nightly/format.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <cstdio>
#include <string>

namespace crh::nightly {

namespace {

// P(W+ <= w) for w = 0 .. n(n+1)/2: the ranks 1..n each counted with
// probability 1/2 (ways[s]: the subsets of them summing to s).
std::vector<double> signed_rank_cdfs(std::size_t n) {
  const std::size_t top = n * (n + 1) / 2;
  std::vector<double> ways(top + 1, 0);
  ways[0] = 1;
  for (std::size_t rank = 1; rank <= n; ++rank)
    for (std::size_t s = top; s >= rank; --s) ways[s] += ways[s - rank];
  const double all = std::ldexp(1.0, static_cast<int>(n));
  double below = 0;
  for (double& w : ways) w = (below += w) / all;
  return ways;
}

}  // namespace

double signed_rank_cdf(std::size_t n, long w) {
  if (w < 0) return 0;
  const auto cdf = signed_rank_cdfs(n);
  return static_cast<std::size_t>(w) < cdf.size() ? cdf[static_cast<std::size_t>(w)] : 1;
}

std::optional<PairedShift> paired_shift(const std::vector<double>& differences, double confidence) {
  const std::size_t n = differences.size();
  if (n < 1) return std::nullopt;
  // c: the largest rank from each end whose exclusion keeps the coverage:
  // the interval is [A(c), A(M + 1 - c)] of the M sorted Walsh averages,
  // its coverage 1 - 2 P(W+ <= c - 1).
  const double tail = (1 - confidence) / 2;
  const auto cdf = signed_rank_cdfs(n);
  std::size_t c = 0;
  while (cdf[c] <= tail) ++c;  // P(W+ <= c) first exceeds the tail at c: c Walsh averages go from each end
  if (c == 0) return std::nullopt;
  std::vector<double> walsh;
  walsh.reserve(n * (n + 1) / 2);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) walsh.push_back((differences[i] + differences[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  const std::size_t m = walsh.size();
  PairedShift s;
  s.pairs = n;
  s.estimate = m % 2 ? walsh[m / 2] : (walsh[m / 2 - 1] + walsh[m / 2]) / 2;
  s.lower = walsh[c - 1];
  s.upper = walsh[m - c];
  s.confidence = 1 - 2 * cdf[c - 1];
  return s;
}

PairedResult judge_pairs(const PairedInput& in) {
  PairedResult r;
  const bool lower_better = in.better == Better::lower;
  const double limit = std::clamp(in.limit_pct, 0.0, 99.0) / 100;
  // Worse by the limit: x(1 + l) for latency, x(1 - l) for throughput (as the record gate reads it).
  const double bad_limit = lower_better ? std::log1p(limit) : -std::log1p(-limit);
  const double good_limit = lower_better ? -std::log1p(-limit) : std::log1p(limit);
  const double bad_step = lower_better ? std::log1p(1.5 * limit) : -std::log1p(-std::min(1.5 * limit, 0.99));
  std::vector<double> d;
  for (std::size_t i = 0; i < std::min(in.candidate.size(), in.baseline.size()); ++i)
    if (in.candidate[i] > 0 && in.baseline[i] > 0 && std::isfinite(in.candidate[i]) && std::isfinite(in.baseline[i]))
      d.push_back(std::log(in.candidate[i]) - std::log(in.baseline[i]));
  r.pairs = d.size();
  r.rule = "Hodges-Lehmann ratio of " + std::to_string(d.size()) +
           " interleaved pairs, exact signed-rank interval; limit " + formatted("%g", limit * 100) + "%";
  const auto shift = d.size() >= kMinPairs ? paired_shift(d, kJudgingConfidence) : std::nullopt;
  if (!shift) {
    r.verdict = Verdict::not_backed;
    r.reason = "measured on both sides in " + std::to_string(d.size()) + " pair(s) only (a percentile with too few "
               "samples beyond it is not measured): at least " + std::to_string(kMinPairs) +
               " are needed for a " + formatted("%g", kJudgingConfidence * 100) + "% interval";
    return r;
  }
  r.ratio = std::exp(shift->estimate);
  r.ratio_lower = std::exp(shift->lower);
  r.ratio_upper = std::exp(shift->upper);
  r.confidence = shift->confidence;
  // In the bad direction: positive is worse.
  const double e = lower_better ? shift->estimate : -shift->estimate;
  const double bad_lower = lower_better ? shift->lower : -shift->upper;
  const double bad_upper = lower_better ? shift->upper : -shift->lower;
  // The half-width is z(1 - a/2) standard errors of the estimate; a shift
  // of (z(1 - a/2) + z(0.80)) of them leaves the interval clear of 1 with
  // 80% probability.
  const double z = boost::math::quantile(boost::math::normal(), (1 + r.confidence) / 2);
  const double mdc = (bad_upper - bad_lower) / 2 * (z + 0.841621) / z;
  r.min_detectable_pct = (lower_better ? std::expm1(mdc) : -std::expm1(-mdc)) * 100;

  const std::string said = "candidate / baseline " + formatted("%.3f", r.ratio) + " (" +
                           formatted("%.1f", r.confidence * 100) + "% interval " + formatted("%.3f", r.ratio_lower) + "-" +
                           formatted("%.3f", r.ratio_upper) + ", " + std::to_string(r.pairs) + " pairs)";
  const std::string lim = "the " + formatted("%g", limit * 100) + "% limit";
  if (e > bad_limit && bad_lower > 0) {
    r.verdict = Verdict::regressed;
    r.reason = said + ": worse than " + lim + ", and every ratio in the interval is worse than 1";
  } else if (-e > good_limit && bad_upper < 0) {
    r.verdict = Verdict::improved;
    r.reason = said + ": better by more than " + lim + ", and every ratio in the interval is better than 1";
  } else if (mdc > bad_step) {
    r.verdict = Verdict::too_noisy;
    r.reason = said + ": the pairs disagree too much to tell a worsening of 1.5 x " + lim +
               " from none (more pairs or longer trials narrow it)";
  } else if (e > bad_limit) {
    r.verdict = Verdict::inconclusive;
    r.reason = said + ": worse than " + lim + " on its face, but the interval reaches 1: the trials' noise could explain it";
  } else {
    r.verdict = Verdict::no_change;
    r.reason = said + ": within " + lim;
  }
  r.reason += "; smallest worsening it tells apart: " + formatted("%.1f", r.min_detectable_pct) + "%";
  return r;
}

}  // namespace crh::nightly
