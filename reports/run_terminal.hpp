// The terminal summary of a run document: the contract's and each load's
// summaries, the baseline comparison (regressions named) and the verdict;
// whole, or in the pieces `crh run` prints as it goes.
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "reports/terminal.hpp"

namespace crh::reports {

// Every part's summary, then run_closing's lines (`crh report`).
std::string run_summary(const boost::json::object& run_document, const TerminalStyle& style);

// The same in pieces, for `crh run` to print each part when it ends, so that
// a log reads in order (issue 22 item 11): one part (the contract document or
// a load document) as run_summary shows it, ending with the fields it lacked ...
std::string run_part_summary(const boost::json::object& part, const TerminalStyle& style);
// ... and, once every part has run, the comparison with the baseline, the
// capture, what was left out or could not run, and the verdict of the run;
// ending with the fields the run document lacked outside its parts.
std::string run_closing(const boost::json::object& run_document, const TerminalStyle& style);

// Only the comparison: every regression, and with style.verbose every figure.
std::string comparison_summary(const boost::json::object& comparison, const TerminalStyle& style);

}  // namespace crh::reports
