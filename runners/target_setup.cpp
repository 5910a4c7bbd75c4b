#include "target_setup.hpp"

#include <iostream>

#include "api_key.hpp"
#include "core/redact.hpp"
#include "results/verdict.hpp"

namespace crh::runners {

int set_up_target(const TargetChoice& choice, core::Target& target, std::unique_ptr<reference::Server>& embedded) {
  std::string why;
  if (!choice.call_driver_problem.empty()) {
    std::cerr << choice.command << ": " << choice.call_driver_problem << "\n";
    return results::kExitUsage;
  }
  if (choice.base_url.empty()) {
    reference::ServerConfig config;
    config.service.api_key = random_api_key();
    config.service.minute = target.minute;
    if (choice.embedded_aliases > 0) config.fixtures = reference::default_fixtures(2, choice.embedded_aliases);
    const bool embedded_sip = target.calls.sip && target.calls.sip_target.host.empty();
    if (embedded_sip) {
      config.sip_listen = "127.0.0.1:0";
      config.sip_t1 = target.calls.sip_t1;
    }
    target.api_key = config.service.api_key;
    embedded = std::make_unique<reference::Server>(std::move(config));
    try {
      embedded->start();
    } catch (const std::exception& e) {
      std::cerr << choice.command << ": cannot start the embedded reference service: " << e.what() << "\n";
      return results::kExitUnreachable;
    }
    target.base = *core::parse_base_url(embedded->base_url(), why);
    if (embedded_sip) target.calls.sip_target = {.host = "127.0.0.1", .port = embedded->sip_port()};
    return results::kExitOk;
  }
  auto base = core::parse_base_url(choice.base_url, why);
  if (!base) {
    std::cerr << choice.command << ": --base-url: " << why << "\n";
    return results::kExitUsage;
  }
  target.base = *base;
  try {
    auto key = configured_api_key(choice.api_key_file);
    if (!key) {
      std::cerr << choice.command
                << ": no API key: set CRH_API_KEY or pass --api-key-file FILE "
                   "(never the key itself as a flag: flag values show in ps)\n";
      return results::kExitUsage;
    }
    target.api_key = *key;
    if (core::key_is_short(target.api_key))
      std::cerr << choice.command << ": warning: the API key is " << target.api_key.size()
                << " character(s) long, shorter than " << core::kMinRedactableKey
                << ": a key this short also matches ordinary text, so crh hides it only in what the target sent "
                   "(excerpts and evidence, where innocent letters may be hidden too) and not in its own messages. "
                   "Use a key of at least "
                << core::kMinRedactableKey << " characters for a run whose outputs you share.\n";
  } catch (const std::exception& e) {
    std::cerr << choice.command << ": " << e.what() << "\n";
    return results::kExitUsage;
  }
  return results::kExitOk;
}

}  // namespace crh::runners
