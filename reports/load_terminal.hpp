// The terminal summary of a load result document: a table per operation, the
// race with its violations, the thresholds and the verdict.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "reports/terminal.hpp"
#include "reports/text.hpp"

namespace crh::reports {

std::string load_summary(const boost::json::value& result, const TerminalStyle& style);

}  // namespace crh::reports
