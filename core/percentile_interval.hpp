// The 95% interval of a percentile read from a latency histogram (DESIGN.md
// §7, issue 23): how far the true percentile of the process that made the
// samples may lie from the one measured, and whether enough samples stand
// behind the percentile at all.
//
// Two intervals, the wider shown:
//  * binomial: distribution-free, from the ranks of the samples. The number of
//    samples below the true q-quantile is Binomial(n, q), so the samples of
//    ranks l and u bracket it with probability >= 95%; they are mapped to the
//    edges of the buckets holding them. Exact for independent samples.
//  * blocks: samples of one run are not independent (a slow second slows
//    every request in it), which the binomial interval cannot see. The run's
//    per-second histograms are merged into 10 to 20 consecutive blocks, the
//    percentile is read in each, and their spread gives a Student t interval
//    around the whole run's percentile ("sectioning": centred on the whole
//    run's estimate, not on the blocks' mean, which is biased for high
//    percentiles of small blocks; Asmussen & Glynn, Stochastic Simulation,
//    2007, III.5a).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/histogram.hpp"

namespace crh::core {

inline constexpr double kIntervalConfidence = 0.95;
// A percentile is backed when at least this many samples lie beyond it.
inline constexpr std::uint64_t kBackingSamples = 10;
// Blocks for the block interval: at least 10 (fewer give a t quantile so wide
// the interval says little), at most 20 (more make blocks of a second or two,
// whose neighbours are correlated and whose high percentiles rest on few samples).
inline constexpr std::size_t kMinBlocks = 10;
inline constexpr std::size_t kMaxBlocks = 20;

// 1-based ranks of the order statistics bracketing the q-quantile of n
// samples: P(X(lower) <= quantile <= X(upper)) >= 95% for any continuous
// distribution. lower = 0: no sample bounds it from below (too few samples);
// upper = n + 1: none bounds it from above.
struct RankBounds {
  std::uint64_t lower = 0;
  std::uint64_t upper = 0;
};
RankBounds binomial_ranks(std::uint64_t n, double q);

struct Bounds {
  std::int64_t lower = 0;  // ns, inclusive
  std::int64_t upper = 0;  // ns, inclusive (the highest value of its bucket)
};

// The binomial ranks mapped to bucket edges: the lowest value of the bucket
// holding the sample of rank lower, the highest of the one holding rank upper,
// clamped to the histogram's min and max (which also stand in for a rank
// outside 1..n). {0, 0} when empty.
Bounds binomial_interval(const Histogram& h, double q);

struct BlockBounds {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  std::size_t count = 0;  // blocks the interval rests on (those holding samples)
};

// The block interval around `value` (the whole series' q-quantile) from a
// series of consecutive per-interval histograms (a run's seconds, or steps of
// several seconds). Nothing when fewer than kMinBlocks blocks hold samples;
// `why_not` then says why.
std::optional<BlockBounds> block_interval(std::span<const PackedHistogram> series, double q, std::int64_t value,
                                          std::string& why_not);
std::optional<BlockBounds> block_interval(std::span<const Histogram> series, double q, std::int64_t value,
                                          std::string& why_not);

enum class IntervalMethod { binomial, blocks };
std::string_view to_string(IntervalMethod m);  // "binomial", "blocks"

struct PercentileInterval {
  double q = 0;
  std::int64_t value = 0;  // Histogram::quantile(q)
  std::uint64_t n = 0;
  Bounds shown;  // the wider of the two
  IntervalMethod method = IntervalMethod::binomial;
  Bounds binomial;
  std::optional<BlockBounds> blocks;
  std::uint64_t beyond = 0;  // samples above the percentile's rank
  bool backed = false;       // beyond >= kBackingSamples
  // Not backed, at a known rate: the run length at that rate that would back it.
  std::optional<double> backing_s;
  std::string note;  // empty, or why an interval is missing or open
};

// `rate_per_s`: samples per second, for backing_s (0: unknown). `series`: the
// per-second (or per-step) histograms of the same samples, none when the
// figure has none (binomial only); a series that does not hold exactly the
// histogram's samples gives no block interval, and a note.
// Throws std::invalid_argument unless 0 <= q < 1.
PercentileInterval percentile_interval(const Histogram& h, double q, double rate_per_s,
                                       std::optional<std::span<const PackedHistogram>> series = std::nullopt);

// The 1-based rank of the sample Histogram::quantile reads for q of n samples.
std::uint64_t rank_of(double q, std::uint64_t n);

// The samples that put kBackingSamples beyond the q-quantile's rank: the
// smallest n with n - rank_of(q, n) >= kBackingSamples. Throws
// std::invalid_argument unless 0 <= q < 1.
std::uint64_t samples_to_back(double q);

}  // namespace crh::core
