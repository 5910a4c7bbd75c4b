// The call driver a target names (Target::calls, --call-driver): the HTTP
// call hook or SIP (calls/sip_call_driver.hpp), made once per user of calls.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/json/value.hpp>

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
// Why this target's calls cannot be placed, read before a load places any:
// the profile says it has no call hook, or (SIP) no alias of the channel's
// list (`alias_list`, the body its GET answered) shows a number to dial.
// Nothing when they can.
std::optional<std::string> cannot_place_calls(const core::Target& target, const boost::json::value& alias_list);
// What to set up when the first caller of a freshly tagged alias did not connect.
std::string first_call_hint(const core::Target& target);

// `place()` (a call, and whatever the caller records of it), again while its
// answer is a "not now" and `wait_out(again, retry_after)` waited and says to
// go on (the one loop of a check's call and of the load's call probe).
CallResult placed_past_not_now(const std::function<CallResult()>& place,
                               const std::function<bool(int again, const std::string& retry_after)>& wait_out);

std::unique_ptr<CallDriver> make_call_driver(const core::Target& target,
                                             const core::ExpectedStatuses& statuses, core::ClientConfig client,
                                             std::function<void(const core::Exchange&)> observe = {},
                                             std::function<void(const SipCallRecord&)> observe_sip = {});

}  // namespace crh::calls
