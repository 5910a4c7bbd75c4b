// The gate on synthetic records with known changes (gate.hpp has the rule).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nightly/gate.hpp"

namespace crh::nightly {
namespace {

// `n` nights around `level` with a log-normal spread of `sd` (log units).
std::vector<double> nights(std::size_t n, double level, double sd, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, sd);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(level * std::exp(z(rng)));
  return v;
}

GateResult judge_tonight(std::vector<double> record, double tonight, Better better = Better::lower) {
  return judge(GateInput{.tonight = {.value = tonight}, .nights = std::move(record), .better = better});
}

TEST(Gate, AStepOf35PercentIsRegressedWithTheNumbersInTheReason) {
  const auto g = judge_tonight(nights(20, 1.0, 0.03, 1), 1.35);
  EXPECT_EQ(g.verdict, Verdict::regressed) << g.reason;
  EXPECT_EQ(g.nights_used, 20u);
  EXPECT_NEAR(g.change_pct, 35, 4);
  EXPECT_GT(g.change_lower_pct, 20);
  EXPECT_LT(*g.band_upper, 1.35);
  EXPECT_NE(g.reason.find("against the level"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("beyond the band and the 20% limit"), std::string::npos) << g.reason;
  EXPECT_GT(g.min_detectable_pct, 20);
  EXPECT_LT(g.min_detectable_pct, 35);
}

TEST(Gate, AStepOf10PercentIsNotRegressed) {
  const auto g = judge_tonight(nights(20, 1.0, 0.03, 2), 1.10);
  EXPECT_EQ(g.verdict, Verdict::no_change) << g.reason;
}

TEST(Gate, AnOutlierNightInTheWindowIsSetAsideAndDoesNotWidenTheBand) {
  auto record = nights(20, 1.0, 0.03, 3);
  const auto clean = judge_tonight(record, 1.35);
  record[7] *= 1.8;
  const auto g = judge_tonight(record, 1.35);
  EXPECT_EQ(g.verdict, Verdict::regressed) << g.reason;
  EXPECT_EQ(g.outliers, 1u);
  EXPECT_NE(g.reason.find("1 outlier(s) set aside"), std::string::npos) << g.reason;
  EXPECT_NEAR(*g.band_upper, *clean.band_upper, 0.05 * *clean.band_upper);
}

TEST(Gate, AWindowOfIdenticalValuesUsesTheSpreadFloorAndTheLimitDecides) {
  const std::vector<double> same(20, 100.0);
  const auto tiny = judge_tonight(same, 100.5);
  EXPECT_EQ(tiny.verdict, Verdict::no_change) << tiny.reason;
  EXPECT_NEAR(tiny.spread_pct, 1.0, 0.01);
  EXPECT_LT(*tiny.band_lower, 100.0);
  EXPECT_GT(*tiny.band_upper, 100.0);
  EXPECT_EQ(judge_tonight(same, 110).verdict, Verdict::no_change);  // beyond the band, within the limit
  EXPECT_EQ(judge_tonight(same, 125).verdict, Verdict::regressed);
  EXPECT_EQ(judge_tonight(same, 75).verdict, Verdict::improved);
}

TEST(Gate, ImprovedIsMirrored) {
  const auto g = judge_tonight(nights(20, 1.0, 0.03, 4), 0.70);
  EXPECT_EQ(g.verdict, Verdict::improved) << g.reason;
  EXPECT_LT(g.change_pct, -25);
}

TEST(Gate, ThroughputHigherIsBetterIsMirrored) {
  const auto record = nights(20, 5000, 0.03, 5);
  const auto fell = judge_tonight(record, 5000 * 0.70, Better::higher);
  EXPECT_EQ(fell.verdict, Verdict::regressed) << fell.reason;
  EXPECT_LT(fell.change_pct, -25);
  EXPECT_EQ(judge_tonight(record, 5000 * 1.35, Better::higher).verdict, Verdict::improved);
  EXPECT_EQ(judge_tonight(record, 5000 * 0.92, Better::higher).verdict, Verdict::no_change);
  // A worsening of 20% is x0.8 for throughput: the limit in log terms is wider downwards.
  EXPECT_GT(fell.min_detectable_pct, 20);
  EXPECT_EQ(judge_tonight(record, 0, Better::higher).verdict, Verdict::regressed);
}

TEST(Gate, NoisyNightsCannotTellAChangeNearTheLimit) {
  // One night's spread 5%: the band (about +25%) is narrower than a worsening
  // of 1.5 x the limit (+30%), so +23% is beyond the limit but within the band.
  const auto record = nights(20, 1.0, 0.05, 6);
  const auto level = judge_tonight(record, 1.0);
  ASSERT_LT(*level.band_upper / level.reference, 1.30);
  ASSERT_GT(*level.band_upper / level.reference, 1.23);
  const auto beyond = judge_tonight(record, level.reference * 1.23);
  EXPECT_EQ(beyond.verdict, Verdict::inconclusive) << beyond.reason;
  EXPECT_NE(beyond.reason.find("within the band"), std::string::npos) << beyond.reason;
  // Within the limit: no alarm, though its interval reaches the limit (said).
  const auto within = judge_tonight(record, level.reference * 1.10);
  EXPECT_EQ(within.verdict, Verdict::no_change) << within.reason;
  EXPECT_GT(within.change_upper_pct, 20);
  EXPECT_NE(within.reason.find("could hide in the noise"), std::string::npos) << within.reason;
  EXPECT_GT(within.min_detectable_pct, 30);
  // Beyond the band it is a regression like any other.
  EXPECT_EQ(judge_tonight(record, level.reference * 1.40).verdict, Verdict::regressed);
}

TEST(Gate, AFigureWhoseBandIsWiderThanOneAndAHalfTimesTheLimitIsTooNoisyToJudgeIt) {
  // One night's spread 10%: the band reaches about +55%; a worsening of 30%
  // would be caught less than half the time, and a crossing of the limit
  // within the band is no evidence either way.
  const auto record = nights(20, 1.0, 0.10, 6);
  const auto level = judge_tonight(record, 1.0);
  ASSERT_GT(*level.band_upper / level.reference, 1.30);
  for (double tonight : {1.0, 1.10, 1.28}) {
    const auto g = judge_tonight(record, level.reference * tonight);
    EXPECT_EQ(g.verdict, Verdict::too_noisy) << tonight << ": " << g.reason;
    EXPECT_NE(g.reason.find("too noisy to judge at this limit"), std::string::npos) << g.reason;
    EXPECT_GT(g.min_detectable_pct, 40);  // at this noise only a large worsening is caught
  }
  // Beyond its band it still fails, and throughput is mirrored.
  EXPECT_EQ(judge_tonight(record, *level.band_upper * 1.05).verdict, Verdict::regressed);
  EXPECT_EQ(judge_tonight(record, level.reference * 0.75, Better::higher).verdict, Verdict::too_noisy);
  // The same figure at a limit it can judge: 60%.
  GateInput wide{.tonight = {.value = level.reference * 1.28}, .nights = record, .limit_pct = 60};
  EXPECT_EQ(judge(wide).verdict, Verdict::no_change) << judge(wide).reason;
}

TEST(Gate, ANotBackedFigureNeverFails) {
  GateInput in{.tonight = {.value = 3.0, .backed = false}, .nights = nights(20, 1.0, 0.03, 7)};
  const auto g = judge(in);
  EXPECT_EQ(g.verdict, Verdict::not_backed);
  EXPECT_NE(g.reason.find("not backed"), std::string::npos);
  in.nights.clear();
  EXPECT_EQ(judge(in).verdict, Verdict::not_backed);
}

TEST(Gate, FewerThanFiveNightsJudgesAgainstTheLastNightsRepetitions) {
  GateInput in{.nights = {100, 101, 99}};
  in.last_night = Estimate{.value = 100, .repetitions = {98, 100, 102, 99, 101}};
  in.tonight = Estimate{.value = 135, .repetitions = {133, 135, 137, 134, 136}};
  auto g = judge(in);
  EXPECT_EQ(g.verdict, Verdict::regressed) << g.reason;
  EXPECT_EQ(g.nights_used, 0u);
  EXPECT_DOUBLE_EQ(g.reference, 100);
  EXPECT_NE(g.reason.find("the last night's 100"), std::string::npos) << g.reason;

  in.tonight = Estimate{.value = 103, .repetitions = {101, 103, 105, 102, 104}};
  EXPECT_EQ(judge(in).verdict, Verdict::no_change);

  // Repetitions that disagree: the change's interval is wider than any
  // worsening the limit is about.
  in.tonight = Estimate{.value = 135, .repetitions = {90, 135, 180, 100, 170}};
  EXPECT_EQ(judge(in).verdict, Verdict::too_noisy) << judge(in).reason;
}

TEST(Gate, AMedianPulledUpByOutlierRepetitionsIsInconclusiveNotRegressed) {
  GateInput in{.nights = nights(20, 1.0, 0.03, 11)};
  in.tonight = Estimate{.value = 1.70, .repetitions = {1.0, 1.01, 0.99, 1.02, 1.7, 1.75, 1.8, 1.72, 1.78}};
  auto g = judge(in);
  EXPECT_EQ(g.verdict, Verdict::inconclusive) << g.reason;
  EXPECT_NE(g.reason.find("only 5 of 9 repetitions are worse by half of it: they disagree"), std::string::npos) << g.reason;
  in.tonight = Estimate{.value = 1.35, .repetitions = {1.33, 1.35, 1.31, 1.38, 1.36, 1.9, 1.34, 1.29, 1.37}};
  EXPECT_EQ(judge(in).verdict, Verdict::regressed);
}

TEST(Gate, ASingleBaselineWithoutRepetitionsCannotCallARegression) {
  GateInput in{.tonight = {.value = 135, .lower = 134, .upper = 136}, .nights = {100}};
  in.last_night = Estimate{.value = 100, .lower = 99, .upper = 101};
  const auto g = judge(in);
  EXPECT_EQ(g.verdict, Verdict::inconclusive) << g.reason;
  EXPECT_NE(g.reason.find("night-to-night noise is unknown"), std::string::npos) << g.reason;
  in.tonight = Estimate{.value = 103, .lower = 102, .upper = 104};
  EXPECT_EQ(judge(in).verdict, Verdict::no_change);
  in.last_night.reset();  // nights.back() stands in for it
  EXPECT_EQ(judge(in).verdict, Verdict::no_change);
}

TEST(Gate, NothingToCompareWith) {
  const auto g = judge(GateInput{.tonight = {.value = 1}});
  EXPECT_FALSE(g.compared);
  EXPECT_EQ(g.verdict, Verdict::no_change);
}

TEST(Gate, OnlyTheLastTwentyNightsCount) {
  auto record = nights(20, 2.0, 0.03, 8);
  const auto recent = nights(20, 1.0, 0.03, 9);
  record.insert(record.end(), recent.begin(), recent.end());
  const auto g = judge_tonight(record, 1.35);
  EXPECT_EQ(g.nights_used, kWindow);
  EXPECT_EQ(g.verdict, Verdict::regressed) << g.reason;
}

TEST(Gate, FalseAlarmsOnUnchangedNightsAreRare) {
  // 2,000 windows at a night's spread of 5%: at most 0.1% of figures regressed.
  int regressed = 0;
  for (unsigned seed = 0; seed < 2000; ++seed) {
    auto v = nights(21, 1.0, 0.05, 100 + seed);
    const double tonight = v.back();
    v.pop_back();
    regressed += judge_tonight(v, tonight).verdict == Verdict::regressed;
  }
  EXPECT_LE(regressed, 2);
}

TEST(Gate, VerdictNames) {
  EXPECT_EQ(to_string(Verdict::no_change), "no change");
  EXPECT_EQ(to_string(Verdict::not_backed), "not backed");
}

}  // namespace
}  // namespace crh::nightly
