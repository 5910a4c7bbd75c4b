// The load generator's latency histogram: bucket geometry, quantile accuracy
// against sorted samples, exact merge and the JSON form used to merge runs;
// and its packed form, which must give exactly what the dense one gives.
#include "core/histogram.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace crh::core {
namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kSec = 1'000'000'000;

Histogram histogram_of(const std::vector<std::int64_t>& values) {
  Histogram h;
  for (auto v : values) h.record(v);
  return h;
}

// Log-spaced from 1 us to 60 s, both ends included.
std::vector<std::int64_t> log_spaced(std::size_t n) {
  std::vector<std::int64_t> out;
  const double ratio = static_cast<double>(60 * kSec) / static_cast<double>(kUs);
  for (std::size_t i = 0; i < n; ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(n - 1);
    out.push_back(std::llround(static_cast<double>(kUs) * std::pow(ratio, f)));
  }
  return out;
}

// Per-mille quantiles so that the expected rank ceil(q*n) is computed in integers,
// independently of the floating point inside Histogram::quantile.
void expect_quantiles_within_one_percent(std::vector<std::int64_t> samples,
                                         const std::string& set) {
  const Histogram h = histogram_of(samples);
  std::sort(samples.begin(), samples.end());
  const auto n = static_cast<std::uint64_t>(samples.size());
  for (std::uint64_t per_mille : {500u, 900u, 990u, 999u, 1000u}) {
    const std::uint64_t rank = (per_mille * n + 999) / 1000;
    const std::int64_t exact = samples[rank - 1];
    const std::int64_t got = h.quantile(static_cast<double>(per_mille) / 1000.0);
    EXPECT_LE(std::abs(static_cast<double>(got - exact)), static_cast<double>(exact) / 100.0)
        << set << ": q=" << per_mille << "/1000 exact=" << exact << " got=" << got;
  }
}

void expect_rejected(const boost::json::value& v, const std::string& field) {
  try {
    (void)Histogram::from_json(v);
    ADD_FAILURE() << "accepted " << boost::json::serialize(v);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
        << "message does not name " << field << ": " << e.what();
  }
}

boost::json::value valid_json() {
  Histogram h;
  h.record(5 * kUs);
  h.record(7 * kUs);
  h.record(3 * kSec);
  return h.to_json();
}

TEST(Histogram, BucketsTileTheRangeWithoutGapsOrOverlaps) {
  EXPECT_EQ(Histogram::lowest_of(0), 0);
  for (std::size_t i = 0; i < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::index_of(Histogram::lowest_of(i)), i);
    ASSERT_EQ(Histogram::index_of(Histogram::highest_of(i)), i);
    if (i + 1 < Histogram::kBucketCount) {
      ASSERT_EQ(Histogram::lowest_of(i + 1), Histogram::highest_of(i) + 1) << "index " << i;
    }
  }
  EXPECT_LE(Histogram::lowest_of(Histogram::kBucketCount - 1), 60 * kSec);
  EXPECT_GE(Histogram::highest_of(Histogram::kBucketCount - 1), 60 * kSec);
  EXPECT_THROW((void)Histogram::lowest_of(Histogram::kBucketCount), std::out_of_range);
}

TEST(Histogram, ValuesBelow128HaveExactBuckets) {
  for (std::int64_t v = 0; v < 128; ++v) {
    const auto i = Histogram::index_of(v);
    EXPECT_EQ(Histogram::lowest_of(i), v);
    EXPECT_EQ(Histogram::highest_of(i), v);
  }
}

TEST(Histogram, EveryValueFromOneMicrosecondToSixtySecondsIsInABucketUnderOnePercentWide) {
  std::vector<std::int64_t> values = log_spaced(20'000);
  for (std::size_t i = Histogram::index_of(kUs); i < Histogram::kBucketCount; ++i) {
    values.push_back(Histogram::lowest_of(i));
    values.push_back(Histogram::highest_of(i));
  }
  for (std::int64_t v : values) {
    if (v < kUs || v > 60 * kSec) continue;
    const auto i = Histogram::index_of(v);
    const std::int64_t lo = Histogram::lowest_of(i);
    const std::int64_t hi = Histogram::highest_of(i);
    ASSERT_LE(lo, v);
    ASSERT_GE(hi, v);
    ASSERT_LT(static_cast<double>(hi - lo + 1) / static_cast<double>(lo), 0.01) << "value " << v;
  }
}

TEST(Histogram, QuantilesWithinOnePercentOfExact) {
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  std::vector<std::int64_t> log_uniform;
  for (int i = 0; i < 20'000; ++i)
    log_uniform.push_back(std::llround(1e3 * std::pow(6e7, unit(rng))));
  expect_quantiles_within_one_percent(log_uniform, "log-uniform 1us..60s");

  // p90 falls in the fast mode, p99 and above in the slow one.
  std::vector<std::int64_t> bimodal;
  std::normal_distribution<double> fast(200e3, 20e3), slow(2e9, 200e6);
  for (int i = 0; i < 10'000; ++i) bimodal.push_back(std::llround(std::max(1e3, fast(rng))));
  for (int i = 0; i < 1'000; ++i) bimodal.push_back(std::llround(std::max(1e3, slow(rng))));
  expect_quantiles_within_one_percent(bimodal, "bimodal");

  expect_quantiles_within_one_percent(std::vector<std::int64_t>(5'000, 1'234'567), "constant");

  std::vector<std::int64_t> edges;
  for (std::size_t i = Histogram::index_of(kUs); i + 1 < Histogram::kBucketCount; i += 7) {
    edges.push_back(Histogram::lowest_of(i));
    edges.push_back(Histogram::highest_of(i));
  }
  expect_quantiles_within_one_percent(edges, "bucket edges");

  std::vector<std::int64_t> tiny;
  std::uniform_int_distribution<std::int64_t> below128(0, 127);
  for (int i = 0; i < 3'000; ++i) tiny.push_back(below128(rng));
  expect_quantiles_within_one_percent(tiny, "below 128 ns");
  Histogram h = histogram_of(tiny);
  std::sort(tiny.begin(), tiny.end());
  EXPECT_EQ(h.quantile(0.5), tiny[1'500 - 1]);  // exact, not just within 1%
}

TEST(Histogram, QuantileTakesTheSampleOfRankCeilQTimesCount) {
  Histogram h;
  for (std::int64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.quantile(0.0), 1);
  EXPECT_EQ(h.quantile(0.001), 1);
  EXPECT_EQ(h.quantile(0.07), 7);  // 0.07 * 100 is 7.000000000000001 in doubles
  EXPECT_EQ(h.quantile(0.5), 50);
  EXPECT_EQ(h.quantile(0.505), 51);
  EXPECT_EQ(h.quantile(0.99), 99);
  EXPECT_EQ(h.quantile(1.0), 100);
}

TEST(Histogram, QuantileOfOneIsTheExactMaxAndResultsStayWithinMinAndMax) {
  Histogram h;
  const std::int64_t top = Histogram::highest_of(Histogram::index_of(5 * kSec));
  h.record(top);
  h.record(top);
  EXPECT_EQ(h.quantile(1.0), top);
  EXPECT_EQ(h.quantile(0.5), top);  // the bucket midpoint is below the only value
  EXPECT_EQ(h.quantile(0.0), top);
}

TEST(Histogram, RecordNEqualsNRecords) {
  Histogram a, b;
  for (int i = 0; i < 5; ++i) a.record(12'345);
  b.record_n(12'345, 5);
  b.record_n(99, 0);  // no samples: must not move min
  EXPECT_EQ(a, b);
  EXPECT_EQ(b.min(), 12'345);
}

TEST(Histogram, MergeEqualsHistogramOfUnion) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> fast(kUs, 10 * kUs), slow(kSec, 70 * kSec);
  std::vector<std::int64_t> a, b;
  for (int i = 0; i < 3'000; ++i) a.push_back(fast(rng));
  for (int i = 0; i < 500; ++i) b.push_back(slow(rng));
  b.push_back(-5);

  Histogram merged = histogram_of(a);
  merged.merge(histogram_of(b));
  std::vector<std::int64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  const Histogram whole = histogram_of(all);

  EXPECT_EQ(merged, whole);
  EXPECT_EQ(merged.count(), all.size());
  EXPECT_EQ(merged.min(), 0);
  EXPECT_EQ(merged.max(), *std::max_element(all.begin(), all.end()));
  EXPECT_DOUBLE_EQ(merged.mean(), whole.mean());
  EXPECT_EQ(merged.quantile(0.99), whole.quantile(0.99));
  EXPECT_FALSE(merged == histogram_of(a));
}

TEST(Histogram, MergeIntoEmptyCopiesAndMergeOfEmptyChangesNothing) {
  const Histogram source = histogram_of({3 * kUs, 40 * kUs, 2 * kSec});
  Histogram empty;
  empty.merge(source);
  EXPECT_EQ(empty, source);
  EXPECT_EQ(empty.min(), 3 * kUs);

  Histogram unchanged = source;
  unchanged.merge(Histogram{});
  EXPECT_EQ(unchanged, source);
  EXPECT_EQ(unchanged.min(), 3 * kUs);
}

TEST(Histogram, MergeIsCommutative) {
  const Histogram a = histogram_of({5 * kUs, 6 * kUs, 7 * kSec});
  const Histogram b = histogram_of({100, 30 * kSec});
  Histogram ab = a, ba = b;
  ab.merge(b);
  ba.merge(a);
  EXPECT_EQ(ab, ba);
  EXPECT_EQ(ab.min(), 100);
  EXPECT_EQ(ab.max(), 30 * kSec);
}

TEST(Histogram, EqualityIgnoresTrailingEmptyBucketsButNotSum) {
  Histogram grown = histogram_of({10 * kSec});
  grown.reset();
  grown.record(500);
  EXPECT_EQ(grown, histogram_of({500}));
  EXPECT_FALSE(histogram_of({1000}) == histogram_of({1001}));  // same bucket, sums differ
}

TEST(Histogram, JsonRoundTripGivesAnEqualHistogram) {
  Histogram h;
  for (std::int64_t v : log_spaced(2'000)) h.record(v);
  h.record(0);
  h.record(90 * kSec);
  const boost::json::object o = h.to_json();
  EXPECT_EQ(o.at("unit").as_string(), "ns");
  EXPECT_EQ(o.at("precision_bits").to_number<int>(), 7);
  EXPECT_EQ(o.at("count").to_number<std::uint64_t>(), h.count());
  EXPECT_EQ(Histogram::from_json(o), h);
  // Through text, as between machines.
  EXPECT_EQ(Histogram::from_json(boost::json::parse(boost::json::serialize(o))), h);

  const auto& buckets = o.at("buckets").as_array();
  for (std::size_t k = 1; k < buckets.size(); ++k)
    EXPECT_LT(buckets[k - 1].as_array()[0].to_number<std::uint64_t>(),
              buckets[k].as_array()[0].to_number<std::uint64_t>());

  EXPECT_EQ(Histogram::from_json(Histogram{}.to_json()), Histogram{});
}

TEST(Histogram, JsonKeepsASumBeyondSixtyFourBitsExact) {
  Histogram h;
  h.record_n(std::numeric_limits<std::int64_t>::max(), 4);
  h.record(1);
  const boost::json::object o = h.to_json();
  ASSERT_TRUE(o.at("sum").is_string());
  EXPECT_EQ(o.at("sum").as_string(), "36893488147419103229");  // 4 * (2^63 - 1) + 1
  Histogram back = Histogram::from_json(boost::json::parse(boost::json::serialize(o)));
  EXPECT_EQ(back, h);
  back.record(1);
  EXPECT_FALSE(back == h);
}

TEST(Histogram, FromJsonRejectsWrongUnit) {
  auto v = valid_json();
  v.as_object()["unit"] = "us";
  expect_rejected(v, "unit");
}

TEST(Histogram, FromJsonRejectsWrongPrecision) {
  auto v = valid_json();
  v.as_object()["precision_bits"] = 8;
  expect_rejected(v, "precision_bits");
}

TEST(Histogram, FromJsonRejectsBucketIndexOutOfRange) {
  auto v = valid_json();
  v.as_object()["buckets"].as_array().back().as_array()[0] = Histogram::kBucketCount;
  expect_rejected(v, "buckets");
}

TEST(Histogram, FromJsonRejectsCountMismatch) {
  auto v = valid_json();
  v.as_object()["count"] = 4;
  expect_rejected(v, "count");
}

TEST(Histogram, FromJsonRejectsNegativeOrNonIntegerBucketCounts) {
  auto negative = valid_json();
  negative.as_object()["buckets"].as_array()[0].as_array()[1] = -1;
  expect_rejected(negative, "buckets[0] count");
  auto fractional = valid_json();
  fractional.as_object()["buckets"].as_array()[0].as_array()[1] = 1.5;
  expect_rejected(fractional, "buckets[0] count");
}

TEST(Histogram, FromJsonRejectsMinOrMaxOutsideTheirBuckets) {
  auto v = valid_json();
  v.as_object()["max"] = 9 * kSec;
  expect_rejected(v, "max");
}

TEST(Histogram, ClampsAboveSixtySecondsIntoTopBucketButKeepsExactMax) {
  Histogram h;
  h.record(61 * kSec);
  h.record(3'600 * kSec);
  EXPECT_EQ(Histogram::index_of(3'600 * kSec), Histogram::kBucketCount - 1);
  EXPECT_EQ(h.max(), 3'600 * kSec);
  EXPECT_EQ(h.min(), 61 * kSec);
  EXPECT_EQ(h.quantile(1.0), 3'600 * kSec);
  EXPECT_EQ(h.quantile(0.5), 61 * kSec);  // top-bucket midpoint, clamped to min
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(61 + 3'600) / 2 * kSec);
}

TEST(Histogram, NegativeValuesAreRecordedAsZero) {
  Histogram h;
  h.record(-42);
  h.record_n(std::numeric_limits<std::int64_t>::min(), 2);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h, histogram_of({0, 0, 0}));
}

TEST(Histogram, EmptyHistogramReportsZeros) {
  const Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.quantile(0.5), 0);
  EXPECT_EQ(h.quantile(1.0), 0);
}

TEST(Histogram, ResetLeavesAnEmptyHistogram) {
  Histogram h = histogram_of({5 * kUs, 20 * kSec});
  h.reset();
  EXPECT_EQ(h, Histogram{});
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.quantile(0.99), 0);
  h.record(7 * kUs);
  EXPECT_EQ(h.min(), 7 * kUs);
  EXPECT_EQ(h.max(), 7 * kUs);
}

// ---------------------------------------------------------------- PackedHistogram

// Samples as a run's second sees them: a dense middle, a sparse tail, counts
// both small and beyond one varint byte, and the extremes.
std::vector<std::int64_t> second_like(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> latency(std::log(300.0 * kUs), 0.6);
  std::vector<std::int64_t> out;
  for (int i = 0; i < 20'000; ++i) out.push_back(static_cast<std::int64_t>(latency(rng)));
  for (int i = 0; i < 300; ++i) out.push_back(42 * kUs);  // one bucket of 300: a two-byte count
  out.push_back(0);
  out.push_back(90 * kSec);
  return out;
}

TEST(PackedHistogram, GivesWhatTheDenseFormGives) {
  const Histogram dense = histogram_of(second_like(1));
  PackedHistogram packed(dense);
  EXPECT_TRUE(packed.packed());
  EXPECT_EQ(packed.histogram(), dense);
  EXPECT_EQ(packed.count(), dense.count());
  EXPECT_EQ(packed.min(), dense.min());
  EXPECT_EQ(packed.max(), dense.max());
  EXPECT_DOUBLE_EQ(packed.mean(), dense.mean());
  for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) EXPECT_EQ(packed.quantile(q), dense.quantile(q)) << q;
  EXPECT_EQ(boost::json::serialize(packed.to_json()), boost::json::serialize(dense.to_json()));
  EXPECT_TRUE(packed == PackedHistogram(dense));

  EXPECT_EQ(PackedHistogram(Histogram{}).histogram(), Histogram{});
  EXPECT_EQ(PackedHistogram{}.histogram(), Histogram{});
}

TEST(PackedHistogram, HoldsAboutTwoBytesPerNonEmptyBucket) {
  const Histogram dense = histogram_of(second_like(2));
  const auto buckets = dense.to_json().at("buckets").as_array().size();
  const std::size_t highest = Histogram::index_of(dense.max());
  PackedHistogram packed(dense);
  EXPECT_LE(packed.storage_bytes(), 2 * buckets + 16) << buckets << " non-empty buckets";
  EXPECT_LT(packed.storage_bytes() * 10, (highest + 1) * sizeof(std::uint64_t)) << "the dense form's size";
}

TEST(PackedHistogram, RecordsDenseUntilPackedAndAfterwardsToo) {
  const auto samples = second_like(3);
  PackedHistogram h;
  for (auto v : samples) h.record(v);
  EXPECT_FALSE(h.packed());
  h.pack();
  EXPECT_TRUE(h.packed());
  h.record(5 * kSec);  // a late sample: unpacks
  EXPECT_FALSE(h.packed());
  h.pack();
  auto all = samples;
  all.push_back(5 * kSec);
  EXPECT_EQ(h.histogram(), histogram_of(all));
}

TEST(PackedHistogram, MergesExactlyInEveryForm) {
  const auto a = second_like(4), b = second_like(5);
  auto all = a;
  all.insert(all.end(), b.begin(), b.end());
  const Histogram whole = histogram_of(all);
  for (bool this_packed : {false, true})
    for (bool other_packed : {false, true}) {
      const PackedHistogram y(histogram_of(b));
      PackedHistogram merged;
      for (auto v : a) merged.record(v);
      if (this_packed) merged.pack();
      if (other_packed) merged.merge(y);
      else merged.merge(histogram_of(b));
      EXPECT_EQ(merged.packed(), this_packed) << "the merge keeps this one's form";
      EXPECT_EQ(merged.histogram(), whole) << this_packed << other_packed;
    }
  PackedHistogram empty;
  empty.merge(PackedHistogram(whole));
  EXPECT_EQ(empty.histogram(), whole);
}

TEST(PackedHistogram, AssignedFromADenseHistogramIsPacked) {
  const Histogram dense = histogram_of(second_like(6));
  PackedHistogram h;
  h.record(3 * kUs);
  h = dense;
  EXPECT_TRUE(h.packed());
  EXPECT_EQ(h.histogram(), dense);
}

}  // namespace
}  // namespace crh::core
