// The blocking loopback test client: POSIX sockets with poll() timeouts and
// Beast's response parser fed by hand.
#include "support/raw_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace crh::test {
namespace http = boost::beast::http;

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

boost::json::value HttpResponse::json() const {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  return ec ? boost::json::value(nullptr) : v;
}

RawConnection::RawConnection(const std::string& host, unsigned short port) {
  sockaddr_storage addr{};
  socklen_t len;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    throw std::runtime_error("test client: not a numeric address: " + host);
  }
  fd_ = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("connect: ") + std::strerror(err));
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

namespace {

// Reads what is available within the deadline; 0 on close, -1 on timeout or error.
ssize_t read_some(int fd, std::string& into, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    char chunk[16384];
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == ECONNRESET ? 0 : -1;
    into.append(chunk, static_cast<std::size_t>(n));
    return n;
  }
}

}  // namespace

std::optional<HttpResponse> RawConnection::read_response(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // 1xx answers (100 Continue) precede the real one: skip them.
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(64u << 20);
    std::size_t used = 0;
    boost::system::error_code ec;
    while (!parser.is_done()) {
      if (used < buffer_.size()) {
        used += parser.put(boost::asio::buffer(buffer_.data() + used, buffer_.size() - used), ec);
        if (ec == http::error::need_more) ec = {};
        else if (ec) return std::nullopt;
        if (parser.is_done()) break;
        if (used < buffer_.size()) continue;
      }
      ssize_t n = read_some(fd_, buffer_, deadline);
      if (n == 0) {
        // A close before any byte of an answer is no answer (Beast's put_eof
        // would call a parser that has seen nothing complete).
        if (!parser.got_some()) return std::nullopt;
        parser.put_eof(ec);
        if (ec || !parser.is_done()) return std::nullopt;
      } else if (n < 0) {
        return std::nullopt;
      }
    }
    buffer_.erase(0, used);
    auto& msg = parser.get();
    if (msg.result_int() >= 100 && msg.result_int() < 200) continue;
    HttpResponse out;
    out.status = msg.result_int();
    for (const auto& field : msg) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(field.value());
    }
    out.body = std::move(msg.body());
    out.keep_alive = msg.keep_alive();
    return out;
  }
}

bool RawConnection::closes_within(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    ssize_t n = read_some(fd_, buffer_, deadline);
    if (n == 0) return true;
    if (n < 0) return false;
  }
}

std::string build_request(std::string_view method, std::string_view target,
                          const std::vector<Header>& headers, std::string_view body) {
  std::string out;
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: test\r\n");
  for (const auto& h : headers) out.append(h.name).append(": ").append(h.value).append("\r\n");
  if (!body.empty() || method == "POST" || method == "PUT")
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n").append(body);
  return out;
}

std::string url_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace crh::test
