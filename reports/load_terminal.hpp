// The terminal summary of a load result document: a table per operation, the
// race with its violations, the thresholds and the verdict.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "reports/terminal.hpp"

namespace crh::reports {

std::string load_summary(const boost::json::value& result, const TerminalStyle& style);

// "812 µs", "1.23 ms", "2.50 s": a duration in nanoseconds for people.
std::string format_ns(double ns);

}  // namespace crh::reports
