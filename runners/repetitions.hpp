// `crh run --repeat K`: one scenario's K repetitions, run one after another
// (interleaved with the other scenarios'), as one load document.
#pragma once

#include <vector>

#include <boost/json/object.hpp>

namespace crh::runners {

// The repetitions' documents merged: counts and histograms add (thresholds
// are judged again on the merged histograms), measured times add (rates are
// the whole time's), connections are each one's; under "repetitions", each
// repetition's own totals and per-operation figures, so a night's figure can
// be their median and spread. Never marked as shards. Throws
// std::runtime_error when a document cannot be read back.
boost::json::object merge_repetitions(const std::vector<boost::json::object>& documents);

}  // namespace crh::runners
