// The preflight every command runs before any check or load: two reads with
// the key (the agent list, the channel's aliases) whose answers show whether
// the run can test the target at all. It stops on what is a user's mistake
// or no implementation of the API would answer (a refused key, an unknown
// channel, a path prefix that is not the service's, a proxy's error page, a
// redirect elsewhere, a sign-in page, a TLS port, lists that hold no list,
// a target that does not answer). Anything else, however wrong, goes on to
// be judged by the checks.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/profile.hpp"
#include "core/target.hpp"

namespace crh::core {

struct PreflightStop {
  bool answered = false;  // something answered (untested), or nothing did (unreachable)
  std::string request;    // "GET http://host:port/api/v1/local-agents"
  std::string answer;     // "HTTP 401 (application/json: {"msg":...})", or why none came
  std::string mistake;    // the likely mistake and what to check
  // The one line a user reads: the request, the answer, the mistake.
  std::string line() const;
};

// Nothing when the run can go on. `answered` (may be null) is set when any
// of its requests got an HTTP answer.
std::optional<PreflightStop> preflight(const Target& target, const ExpectedStatuses& statuses,
                                       std::chrono::milliseconds timeout, bool* answered = nullptr);

}  // namespace crh::core
