// Percentile intervals: the binomial ranks, the blocks, the figure shown.
#include "core/percentile_interval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <boost/json.hpp>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>


namespace crh::core {
namespace {

constexpr double kTail = (1.0 - kIntervalConfidence) / 2;  // 0.025 each side

// x, or the integer it misses by a few ulps (10 / (1 - 0.99) is 999.99...9),
// else rounded up: as Histogram::quantile reads ranks.
double ceil_near(double x) {
  const double nearest = std::round(x);
  const double slack = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(x));
  return std::abs(x - nearest) <= slack ? nearest : std::ceil(x);
}

void check_q(double q) {
  if (!(q >= 0.0 && q < 1.0)) throw std::invalid_argument("percentile interval: q must be in [0, 1)");
}

// The bucket holding the sample of rank r (1..count): Histogram::quantile
// reads that sample's bucket for q = r / count, and its value (a midpoint
// clamped to min and max) lies in that bucket.
std::size_t bucket_of_rank(const Histogram& h, std::uint64_t r) {
  return Histogram::index_of(h.quantile(static_cast<double>(r) / static_cast<double>(h.count())));
}

std::string with_thousands(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void add_note(std::string& note, const std::string& text) { note += (note.empty() ? "" : "; ") + text; }

// Near-equal blocks: the count between kMinBlocks and kMaxBlocks that leaves
// the fewest points over (the most on a tie), so block lengths differ by at
// most one point and as few blocks as the series allows are the longer ones.
std::size_t block_count(std::size_t points) {
  std::size_t best = kMinBlocks;
  for (std::size_t b = kMinBlocks; b <= std::min(kMaxBlocks, points); ++b)
    if (points % b <= points % best) best = b;
  return best;
}

template <typename H>
std::optional<BlockBounds> blocks_of(std::span<const H> series, double q, std::int64_t value, std::string& why_not) {
  const std::size_t points = series.size();
  if (points < kMinBlocks) {
    why_not = "the run's series has " + std::to_string(points) + " step(s), fewer than the " +
              std::to_string(kMinBlocks) + " blocks a block interval needs";
    return std::nullopt;
  }
  const std::size_t b = block_count(points);
  std::vector<double> percentiles;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
  for (std::size_t j = 0; j < b; ++j) {
    PackedHistogram block;  // dense while it is merged into
    for (std::size_t i = j * points / b; i < (j + 1) * points / b; ++i) block.merge(series[i]);
    if (block.count() == 0) continue;  // a stall: no percentile to read
    percentiles.push_back(static_cast<double>(block.quantile(q)));
    lo = std::min(lo, block.min());
    hi = std::max(hi, block.max());
  }
  if (percentiles.size() < kMinBlocks) {
    why_not = "only " + std::to_string(percentiles.size()) + " of the run's " + std::to_string(b) +
              " blocks hold samples, fewer than the " + std::to_string(kMinBlocks) + " a block interval needs";
    return std::nullopt;
  }
  // Sectioning: the spread of the blocks' percentiles around the whole run's.
  const auto k = static_cast<double>(percentiles.size());
  double squares = 0;
  for (double p : percentiles) squares += (p - static_cast<double>(value)) * (p - static_cast<double>(value));
  const double t = boost::math::quantile(boost::math::students_t(k - 1), 1 - kTail);
  const double half = t * std::sqrt(squares / (k - 1)) / std::sqrt(k);
  return BlockBounds{std::max(lo, static_cast<std::int64_t>(std::floor(static_cast<double>(value) - half))),
                     std::min(hi, static_cast<std::int64_t>(std::ceil(static_cast<double>(value) + half))),
                     percentiles.size()};
}

}  // namespace

std::uint64_t rank_of(double q, std::uint64_t n) {
  if (n == 0) return 0;
  const double r = ceil_near(std::clamp(q, 0.0, 1.0) * static_cast<double>(n));
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(r), 1, n);
}

std::uint64_t samples_to_back(double q) {
  check_q(q);
  auto beyond = [q](std::uint64_t n) { return n - rank_of(q, n); };
  // n - ceil(q n) >= K exactly when n (1 - q) >= K; the steps settle the ulps.
  auto n = static_cast<std::uint64_t>(ceil_near(static_cast<double>(kBackingSamples) / (1 - q)));
  while (n > kBackingSamples && beyond(n - 1) >= kBackingSamples) --n;
  while (beyond(n) < kBackingSamples) ++n;
  return n;
}

RankBounds binomial_ranks(std::uint64_t n, double q) {
  check_q(q);
  if (n == 0) return {0, 1};
  const boost::math::binomial_distribution<double> b(static_cast<double>(n), q);
  const auto last = static_cast<std::int64_t>(n);
  // F(k) = P(B <= k), B the number of samples below the true quantile.
  auto F = [&](std::int64_t k) { return k < 0 ? 0.0 : k >= last ? 1.0 : boost::math::cdf(b, static_cast<double>(k)); };
  // Start near the normal approximation, then step to the exact ranks: a few
  // steps for large n, at most n for small n.
  const double sd = std::sqrt(static_cast<double>(n) * q * (1 - q));
  const double z = boost::math::quantile(boost::math::normal(), 1 - kTail);
  auto guess = [&](double zs) {
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(n) * q + zs * sd), -1, last);
  };
  // lower - 1: the largest k with P(B <= k) <= 2.5%, so P(X(lower) > quantile) = F(lower - 1) <= 2.5%.
  std::int64_t k = guess(-z);
  while (k < last && F(k + 1) <= kTail) ++k;
  while (k >= 0 && F(k) > kTail) --k;
  const auto lower = static_cast<std::uint64_t>(k + 1);
  // upper - 1: the smallest m with P(B <= m) >= 97.5%, so P(X(upper) < quantile) = 1 - F(upper - 1) <= 2.5%.
  std::int64_t m = std::max<std::int64_t>(0, guess(z));
  while (m > 0 && F(m - 1) >= 1 - kTail) --m;
  while (F(m) < 1 - kTail) ++m;
  return {lower, static_cast<std::uint64_t>(m + 1)};
}

Bounds binomial_interval(const Histogram& h, double q) {
  const std::uint64_t n = h.count();
  if (n == 0) return {};
  const RankBounds r = binomial_ranks(n, q);
  const std::size_t min_bucket = Histogram::index_of(h.min()), max_bucket = Histogram::index_of(h.max());
  Bounds out{h.min(), h.max()};
  if (r.lower >= 1) {
    const std::size_t i = bucket_of_rank(h, r.lower);
    out.lower = i == min_bucket ? h.min() : Histogram::lowest_of(i);
  }
  if (r.upper <= n) {
    const std::size_t i = bucket_of_rank(h, r.upper);
    out.upper = i == max_bucket ? h.max() : Histogram::highest_of(i);
  }
  return out;
}

std::optional<BlockBounds> block_interval(std::span<const PackedHistogram> series, double q, std::int64_t value,
                                          std::string& why_not) {
  return blocks_of(series, q, value, why_not);
}

std::optional<BlockBounds> block_interval(std::span<const Histogram> series, double q, std::int64_t value,
                                          std::string& why_not) {
  return blocks_of(series, q, value, why_not);
}

std::string_view to_string(IntervalMethod m) { return m == IntervalMethod::blocks ? "blocks" : "binomial"; }

PercentileInterval percentile_interval(const Histogram& h, double q, double rate_per_s,
                                       std::optional<std::span<const PackedHistogram>> series) {
  check_q(q);
  PercentileInterval p;
  p.q = q;
  p.n = h.count();
  p.value = h.quantile(q);
  p.binomial = binomial_interval(h, q);
  p.shown = p.binomial;
  p.beyond = p.n - rank_of(q, p.n);
  p.backed = p.beyond >= kBackingSamples;
  if (p.n == 0) add_note(p.note, "no samples");
  else {
    const RankBounds r = binomial_ranks(p.n, q);
    if (r.lower == 0)
      add_note(p.note, "too few samples to bound it from below: the lower bound is the smallest sample");
    if (r.upper > p.n)
      add_note(p.note, "too few samples to bound it from above: the upper bound is the largest sample");
  }
  if (series && p.n > 0) {
    std::uint64_t held = 0;
    for (const auto& s : *series) held += s.count();
    std::string why_not;
    if (held != p.n)
      why_not = "the per-second series holds " + with_thousands(held) + " of the " + with_thousands(p.n) +
                " samples (a document without one was merged in): no block interval";
    else p.blocks = block_interval(*series, q, p.value, why_not);
    if (!p.blocks) add_note(p.note, why_not);
    else if (p.blocks->upper - p.blocks->lower > p.shown.upper - p.shown.lower) {
      p.shown = {p.blocks->lower, p.blocks->upper};
      p.method = IntervalMethod::blocks;
    }
  }
  // Said by backed, beyond and backing_s: the renderings word it themselves.
  if (!p.backed && rate_per_s > 0) p.backing_s = static_cast<double>(samples_to_back(q)) / rate_per_s;
  return p;
}

}  // namespace crh::core
