// Ctrl-C (SIGINT) and SIGTERM while a command runs: the first one asks the
// run to stop early and report what it gathered (and restore the target);
// a second one ends the process at once, as without crh.
#pragma once

#include <atomic>

namespace crh::runners {

class InterruptScope {
 public:
  InterruptScope();   // installs the handlers
  ~InterruptScope();  // puts the previous ones back
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // Set once an interrupt arrived; checks and loads poll it.
  static const std::atomic<bool>& requested();
};

}  // namespace crh::runners
