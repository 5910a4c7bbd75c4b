// The misbehaving loopback server for client tests.
#include "support/scripted_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace crh::test {

ScriptedServer::ScriptedServer(Behaviour behaviour) : behaviour_(std::move(behaviour)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("scripted server: cannot listen on loopback");
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { run(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  thread_.join();
  ::close(listen_fd_);
}

bool ScriptedServer::write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void ScriptedServer::reset_on_close(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

std::string ScriptedServer::read_head(int fd, const std::atomic<bool>& stopping) {
  std::string head;
  for (int waited = 0; head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 && waited < 2000 &&
                       !stopping;) {
    pollfd c{fd, POLLIN, 0};
    if (::poll(&c, 1, 20) <= 0) {
      waited += 20;
      continue;
    }
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  return head.find("\r\n\r\n") == std::string::npos ? std::string() : head;
}

std::string ScriptedServer::last_head() const {
  std::lock_guard lock(head_mutex_);
  return last_head_;
}

void ScriptedServer::run() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::string head = read_head(fd, stopping_);  // bounded in size and time; then misbehave
    {
      std::lock_guard lock(head_mutex_);
      last_head_ = std::move(head);
    }
    behaviour_(fd, stopping_);
    ::close(fd);
  }
}

}  // namespace crh::test
