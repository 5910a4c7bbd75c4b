// Change points on synthetic records with known changes (method in
// nightly/change_points.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nightly/gate.hpp"

namespace crh::nightly {
namespace {

std::vector<double> noise(std::size_t n, double sd, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, sd);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(std::exp(z(rng)));
  return v;
}

TEST(ChangePoints, AStepIsNamedAtItsFirstNight) {
  auto s = noise(30, 0.02, 1);
  for (std::size_t i = 20; i < s.size(); ++i) s[i] *= 1.35;
  const auto cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 20u);
  EXPECT_EQ(cps[0].end, 30u);
  EXPECT_FALSE(cps[0].drift);
  EXPECT_TRUE(cps[0].worse);
  EXPECT_TRUE(cps[0].beyond_limit);
  EXPECT_NEAR(cps[0].change_pct, 35, 5);
}

TEST(ChangePoints, ADriftOf5PercentANightIsFoundWithinFiveNightsNamingItsStart) {
  for (unsigned seed = 0; seed < 20; ++seed) {
    auto s = noise(25, 0.02, 10 + seed);
    for (int night = 1; night <= 5; ++night) s.push_back(std::exp(0.05 * night) * noise(1, 0.02, 99 + seed)[0]);
    const auto cps = change_points(s, Better::lower, 20);
    ASSERT_FALSE(cps.empty()) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(cps.back().index), 25, 1) << "seed " << seed;
    EXPECT_TRUE(cps.back().beyond_limit) << "seed " << seed << " after " << cps.back().change_pct;
  }
}

TEST(ChangePoints, ADriftIsNamedExactlyWhenTheNoiseIsLow) {
  std::vector<double> s(25, 1.0);
  for (int night = 1; night <= 5; ++night) s.push_back(std::exp(0.05 * night));
  const auto cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 25u);
  EXPECT_TRUE(cps[0].drift);
  EXPECT_NEAR(cps[0].change_pct, std::expm1(0.25) * 100, 1);
}

TEST(ChangePoints, ThroughputFallingIsWorseAndRisingIsNot) {
  auto s = noise(30, 0.02, 2);
  for (std::size_t i = 15; i < s.size(); ++i) s[i] *= 0.7;
  auto cps = change_points(s, Better::higher, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_TRUE(cps[0].worse);
  EXPECT_TRUE(cps[0].beyond_limit);
  for (std::size_t i = 15; i < s.size(); ++i) s[i] /= 0.7 * 0.7;
  cps = change_points(s, Better::higher, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_FALSE(cps[0].worse);
  EXPECT_FALSE(cps[0].beyond_limit);
}

TEST(ChangePoints, ALevelLaterUndoneDoesNotFailTonight) {
  auto s = noise(40, 0.02, 3);
  for (std::size_t i = 15; i < 25; ++i) s[i] *= 1.4;
  const auto cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 15u);
  EXPECT_EQ(cps[1].index, 25u);
  EXPECT_TRUE(cps[0].worse);
  EXPECT_FALSE(cps[0].beyond_limit);
}

TEST(ChangePoints, ANightBackAtTheOldLevelDoesNotFailOnAnOldChangePoint) {
  // Failed nights never join the record: without this a change point named by
  // chance would fail every night after it.
  auto s = noise(28, 0.02, 6);
  for (std::size_t i = 20; i < s.size(); ++i) s[i] *= 1.35;
  s.push_back(1.0);
  const auto cps = change_points(s, Better::lower, 20);
  ASSERT_FALSE(cps.empty());
  EXPECT_EQ(cps[0].index, 20u);
  EXPECT_TRUE(cps[0].worse);
  EXPECT_FALSE(cps[0].beyond_limit);
  s.back() = 1.36;
  EXPECT_TRUE(change_points(s, Better::lower, 20)[0].beyond_limit);
}

TEST(ChangePoints, ASmallStepIsAChangePointWithinTheLimit) {
  auto s = noise(30, 0.01, 4);
  for (std::size_t i = 18; i < s.size(); ++i) s[i] *= 1.08;
  const auto cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 18u);
  EXPECT_FALSE(cps[0].beyond_limit);
}

TEST(ChangePoints, PureNoiseRarelyHasOneAndAlmostNeverBeyondTheLimit) {
  // 1,000 records of 60 nights: measured 16% with a change point (within the
  // limit: harmless), none beyond it; with 1 outlier night in 8 at 1.6-1.9x
  // (one run a night, no repetitions) 3.0% of records have one beyond it:
  // without repetitions outlier nights cluster by chance.
  for (double outliers : {0.0, 0.125}) {
    int any = 0, beyond = 0;
    for (unsigned seed = 0; seed < 1000; ++seed) {
      auto s = noise(60, outliers ? 0.07 : 0.05, 1000 + seed);
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(0, 1);
      for (auto& v : s)
        if (u(rng) < outliers) v *= 1.6 + 0.3 * u(rng);
      const auto cps = change_points(s, Better::lower, 20);
      any += !cps.empty();
      for (const auto& cp : cps) beyond += cp.beyond_limit;
    }
    EXPECT_LE(any, outliers ? 350 : 220) << "outliers " << outliers;
    EXPECT_LE(beyond, outliers ? 40 : 2) << "outliers " << outliers;
  }
}

TEST(ChangePoints, ASlowSpellOfTwoNightsDoesNotFailButAThirdNightDoes) {
  // Measured mixed get-agent p50s (ns) of 30 unchanged nights at the nightly
  // settings (bench/nightly, pinned, --repeat 9), nights 1-27 as night 27 saw
  // them: the machine was slow over nights 26-27, and night 27 failed on a
  // change point "from night 26" before a level had to last 3 nights.
  std::vector<double> s = {265215, 263167, 253439, 258559, 254463, 259583, 259583, 259583, 256511,
                           259583, 263167, 252415, 256511, 256511, 252415, 267263, 256511, 267263,
                           258559, 254463, 261631, 255487, 256511, 259583, 279551, 345087, 322559};
  auto cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 25u);
  EXPECT_EQ(cps[0].nights_at_level, 2u);
  EXPECT_TRUE(cps[0].beyond_limit);  // the level is beyond the limit...
  EXPECT_FALSE(cps[0].fails());      // ...but has not lasted: the night could not tell
  s.push_back(s.back());             // a third slow night: now it fails
  cps = change_points(s, Better::lower, 20);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 25u);
  EXPECT_TRUE(cps[0].fails());
}

TEST(ChangePoints, ShortOrUnusableSeriesHaveNone) {
  EXPECT_TRUE(change_points({1, 2, 3}, Better::lower, 20).empty());
  EXPECT_TRUE(change_points({0, 0, 0, 0, 0, 0, 0, 0}, Better::lower, 20).empty());
}

TEST(ChangePoints, IndicesCountTheNightsAsGivenAndTheResultIsDeterministic) {
  auto s = noise(30, 0.02, 5);
  for (std::size_t i = 20; i < s.size(); ++i) s[i] *= 1.35;
  s[3] = 0;  // a night with no usable value: skipped, indices still those of `series`
  const auto a = change_points(s, Better::lower, 20), b = change_points(s, Better::lower, 20);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].index, 20u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].after, b[0].after);
}

}  // namespace
}  // namespace crh::nightly
