// The profile: what the harness expects where the spec is silent (DESIGN.md
// §3). Defaults are the design's; a JSON file changes them for a target that
// answers differently. Checks resting on these are SHOULD checks.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "core/target.hpp"

namespace crh::contracts {

struct Profile {
  core::ParamEncoding encoding = core::ParamEncoding::form;  // database value, tag parameters, caller
  core::CallHook call_hook;                                  // enabled=false: the target has none

  // Statuses expected per condition (any non-200 with a msg is the MUST).
  std::vector<unsigned> auth_statuses{401, 403};
  std::vector<unsigned> not_found_statuses{404};
  std::vector<unsigned> bad_input_statuses{400};
  std::vector<unsigned> all_tagged_statuses{409};
  std::vector<unsigned> call_refused_statuses{403};
  std::vector<unsigned> wrong_method_statuses{405, 404};

  // Where ids and lists live. Ids may be strings or numbers.
  std::vector<std::string> agent_id_fields{"id", "agent_id", "agentId", "ID"};
  std::vector<std::string> alias_id_fields{"id", "alias_id", "aliasId", "ID"};
  std::string agents_list_field = "agents";    // else a bare array or the only array
  std::string aliases_list_field = "aliases";

  std::string agent_state_field = "state";     // compared before and after snooze/wake
  std::string alias_tag_field = "tag";         // null or absent: untagged
  std::string database_value_field = "value";  // where the database GET puts the value
};

// Reads a profile file; keys not given keep their defaults. Throws
// std::runtime_error naming the file and the field on any error, unknown
// keys included (a typo must not be ignored).
Profile load_profile(const std::string& path);
Profile parse_profile(const boost::json::value& doc, const std::string& source);

// The profile as JSON, for the result document.
boost::json::value to_json(const Profile& p);

}  // namespace crh::contracts
