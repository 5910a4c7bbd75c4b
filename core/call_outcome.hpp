// What a caller's call came to, whatever placed it (calls/): the vocabulary
// the race verdict and the histories judge by, so oracle/ needs nothing of calls/.
#pragma once

#include <string_view>

namespace crh::core {

enum class CallOutcome {
  connected,  // the caller is through: bound, or already bound to this alias
  refused,    // a "no" by design: the alias is bound to another caller
  throttled,  // "not now" (core::throttled: a 429): it took no effect, so neither bound nor refused
  unknown,    // no usable answer (silence, reset, a server error): it may or may not have bound
};

constexpr std::string_view to_string(CallOutcome o) {
  switch (o) {
    case CallOutcome::connected: return "connected";
    case CallOutcome::refused: return "refused";
    case CallOutcome::throttled: return "throttled";
    case CallOutcome::unknown: return "unknown";
  }
  return "?";
}

}  // namespace crh::core
