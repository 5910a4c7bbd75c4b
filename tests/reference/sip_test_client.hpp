// A blocking SIP peer for the reference's SIP tests: UDP or TCP on loopback,
// every read bounded by a timeout. Its response reader is its own (a few
// lines), so a bug in the reference's parser cannot vouch for itself.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace crh::test {

struct SipReply {
  unsigned status = 0;
  std::string raw;
  // The first value of a header (full name, case-insensitive), "" when absent.
  std::string header(std::string_view name) const {
    std::size_t at = raw.find("\r\n");
    while (at != std::string::npos && at + 2 < raw.size()) {
      std::size_t end = raw.find("\r\n", at + 2);
      std::string_view line(raw.data() + at + 2, (end == std::string::npos ? raw.size() : end) - at - 2);
      if (line.empty()) break;
      auto colon = line.find(':');
      if (colon == name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0) {
        auto v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return std::string(v);
      }
      at = end;
    }
    return {};
  }
  std::string body() const {
    auto at = raw.find("\r\n\r\n");
    return at == std::string::npos ? "" : raw.substr(at + 4);
  }
  std::string to_tag() const {
    auto to = header("To");
    auto at = to.find(";tag=");
    return at == std::string::npos ? "" : to.substr(at + 5, to.find(';', at + 5) - at - 5);
  }
};

class SipTestPeer {
 public:
  SipTestPeer(bool tcp, unsigned short port, const std::string& host = "127.0.0.1") : tcp_(tcp) {
    const bool v6 = host.find(':') != std::string::npos;
    sockaddr_storage addr{};
    socklen_t size;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
      size = sizeof(sockaddr_in6);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      inet_pton(AF_INET, host.c_str(), &a->sin_addr);
      size = sizeof(sockaddr_in);
    }
    fd_ = ::socket(v6 ? AF_INET6 : AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), size) != 0)
      throw std::runtime_error("cannot reach the SIP port");
    sockaddr_storage local{};
    socklen_t local_size = sizeof local;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &local_size);
    local_port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                           : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  }
  ~SipTestPeer() {
    if (fd_ >= 0) ::close(fd_);
  }
  SipTestPeer(const SipTestPeer&) = delete;
  SipTestPeer& operator=(const SipTestPeer&) = delete;

  unsigned short local_port() const { return local_port_; }
  const char* transport() const { return tcp_ ? "TCP" : "UDP"; }

  void send(std::string_view bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }

  // The next response, or nothing when none comes within `timeout`.
  std::optional<SipReply> read(std::chrono::milliseconds timeout = std::chrono::seconds(3)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto r = take()) return r;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[70000];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        closed_ = true;
        return std::nullopt;
      }
      if (!tcp_) {
        datagram_ = std::string(chunk, static_cast<std::size_t>(n));
        return parse(datagram_);
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  // The next response with a status other than 100.
  std::optional<SipReply> read_final(std::chrono::milliseconds timeout = std::chrono::seconds(3)) {
    for (;;) {
      auto r = read(timeout);
      if (!r || r->status != 100) return r;
    }
  }
  // True if a TCP peer closed the connection within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_ && std::chrono::steady_clock::now() < deadline) (void)read(timeout);
    return closed_;
  }

 private:
  static std::optional<SipReply> parse(const std::string& text) {
    if (text.rfind("SIP/2.0 ", 0) != 0 || text.size() < 11) return std::nullopt;
    return SipReply{static_cast<unsigned>(std::stoul(text.substr(8, 3))), text};
  }
  std::optional<SipReply> take() {  // one framed response from the TCP buffer
    auto end = buffer_.find("\r\n\r\n");
    if (end == std::string::npos) return std::nullopt;
    SipReply head{0, buffer_.substr(0, end + 4)};
    std::size_t length = std::stoul("0" + head.header("Content-Length"));
    if (buffer_.size() < end + 4 + length) return std::nullopt;
    std::string text = buffer_.substr(0, end + 4 + length);
    buffer_.erase(0, end + 4 + length);
    return parse(text);
  }

  bool tcp_;
  int fd_ = -1;
  unsigned short local_port_ = 0;
  std::string buffer_, datagram_;
  bool closed_ = false;
};

// A request's bytes: Via, From, To, Call-ID, CSeq, Max-Forwards and Content-Length set.
struct SipRequest {
  std::string method = "INVITE";
  std::string number;  // the Request-URI's user part (and To's)
  std::string caller;  // From's user part
  std::string branch, call_id, from_tag = "ftag1", to_tag;
  unsigned long cseq = 1;
  std::string extra;   // more header lines, each ending in CRLF
  std::string body;

  // The same dialog and transaction fields as another method, with no body.
  SipRequest as(std::string other_method) const {
    SipRequest r = *this;
    r.method = std::move(other_method);
    r.body.clear();
    return r;
  }

  std::string bytes(const SipTestPeer& peer, unsigned short server_port) const {
    const std::string host = "127.0.0.1:" + std::to_string(server_port);
    std::string out = method + " sip:" + number + "@" + host + " SIP/2.0\r\n";
    out += "Via: SIP/2.0/" + std::string(peer.transport()) + " 127.0.0.1:" + std::to_string(peer.local_port()) +
           ";branch=z9hG4bK" + branch + ";rport\r\n";
    out += "Max-Forwards: 70\r\n";
    out += "From: <sip:" + caller + "@127.0.0.1>;tag=" + from_tag + "\r\n";
    out += "To: <sip:" + number + "@" + host + ">" + (to_tag.empty() ? "" : ";tag=" + to_tag) + "\r\n";
    out += "Call-ID: " + call_id + "\r\n";
    out += "CSeq: " + std::to_string(cseq) + " " + method + "\r\n";
    out += "Contact: <sip:" + caller + "@127.0.0.1:" + std::to_string(peer.local_port()) + ">\r\n";
    out += extra;
    if (!body.empty()) out += "Content-Type: application/sdp\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    return out;
  }
};

}  // namespace crh::test
