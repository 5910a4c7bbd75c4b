// Time as the reference service sees it: a steady clock for expiry and a
// mapping to wall time for the RFC 3339 stamps it shows. Tests inject their own.
#pragma once

#include <chrono>
#include <string>

namespace crh::reference {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
  // Wall time of `t`, as RFC 3339 UTC with milliseconds ("2026-11-21T10:00:00.000Z").
  virtual std::string rfc3339(time_point t) const = 0;
};

// The real clock: steady time, shown as wall time relative to the moment of the call.
class SystemClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  std::string rfc3339(time_point t) const override;
};

// Formats a system_clock time as RFC 3339 UTC with milliseconds.
std::string format_rfc3339(std::chrono::system_clock::time_point t);

}  // namespace crh::reference
