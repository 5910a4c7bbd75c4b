// Leaving the target as it was found (DESIGN.md §5): one algorithm for every
// run that changes it, the contract checks and the load alike, each sending
// through its own client (a check's recording one, the load's plain one).
// Each step says what is still wrong, or nothing when it is back.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/http.hpp"
#include "core/target.hpp"

namespace crh::core {

// Sends one request (the sender adds the Apikey) and returns the exchange.
using SendRequest = std::function<Exchange(HttpRequest)>;

// Puts an agent back in `start`, its state field as JSON text
// (api::agent_state): wakes it and reads it back with a GET; if that is not
// `start`, snoozes it and reads it back again. The GET is the evidence, not
// the PUT's answer, so an agent comes back from a target that breaks R1 too.
// Nothing when a read shows `start`, else what was seen.
std::optional<std::string> put_agent_back(const SendRequest& send, const Target& target, const std::string& id,
                                          const std::string& start);

// Writes a database key's value back (the empty string for a key that had
// none: the spec has no DELETE, and the key is the harness's own, under
// crh-probe-) and reads it back. Nothing when the read shows the value.
std::optional<std::string> put_database_value_back(const SendRequest& send, const Target& target,
                                                   const std::string& key, const std::optional<std::string>& start);

}  // namespace crh::core
