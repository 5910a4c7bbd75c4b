// The trend page of a record of nights (`crh report --nights DIR --html`,
// DESIGN.md §7): the last night's verdict; the last night against the record;
// each figure over the nights with its interval, the comparison window's band,
// change points, accepted levels and machine or version changes marked, each
// night linked to its report. Self-contained and readable with JavaScript off.
#pragma once

#include <string>

#include <boost/json/object.hpp>

namespace crh::reports {

// Draws the trend document (results/keys_trend.hpp; nightly::trend_document
// writes it, with the gate's judgement of the last night). The nights drawn
// are those of the last night's settings (fingerprint); nights of other
// settings are listed.
std::string trend_html(const boost::json::object& trend);

}  // namespace crh::reports
