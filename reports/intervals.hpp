// A percentile with its 95% interval, or marked not backed (DESIGN.md §7), as
// every rendering reads it from a latency of a load document and shows it:
// `p99 1.24 ms [1.19, 1.31]`, `p99.9 3.1 ms (not backed: ...)`. Documents
// written before intervals existed give the point values alone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/view.hpp"

namespace crh::reports {

struct ShownPercentile {
  std::string name;  // "p50", "p90", "p99", "p99.9"
  double q = 0;      // 0.5, 0.9, 0.99, 0.999
  double value = 0;  // ns
  std::optional<double> lower, upper;
  std::uint64_t n = 0;
  bool backed = true;
  double beyond = 0;                 // samples beyond it
  std::optional<double> backing_s;   // how long at the achieved rate would back it
  std::string method;                // "blocks" or "binomial" (the wider shown)
  bool blocks_absent = false;        // fewer than 10 per-second blocks: the rank interval alone
  std::string note;
  bool has_interval() const { return lower && upper; }
};

// p50, p90, p99 and p99.9 of a latency object; without intervals when the
// document predates them.
std::vector<ShownPercentile> percentiles_of(const results::DocView& latency);

// True when the latency carries intervals (schema_version 2 on).
bool has_intervals(const results::DocView& latency);

// "1.24 ms [1.19, 1.31]" (a bound in another unit keeps its own), or
// "3.10 ms (not backed: 412 samples; ~24 s at this rate would back it)".
std::string percentile_text(const ShownPercentile& p);

// "[1.19, 1.31]" for `value`'s unit, empty without both bounds; units are
// given where a bound's differs from the value's. `format` formats a number of
// the unit (format_ns or format_figure).
std::string interval_text(double value, std::optional<double> lower, std::optional<double> upper,
                          const std::function<std::string(double)>& format);

// The short why of a not-backed percentile: "412 samples; ~24 s at this rate would back it".
std::string not_backed_text(const ShownPercentile& p);

// Said once where a load had fewer than 10 per-second blocks for some percentile.
inline constexpr const char* kFewBlocks =
    "fewer than 10 one-second blocks behind some percentiles: their rank (binomial) interval is shown, which "
    "ignores that samples close in time move together";

// What the interval shown is, said once per report.
inline constexpr const char* kIntervalLegend =
    "[95% interval: the wider of the rank (binomial) and per-second-block intervals; "
    "with fewer than 10 blocks, the rank interval]";

}  // namespace crh::reports
