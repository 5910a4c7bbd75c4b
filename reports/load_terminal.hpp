// The terminal summary of a load result document: a table per operation, the
// race with its violations, the thresholds and the verdict.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "reports/terminal.hpp"
#include "reports/text.hpp"

namespace crh::reports {

// Ends with a line naming the fields the document lacked, if any.
std::string load_summary(const boost::json::value& result, const TerminalStyle& style);

// The same of a view into a larger document, without that line.
std::string load_summary(const results::DocView& result, const TerminalStyle& style);

}  // namespace crh::reports
