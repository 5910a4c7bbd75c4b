// A blocking HTTP/1.1 client over one keep-alive connection, with a deadline
// on every exchange and caps on what it reads: a misbehaving target gets a
// TransportError, never a hang or a crash. One client per thread.
#pragma once

#include <chrono>
#include <memory>

#include "core/base_url.hpp"
#include "core/http.hpp"

namespace crh::core {

struct ClientConfig {
  std::chrono::milliseconds timeout{5000};  // whole exchange: connect, send, receive
  std::size_t header_limit = 64 * 1024;     // bytes of status line and headers
  std::size_t body_limit = 4u << 20;        // bytes of response body
};

class HttpClient {
 public:
  HttpClient(BaseUrl base, ClientConfig config = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` (Host, Content-Length added; target joined to the base
  // path) and reads the answer. Reconnects when the previous answer closed the
  // connection. After a transport error the connection is dropped.
  Exchange send(HttpRequest request);

  const BaseUrl& base() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crh::core
