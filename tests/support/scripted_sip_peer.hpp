// A scripted SIP peer for the SIP call driver's tests: UDP or TCP on
// loopback, a script per test saying what to answer to each request (and
// when, and from which address). It records every request it received.
// Deliberately shares nothing with the driver but the message reader.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "calls/sip_call_driver.hpp"
#include "calls/sip_message.hpp"

namespace crh::test {

class ScriptedSipPeer {
 public:
  struct Reply {
    std::string bytes;                   // sent as they are
    std::chrono::milliseconds delay{0};  // after the request came
    bool from_other_address = false;     // from another socket (UDP): a hostile peer
  };
  // `nth` counts the requests of that method so far, from 1; `peer` builds answers.
  using Script =
      std::function<std::vector<Reply>(const ScriptedSipPeer& peer, const calls::sip::Message& request, int nth)>;

  ScriptedSipPeer(bool tcp, Script script, std::string host = "127.0.0.1");
  ~ScriptedSipPeer();

  unsigned short port() const { return port_; }
  // "127.0.0.1:PORT" with ";transport=tcp" over TCP: a --sip-target.
  std::string target() const;

  std::vector<calls::sip::Message> received() const;
  std::vector<calls::sip::Message> received(std::string_view method) const;
  // Waits until `n` requests of `method` came; false after `limit`.
  bool wait_for(std::string_view method, std::size_t n, std::chrono::milliseconds limit) const;
  // Closes the TCP connections it accepted (the driver must reconnect).
  void drop_connections();

  // A response to `request` (Via, From, Call-ID and CSeq copied, To tagged
  // unless a 100), with a Contact for 1xx/2xx and `extra` headers.
  std::string answer(const calls::sip::Message& request, unsigned status, std::string_view reason,
                     const std::vector<calls::sip::Header>& extra = {}) const;
  // What a plain UAS does with ACK, BYE and CANCEL: nothing, 200, and 200
  // then 487 for the INVITE.
  std::vector<Reply> standard(const calls::sip::Message& request) const;

 private:
  void run();
  void handle(const calls::sip::Message& m, int fd, const void* from, unsigned from_length);

  bool tcp_;
  Script script_;
  std::string host_;
  int listen_fd_ = -1, other_fd_ = -1, wake_[2] = {-1, -1};
  std::vector<int> connections_;
  unsigned short port_ = 0;
  mutable std::mutex lock_;
  mutable std::condition_variable changed_;
  std::vector<calls::sip::Message> received_;
  struct Pending;
  std::vector<std::shared_ptr<Pending>> pending_;
  bool stopping_ = false, drop_ = false;
  std::thread thread_;
};

// A driver's configuration aimed at `peer`: T1 of 50 ms, Timer B `timeout`,
// alias A numbered "+1555000A" (the alias "unknown" has no number).
inline calls::SipDriverConfig driver_config_for(const ScriptedSipPeer& peer,
                                               std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
  calls::SipDriverConfig c;
  std::string why;
  c.target = *core::parse_sip_target(peer.target(), why);
  c.timeout = timeout;
  c.t1 = std::chrono::milliseconds(50);
  c.number_of = [](const std::string& alias) -> std::optional<std::string> {
    if (alias == "unknown") return std::nullopt;
    return "+1555000" + alias;
  };
  return c;
}

}  // namespace crh::test
