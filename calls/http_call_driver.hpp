// The call hook over HTTP (DESIGN.md §4): the first call driver. A call is
// one request of the API model's `call` operation with the Apikey header;
// its answer is classified by status: 200 connected, a "not now" throttled
// (core::throttled: a 429 the profile gives no other meaning), silence or 5xx
// unknown, any other status refused (404, 405 and 501 on the hook's path also
// say the target has no hook).
#pragma once

#include <functional>

#include "calls/call_driver.hpp"
#include "core/http_client.hpp"
#include "core/profile.hpp"
#include "core/target.hpp"

namespace crh::calls {

// A call sent with the key and answered with this status says the target
// has no call hook at all (no such route, no such method, not implemented),
// not that the call was refused.
inline bool no_call_hook(unsigned status) { return status == 404 || status == 405 || status == 501; }

class HttpCallDriver : public CallDriver {
 public:
  // `observe` sees every exchange a call made (a check records it as evidence).
  HttpCallDriver(core::Target target, core::ExpectedStatuses statuses, core::ClientConfig client,
                 std::function<void(const core::Exchange&)> observe = {});

  std::string describe() const override;
  std::unique_ptr<ArmedCall> arm(const std::string& alias, const std::string& caller) override;
  CallWire wire(const std::string& alias, const std::string& caller) const override;
  CallOutcome outcome_of(unsigned status) const override;

  // The authenticated request of one call.
  core::HttpRequest request(const std::string& alias, const std::string& caller) const;
  // The result an exchange stands for.
  CallResult result_of(core::Exchange exchange) const;

 private:
  class Armed;
  core::Target target_;
  core::ExpectedStatuses statuses_;
  core::ClientConfig client_;
  std::function<void(const core::Exchange&)> observe_;
};

}  // namespace crh::calls
