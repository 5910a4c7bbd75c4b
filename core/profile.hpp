// The profile: what the harness assumes where the spec is silent (DESIGN.md
// §3). Defaults are the design's; a JSON file changes them for a target that
// answers differently. It is read once into what the target is (its
// core::Dialect) and what the checks expect of it (ExpectedStatuses); checks
// resting on these are SHOULD checks.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "core/target.hpp"

namespace crh::core {

// Statuses expected per condition (any non-200 with a msg is the MUST).
struct ExpectedStatuses {
  std::vector<unsigned> auth{401, 403};
  std::vector<unsigned> not_found{404};
  std::vector<unsigned> bad_input{400};
  std::vector<unsigned> all_tagged{409};
  std::vector<unsigned> call_refused{403};
  std::vector<unsigned> sip_refused{403};  // a SIP call's final statuses that are the binding's no
  std::vector<unsigned> wrong_method{405, 404};
};

// A "not now": HTTP 429, the rate limits spec 8 names without showing,
// unless the profile gives 429 a meaning of its own (one of its expected
// statuses). The request took no effect, and no rule of the contract judges
// the answer. The one reading of it: the checks, the model, the load, the
// checker's histories, capture and the HTTP call driver all ask here.
bool throttled(unsigned status, const ExpectedStatuses& named);

struct Profile {
  Dialect dialect;              // what the target is: copied into core::Target
  ExpectedStatuses statuses;    // what the checks expect of it
  bool encoding_given = false;  // the file set "encoding" (else a contract run may find it)
};

// Reads a profile file; keys not given keep their defaults. Throws
// std::runtime_error naming the file and the field on any error, unknown
// keys included (a typo must not be ignored).
Profile load_profile(const std::string& path);
Profile parse_profile(const boost::json::value& doc, const std::string& source);

// The profile as JSON, for the result document (parse_profile reads it back).
boost::json::value to_json(const Profile& p);

}  // namespace crh::core
