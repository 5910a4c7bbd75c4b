// The percentiles of a latency, written under the document's keys.
#include "results/percentiles.hpp"

#include <boost/json.hpp>

#include "results/keys_load.hpp"

namespace crh::results {

boost::json::object to_json(const core::PercentileInterval& p) {
  namespace x = keys::percentile;
  boost::json::object o{{x::value, p.value},
                        {x::lower, p.shown.lower},
                        {x::upper, p.shown.upper},
                        {x::n, p.n},
                        {x::method, core::to_string(p.method)},
                        {x::binomial, boost::json::object{{x::lower, p.binomial.lower}, {x::upper, p.binomial.upper}}}};
  if (p.blocks)
    o[x::blocks] =
        boost::json::object{{x::lower, p.blocks->lower}, {x::upper, p.blocks->upper}, {x::count, p.blocks->count}};
  o[x::backed] = p.backed;
  o[x::beyond] = p.beyond;
  if (p.backing_s) o[x::backing_s] = *p.backing_s;
  if (!p.note.empty()) o[x::note] = p.note;
  return o;
}

const std::array<ReportedPercentile, 4> kReportedPercentiles{{{keys::percentile::p50, 0.5},
                                                              {keys::percentile::p90, 0.9},
                                                              {keys::percentile::p99, 0.99},
                                                              {keys::percentile::p999, 0.999}}};

boost::json::object percentiles_json(const core::Histogram& h, double rate_per_s,
                                     std::optional<std::span<const core::PackedHistogram>> series) {
  boost::json::object o;
  for (const auto& [key, q] : kReportedPercentiles) o[key] = to_json(core::percentile_interval(h, q, rate_per_s, series));
  return o;
}

}  // namespace crh::results
