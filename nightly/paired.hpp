// Two deployments compared side by side (issue 38): a candidate and a
// baseline loaded in short trials, interleaved in pairs in a random order
// within each pair, and judged on the pairs' ratios. A slow spell of the
// machine lasting longer than a pair touches both of its trials alike, so it
// cancels in their ratio; no record of earlier nights is needed.
//
// The estimate is the Hodges-Lehmann shift of the pairs' log ratios (the
// median of their Walsh averages) with the exact Wilcoxon signed-rank
// interval. It needs the pairs' differences to be symmetric about the true
// shift, which the design gives: the two trials of a pair run in a random
// order, so under any shift their noises are exchangeable and their
// difference symmetric. It needs no normality: a pair caught by a slow spell
// on one side moves the estimate by one rank, not by its size.
// Pure functions of numbers.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "nightly/gate.hpp"

namespace crh::nightly {

// The shift of paired differences (candidate minus baseline, on log values).
struct PairedShift {
  double estimate = 0;         // Hodges-Lehmann: the median of the Walsh averages
  double lower = 0, upper = 0;  // the exact signed-rank interval
  double confidence = 0;       // its exact coverage (0.951 for 10 pairs at 95%, 0.990 at 99%)
  std::size_t pairs = 0;
};

// The coverage of the interval a figure is judged on. A night judges several
// figures (p50, p99, throughput, per operation); at 95% a figure noisy enough
// to cross the limit by chance (p99 of 2 s trials) regressed on 1 of 10
// identical-target nights (bench/ab/aa.sh); at 99% each such figure regresses
// by chance on at most 1 night in 200.
inline constexpr double kJudgingConfidence = 0.99;

// Fewest pairs for that interval: with 7 the signed-rank test's smallest
// two-sided p is 2/128, so no interval reaches 99%.
inline constexpr std::size_t kMinPairs = 8;

// The shift with the smallest exact interval whose coverage reaches
// `confidence`; nothing when none does (fewer than 6 pairs at 95%, 8 at 99%).
std::optional<PairedShift> paired_shift(const std::vector<double>& differences, double confidence = 0.95);

// P(W+ <= w) for the signed-rank statistic of n pairs under no shift.
double signed_rank_cdf(std::size_t n, long w);

// One figure of the candidate against the baseline, judged on its pairs.
struct PairedInput {
  std::vector<double> candidate, baseline;  // the figure per pair (> 0), in pair order
  Better better = Better::lower;
  double limit_pct = 5;  // --max-regression: worse than this is a regression
};

struct PairedResult {
  Verdict verdict = Verdict::no_change;
  std::size_t pairs = 0;  // pairs with both figures > 0
  // candidate / baseline, and its interval (ratios, not percent).
  double ratio = 1, ratio_lower = 1, ratio_upper = 1;
  double confidence = 0;
  // The smallest true worsening (percent, positive) that this night's
  // spread tells apart from no change with 80% probability: the interval's
  // half-width in the bad direction times (z + z(0.80)) / z, where z is the
  // normal quantile of the interval's coverage (2.58 at 99%).
  // Unlike the record gate's it does not include the limit.
  double min_detectable_pct = 0;
  std::string rule;
  std::string reason;
};

// On the kJudgingConfidence interval: regressed: the ratio is worse than the
// limit and the whole interval is on the worse side of 1; improved: mirrored;
// too noisy: neither, and the night could not have told apart a worsening of
// 1.5 x the limit (a crossing of the limit inside such an interval is no
// evidence either way, as in the record gate); inconclusive: worse than the
// limit on its face, yet the interval reaches 1; else no change. Fewer than
// kMinPairs pairs with the figure on both sides: not backed (the caller
// decides whether a night with nothing judged can pass).
PairedResult judge_pairs(const PairedInput& in);

}  // namespace crh::nightly
