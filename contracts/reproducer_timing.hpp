// When a reproducer script sends the step that failed: as in the run, or,
// when that came closer to a tag's end than a shell's sleeps keep to, on the
// same side of it but further away.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "contracts/check.hpp"
#include "core/target.hpp"

namespace crh::contracts {

// When the script sends the failing step (since the check began): as in the
// run, unless that came close to the end of a tag of the check (its minutes
// from the request, the target's minute), closer than a shell's sleeps keep
// to (100 ms, or 20 ms a step before it: what starting curl costs). Then it
// is moved three times that far from the end, on the side it was on of
// every tag's end: what the spec predicts there holds all along that side.
// `moved` says so; `cannot` says why it cannot move (before an end, with an
// earlier step in the way).
struct FailingTime {
  std::chrono::microseconds at{0};
  std::string moved, cannot;
};
FailingTime failing_time(const CheckResult& r, std::size_t first, std::size_t last, const core::Target& target);

}  // namespace crh::contracts
