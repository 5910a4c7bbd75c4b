// An alias's telephone number, for the SIP call driver: the aliases list's
// field the profile names (sip.number_field, default "number"); an alias
// without that field is taken to be its own number (a bare id list, or a
// target whose ids are the numbers). Read once, read again on a miss (at most
// every 100 ms, so a load's miss cannot flood the target). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/http_client.hpp"
#include "core/target.hpp"

namespace crh::calls {

class AliasNumbers {
 public:
  AliasNumbers(core::Target target, core::ClientConfig client);

  // The alias's number; nothing when the list does not name the alias.
  std::optional<std::string> operator()(const std::string& alias);
  // Reads the list now; false (and `why`) when it could not be read.
  bool refresh(std::string& why);

 private:
  core::Target target_;
  core::ClientConfig client_;
  std::mutex mutex_;
  std::map<std::string, std::string> numbers_;
  std::chrono::steady_clock::time_point last_read_{};
};

}  // namespace crh::calls
