// The SIP driver's user-agent client: one thread reading the socket (poll()),
// running the timers of every call's INVITE transaction (RFC 3261 §17.1.1),
// and the ACK, BYE and CANCEL that follow. Internal to calls/sip_call_driver.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "calls/sip_call_driver.hpp"
#include "calls/sip_message.hpp"
#include "calls/sip_requests.hpp"
#include "calls/sip_transport.hpp"

namespace crh::calls::sip {

using Clock = std::chrono::steady_clock;

// One call: fixed at arm, then its transaction's state (under the agent's lock).
struct Call {
  std::string alias, number, caller;
  CallParty party;
  std::string arm_error;  // not empty: the call cannot go out, and why
  std::string branch, invite_bytes;
  unsigned cseq = 1;

  bool fired = false;
  Clock::time_point sent, final_at, next_retransmit, deadline, linger_until;
  std::chrono::milliseconds interval{0};
  std::vector<unsigned> provisional;
  int invites_sent = 0;
  unsigned status = 0;  // the current INVITE transaction's final status
  std::string reason, retry_after, redirect_to, ack_bytes;
  int repeats = 0;  // final answers retransmitted, re-ACKed (up to a bound), never counted twice
  bool auth_tried = false;
  unsigned challenge = 0;  // 401/407 that asked
  std::string auth_error, old_branch, old_ack;
  bool timed_out = false, settled = false, late_final = false;
  std::string transport_error;
  int from_elsewhere = 0;
  std::string elsewhere;  // the last other address that answered

  std::string bye_branch, bye_bytes;
  bool bye_pending = false;
  unsigned bye_status = 0;
  std::string cancel_bytes;
  bool cancel_wanted = false, cancel_sent = false, cancel_pending = false;
  Clock::time_point cancel_wait_until;
  Clock::time_point resend_at, resend_deadline;  // BYE or CANCEL over UDP (Timer E)
  std::chrono::milliseconds resend_interval{0};

  bool finished = false;             // the outcome is decided (the agent's logic reads this)
  std::optional<CallResult> result;  // visible once `observe` has seen the call
  std::function<void()> done;
};

// What a finished call says: outcome and evidence (calls/sip_call_driver.cpp).
CallResult classify(const Call& call, const SipDriverConfig& config);
SipCallRecord record_of(const Call& call);

class UserAgentClient {
 public:
  explicit UserAgentClient(const SipDriverConfig& config);  // throws std::runtime_error
  ~UserAgentClient();  // stops the thread; settle() first to leave things as found

  std::shared_ptr<Call> prepare(const std::string& alias, const std::string& caller);
  void fire(const std::shared_ptr<Call>& call);
  // Fires them all at once; says how ("sendmmsg (UDP)", ...).
  std::string fire_all(std::span<const std::shared_ptr<Call>> calls);
  CallResult wait(const std::shared_ptr<Call>& call);
  void when_done(const std::shared_ptr<Call>& call, std::function<void()> done);
  void settle();

  // Datagrams or messages the agent set aside (bad, stray, from elsewhere).
  std::size_t ignored() const { return ignored_.load(); }

 private:
  void run();
  void read_udp();
  void read_tcp(int fd);
  void on_message(Message m, bool from_target, const Address& from, std::vector<std::function<void()>>& after);
  void on_invite_answer(const std::shared_ptr<Call>& call, const Message& m, std::vector<std::function<void()>>& after);
  void on_timers(std::vector<std::function<void()>>& after);
  void finish(const std::shared_ptr<Call>& call, std::vector<std::function<void()>>& after);
  void send_cancel(Call& call);
  void start_resend(Call& call, std::chrono::steady_clock::time_point now);
  void drop_connection(const std::string& why, std::vector<std::function<void()>>& after);
  bool send(std::string_view bytes);  // under the lock
  bool ensure_connected(std::string& why);
  bool quiet(Clock::time_point now) const;
  void wake();

  const SipDriverConfig& config_;
  Address target_;
  mutable std::mutex lock_;
  std::string release_bytes_;  // fire_all's INVITEs, one after another (under the lock)
  std::condition_variable changed_;
  int fd_ = -1;  // UDP socket, or the TCP connection (-1: none now)
  int wake_fd_ = -1;
  Address local_;
  std::mutex connecting_;
  std::unordered_map<std::string, std::shared_ptr<Call>> by_branch_;
  std::vector<std::shared_ptr<Call>> active_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> ignored_{0};
  std::thread thread_;
};

}  // namespace crh::calls::sip
