// One poll() loop over a wake-up eventfd, the UDP socket, the TCP listener and
// the TCP connections. Every buffer is bounded; a stream whose framing is lost
// or that grows past the message limit is closed.
#include "sip_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

namespace crh::reference {
namespace {

constexpr std::size_t kOutLimit = 1 << 20;  // bytes queued to a slow TCP reader before it is dropped
constexpr int kUdpBatch = 256;              // datagrams read per loop turn (others wait for the next)

struct Connection {
  int fd = -1;
  std::string in, out;
  SipPeer peer;
  SipClock::time_point last_active;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

SipPeer peer_of(const sockaddr_storage& addr, socklen_t size, std::uint64_t connection) {
  SipPeer p;
  p.connection = connection;
  p.address = addr;
  p.address_size = size;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    p.port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    p.port = ntohs(a->sin6_port);
  }
  p.host = text;
  return p;
}

}  // namespace

bool split_host_port(const std::string& text, std::string& host, unsigned short& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return false;  // an IPv6 literal needs brackets
  }
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  unsigned long value = std::stoul(digits);
  if (value > 65535) return false;
  port = static_cast<unsigned short>(value);
  return true;
}

struct SipServer::Impl {
  SipServerConfig config;
  Service& service;
  std::string host;
  unsigned short port = 0;
  int udp = -1, listener = -1, wake = -1;
  std::unordered_map<std::uint64_t, Connection> connections;
  std::uint64_t next_connection = 1;
  std::unique_ptr<SipUas> uas;
  std::atomic<bool> stopping{false};
  std::thread thread;
  bool started = false;

  Impl(SipServerConfig c, Service& s) : config(std::move(c)), service(s) {}
  ~Impl() { close_all(); }

  void close_all() {
    for (auto& [id, c] : connections) close_fd(c.fd);
    connections.clear();
    close_fd(udp);
    close_fd(listener);
    close_fd(wake);
  }

  void bind_both(const std::string& address, unsigned short wanted) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(address.c_str(), "0", &hints, &found); rc != 0 || !found)
      throw std::runtime_error("cannot use SIP address \"" + address + "\": " + gai_strerror(rc));
    sockaddr_storage where{};
    std::memcpy(&where, found->ai_addr, found->ai_addrlen);
    socklen_t size = found->ai_addrlen;
    int family = found->ai_family;
    freeaddrinfo(found);
    auto set_port = [&](unsigned short p) {
      if (family == AF_INET) reinterpret_cast<sockaddr_in*>(&where)->sin_port = htons(p);
      else reinterpret_cast<sockaddr_in6*>(&where)->sin6_port = htons(p);
    };
    std::string last_error;
    // Port 0: UDP picks a port, TCP must get the same one; another process may
    // hold it for TCP, so try again a few times.
    for (int attempt = 0; attempt < (wanted == 0 ? 20 : 1); ++attempt) {
      close_fd(udp);
      close_fd(listener);
      udp = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      listener = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (udp < 0 || listener < 0) throw std::runtime_error(std::string("cannot open SIP sockets: ") + strerror(errno));
      int one = 1, buffer = 4 << 20;
      setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);  // bursts of INVITEs wait in the kernel
      setsockopt(udp, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
      set_port(wanted);
      if (::bind(udp, reinterpret_cast<sockaddr*>(&where), size) != 0) {
        last_error = "UDP: " + std::string(strerror(errno));
        continue;
      }
      sockaddr_storage bound{};
      socklen_t bound_size = sizeof bound;
      getsockname(udp, reinterpret_cast<sockaddr*>(&bound), &bound_size);
      SipPeer local = peer_of(bound, bound_size, 0);
      set_port(local.port);
      if (::bind(listener, reinterpret_cast<sockaddr*>(&where), size) != 0 || ::listen(listener, 1024) != 0) {
        last_error = "TCP port " + std::to_string(local.port) + ": " + strerror(errno);
        continue;
      }
      host = local.host;
      port = local.port;
      return;
    }
    close_fd(udp);
    close_fd(listener);
    throw std::runtime_error("cannot listen for SIP on " + config.listen + ": " + last_error);
  }

  void send(const SipPeer& peer, std::string_view bytes) {
    if (!peer.reliable()) {  // a lost datagram is what retransmissions are for
      (void)::sendto(udp, bytes.data(), bytes.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&peer.address),
                     peer.address_size);
      return;
    }
    auto it = connections.find(peer.connection);
    if (it == connections.end()) return;  // the connection is gone: the peer retransmits or gives up
    Connection& c = it->second;
    c.out.append(bytes);
    flush(c);
  }

  void flush(Connection& c) {
    while (!c.out.empty() && c.fd >= 0) {
      ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out.erase(0, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      close_fd(c.fd);  // reaped by the loop
    }
    if (c.out.size() > kOutLimit) close_fd(c.fd);
  }

  void read_udp(SipClock::time_point now) {
    static thread_local std::string buffer(kSipMessageLimit + 1, '\0');
    for (int i = 0; i < kUdpBatch; ++i) {
      sockaddr_storage from{};
      socklen_t size = sizeof from;
      ssize_t n = ::recvfrom(udp, buffer.data(), buffer.size(), MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &size);
      if (n < 0) return;
      if (static_cast<std::size_t>(n) > kSipMessageLimit) continue;  // huge: dropped
      SipParse parsed = parse_sip(std::string_view(buffer.data(), static_cast<std::size_t>(n)), false);
      if (parsed.status != SipParseStatus::complete) continue;  // garbage is dropped, never answered
      uas->on_message(parsed.message, peer_of(from, size, 0), now);
    }
  }

  void accept_all(SipClock::time_point now) {
    for (int i = 0; i < 64; ++i) {
      sockaddr_storage from{};
      socklen_t size = sizeof from;
      int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&from), &size, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      if (connections.size() >= config.max_connections) {
        ::close(fd);
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::uint64_t id = next_connection++;
      connections[id] = Connection{fd, {}, {}, peer_of(from, size, id), now};
    }
  }

  void read_stream(Connection& c, SipClock::time_point now) {
    char chunk[16384];
    for (;;) {
      ssize_t n = ::recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return close_fd(c.fd);
      if (n < 0) break;
      c.in.append(chunk, static_cast<std::size_t>(n));
      c.last_active = now;
      if (c.in.size() > 2 * kSipMessageLimit) break;  // parse before reading more
    }
    std::size_t used = 0;
    while (c.fd >= 0) {
      SipParse parsed = parse_sip(std::string_view(c.in).substr(used), true);
      used += parsed.consumed;
      if (parsed.status == SipParseStatus::incomplete) break;
      if (parsed.status != SipParseStatus::complete) return close_fd(c.fd);  // framing lost or huge
      uas->on_message(parsed.message, c.peer, now);
    }
    if (c.fd >= 0) c.in.erase(0, used);
  }

  void loop() {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> ids;
    auto last_sweep = SipClock::now();
    while (!stopping.load()) {
      auto now = SipClock::now();
      int timeout = 1000;
      if (uas->has_deferred()) timeout = 0;
      else if (auto due = uas->next_due(); due != SipClock::time_point::max()) {
        auto ms = std::chrono::ceil<std::chrono::milliseconds>(due - now).count();
        timeout = static_cast<int>(std::clamp<long long>(ms, 0, 1000));
      }
      fds.assign({{wake, POLLIN, 0}, {udp, POLLIN, 0}, {listener, POLLIN, 0}});
      ids.clear();
      for (auto& [id, c] : connections) {
        fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
        ids.push_back(id);
      }
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
      now = SipClock::now();
      if (fds[0].revents) {
        std::uint64_t value;
        (void)::read(wake, &value, sizeof value);
      }
      if (stopping.load()) break;
      if (fds[1].revents) read_udp(now);
      if (fds[2].revents) accept_all(now);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        auto it = connections.find(ids[i]);
        if (it == connections.end() || it->second.fd < 0) continue;
        if (fds[3 + i].revents & POLLOUT) flush(it->second);
        if (it->second.fd >= 0 && (fds[3 + i].revents & (POLLIN | POLLHUP | POLLERR))) read_stream(it->second, now);
      }
      uas->run_deferred(now);  // after the batch just read: one loop turn later
      uas->tick(now);
      const bool sweep = now - last_sweep > std::chrono::seconds(1);
      if (sweep) last_sweep = now;
      for (auto it = connections.begin(); it != connections.end();) {
        if (sweep && it->second.fd >= 0 && now - it->second.last_active > config.idle_timeout) close_fd(it->second.fd);
        if (it->second.fd < 0) it = connections.erase(it);
        else ++it;
      }
    }
  }
};

SipServer::SipServer(SipServerConfig config, Service& service)
    : impl_(std::make_unique<Impl>(std::move(config), service)) {}

SipServer::~SipServer() { stop(); }

void SipServer::start() {
  auto& im = *impl_;
  if (im.started) throw std::logic_error("SipServer::start called twice");
  std::string address;
  unsigned short wanted = 0;
  if (!split_host_port(im.config.listen, address, wanted))
    throw std::runtime_error("SIP address must be HOST:PORT or [V6]:PORT, got \"" + im.config.listen + "\"");
  im.bind_both(address, wanted);
  im.wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (im.wake < 0) throw std::runtime_error("cannot create an eventfd for the SIP thread");
  SipUasConfig uas = im.config.uas;
  if (uas.contact_host.empty() && im.host != "0.0.0.0" && im.host != "::") uas.contact_host = im.host;
  uas.contact_port = im.port;
  im.uas = std::make_unique<SipUas>(uas, im.service,
                                    [&im](const SipPeer& peer, std::string_view bytes) { im.send(peer, bytes); });
  im.thread = std::thread([&im] { im.loop(); });
  im.started = true;
}

unsigned short SipServer::port() const { return impl_->port; }
std::string SipServer::host() const { return impl_->host; }

void SipServer::stop() {
  auto& im = *impl_;
  if (!im.started) return;
  im.started = false;
  im.stopping = true;
  std::uint64_t one = 1;
  (void)::write(im.wake, &one, sizeof one);
  if (im.thread.joinable()) im.thread.join();
  im.close_all();
}

}  // namespace crh::reference
