// The SIP driver's sockets: addresses resolved once, a bound UDP socket, a TCP
// connection opened with a deadline; plain POSIX calls, no Asio. Internal.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace crh::calls::sip {

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  bool same(const Address& other) const;  // family, IP and port
  std::string host_text() const;          // "127.0.0.1", "[::1]"
  unsigned short port() const;
  std::string text() const;  // host_text():port
  bool v6() const { return storage.ss_family == AF_INET6; }
  const sockaddr* raw() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

std::optional<Address> resolve(const std::string& host, unsigned short port, std::string& why);
// The local address the kernel would use to reach `to` (port 0).
std::optional<Address> local_address_towards(const Address& to, std::string& why);
// A non-blocking UDP socket bound to `local` (its port 0: ephemeral); `bound`
// is where it ended up. -1, with `why`, when it cannot be had.
int open_udp(const Address& local, Address& bound, std::string& why);
// A TCP connection to `to` within `timeout`, blocking for sends (with a send
// timeout) and read with poll; `local` is its local end. -1, with `why`.
int open_tcp(const Address& to, std::chrono::milliseconds timeout, Address& local, std::string& why);
// Whole bytes written on a stream; false when the connection is gone.
bool send_all(int fd, std::string_view bytes);
bool send_to(int fd, std::string_view bytes, const Address& to);
// Every datagram to `to` in one sendmmsg; how many went.
std::size_t send_many_to(int fd, std::span<const std::string_view> datagrams, const Address& to);

}  // namespace crh::calls::sip
