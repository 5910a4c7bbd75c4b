// Tonight's figures judged against the record of nights (DESIGN.md §7): the
// comparison section of the run document, in the baseline comparison's
// vocabulary (results/keys_run.hpp, namespaces comparison and figure).
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "nightly/record.hpp"

namespace crh::nightly {

struct Tonight {
  std::vector<NightFigure> figures;
  std::string fingerprint;
  std::string started_at;
  std::string tool_version;
  std::string cpu;
  std::vector<std::string> unreliable;  // unreliable_reasons() of its loads
  // What the fingerprint is a hash of, to name what differs from the record
  // (last: positional initializers above stay valid).
  boost::json::object fingerprint_fields;
};

// Per figure the gate (gate.hpp) against the comparable nights of the same
// fingerprint; change points over those nights and tonight; machine and
// version changes within them. `dir` is named in the document.
boost::json::object compare_with_nights(const Tonight& tonight, const std::vector<Night>& record,
                                        const std::vector<std::string>& accepted, const std::string& dir,
                                        double limit_pct);

}  // namespace crh::nightly
