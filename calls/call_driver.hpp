// The call-driver seam: how a caller's call reaches the target, whatever the
// protocol. A check or a load arms a call (connects and prepares everything
// but its release), fires it, and learns the outcome with evidence. The HTTP
// call hook (DESIGN.md §4) is one driver (calls/http_call_driver.hpp), SIP
// the other (calls/sip_call_driver.hpp). The binding checks and the race reach
// the target only through this interface.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/call_outcome.hpp"
#include "core/http.hpp"

namespace crh::calls {

using core::CallOutcome;
using core::Exchange;

struct CallResult {
  CallOutcome outcome = CallOutcome::unknown;
  unsigned status = 0;               // the protocol's status code; 0 when none came
  std::string evidence;              // what came back, for people
  std::optional<core::Exchange> exchange;  // the exchange itself, when the driver speaks HTTP
  bool no_hook = false;              // the target has no way to place calls at all
  // The answer asked to be sent again later: a "not now" (HTTP's is also the
  // outcome `throttled`; a SIP 503 with Retry-After is `unknown`: it speaks for
  // every element on the call's path, one of which may have bound the caller
  // first, RFC 3261 §16.7). Paced, counted as throttled, placed again.
  bool not_now = false;
  // The answer breaks the contract whatever it says of the binding (a SIP 5xx,
  // a SIP 404/484 for a tagged alias's number): `evidence` says why.
  bool failure = false;
};

// One call prepared up to its release.
class ArmedCall {
 public:
  virtual ~ArmedCall() = default;
  // False when arming failed (no connection): fire() then sends nothing and
  // result() says why, as an unknown outcome.
  virtual bool ready() const = 0;
  // Releases the call: returns as soon as it is on its way (microseconds),
  // so that calls fired one after another in a loop are released together.
  virtual void fire() = 0;
  // Waits for the outcome of a fired call (by the driver's deadline); once.
  virtual CallResult result() = 0;
  // Calls `done` (on any thread, once) when result() no longer blocks: how an
  // event loop waits for many calls without blocking its thread. The default
  // calls it at once (result() then blocks as it would).
  virtual void when_done(std::function<void()> done) { done(); }
};

// The bytes of one call on a stream connection, for an event loop that owns
// its sockets (the load engine): `armed` is written when arming, `release`
// fires the call; neither carries anything but the call.
struct CallWire {
  std::string armed;
  std::string release;
};

class CallDriver {
 public:
  virtual ~CallDriver() = default;

  // "POST /channels/{channel}/alias-numbers/{alias}/calls", for messages.
  virtual std::string describe() const = 0;
  // Connects and prepares `caller`'s call to `alias`; fire() releases it.
  virtual std::unique_ptr<ArmedCall> arm(const std::string& alias, const std::string& caller) = 0;
  // The same call as bytes, with the key when `api_key` is not empty.
  virtual CallWire wire(const std::string& alias, const std::string& caller) const = 0;
  // What an answer's status says of the call.
  virtual CallOutcome outcome_of(unsigned status) const = 0;
  // Whether wire() gives the call's bytes on a stream connection (HTTP); a
  // driver without (SIP) is driven through arm/fire/when_done instead.
  virtual bool has_wire() const { return true; }
  // The operation's name in histograms, histories and reports ("call",
  // "sip-call"): figures of different drivers never mix.
  virtual std::string_view operation() const { return "call"; }
  // Leaves the target as found: calls still pending are ended (a SIP CANCEL;
  // a late 200 ACKed and BYEd). Bounded; called on Ctrl-C and at the end.
  virtual void settle() {}

  // Fires calls this driver armed, all at once, and says how ("sendmmsg
  // (UDP)"). The default fires them one after another.
  virtual std::string fire_together(std::span<ArmedCall* const> calls);

  // Arms, fires and waits: one call, no race.
  CallResult place(const std::string& alias, const std::string& caller);
};

}  // namespace crh::calls
