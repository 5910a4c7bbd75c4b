// Latency histogram of the load generator: log-linear (HDR-style) buckets with
// under 1% relative error from 1 us to 60 s, mergeable exactly across threads,
// runs and machines through a sparse JSON form; and its packed form for a
// series that keeps one histogram per second of a run.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/json/fwd.hpp>

namespace crh::core {

namespace detail {
// Outside the class so that Histogram::kBucketCount can be computed from it.
// Values below 2^(bits+1) have a bucket each (exact); above, each power of two
// [2^e, 2^(e+1)) is split into 2^bits buckets of width 2^(e-bits).
constexpr std::size_t histogram_index(std::int64_t ns, int bits, std::int64_t clamp_ns) {
  const auto v = static_cast<std::uint64_t>(std::clamp<std::int64_t>(ns, 0, clamp_ns));
  const auto shift = static_cast<int>(std::bit_width(v | ((std::uint64_t{2} << bits) - 1))) - (bits + 1);
  return (static_cast<std::size_t>(shift) << bits) + static_cast<std::size_t>(v >> shift);
}
}  // namespace detail

class Histogram {
 public:
  // 2^7 linear sub-buckets per power of two: bucket width / lowest <= 1/128.
  static constexpr int kPrecisionBits = 7;
  static constexpr std::int64_t kSubBuckets = std::int64_t{1} << kPrecisionBits;
  // Larger values share the top bucket (max() stays exact).
  static constexpr std::int64_t kClampNs = 60'000'000'000;

  void record(std::int64_t ns);
  void record_n(std::int64_t ns, std::uint64_t n);
  void merge(const Histogram& other);
  void reset();  // keeps capacity

  std::uint64_t count() const { return count_; }
  std::int64_t min() const { return count_ == 0 ? 0 : min_; }  // 0 when empty
  std::int64_t max() const { return max_; }                    // 0 when empty
  double mean() const;                                         // 0 when empty
  // The midpoint of the bucket holding the sample of rank ceil(q*count) (rank 1
  // when q=0), clamped to [min,max]; q=1 gives max(); 0 when empty. q outside
  // [0,1] is clamped to it.
  std::int64_t quantile(double q) const;

  // {"unit":"ns","precision_bits":7,"count":N,"min":..,"max":..,"sum":..,
  //  "buckets":[[index,count],...]} with only non-zero buckets, ascending.
  // "sum" is a number when it fits in 64 bits, else a string of decimal digits.
  boost::json::object to_json() const;
  // Throws std::runtime_error naming the bad field.
  static Histogram from_json(const boost::json::value& v);

  // Same counts per bucket (trailing zeros ignored), count, min, max and sum.
  bool operator==(const Histogram& other) const;

  // Bucket geometry (see detail::histogram_index). Negative values map to
  // bucket 0, values above kClampNs to the top bucket.
  static constexpr std::size_t index_of(std::int64_t ns) {
    return detail::histogram_index(ns, kPrecisionBits, kClampNs);
  }
  static constexpr std::size_t kBucketCount =
      detail::histogram_index(kClampNs, kPrecisionBits, kClampNs) + 1;
  // Both throw std::out_of_range for index >= kBucketCount.
  static constexpr std::int64_t lowest_of(std::size_t index) {
    check_index(index);
    const auto i = static_cast<std::int64_t>(index);
    const std::int64_t shift = std::max<std::int64_t>(0, i / kSubBuckets - 1);
    return (i - shift * kSubBuckets) << shift;
  }
  static constexpr std::int64_t highest_of(std::size_t index) {
    const std::int64_t shift =
        std::max<std::int64_t>(0, static_cast<std::int64_t>(index) / kSubBuckets - 1);
    return lowest_of(index) + (std::int64_t{1} << shift) - 1;
  }

 private:
  friend class PackedHistogram;
  static constexpr void check_index(std::size_t index) {
    if (index >= kBucketCount) throw std::out_of_range("Histogram: bucket index out of range");
  }
  void grow(std::size_t index);

  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  // Sentinel so that record() needs no "first sample" branch; min() hides it.
  std::int64_t min_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ = 0;
  // 128 bits: a day at 1M req/s of 60 s samples (~5e21 ns) overflows 64 bits,
  // and a double would make merged sums differ from sums of the union.
  __extension__ typedef unsigned __int128 Sum;  // __extension__: quiet under -Wpedantic
  Sum sum_ = 0;
};

// A Histogram for a long series of intervals (a run's seconds). Dense while
// its interval is open, so record() costs what Histogram's does; pack() then
// keeps only the non-empty buckets, as varint runs of about one or two bytes
// a bucket instead of eight bytes for every bucket up to the highest, so a
// series grows by what its seconds hold, not by the histogram's width.
// Quantiles, JSON, merges and equality give exactly what the dense form gives.
class PackedHistogram {
 public:
  PackedHistogram() = default;  // dense and empty: holds no storage
  explicit PackedHistogram(const Histogram& h) { *this = h; }
  PackedHistogram& operator=(const Histogram& h);  // packed

  // Dense: as fast as Histogram::record. Packed: unpacks first (slow; pack()
  // again when the late sample is in).
  void record(std::int64_t ns);
  void merge(const Histogram& other);        // keeps this one's form
  void merge(const PackedHistogram& other);  // keeps this one's form
  void pack();
  bool packed() const { return packed_; }
  Histogram histogram() const;  // a dense copy

  std::uint64_t count() const { return dense_.count(); }
  std::int64_t min() const { return dense_.min(); }
  std::int64_t max() const { return dense_.max(); }
  double mean() const { return dense_.mean(); }
  std::int64_t quantile(double q) const;  // as Histogram::quantile
  boost::json::object to_json() const;    // as Histogram::to_json
  bool operator==(const PackedHistogram& other) const { return histogram() == other.histogram(); }

  // Bytes of bucket storage held (the figures aside): what pack() saves.
  std::size_t storage_bytes() const {
    return bytes_.capacity() + dense_.counts_.capacity() * sizeof(std::uint64_t);
  }

 private:
  static std::vector<std::uint8_t> encode(const std::vector<std::uint64_t>& counts);
  void add_packed_to(std::vector<std::uint64_t>& counts) const;
  void unpack();

  // Packed: count, min, max and sum stay here; the buckets are in bytes_.
  Histogram dense_;
  // Runs of non-empty buckets: varint(gap from the previous run's end),
  // varint(length), then a varint count per bucket.
  std::vector<std::uint8_t> bytes_;
  bool packed_ = false;
};

inline void Histogram::record(std::int64_t ns) {
  const std::int64_t v = std::max<std::int64_t>(ns, 0);
  const std::size_t i = index_of(v);
  if (i >= counts_.size()) [[unlikely]]
    grow(i);
  ++counts_[i];
  ++count_;
  sum_ += static_cast<std::uint64_t>(v);
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
}

}  // namespace crh::core
