// The SIP call driver against SIPp's built-in UAS (`sipp -sn uas`): every
// call placed over UDP and over TCP completes (200, ACK, BYE), so the
// driver's messages are valid SIP to an implementation we did not write.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "calls/sip_call_driver.hpp"
#include "support/peer_ready.hpp"

namespace {

using namespace std::chrono_literals;

bool sipp_present() { return std::system("command -v sipp >/dev/null 2>&1") == 0; }

// A port free on loopback for UDP and TCP now (SIPp needs a number before it
// starts; another process may still take it first: see Sipp::bound).
unsigned short free_port() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(udp, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        getsockname(udp, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      close(udp);
      continue;
    }
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    const bool both = bind(tcp, reinterpret_cast<sockaddr*>(&a), len) == 0;
    close(tcp);
    close(udp);
    if (both) return ntohs(a.sin_port);
  }
  return 0;  // the caller fails the test, saying so
}

// SIPp in the foreground of a child process, its output in a file; killed at the end.
class Sipp {
 public:
  Sipp(unsigned short port, bool tcp, int calls) : log_(testing::TempDir() + "sipp_" + std::to_string(port) + ".log") {
    pid_ = fork();
    if (pid_ == 0) {
      std::freopen(log_.c_str(), "w", stdout);
      std::freopen(log_.c_str(), "a", stderr);
      std::string p = std::to_string(port), m = std::to_string(calls);
      execlp("sipp", "sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", p.c_str(), "-t", tcp ? "t1" : "u1", "-m",
             m.c_str(), "-nostdin", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // Whether SIPp has bound its port within `limit`; false at once if it
  // ended (it exits when the port is taken: "Unable to bind main socket").
  bool bound(unsigned short port, bool tcp, std::chrono::milliseconds limit) {
    const auto transport = tcp ? crh::test::Transport::tcp : crh::test::Transport::udp;
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if (crh::test::wait_for_listener(port, transport, 100ms)) return true;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
    }
    return false;
  }
  ~Sipp() {
    if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0) kill(pid_, SIGKILL), waitpid(pid_, nullptr, 0);
  }
  // SIPp's exit status once it ended by itself within `limit` (-m N: after N
  // calls; 0 when every call succeeded, ACK and BYE included); -1 otherwise.
  int exit_status(std::chrono::milliseconds limit) {
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  std::string log() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), {}};
  }
 private:
  pid_t pid_ = -1;
  std::string log_;
};

}  // namespace

TEST(SipDriverSipp, EveryCallToSippUasCompletes) {
  if (!sipp_present()) GTEST_SKIP() << "sipp is not on PATH (scripts/install-test-tools.sh installs sip-tester)";
  for (bool tcp : {false, true}) {
    const int calls = 10;
    // SIPp binds its port some time after start-up (seconds on a loaded
    // machine); a port taken meanwhile by someone else gets another try.
    unsigned short port = 0;
    std::unique_ptr<Sipp> started;
    for (int attempt = 0; attempt < 5 && !started; ++attempt) {
      port = free_port();
      ASSERT_NE(port, 0) << "no loopback port was free for both UDP and TCP in 50 tries";
      auto sipp = std::make_unique<Sipp>(port, tcp, calls);
      if (sipp->bound(port, tcp, 20s)) started = std::move(sipp);
      else if (attempt == 4) FAIL() << "SIPp did not bind 127.0.0.1:" << port << (tcp ? "/tcp" : "/udp") << " within 20 s; its log: " << sipp->log();
    }
    Sipp& sipp = *started;
    crh::calls::SipDriverConfig config;
    config.target = {"127.0.0.1", port, tcp};
    config.timeout = 5000ms;
    config.t1 = 200ms;
    config.number_of = [](const std::string& alias) -> std::optional<std::string> { return "+1555000" + alias; };
    std::unique_ptr<crh::calls::SipCallDriver> driver;
    try {
      driver = std::make_unique<crh::calls::SipCallDriver>(config);
    } catch (const std::exception& e) {
      FAIL() << "could not reach SIPp at 127.0.0.1:" << port << ": " << e.what() << "; its log: " << sipp.log();
    }
    int connected = 0;
    for (int i = 0; i < calls; ++i) {
      auto r = driver->place(std::to_string(i), "+1555123" + std::to_string(i));
      connected += r.outcome == crh::core::CallOutcome::connected;
      EXPECT_EQ(r.outcome, crh::core::CallOutcome::connected) << (tcp ? "tcp: " : "udp: ") << r.evidence;
    }
    driver->settle();
    EXPECT_EQ(connected, calls) << sipp.log();
    // SIPp's own count: every call ended as its UAS scenario expects (ACK, then BYE answered).
    EXPECT_EQ(sipp.exit_status(30s), 0) << (tcp ? "tcp: " : "udp: ") << sipp.log();
  }
}
