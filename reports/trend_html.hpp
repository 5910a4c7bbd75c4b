// The trend page of a record of nights (`crh report --nights DIR --html`,
// DESIGN.md §7): the last night's verdict; the last night against the record;
// each figure over the nights with its interval, the comparison window's band,
// change points, accepted levels and machine or version changes marked, each
// night linked to its report. Self-contained and readable with JavaScript off.
#pragma once

#include <string>
#include <vector>

#include "nightly/record.hpp"

namespace crh::reports {

struct TrendOptions {
  std::string dir;         // the record's folder, as named on the page
  double limit_pct = 20;   // --max-regression
};

// `record` oldest first (nightly::read_nights), `accepted` the accepted
// nights' ids (nightly::accepted_nights). The nights drawn are those of the
// last night's settings (fingerprint); nights of other settings are listed.
std::string trend_html(const std::vector<nightly::Night>& record, const std::vector<std::string>& accepted,
                       const TrendOptions& options = {});

}  // namespace crh::reports
