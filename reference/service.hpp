// The reference service's HTTP semantics without the transport: routing, the
// Apikey, parameters, validation and JSON answers. The server feeds it parsed
// requests; tests may call it directly.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clock.hpp"
#include "faults.hpp"
#include "fixtures.hpp"
#include "mutants.hpp"
#include "state.hpp"

namespace crh::reference {

struct ServiceConfig {
  std::string api_key;                       // the one accepted Apikey value
  FaultSet faults;                           // behaviours to break on purpose
  MutantSet mutants;                         // wrong versions of the service (mutants.hpp)
  std::chrono::milliseconds minute{60'000};  // length of one tag minute
  // Every Nth request is answered 429 with Retry-After: 0 and does nothing
  // (`crh serve --throttle-every N`): a rate-limited service, correct by the
  // spec (8: rate limits exist, not shown), answering as a different one would.
  unsigned throttle_every = 0;
  // `crh serve --bind-window-us N`, a service broken on purpose by a known
  // amount (bench/race_catch_rate.sh): a call that passes the check binds
  // its caller only N microseconds later, and every check inside that window
  // passes too (two winners). 0: binds at once.
  std::chrono::microseconds bind_window{0};
};

struct Request {
  std::string_view method;                 // as sent, e.g. "GET"
  std::string_view target;                 // origin-form: path and optional query
  std::optional<std::string_view> apikey;  // the Apikey header, if present once
  bool apikey_repeated = false;            // more than one Apikey header was sent
  // Where a careless service might also look for the key (the auth-key-* faults).
  std::optional<std::string_view> authorization;  // the first Authorization header
  std::vector<std::string_view> cookies;          // every Cookie header
  std::string_view content_type;                  // empty when absent
  std::string_view body;
};

struct Response {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // for 405: the methods the route has
  std::string retry_after;  // for 429: seconds
};

// What the transport does with a request: send `response`, or first wait
// `wait` (without blocking the thread) and then send what `then()` returns.
// `yield` instead lets the thread's event loop run the handlers already queued
// once, with no timer, before `then()`: the smallest gap a transport can make.
struct Reply {
  Response response;
  std::chrono::microseconds wait{0};
  bool yield = false;
  std::function<Response()> then;
  bool drop = false;  // close the connection without answering (a fault: a handler's crash)
};

// A SIP INVITE's decision (sip_uas.cpp), made with the same state and faults
// as the call hook: `status`, or first wait `wait` (or one loop turn when
// `yield`) and then take what `then()` returns.
struct SipCallReply {
  CallStatus status = CallStatus::unknown_alias;
  std::chrono::microseconds wait{0};
  bool yield = false;
  std::function<CallStatus()> then;
};

class Service {
 public:
  Service(ServiceConfig config, const Fixtures& fixtures, const Clock& clock);

  Reply handle(const Request& request);

  // A call from `caller` to the alias whose number is `number` (a SIP
  // INVITE's Request-URI user part; with user parameters such as
  // ";npdi" stripped when the exact number is unknown).
  SipCallReply sip_call(std::string_view number, std::string_view caller);

  // An error answer in the service's error shape (honouring the error faults),
  // for conditions the transport detects itself: oversized or malformed requests.
  Response error(unsigned status, std::string_view msg) const;

 private:
  struct Route;
  Reply dispatch(const Route& route, const Request& request);
  bool authorized(const Request& request, std::string_view query, bool database) const;
  bool key_matches(std::string_view offered) const;
  bool key_elsewhere(const Request& request, std::string_view query) const;
  Response unknown_agent(const Route& route) const;
  Response unknown_channel(const Route& route) const;
  Response unknown_alias(const Route& route) const;

  // One endpoint each; a parameter is null when the request did not send it.
  Response list_agents() const;
  Response get_agent(const Route& route) const;
  Response set_snoozed(const Route& route, bool snooze);
  Response db_get(const Route& route) const;
  Response db_set(const Route& route, const std::string* value);
  Response list_aliases(const Route& route) const;
  Reply tag(const Route& route, const std::string* name, const std::string* minutes_text);
  Reply tag_racy(const Route& route, const std::string& name, std::int64_t minutes);
  Response untag(const Route& route);
  Reply call(const Route& route, const std::string* caller);
  Response call_answer(const Route& route, const std::string& caller, const CallResult& result) const;
  // --bind-window-us: the check, with the first passer's bind pending for
  // the window; `wait` is left of it when this call is the first (its answer
  // then waits for the window to close, close_window binding it).
  struct Windowed {
    CallResult checked;
    std::optional<std::chrono::microseconds> wait;
  };
  Windowed windowed_check(const std::string& channel, const std::string& alias, const std::string& caller);
  void close_window(const std::string& channel, const std::string& alias);

  ServiceConfig config_;
  State state_;
  std::atomic<std::uint64_t> requests_{0};  // for throttle_every
  struct PendingBind {
    std::string channel, alias, caller;
    std::chrono::steady_clock::time_point at;
  };
  using PendingBinds = std::map<std::string, PendingBind>;  // by channel '\n' alias: --bind-window-us
  std::mutex window_lock_;
  PendingBinds pending_binds_;
  void land_bind(PendingBinds::iterator pending);  // the pending bind applied and forgotten (window_lock_ held)
};

}  // namespace crh::reference
