// Server transactions (RFC 3261 §17.2) and the dialogs the reference's SIP
// side creates, with their timers, scaled by T1. No sockets: the SIP server
// feeds it times and sends what it says to send. Bounded: every entry is
// forgotten after its lifetime, and the oldest go first when a table is full.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace crh::reference {

using SipClock = std::chrono::steady_clock;

// Where a request came from, and so where its responses go (§18.2.2: UDP
// answers go to the source address and port; TCP on the same connection).
struct SipPeer {
  std::uint64_t connection = 0;  // 0: UDP; else the TCP connection's id
  sockaddr_storage address{};
  socklen_t address_size = 0;
  std::string host;  // the source address as text, for Via's received
  unsigned short port = 0;
  bool reliable() const { return connection != 0; }
};

enum class TxPhase {
  proceeding,  // no final answer yet
  answered,    // INVITE: final sent, waiting for the ACK (retransmitting over UDP)
  done,        // ACKed, given up, or a non-INVITE answered: absorbing retransmissions only
};

struct ServerTransaction {
  std::string key;
  std::uint64_t serial = 0;
  bool invite = false;
  TxPhase phase = TxPhase::proceeding;
  SipPeer peer;
  std::string last_response;  // sent again when the request is retransmitted
  unsigned last_status = 0;
  // What a final answer made later needs (INVITE): the headers every response
  // copies, the To tag chosen, and who calls which number.
  std::string echo;
  std::string to;
  std::string record_route;
  std::string to_tag;
  bool add_tag = false;  // the request's To had no tag: responses but 100 add to_tag
  std::string call_id;
  std::string number, caller, uri_host;
  SipClock::time_point retransmit_at{}, give_up_at{}, forget_at{};
  SipClock::duration interval{};
};

struct SipDialog {
  std::string invite_key;  // its INVITE transaction, for the 2xx retransmissions
  bool confirmed = false;  // the ACK came
  std::uint64_t serial = 0;
  SipClock::time_point forget_at{};
};

class SipTransactions {
 public:
  // `capacity` bounds each table (transactions, dialogs).
  explicit SipTransactions(std::chrono::milliseconds t1, std::size_t capacity = 100'000,
                           std::chrono::seconds dialog_lifetime = std::chrono::hours(1));

  ServerTransaction* find(const std::string& key);
  ServerTransaction& open(const std::string& key, bool invite, const SipPeer& peer, SipClock::time_point now);
  // A response was sent: a final one to an INVITE over UDP is retransmitted
  // (Timer G, T1 doubling up to T2; a 2xx by the same schedule, §13.3.1.4)
  // until acknowledged() or Timer H (64*T1).
  void sent(ServerTransaction& tx, std::string bytes, unsigned status, SipClock::time_point now);
  void acknowledged(ServerTransaction& tx, SipClock::time_point now);

  // Calls `resend` for each retransmission due by `now`; forgets expired entries.
  void tick(SipClock::time_point now, const std::function<void(const ServerTransaction&)>& resend);
  // When tick() next has something to do (max() when nothing is pending).
  SipClock::time_point next_due() const;

  SipDialog& open_dialog(const std::string& key, const std::string& invite_key, SipClock::time_point now);
  SipDialog* dialog(const std::string& key);
  void close_dialog(const std::string& key) { dialogs_.erase(key); }

  std::size_t transactions() const { return table_.size(); }
  std::size_t dialogs() const { return dialogs_.size(); }
  std::chrono::milliseconds t1() const { return t1_; }

 private:
  struct Due {
    SipClock::time_point at;
    std::string key;
    std::uint64_t serial;
    bool operator>(const Due& o) const { return at > o.at; }
  };
  using Heap = std::priority_queue<Due, std::vector<Due>, std::greater<>>;
  void forget_one(SipClock::time_point now, bool force);
  void forget_dialog(SipClock::time_point now, bool force);

  std::chrono::milliseconds t1_;
  std::size_t capacity_;
  std::chrono::seconds dialog_lifetime_;
  std::uint64_t serial_ = 0;
  std::unordered_map<std::string, ServerTransaction> table_;
  std::unordered_map<std::string, SipDialog> dialogs_;
  Heap retransmits_, expiries_, dialog_expiries_;
};

}  // namespace crh::reference
