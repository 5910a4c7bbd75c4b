// The reference service over HTTP/1.1 (Beast, keep-alive, one io_context per
// thread). Embeddable: start on port 0, ask for the base URL, stop cleanly.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "fixtures.hpp"
#include "service.hpp"

namespace crh::reference {

struct ServerConfig {
  std::string host = "127.0.0.1";  // address or name to listen on
  unsigned short port = 0;         // 0: an ephemeral port, see Server::port()
  int threads = 0;                 // 0: one per core
  ServiceConfig service;           // key, faults, minute length
  Fixtures fixtures = default_fixtures();
  std::size_t header_limit = 8 * 1024;   // bytes of request line and headers (431 beyond)
  std::size_t body_limit = 64 * 1024;    // bytes of request body (413 beyond)
  std::chrono::seconds idle_timeout{30}; // a keep-alive connection idle this long is closed
  std::chrono::seconds drain_timeout{3}; // stop() waits this long for requests in flight
  // Every answer is sent this much later than it would be (`crh serve
  // --delay-us`: a target made slower by a known amount). A timer, as for
  // slow-tag: the thread serves other connections meanwhile.
  std::chrono::microseconds answer_delay{0};
  // SIP (issue 26): "HOST:PORT" for UDP and TCP on one port (port 0: one free
  // for both); empty: no SIP. The answer delay above applies to SIP finals too.
  std::string sip_listen;
  std::chrono::milliseconds sip_t1{500};  // RFC 3261 T1; tests shorten it, every SIP timer scales
};

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();  // stops if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the threads. Throws std::runtime_error saying
  // what could not be done (bad address, port in use).
  void start();

  unsigned short port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT" or "http://[::1]:PORT"
  unsigned short sip_port() const;  // 0 when no SIP
  std::string sip_host() const;     // the SIP side's bound address ("" when no SIP)

  // Graceful stop: no new connections, idle ones closed, requests in flight
  // answered (up to drain_timeout), threads joined. Idempotent.
  void stop();

  // Blocks until SIGINT or SIGTERM, then stops. Returns the signal number.
  int run_until_signal();

  Service& service();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crh::reference
