// Plain types for one HTTP/1.1 exchange as the harness records it: what was
// sent, what came back (or why nothing did), and how long it took.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crh::core {

struct Header {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string method;          // "GET", "POST", ...
  std::string target;          // path and query, already percent-encoded, without the base path
  std::vector<Header> headers; // besides Host and Content-Length, which the client adds
  std::string body;
};

struct HttpResponse {
  unsigned status = 0;
  std::vector<Header> headers;
  std::string body;

  // The first header of that name (case-insensitive), or empty.
  std::string header(std::string_view name) const;
};

// Why an exchange has no response. Everything but `none` leaves the outcome
// of the request unknown to the caller (it may or may not have been applied).
enum class TransportError {
  none,
  resolve_failed,   // the host name did not resolve
  connect_failed,   // refused or unreachable
  timeout,          // no complete answer within the deadline
  reset,            // the peer closed or reset the connection mid-exchange
  malformed,        // the answer is not HTTP/1.1 (bad status line, framing, ...)
  too_large,        // headers or body beyond the client's caps
};

std::string_view to_string(TransportError e);

struct Exchange {
  HttpRequest request;
  std::optional<HttpResponse> response;
  TransportError error = TransportError::none;
  std::string error_detail;               // a sentence for people, when error != none
  std::chrono::microseconds elapsed{0};   // from the first byte sent (or connect) to the last read

  bool answered() const { return response.has_value(); }
};

}  // namespace crh::core
