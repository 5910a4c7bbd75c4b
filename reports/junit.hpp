// JUnit XML from a result document (contract, load or run): a testsuite per suite, a testcase per
// check (failure with its evidence, skipped with its reason), a "rules"
// testsuite with a testcase per rule of the catalogue and its checks; per load
// a testsuite with the race's invariant and a testcase per threshold; and a
// "regressions" testsuite with a testcase per figure compared with a baseline
// or a record of nights (regressed: failure; inconclusive or not backed:
// skipped with the reason) and per change point beyond the limit (failure).
// Fields the document lacks are named in a last "document" testsuite, as an error.
#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace crh::reports {

std::string junit_xml(const boost::json::value& result);

// Text made safe for XML content and attributes.
std::string xml_escape(std::string_view text);

}  // namespace crh::reports
