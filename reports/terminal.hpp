// The terminal summary of a contract result document: failures and warnings
// with their evidence, counts per suite, the rule coverage and the verdict.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "results/view.hpp"

namespace crh::reports {

struct TerminalStyle {
  bool color = false;    // ANSI colours (only when stdout is a terminal)
  bool verbose = false;  // every check, and evidence for every one
  bool quiet = false;    // failures and the verdict only
};

// Ends with a line naming the fields the document lacked, if any.
std::string contract_summary(const boost::json::value& result, const TerminalStyle& style);

// The same of a view into a larger document, without that line: the caller
// shows what the whole document lacked.
std::string contract_summary(const results::DocView& result, const TerminalStyle& style);

}  // namespace crh::reports
