#include "calls/call_drivers.hpp"

#include "calls/alias_numbers.hpp"
#include "calls/http_call_driver.hpp"

namespace crh::calls {

std::unique_ptr<CallDriver> make_call_driver(const core::Target& target,
                                             const core::ExpectedStatuses& statuses, core::ClientConfig client,
                                             std::function<void(const core::Exchange&)> observe,
                                             std::function<void(const SipCallRecord&)> observe_sip) {
  const auto& choice = target.calls;
  if (!choice.sip) return std::make_unique<HttpCallDriver>(target, client, std::move(observe));
  SipDriverConfig config;
  config.target = choice.sip_target;
  config.timeout = client.timeout;
  config.t1 = choice.sip_t1;
  config.refusals = statuses.sip_refused;
  config.uri_template = target.dialect.sip.uri_template;
  auto numbers = std::make_shared<AliasNumbers>(target, client);
  std::string why;
  numbers->refresh(why);  // read once up front: a race must not wait for the list
  config.number_of = [numbers](const std::string& alias) { return (*numbers)(alias); };
  config.credentials = sip_credentials_from_env();
  config.observe = std::move(observe_sip);
  return std::make_unique<SipCallDriver>(std::move(config));
}

}  // namespace crh::calls
