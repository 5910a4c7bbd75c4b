// The call driver a target names (Target::calls, --call-driver): the HTTP
// call hook or SIP (calls/sip_call_driver.hpp), made once per user of calls.
#pragma once

#include <functional>
#include <memory>

#include "calls/call_driver.hpp"
#include "core/http_client.hpp"
#include "core/profile.hpp"
#include "calls/sip_call_driver.hpp"
#include "core/target.hpp"

namespace crh::calls {

// The driver target.calls names. The SIP driver's Timer B is client.timeout,
// its refusals the profile's statuses.sip_refused; an alias's number comes
// from the aliases list (calls/alias_numbers.hpp). Throws std::runtime_error
// when the SIP driver cannot open its socket.
std::unique_ptr<CallDriver> make_call_driver(const core::Target& target,
                                             const core::ExpectedStatuses& statuses, core::ClientConfig client,
                                             std::function<void(const core::Exchange&)> observe = {},
                                             std::function<void(const SipCallRecord&)> observe_sip = {});

}  // namespace crh::calls
