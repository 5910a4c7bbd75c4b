// The SIP driver's sockets.
#include "calls/sip_transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace crh::calls::sip {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_nonblocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

}  // namespace

bool Address::same(const Address& o) const {
  if (storage.ss_family != o.storage.ss_family) return false;
  if (storage.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(storage);
    const auto& b = reinterpret_cast<const sockaddr_in&>(o.storage);
    return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr;
  }
  const auto& a = reinterpret_cast<const sockaddr_in6&>(storage);
  const auto& b = reinterpret_cast<const sockaddr_in6&>(o.storage);
  return a.sin6_port == b.sin6_port && std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof a.sin6_addr) == 0;
}

std::string Address::host_text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (v6()) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]";
  }
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(storage).sin_addr, buf, sizeof buf);
  return buf;
}

unsigned short Address::port() const {
  return ntohs(v6() ? reinterpret_cast<const sockaddr_in6&>(storage).sin6_port
                    : reinterpret_cast<const sockaddr_in&>(storage).sin_port);
}

std::string Address::text() const { return host_text() + ":" + std::to_string(port()); }

std::optional<Address> resolve(const std::string& host, unsigned short port, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0 || !found) {
    why = "cannot resolve " + host + ": " + gai_strerror(rc);
    return std::nullopt;
  }
  Address a;
  std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
  a.length = static_cast<socklen_t>(found->ai_addrlen);
  freeaddrinfo(found);
  return a;
}

std::optional<Address> local_address_towards(const Address& to, std::string& why) {
  int fd = socket(to.storage.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) return why = errno_text("socket"), std::nullopt;
  Address local;
  local.length = sizeof local.storage;
  bool ok = connect(fd, to.raw(), to.length) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&local.storage), &local.length) == 0;
  if (!ok) why = errno_text(("no route to " + to.text()).c_str());
  close(fd);
  if (!ok) return std::nullopt;
  if (local.v6()) reinterpret_cast<sockaddr_in6&>(local.storage).sin6_port = 0;
  else reinterpret_cast<sockaddr_in&>(local.storage).sin_port = 0;
  return local;
}

int open_udp(const Address& local, Address& bound, std::string& why) {
  int fd = socket(local.storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return why = errno_text("socket"), -1;
  int big = 4 * 1024 * 1024;  // a race fires many INVITEs at once and a flood may answer
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  bound.length = sizeof bound.storage;
  if (bind(fd, local.raw(), local.length) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound.storage), &bound.length) != 0) {
    why = errno_text(("bind " + local.host_text()).c_str());
    close(fd);
    return -1;
  }
  set_nonblocking(fd, true);
  return fd;
}

int open_tcp(const Address& to, std::chrono::milliseconds timeout, Address& local, std::string& why) {
  int fd = socket(to.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return why = errno_text("socket"), -1;
  set_nonblocking(fd, true);
  int rc = connect(fd, to.raw(), to.length);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = poll(&p, 1, static_cast<int>(timeout.count())) == 1 ? 0 : -1;
    int err = rc == 0 ? 0 : ETIMEDOUT;
    socklen_t len = sizeof err;
    if (rc == 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    errno = err;
    rc = err == 0 ? 0 : -1;
  }
  if (rc != 0) {
    why = errno_text(("connect to " + to.text()).c_str());
    close(fd);
    return -1;
  }
  set_nonblocking(fd, false);
  timeval send_timeout{1, 0};  // a peer that stops reading must not hold fire() for long
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  local.length = sizeof local.storage;
  getsockname(fd, reinterpret_cast<sockaddr*>(&local.storage), &local.length);
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool send_to(int fd, std::string_view bytes, const Address& to) {
  return sendto(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL, to.raw(), to.length) ==
         static_cast<ssize_t>(bytes.size());
}

std::size_t send_many_to(int fd, std::span<const std::string_view> datagrams, const Address& to) {
  std::vector<iovec> iov(datagrams.size());
  std::vector<mmsghdr> msgs(datagrams.size());
  for (std::size_t i = 0; i < datagrams.size(); ++i) {
    iov[i] = {const_cast<char*>(datagrams[i].data()), datagrams[i].size()};
    msgs[i].msg_hdr.msg_name = const_cast<sockaddr*>(to.raw());
    msgs[i].msg_hdr.msg_namelen = to.length;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  std::size_t sent = 0;
  while (sent < msgs.size()) {  // sendmmsg stops at the first datagram that fails
    const int n = sendmmsg(fd, msgs.data() + sent, static_cast<unsigned>(msgs.size() - sent), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  return sent;
}

}  // namespace crh::calls::sip
