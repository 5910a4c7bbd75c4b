// The reference's SIP transport: UDP and TCP on one port, one poll() thread
// (no Asio: it compiles fast and one thread keeps the UAS free of locks).
// Framing, connection limits and timers here; what to answer in SipUas.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "service.hpp"
#include "sip_uas.hpp"

namespace crh::reference {

struct SipServerConfig {
  std::string listen;                     // "HOST:PORT", "[V6]:PORT"; port 0 picks one free for UDP and TCP
  SipUasConfig uas;                       // timers, answer delay, table bounds
  std::size_t max_connections = 1024;     // TCP connections held at most (more are closed at once)
  std::chrono::seconds idle_timeout{300}; // a TCP connection silent this long is closed
};

class SipServer {
 public:
  SipServer(SipServerConfig config, Service& service);
  ~SipServer();  // stops if still running
  SipServer(const SipServer&) = delete;
  SipServer& operator=(const SipServer&) = delete;

  // Binds UDP and TCP and starts the thread. Throws std::runtime_error saying
  // what could not be done (bad address, port in use).
  void start();
  unsigned short port() const;
  std::string host() const;  // the bound address, without brackets
  void stop();               // idempotent; joins the thread

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Splits "HOST:PORT" or "[V6]:PORT"; false when it is not one.
bool split_host_port(const std::string& text, std::string& host, unsigned short& port);

}  // namespace crh::reference
