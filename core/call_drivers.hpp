// The call driver a target names (Target::calls, --call-driver): the HTTP
// call hook or SIP (core/sip_call_driver.hpp), made once per user of calls.
#pragma once

#include <functional>
#include <memory>

#include "core/call_driver.hpp"
#include "core/http_client.hpp"
#include "core/profile.hpp"
#include "core/sip_call_driver.hpp"
#include "core/target.hpp"

namespace crh::core {

// The driver target.calls names. The SIP driver's Timer B is client.timeout,
// its refusals the profile's statuses.sip_refused; an alias's number comes
// from the aliases list (core/alias_numbers.hpp). Throws std::runtime_error
// when the SIP driver cannot open its socket.
std::unique_ptr<CallDriver> make_call_driver(const Target& target,
                                             const ExpectedStatuses& statuses, ClientConfig client,
                                             std::function<void(const Exchange&)> observe = {},
                                             std::function<void(const SipCallRecord&)> observe_sip = {});

}  // namespace crh::core
