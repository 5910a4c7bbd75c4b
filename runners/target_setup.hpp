// The target of contract, load and run: the embedded reference service when
// no base URL is given (random key, ephemeral loopback port), else the base
// URL with the key from CRH_API_KEY or --api-key-file.
#pragma once

#include <memory>
#include <string>

#include "core/target.hpp"
#include "reference/server.hpp"

namespace crh::runners {

struct TargetChoice {
  std::string command;       // "crh run", for messages
  std::string base_url;      // empty: start the embedded service
  std::string api_key_file;  // else CRH_API_KEY
  int embedded_aliases = 0;  // aliases per channel of the embedded service; 0: its default
  std::string call_driver_problem;  // a usage error in the call-driver flags (TargetFlags)
};

// Fills target.base and target.api_key (target.minute is the embedded
// service's minute); with the SIP call driver and no --sip-target, the
// embedded service opens a SIP port and target.calls.sip_target names it. Returns 0, or the exit code after printing why.
int set_up_target(const TargetChoice& choice, core::Target& target, std::unique_ptr<reference::Server>& embedded);

}  // namespace crh::runners
