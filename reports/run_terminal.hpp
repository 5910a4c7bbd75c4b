// The terminal summary of a run document: the contract's and each load's
// summaries, the baseline comparison (regressions named) and the verdict.
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "reports/terminal.hpp"

namespace crh::reports {

std::string run_summary(const boost::json::object& run_document, const TerminalStyle& style);

// Only the comparison: every regression, and with style.verbose every figure.
std::string comparison_summary(const boost::json::object& comparison, const TerminalStyle& style);

}  // namespace crh::reports
