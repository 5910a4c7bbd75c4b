// A loopback server that misbehaves on purpose: it reads each request head
// and then runs a scripted behaviour on the raw socket (garbage, endless
// bodies, stalls, resets). Every behaviour must end within a few seconds.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace crh::test {

class ScriptedServer {
 public:
  // `behaviour(fd, stopping)` answers one request; it should return soon
  // after `stopping` becomes true.
  using Behaviour = std::function<void(int fd, const std::atomic<bool>& stopping)>;

  explicit ScriptedServer(Behaviour behaviour);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  unsigned short port() const { return port_; }
  // The head of the last connection's first request, as the server read it.
  std::string last_head() const;

  // Helpers for behaviours.
  static bool write_all(int fd, std::string_view bytes);
  static void reset_on_close(int fd);  // the server's close then sends RST, not FIN
  // Reads the next request head on `fd` (bounded like the first one), for a
  // behaviour that answers more than one request on its connection. Empty
  // when the peer closed, went quiet for 2 s, or `stopping` became true.
  static std::string read_head(int fd, const std::atomic<bool>& stopping);

 private:
  void run();
  Behaviour behaviour_;
  int listen_fd_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex head_mutex_;
  std::string last_head_;
  std::thread thread_;
};

}  // namespace crh::test
