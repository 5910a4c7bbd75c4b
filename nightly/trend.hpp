// The record of nights as the trend page draws it (`crh report --nights DIR
// --html`, DESIGN.md §7): every night, and the last one judged here by the
// gate against the record as it is now, written into one document
// (results/keys_trend.hpp) that reports/ only draws.
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "nightly/record.hpp"

namespace crh::nightly {

// `record` oldest first (read_nights), `accepted` the accepted nights' ids
// (accepted_nights), `dir` the record's folder as the page names it,
// `limit_pct` the --max-regression the last night is judged with.
boost::json::object trend_document(const std::vector<Night>& record, const std::vector<std::string>& accepted,
                                   const std::string& dir, double limit_pct);

}  // namespace crh::nightly
