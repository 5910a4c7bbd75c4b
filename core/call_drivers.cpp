#include "core/call_drivers.hpp"

#include "core/alias_numbers.hpp"
#include "core/http_call_driver.hpp"

namespace crh::core {

std::unique_ptr<CallDriver> make_call_driver(const Target& target,
                                             const ExpectedStatuses& statuses, ClientConfig client,
                                             std::function<void(const Exchange&)> observe,
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

}  // namespace crh::core
