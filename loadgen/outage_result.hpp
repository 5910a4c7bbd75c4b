// A load's outages in its result (issue 35): the document's `outages`, read
// back for `crh report`, the default outage thresholds and their figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "loadgen/result.hpp"

namespace crh::loadgen {

inline constexpr std::size_t kMaxStretches = 1000;       // listed in the document; all are counted
inline constexpr std::size_t kMaxTimelineEntries = 10'000;  // lit spans, and down runs, kept for merging

// Totals, the first kMaxStretches stretches, the back-off and the timeline.
boost::json::object outages_json(const LoadResult& r, int connections);

// Reads `outages` back into r.outages (absent in older documents: nothing).
// Throws std::runtime_error naming the field.
void read_outages(const boost::json::object& doc, LoadResult& r);

// outage.max in ns and unavailable as a fraction; nothing for other thresholds.
std::optional<double> outage_measured(const Threshold& t, const LoadResult& r);

// When an outage threshold was breached: the longest outage, start to end,
// and what the answers were, for the verdict's reason.
std::optional<std::string> outage_reason(const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts);

}  // namespace crh::loadgen
