// A latency's percentiles as the result document writes them: each a point
// value with its interval (core/percentile_interval.hpp computes them), under
// the keys of results/keys_load.hpp.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/histogram.hpp"
#include "core/percentile_interval.hpp"

namespace crh::results {

// {"value","lower","upper","n","method","binomial":{"lower","upper"},
//  "blocks":{"lower","upper","count"} (absent without), "backed","beyond",
//  "backing_s" (only when not backed at a known rate), "note" (when one)}
boost::json::object to_json(const core::PercentileInterval& p);

// The percentiles every latency reports, by their key (results/keys_load.hpp).
struct ReportedPercentile {
  std::string_view key;  // "p50", "p90", "p99", "p99.9"
  double q;
};
extern const std::array<ReportedPercentile, 4> kReportedPercentiles;

// {"p50": to_json(interval), "p90": ..., "p99": ..., "p99.9": ...}
boost::json::object percentiles_json(const core::Histogram& h, double rate_per_s,
                                     std::optional<std::span<const core::PackedHistogram>> series = std::nullopt);

}  // namespace crh::results
