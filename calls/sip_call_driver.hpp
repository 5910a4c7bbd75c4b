// The SIP call driver (issue 26): a caller's call is a real INVITE from the
// caller's number to the alias's number, over UDP or TCP, by a small RFC 3261
// user-agent client with its own thread (plain sockets and poll(), no Asio).
//
// Outcomes (README "SIP call driver"): a 2xx is connected (ACK, then BYE);
// a final status in the profile's SIP refusals (default 403) is refused; 503
// with Retry-After is a "not now" (CallResult::not_now) and unknown for the
// binding; any other 5xx is unknown for the binding and a failure; 404/484
// for a tagged alias's number is unknown and a failure;
// 3xx, 401/407 without credentials, 480, 486, 487 and no final answer by
// `timeout` (Timer B) are unknown, with the reason. A non-2xx final answer is
// ACKed within its transaction, never BYEd.
//
// Transactions (RFC 3261 §17.1.1): arm() builds the whole INVITE (and over
// TCP opens the connection, reopened when it dropped); fire() only writes
// those bytes from the caller's thread. Over UDP the INVITE is retransmitted
// every T1, doubling, until a provisional or final answer. Answers match by
// the top Via's branch, the CSeq method and the Call-ID; an answer from any
// address but the target's is ignored (and named in the evidence). A final
// answer repeated is ACKed again (up to 8 times), counted once. A 401/407 is
// answered once, with a new branch and CSeq+1, when credentials are given.
// A 2xx is ACKed (a transaction of its own: Contact as Request-URI, the
// Record-Route reversed as Route) and BYEd at once; its BYE is retransmitted
// until answered, for at most `timeout`. At Timer B the call is unknown and
// CANCELled if a provisional came (§9.1); if none came, a provisional that
// comes later gets the CANCEL. A 200 that comes after Timer B or a CANCEL is
// ACKed and BYEd; the call's result stays what it was.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calls/call_driver.hpp"
#include "core/target.hpp"  // SipTarget

namespace crh::calls {

// Digest credentials (RFC 3261 §22, RFC 2617 MD5): from CRH_SIP_USER and
// CRH_SIP_PASSWORD. The password is never printed nor written anywhere.
struct SipCredentials {
  std::string user;
  std::string password;
};
std::optional<SipCredentials> sip_credentials_from_env();

// One finished call, for evidence, the history and the capture's pairing.
struct SipCallRecord {
  std::string call_id;
  std::string alias;   // the alias id the harness meant
  std::string number;  // the alias's number the INVITE went to
  std::string caller;
  unsigned status = 0;          // the final status; 0: none came
  std::vector<unsigned> provisional;  // 1xx statuses seen, in order
  int invites_sent = 0;         // 1 + retransmissions
  std::chrono::steady_clock::time_point sent, final_at;  // INVITE out, final answer in
};

struct SipDriverConfig {
  core::SipTarget target;
  std::chrono::milliseconds timeout{5000};  // Timer B: the INVITE transaction's deadline
  std::chrono::milliseconds t1{500};        // RFC 3261 T1: the first retransmission interval (UDP)
  std::vector<unsigned> refusals{403};      // final statuses that are the contract's "no"
  // The Request-URI: {number} is the alias's number, {host} and {port} the target's.
  std::string uri_template = "sip:{number}@{host}:{port}";
  // The alias id to its number (the profile's number field); nothing: unknown alias.
  std::function<std::optional<std::string>(const std::string& alias)> number_of;
  std::optional<SipCredentials> credentials;
  // Every finished call, on the agent's thread, before the call's result()
  // returns; it must not call the driver.
  std::function<void(const SipCallRecord&)> observe;
};

class SipCallDriver : public CallDriver {
 public:
  // Opens the local socket(s) and starts the agent's thread. Throws
  // std::runtime_error saying what could not be done.
  explicit SipCallDriver(SipDriverConfig config);
  ~SipCallDriver() override;  // settle(), then the thread stops (armed calls must not outlive the driver)

  std::string describe() const override;  // "SIP INVITE sip:{number}@HOST:PORT (udp)"
  std::unique_ptr<ArmedCall> arm(const std::string& alias, const std::string& caller) override;
  std::string fire_together(std::span<ArmedCall* const> calls) override;  // one sendmmsg / one write
  CallWire wire(const std::string& alias, const std::string& caller) const override;  // throws: no wire
  CallOutcome outcome_of(unsigned status) const override;
  bool has_wire() const override { return false; }
  std::string_view operation() const override { return "sip-call"; }
  // Leaves the target as found: every fired call without a final answer is
  // CANCELled (if a provisional came; else one is awaited for up to 1 s),
  // then waits until every INVITE, BYE and CANCEL is answered, at most
  // `timeout` + 1 s; a 200 arriving meanwhile is ACKed and BYEd. A call still
  // without a result then gets one: unknown, "CANCELled". Many threads may
  // arm, fire and wait at once; settle() may run beside them.
  void settle() override;

 private:
  struct Agent;
  SipDriverConfig config_;
  std::unique_ptr<Agent> agent_;
};

}  // namespace crh::calls
