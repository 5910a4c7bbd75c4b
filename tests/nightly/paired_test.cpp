// The paired comparison of two deployments (nightly/paired.hpp) held against
// brute force: the signed-rank distribution against every sign pattern, the
// interval against the test it inverts, and its coverage on samples from
// known distributions, including pairs a slow spell of the machine hit.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "nightly/paired.hpp"

namespace crh::nightly {
namespace {

// W+ of the differences: the ranks (by size) of the positive ones.
double w_plus(const std::vector<double>& d) {
  std::vector<std::size_t> order(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return std::fabs(d[a]) < std::fabs(d[b]); });
  double w = 0;
  for (std::size_t r = 0; r < order.size(); ++r)
    if (d[order[r]] > 0) w += static_cast<double>(r + 1);
  return w;
}

TEST(SignedRank, TheDistributionIsEverySignPatternCounted) {
  for (std::size_t n = 1; n <= 12; ++n) {
    std::vector<long> count(n * (n + 1) / 2 + 1, 0);
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      long w = 0;
      for (std::size_t r = 0; r < n; ++r)
        if (mask & (1u << r)) w += static_cast<long>(r + 1);
      ++count[static_cast<std::size_t>(w)];
    }
    long below = 0;
    for (std::size_t w = 0; w < count.size(); ++w) {
      below += count[w];
      EXPECT_NEAR(signed_rank_cdf(n, static_cast<long>(w)), static_cast<double>(below) / (1u << n), 1e-12)
          << "n " << n << ", w " << w;
    }
    EXPECT_EQ(signed_rank_cdf(n, -1), 0);
  }
}

TEST(PairedShift, TheCoverageIsTheExactOneOfTheTable) {
  // P(W+ <= 8) = 25/1024 for 10 pairs: the interval drops 9 Walsh averages each side.
  const auto s = paired_shift({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->confidence, 1 - 2 * 25.0 / 1024, 1e-12);
  EXPECT_EQ(s->estimate, 5.5);
  EXPECT_FALSE(paired_shift({1, 2, 3, 4, 5}));  // 5 pairs cannot reach 95%
  EXPECT_TRUE(paired_shift({1, 2, 3, 4, 5, 6}));
}

// The interval is the set of shifts the two-sided signed-rank test at its
// level does not reject: just inside each end W+ is inside the acceptance
// region, just outside it is not.
TEST(PairedShift, TheIntervalIsTheShiftsTheTestAccepts) {
  std::mt19937_64 rng(38);
  std::normal_distribution<double> noise(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 6 + static_cast<std::size_t>(trial % 15);
    std::vector<double> d(n);
    for (auto& x : d) x = noise(rng);
    const auto s = paired_shift(d);
    ASSERT_TRUE(s);
    const double top = static_cast<double>(n * (n + 1) / 2);
    const auto accepted = [&](double shift) {
      std::vector<double> moved;
      for (double x : d) moved.push_back(x - shift);
      const double w = w_plus(moved);
      const double p = 2 * std::min(signed_rank_cdf(n, static_cast<long>(w)), signed_rank_cdf(n, static_cast<long>(top - w)));
      return p > 1 - s->confidence + 1e-12;
    };
    const double eps = 1e-9;
    EXPECT_TRUE(accepted(s->lower + eps)) << "n " << n;
    EXPECT_TRUE(accepted(s->upper - eps)) << "n " << n;
    EXPECT_FALSE(accepted(s->lower - eps)) << "n " << n;
    EXPECT_FALSE(accepted(s->upper + eps)) << "n " << n;
    EXPECT_LE(s->lower, s->estimate);
    EXPECT_GE(s->upper, s->estimate);
  }
}

// One trial's figure on a log scale: `shift` for the candidate, and a noise.
using Noise = std::function<double(std::mt19937_64&)>;

double coverage(std::size_t pairs, const Noise& noise, double shift, int samples, std::uint64_t seed,
                double confidence) {
  std::mt19937_64 rng(seed);
  int covered = 0;
  for (int i = 0; i < samples; ++i) {
    std::vector<double> d(pairs);
    for (auto& x : d) x = (shift + noise(rng)) - noise(rng);
    const auto s = paired_shift(d, confidence);
    covered += s && s->lower <= shift && shift <= s->upper;
  }
  return static_cast<double>(covered) / samples;
}

TEST(PairedShift, CoversTheTrueShiftAsOftenAsItSaysOnKnownDistributions) {
  const std::vector<std::pair<std::string, Noise>> noises{
      {"normal", [](std::mt19937_64& r) { return std::normal_distribution<double>(0, 0.03)(r); }},
      {"lognormal trial (skewed)", [](std::mt19937_64& r) { return std::exp(std::normal_distribution<double>(-3, 1)(r)); }},
      {"t with 2 df (heavy)", [](std::mt19937_64& r) { return 0.02 * std::student_t_distribution<double>(2)(r); }},
      {"one trial in 8 in a slow spell", [](std::mt19937_64& r) {
         return std::normal_distribution<double>(0, 0.02)(r) + (std::bernoulli_distribution(0.125)(r) ? 0.4 : 0.0);
       }}};
  for (std::size_t pairs : {8, 10, 13, 20})
    for (const auto& [name, noise] : noises)
      for (double shift : {0.0, 0.1}) {
        const double confidence = paired_shift(std::vector<double>(pairs, 1.0))->confidence;
        const double got = coverage(pairs, noise, shift, 4000, 1000 * pairs + (shift > 0), 0.95);
        // 4,000 samples: the sampled coverage's SD is about 0.35 points.
        EXPECT_NEAR(got, confidence, 0.015) << name << ", " << pairs << " pairs, shift " << shift;
        EXPECT_GE(got, 0.93) << name << ", " << pairs << " pairs";
        EXPECT_LE(got, 0.975) << name << ", " << pairs << " pairs";
        // The interval a figure is judged on (about 0.16 points of SD).
        const double judging = paired_shift(std::vector<double>(pairs, 1.0), kJudgingConfidence)->confidence;
        const double got99 = coverage(pairs, noise, shift, 4000, 7000 * pairs + (shift > 0), kJudgingConfidence);
        EXPECT_NEAR(got99, judging, 0.008) << name << ", " << pairs << " pairs, shift " << shift << ", 99%";
        EXPECT_GE(got99, 0.985) << name << ", " << pairs << " pairs, 99%";
      }
}

std::vector<double> trials(std::mt19937_64& rng, std::size_t n, double level, double sd) {
  std::vector<double> v(n);
  std::normal_distribution<double> noise(0, sd);
  for (auto& x : v) x = level * std::exp(noise(rng));
  return v;
}

TEST(JudgePairs, TwoIdenticalTargetsSeldomRegressAndATenPercentSlowdownIsFlagged) {
  std::mt19937_64 rng(3838);
  int regressed = 0, could_not_tell = 0, flagged = 0;
  const int nights = 2000;
  for (int i = 0; i < nights; ++i) {
    // 2% noise per trial, as interleaved trials of p50 measured (bench/ab).
    const auto aa = judge_pairs({trials(rng, 10, 1.0, 0.02), trials(rng, 10, 1.0, 0.02), Better::lower, 5});
    regressed += aa.verdict == Verdict::regressed;
    could_not_tell += aa.verdict == Verdict::inconclusive || aa.verdict == Verdict::too_noisy;
    const auto slower = judge_pairs({trials(rng, 10, 1.1, 0.02), trials(rng, 10, 1.0, 0.02), Better::lower, 5});
    flagged += slower.verdict == Verdict::regressed;
  }
  EXPECT_LE(regressed, nights / 200) << "an unchanged figure regressed";
  EXPECT_LE(could_not_tell, nights / 100);
  EXPECT_GE(flagged, nights * 9 / 10) << "a 10% slowdown at 2% noise per trial, 10 pairs, limit 5%";
}

TEST(JudgePairs, ThroughputIsWorseWhenLowerAndTheRatioIsCandidateOverBaseline) {
  const std::vector<double> base{1000, 1010, 990, 1005, 995, 1000, 1002, 998, 1001, 999};
  std::vector<double> cand;
  for (double b : base) cand.push_back(b * 0.8);
  const auto r = judge_pairs({cand, base, Better::higher, 5});
  EXPECT_EQ(r.verdict, Verdict::regressed) << r.reason;
  EXPECT_NEAR(r.ratio, 0.8, 1e-9);
  const auto better = judge_pairs({base, cand, Better::higher, 5});
  EXPECT_EQ(better.verdict, Verdict::improved) << better.reason;
  EXPECT_NEAR(better.ratio, 1.25, 1e-9);
}

TEST(JudgePairs, WorseOnItsFaceButNoisyIsInconclusiveOrTooNoisyAndFewPairsAreNotBacked) {
  // Seven pairs 7-8% worse, three 0-1% better: worse than the limit on its
  // face, the 99% interval (0.995-1.075) reaches 1, yet narrow enough to
  // have told a 7.5% worsening from none.
  const auto r = judge_pairs({{1.07, 1.07, 1.07, 1.07, 1.07, 1.07, 1.00, 0.99, 0.99, 1.08}, std::vector<double>(10, 1.0),
                              Better::lower, 5});
  EXPECT_EQ(r.verdict, Verdict::inconclusive) << r.reason;
  EXPECT_NEAR(r.confidence, 1 - 10.0 / 1024, 1e-12) << "the exact coverage of the 99% interval of 10 pairs";
  // Six pairs 30% worse and four 10% better: worse on its face too, but
  // an interval that wide (0.90-1.30) could not have told a 7.5% worsening
  // from none: no evidence either way, as the record gate reads it.
  const auto wide = judge_pairs({{1.3, 0.9, 1.3, 0.9, 1.3, 0.9, 1.3, 0.9, 1.3, 1.3}, std::vector<double>(10, 1.0),
                                 Better::lower, 5});
  EXPECT_EQ(wide.verdict, Verdict::too_noisy) << wide.reason;
  const auto noisy = judge_pairs({{1.0, 1.5, 0.7, 1.4, 0.75, 1.0, 1.3, 0.8, 1.0, 0.96}, std::vector<double>(10, 1.0),
                                  Better::lower, 5});
  EXPECT_EQ(noisy.verdict, Verdict::too_noisy) << noisy.reason;
  const auto few = judge_pairs({{2, 2, 2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 0}, Better::lower, 5});
  EXPECT_EQ(few.verdict, Verdict::not_backed) << few.reason;
  EXPECT_EQ(few.pairs, 7u) << "a pair without the figure on one side is left out";
  EXPECT_NE(few.reason.find("at least 8"), std::string::npos) << few.reason;
  EXPECT_EQ(judge_pairs({std::vector<double>(8, 2.0), std::vector<double>(8, 1.0), Better::lower, 5}).verdict,
            Verdict::regressed)
      << "8 pairs reach a 99% interval";
}

}  // namespace
}  // namespace crh::nightly
