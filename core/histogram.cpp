// Latency histogram: the cold paths (merge, quantiles, JSON) of histogram.hpp.
#include "core/histogram.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace crh::core {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::runtime_error("histogram JSON: \"" + field + "\" " + why);
}

// Only genuine JSON integers: 3.0 may have been rounded on its way here.
std::uint64_t to_unsigned(const boost::json::value& v, const std::string& field) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
  bad(field, "must be a non-negative integer, got " + boost::json::serialize(v));
}

std::int64_t to_int64(const boost::json::value& v, const std::string& field) {
  const std::uint64_t u = to_unsigned(v, field);
  if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    bad(field, "is out of range: " + boost::json::serialize(v));
  return static_cast<std::int64_t>(u);
}

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<std::uint8_t>(v | 0x80));
  out.push_back(static_cast<std::uint8_t>(v));
}

// Reads what put_varint wrote; the bytes are our own, never a peer's.
std::uint64_t get_varint(const std::uint8_t*& p) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

const boost::json::value& member(const boost::json::object& o, const char* field) {
  const auto* v = o.if_contains(field);
  if (v == nullptr) bad(field, "is missing");
  return *v;
}

}  // namespace

void Histogram::grow(std::size_t index) { counts_.resize(index + 1, 0); }

void Histogram::record_n(std::int64_t ns, std::uint64_t n) {
  if (n == 0) return;
  const std::int64_t v = std::max<std::int64_t>(ns, 0);
  const std::size_t i = index_of(v);
  if (i >= counts_.size()) grow(i);
  counts_[i] += n;
  count_ += n;
  sum_ += static_cast<Sum>(v) * n;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
}

void Histogram::merge(const Histogram& other) {
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() {
  // Zeroing rather than clearing keeps record() off its growth path next interval.
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = std::numeric_limits<std::int64_t>::max();
  max_ = 0;
  sum_ = 0;
}

double Histogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

std::int64_t Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  if (!(q > 0.0)) q = 0.0;  // also NaN
  if (q > 1.0) q = 1.0;
  // q is usually a decimal fraction that binary floating point misses by an ulp
  // either way (0.07 * 100 = 7.000000000000001); a product that close to an
  // integer is that integer, so p7 of 100 samples is rank 7, not 8.
  const double r = q * static_cast<double>(count_);
  const double nearest = std::round(r);
  const double slack = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, r);
  const double rank_d = std::abs(r - nearest) <= slack ? nearest : std::ceil(r);
  const std::uint64_t rank =
      std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rank_d), 1, count_);
  if (rank == count_) return max_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const std::int64_t lo = lowest_of(i);
      const std::int64_t mid = lo + (highest_of(i) - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;  // unreachable while count_ equals the bucket total
}

boost::json::object Histogram::to_json() const {
  // Exactly as many slots as buckets: a run's series holds thousands of these.
  boost::json::array buckets;
  buckets.reserve(static_cast<std::size_t>(
      std::count_if(counts_.begin(), counts_.end(), [](std::uint64_t n) { return n != 0; })));
  for (std::size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] != 0) buckets.push_back(boost::json::array{i, counts_[i]});
  boost::json::object o;
  o["unit"] = "ns";
  o["precision_bits"] = kPrecisionBits;
  o["count"] = count_;
  o["min"] = min();
  o["max"] = max();
  if (sum_ <= std::numeric_limits<std::uint64_t>::max()) {
    o["sum"] = static_cast<std::uint64_t>(sum_);
  } else {
    std::string digits;
    for (Sum s = sum_; s != 0; s /= 10) digits.insert(digits.begin(), char('0' + int(s % 10)));
    o["sum"] = digits;
  }
  o["buckets"] = std::move(buckets);
  return o;
}

Histogram Histogram::from_json(const boost::json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr) throw std::runtime_error("histogram JSON: not an object");

  const auto* unit = member(*o, "unit").if_string();
  if (unit == nullptr || *unit != "ns")
    bad("unit", "must be \"ns\", got " + boost::json::serialize(member(*o, "unit")));
  const auto& bits = member(*o, "precision_bits");
  if (!(bits.is_int64() && bits.get_int64() == kPrecisionBits) &&
      !(bits.is_uint64() && bits.get_uint64() == kPrecisionBits))
    bad("precision_bits",
        "must be " + std::to_string(kPrecisionBits) + ", got " + boost::json::serialize(bits));

  Histogram h;
  const std::uint64_t count = to_unsigned(member(*o, "count"), "count");
  const std::int64_t min = to_int64(member(*o, "min"), "min");
  const std::int64_t max = to_int64(member(*o, "max"), "max");

  const auto& sum_v = member(*o, "sum");
  Sum sum = 0;
  if (const auto* digits = sum_v.if_string()) {
    if (digits->empty() || digits->size() > 39) bad("sum", "is not a decimal integer");
    for (char c : *digits) {
      if (c < '0' || c > '9') bad("sum", "is not a decimal integer");
      const Sum next = sum * 10 + static_cast<Sum>(c - '0');
      if (next / 10 != sum) bad("sum", "is out of range");
      sum = next;
    }
  } else {
    sum = to_unsigned(sum_v, "sum");
  }

  const auto* buckets = member(*o, "buckets").if_array();
  if (buckets == nullptr) bad("buckets", "must be an array of [index,count] pairs");
  std::uint64_t total = 0;
  std::size_t first = kBucketCount, last = 0;
  for (std::size_t k = 0; k < buckets->size(); ++k) {
    const std::string field = "buckets[" + std::to_string(k) + "]";
    const auto* pair = (*buckets)[k].if_array();
    if (pair == nullptr || pair->size() != 2) bad(field, "must be an [index,count] pair");
    const std::uint64_t index = to_unsigned((*pair)[0], field + " index");
    if (index >= kBucketCount)
      bad(field, "index " + std::to_string(index) + " is out of range [0," +
                     std::to_string(kBucketCount) + ")");
    if (!h.counts_.empty() && index < h.counts_.size())
      bad(field, "index " + std::to_string(index) + " is not ascending");
    const std::uint64_t n = to_unsigned((*pair)[1], field + " count");
    if (n > std::numeric_limits<std::uint64_t>::max() - total) bad(field, "count overflows");
    total += n;
    h.counts_.resize(index + 1, 0);
    h.counts_[index] = n;
    if (n != 0) {
      first = std::min<std::size_t>(first, index);
      last = index;
    }
  }
  if (count != total)
    bad("count", std::to_string(count) + " is not the bucket total " + std::to_string(total));

  if (count == 0) {
    if (min != 0 || max != 0 || sum != 0) bad("min", "max and sum must be 0 when count is 0");
    return Histogram{};
  }
  if (index_of(min) != first) bad("min", "is not in the lowest non-empty bucket");
  if (index_of(max) != last) bad("max", "is not in the highest non-empty bucket");
  if (min > max) bad("min", "is greater than max");
  if (sum < static_cast<Sum>(min) * count || sum > static_cast<Sum>(max) * count)
    bad("sum", "is not between count*min and count*max");
  h.count_ = count;
  h.min_ = min;
  h.max_ = max;
  h.sum_ = sum;
  return h;
}

PackedHistogram& PackedHistogram::operator=(const Histogram& h) {
  // The figures, then the buckets packed straight from h: no dense copy.
  dense_.counts_ = std::vector<std::uint64_t>();  // frees it, as `= {}` would not
  dense_.count_ = h.count_;
  dense_.min_ = h.min_;
  dense_.max_ = h.max_;
  dense_.sum_ = h.sum_;
  bytes_ = encode(h.counts_);
  packed_ = true;
  return *this;
}

void PackedHistogram::record(std::int64_t ns) {
  if (packed_) [[unlikely]]
    unpack();
  dense_.record(ns);
}

void PackedHistogram::merge(const Histogram& other) {
  if (!packed_) return dense_.merge(other);
  unpack();
  dense_.merge(other);
  pack();
}

void PackedHistogram::merge(const PackedHistogram& other) {
  if (!other.packed_) return merge(other.dense_);
  const bool was_packed = packed_;
  if (was_packed) unpack();
  other.add_packed_to(dense_.counts_);
  dense_.count_ += other.dense_.count_;
  dense_.sum_ += other.dense_.sum_;
  dense_.min_ = std::min(dense_.min_, other.dense_.min_);
  dense_.max_ = std::max(dense_.max_, other.dense_.max_);
  if (was_packed) pack();
}

std::vector<std::uint8_t> PackedHistogram::encode(const std::vector<std::uint64_t>& counts) {
  // One scratch buffer per thread, then a copy exactly as large as needed:
  // a run keeps thousands of these, and a second must not cost an allocation
  // that grows by doubling.
  thread_local std::vector<std::uint8_t> out;
  out.clear();
  std::size_t i = 0, previous_end = 0;
  while (i < counts.size()) {
    while (i < counts.size() && counts[i] == 0) ++i;
    if (i == counts.size()) break;
    const std::size_t start = i;
    while (i < counts.size() && counts[i] != 0) ++i;
    put_varint(out, start - previous_end);
    put_varint(out, i - start);
    for (std::size_t k = start; k < i; ++k) put_varint(out, counts[k]);
    previous_end = i;
  }
  return std::vector<std::uint8_t>(out.begin(), out.end());
}

void PackedHistogram::pack() {
  if (packed_) return;
  bytes_ = encode(dense_.counts_);
  dense_.counts_ = std::vector<std::uint64_t>();  // frees it, as `= {}` would not
  packed_ = true;
}

void PackedHistogram::add_packed_to(std::vector<std::uint64_t>& counts) const {
  const std::uint8_t* p = bytes_.data();
  const std::uint8_t* const end = p + bytes_.size();
  std::size_t index = 0;
  while (p < end) {
    index += get_varint(p);
    const auto length = static_cast<std::size_t>(get_varint(p));
    if (counts.size() < index + length) counts.resize(index + length, 0);
    for (std::size_t k = 0; k < length; ++k) counts[index++] += get_varint(p);
  }
}

void PackedHistogram::unpack() {
  dense_.counts_.clear();
  add_packed_to(dense_.counts_);
  bytes_ = std::vector<std::uint8_t>();  // `= {}` would keep the capacity
  packed_ = false;
}

Histogram PackedHistogram::histogram() const {
  if (!packed_) return dense_;
  Histogram h = dense_;
  add_packed_to(h.counts_);
  return h;
}

std::int64_t PackedHistogram::quantile(double q) const {
  return packed_ ? histogram().quantile(q) : dense_.quantile(q);
}

boost::json::object PackedHistogram::to_json() const {
  return packed_ ? histogram().to_json() : dense_.to_json();
}

bool Histogram::operator==(const Histogram& other) const {
  if (count_ != other.count_ || min() != other.min() || max_ != other.max_ || sum_ != other.sum_)
    return false;
  const auto& shorter = counts_.size() <= other.counts_.size() ? counts_ : other.counts_;
  const auto& longer = counts_.size() <= other.counts_.size() ? other.counts_ : counts_;
  if (!std::equal(shorter.begin(), shorter.end(), longer.begin())) return false;
  return std::all_of(longer.begin() + static_cast<std::ptrdiff_t>(shorter.size()), longer.end(),
                     [](std::uint64_t n) { return n == 0; });
}

}  // namespace crh::core
