// The reference's SIP user-agent server core (RFC 3261 §8.2, §12, §13.3, §17.2):
// what each request gets, decided by the same binding state as the HTTP call
// hook (Service::sip_call). No sockets: the SIP server hands it parsed
// messages and the time, and it sends through a callback.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "service.hpp"
#include "sip_message.hpp"
#include "sip_transactions.hpp"

namespace crh::reference {

struct SipUasConfig {
  std::chrono::milliseconds t1{500};         // RFC 3261 T1; every timer scales with it
  std::chrono::microseconds answer_delay{0}; // an INVITE is decided and answered this much later
  std::string contact_host;                  // for Contact and SDP; empty: the Request-URI's host
  unsigned short contact_port = 0;
  std::size_t capacity = 100'000;            // transactions (and dialogs) held at most
};

struct SipUasCounters {
  std::uint64_t requests = 0, retransmissions = 0, bad_requests = 0;
  std::uint64_t connected = 0, refused = 0, not_found = 0, cancelled = 0;
};

class SipUas {
 public:
  using Send = std::function<void(const SipPeer&, std::string_view bytes)>;
  SipUas(SipUasConfig config, Service& service, Send send);

  // A whole message from `peer` (the server did the framing).
  void on_message(const SipMessage& message, const SipPeer& peer, SipClock::time_point now);
  // Retransmissions, delayed answers and expiries due by `now`.
  void tick(SipClock::time_point now);
  // The work left for the next loop turn (binding-racy-turn's gap); true if any ran.
  bool run_deferred(SipClock::time_point now);
  bool has_deferred() const { return !deferred_.empty(); }
  SipClock::time_point next_due() const;

  const SipUasCounters& counters() const { return counters_; }
  const SipTransactions& transactions() const { return tx_; }

 private:
  using Task = std::function<void(SipClock::time_point)>;
  struct Scheduled {
    SipClock::time_point at;
    std::uint64_t seq;
    Task task;
    bool operator>(const Scheduled& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void invite(const SipMessage& m, const SipPeer& peer, const std::string& key, SipClock::time_point now);
  void ack(const SipMessage& m, const std::string& key, SipClock::time_point now);
  void cancel(const SipMessage& m, const SipPeer& peer, const std::string& key, SipClock::time_point now);
  void decide(const std::string& key, std::uint64_t serial, SipClock::time_point now);
  void finish(ServerTransaction& tx, CallStatus status, SipClock::time_point now);
  // A stateless answer (400, 481 outside a transaction, ...).
  void answer_once(const SipMessage& m, const SipPeer& peer, unsigned status, std::string_view reason,
                   std::string_view extra = {});
  void respond(ServerTransaction& tx, unsigned status, std::string_view reason, SipClock::time_point now,
               std::string_view extra = {}, std::string_view body = {});
  void fill(ServerTransaction& tx, const SipMessage& m);
  std::string contact(const ServerTransaction& tx) const;
  std::string sdp(const ServerTransaction& tx) const;
  std::string new_tag();
  void schedule(SipClock::time_point at, Task task);

  SipUasConfig config_;
  Service& service_;
  Send send_;
  SipTransactions tx_;
  SipUasCounters counters_;
  std::mt19937_64 random_;
  std::uint64_t tag_counter_ = 0, task_seq_ = 0;
  std::priority_queue<Scheduled, std::vector<Scheduled>, std::greater<>> scheduled_;
  std::vector<Task> deferred_;
};

// The key of the server transaction `m` belongs to (§17.2.3), as if its
// method were `method` (ACK and CANCEL look up their INVITE's).
std::string transaction_key(const SipMessage& m, std::string_view method);

}  // namespace crh::reference
