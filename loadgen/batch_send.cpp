#include "loadgen/batch_send.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#ifdef CRH_HAVE_LIBURING
#include <liburing.h>
#endif

namespace crh::loadgen {
namespace {

// The lowest real-time priority: above every ordinary thread, below the
// kernel's own real-time threads.
bool set_realtime(bool on) {
  sched_param p{};
  p.sched_priority = on ? sched_get_priority_min(SCHED_FIFO) : 0;
  return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &p) == 0;
}

}  // namespace

#ifdef CRH_HAVE_LIBURING
struct BatchSend::Ring {
  io_uring ring{};
  unsigned capacity = 0;
};
#else
struct BatchSend::Ring {};
#endif

BatchSend::BatchSend(unsigned capacity) {
  int policy = SCHED_OTHER;
  sched_param now{};
  pthread_getschedparam(pthread_self(), &policy, &now);
  if (policy != SCHED_OTHER) priority_ = ", at the thread's own priority";  // the user chose one (chrt): kept
  else if (set_realtime(true) && set_realtime(false)) realtime_ = true, priority_ = ", at real-time priority";
  else priority_ = ", at ordinary priority (real-time refused: needs root or CAP_SYS_NICE)";
#ifdef CRH_HAVE_LIBURING
  auto r = std::make_unique<Ring>();
  r->capacity = capacity;
  if (const int rc = io_uring_queue_init(capacity, &r->ring, 0); rc < 0) {
    path_ = std::string("send loop (io_uring refused: ") + std::strerror(-rc) + ")";  // e.g. a seccomp profile
    return;
  }
  ring_ = std::move(r);
  path_ = "io_uring";
#else
  (void)capacity;
  path_ = "send loop (built without liburing)";
#endif
}

BatchSend::~BatchSend() {
#ifdef CRH_HAVE_LIBURING
  if (ring_) io_uring_queue_exit(&ring_->ring);
#endif
}

void BatchSend::raise() {
  if (realtime_) set_realtime(true);
}

void BatchSend::lower() {
  if (realtime_) set_realtime(false);
}

std::chrono::nanoseconds BatchSend::send_all(std::span<const int> fds, std::span<const std::string_view> bytes,
                                             std::span<long> sent) {
  return at_priority([&] { send_now(fds, bytes, sent); });
}

void BatchSend::send_now(std::span<const int> fds, std::span<const std::string_view> bytes, std::span<long> sent) {
  const std::size_t n = fds.size();
#ifdef CRH_HAVE_LIBURING
  if (ring_ && n <= ring_->capacity) {
    io_uring& ring = ring_->ring;
    for (std::size_t i = 0; i < n; ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_send(sqe, fds[i], bytes[i].data(), bytes[i].size(), MSG_NOSIGNAL);
      io_uring_sqe_set_data64(sqe, i);
    }
    // One system call submits every send and waits for them: a one-byte
    // send on a socket with room completes inline.
    const int rc = io_uring_submit_and_wait(&ring, static_cast<unsigned>(n));
    if (rc < 0 && rc != -EINTR) {  // nothing submitted: drop the ring (and the queued sends) for good
      io_uring_queue_exit(&ring);
      ring_.reset();
      path_ = std::string("send loop (io_uring failed: ") + std::strerror(-rc) + ")";
      send_now(fds, bytes, sent);
      return;
    }
    for (std::size_t i = 0; i < n; ++i) sent[i] = -EIO;  // unknown until its completion comes
    for (std::size_t done = 0; done < n;) {
      if (io_uring_sq_ready(&ring) > 0) io_uring_submit(&ring);  // after an interrupted first call
      io_uring_cqe* cqe = nullptr;
      const int w = io_uring_wait_cqe(&ring, &cqe);
      if (w == -EINTR) continue;
      if (w < 0) break;
      sent[io_uring_cqe_get_data64(cqe)] = cqe->res;
      io_uring_cqe_seen(&ring, cqe);
      ++done;
    }
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) {
    const ssize_t rc = ::send(fds[i], bytes[i].data(), bytes[i].size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    sent[i] = rc < 0 ? -errno : rc;
  }
}

}  // namespace crh::loadgen
