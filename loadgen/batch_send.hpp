// A round's last bytes released together (issue 39): one io_uring
// submission for every caller's socket where the kernel gives a ring, a
// loop of send(2) otherwise. The race's callers arrive at the target as
// close together as the sending machine allows; which path a run used is
// written in its document (race.release_path).
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace crh::loadgen {

class BatchSend {
 public:
  // Tries for a ring of `capacity` entries (the race's callers); a failure
  // leaves the send loop and says why in path(). Tries real-time priority
  // too (root or CAP_SYS_NICE): the releasing thread holds it only while it
  // sends, so that nothing of its core's preempts it between two callers,
  // and a busy generator cannot starve a target on the same core.
  explicit BatchSend(unsigned capacity);
  ~BatchSend();
  BatchSend(const BatchSend&) = delete;
  BatchSend& operator=(const BatchSend&) = delete;

  // "io_uring" or "send loop (why not io_uring)", and whether the release
  // ran at real-time priority (or why not).
  std::string path() const { return path_ + priority_; }

  // Sends bytes[i] on fds[i], all at once; sent[i] is the count written or
  // -errno. A send the ring could not finish at once (-EAGAIN, a short
  // count) is left to the caller to complete. Returns how long the sends
  // took, first to last (the priority's raising and lowering outside it).
  std::chrono::nanoseconds send_all(std::span<const int> fds, std::span<const std::string_view> bytes, std::span<long> sent);

  // Runs `release` (a driver's own batched release: SIP) at the priority
  // send_all uses; returns how long it took. priority() says which.
  template <class F>
  std::chrono::nanoseconds at_priority(F&& release) {
    raise();
    const auto start = std::chrono::steady_clock::now();
    release();
    const auto took = std::chrono::steady_clock::now() - start;
    lower();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(took);
  }
  const std::string& priority() const { return priority_; }

 private:
  void raise();
  void lower();
  void send_now(std::span<const int> fds, std::span<const std::string_view> bytes, std::span<long> sent);

  struct Ring;
  std::unique_ptr<Ring> ring_;
  std::string path_;
  std::string priority_;
  bool realtime_ = false;
};

}  // namespace crh::loadgen
