// The terminal summary of a contract result document: failures and warnings
// with their evidence, counts per suite, the rule coverage and the verdict.
#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace crh::reports {

struct TerminalStyle {
  bool color = false;    // ANSI colours (only when stdout is a terminal)
  bool verbose = false;  // every check, and evidence for every one
  bool quiet = false;    // failures and the verdict only
};

std::string contract_summary(const boost::json::value& result, const TerminalStyle& style);

}  // namespace crh::reports
