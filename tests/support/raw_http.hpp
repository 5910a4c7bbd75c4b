// A blocking HTTP/1.1 test client over loopback with timeouts on every read:
// sends raw bytes (so tests can send malformed requests) and parses answers.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crh::test {

struct HttpResponse {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool keep_alive = true;

  std::string header(const std::string& lower_name) const;
  // The body parsed as JSON; null when it is not valid JSON.
  boost::json::value json() const;
};

class RawConnection {
 public:
  RawConnection(const std::string& host, unsigned short port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(std::string_view bytes);
  // The next response, or nothing if the peer closed or `timeout` passed first.
  std::optional<HttpResponse> read_response(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // True if the peer closes the connection within `timeout` (anything it sends first is dropped).
  bool closes_within(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
  std::string buffer_;
};

struct Header {
  std::string name, value;
};

// Bytes of a request with Host and Content-Length set.
std::string build_request(std::string_view method, std::string_view target,
                          const std::vector<Header>& headers = {}, std::string_view body = {});

// Percent-encodes everything but unreserved characters (RFC 3986).
std::string url_encode(std::string_view s);

}  // namespace crh::test
