// get_floor: what one generator thread must spend per HTTP/1.1 GET on this
// machine (issue 39: crh load's CPU per request against wrk's). No crh code:
// the bare minimum a closed-loop, one-request-in-flight-per-connection
// client does, by two means, so that crh's and wrk's cost can be read
// against the floor of each:
//   epoll   edge-triggered epoll; per request one write(2) and one read(2)
//           (a second only when the first fills the buffer), the readiness
//           of many connections collected by one epoll_wait: what wrk does,
//           less wrk's two epoll_ctl calls per request
//   uring   io_uring (liburing): each request a send linked to its recv,
//           the send's completion skipped, every connection's next request
//           submitted in the same io_uring_enter that waits for the next
//           completions: no syscall per request at all
// It keeps --conns connections to 127.0.0.1:--port, each sending GET --path
// (with "Apikey: $CRH_API_KEY" when that is set) again as soon as the whole
// answer (its Content-Length) has come, for --duration seconds per method,
// methods taking turns --rounds times. Per turn it prints
//   METHOD requests/s cpu_us_per_request requests
// where the CPU is this process's user + system time over the turn
// (getrusage), divided by the answers completed in it.
//
// usage: get_floor --port P [--path /x] [--conns 32] [--duration 3]
//                  [--rounds 1] [--methods epoll,uring]
// Loopback only. Exit 0; 1 when an answer was not a 200 (said on stderr);
// 2 on a set-up failure.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

enum { kMaxConns = 1024, kBuf = 16384 };

typedef struct {
  int fd;
  size_t have;     // bytes of the answer so far
  size_t need;     // its whole length, once the head is in (0 before)
  char buf[kBuf];
} Conn;

static Conn g_conns[kMaxConns];
static int g_n = 32;
static char g_request[1024];
static size_t g_request_len;
static int g_port;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
         (double)u.ru_stime.tv_usec / 1e6;
}

static void die(const char* what) {
  fprintf(stderr, "get_floor: %s: %s\n", what, strerror(errno));
  exit(2);
}

static int open_conn(void) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) die("connect");
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// After bytes came: 1 when the whole answer is in, 0 when more must come.
static int answer_done(Conn* c) {
  if (c->need == 0) {
    char* end = memmem(c->buf, c->have, "\r\n\r\n", 4);
    if (!end) {
      if (c->have == kBuf) fprintf(stderr, "get_floor: an answer's head is over %d bytes\n", kBuf), exit(1);
      return 0;
    }
    if (c->have < 12 || memcmp(c->buf + 9, "200", 3) != 0) {
      fprintf(stderr, "get_floor: an answer was not a 200: %.40s\n", c->buf);
      exit(1);
    }
    size_t length = 0;
    for (char* line = c->buf; line < end; line = strstr(line, "\r\n") + 2)
      if (strncasecmp(line, "content-length:", 15) == 0) length = strtoul(line + 15, NULL, 10);
    c->need = (size_t)(end + 4 - c->buf) + length;
    if (c->need > kBuf) fprintf(stderr, "get_floor: an answer is over %d bytes\n", kBuf), exit(1);
  }
  if (c->have < c->need) return 0;
  if (c->have > c->need) fprintf(stderr, "get_floor: bytes after an answer\n"), exit(1);
  c->have = c->need = 0;
  return 1;
}

static void send_request(Conn* c) {
  if (write(c->fd, g_request, g_request_len) != (ssize_t)g_request_len) die("write");
}

// Non-blocking for epoll (a read finds nothing rather than waits); blocking
// for io_uring, whose recv then waits in the ring rather than failing EAGAIN.
static void set_nonblocking(int on) {
  for (int i = 0; i < g_n; ++i) {
    const int flags = fcntl(g_conns[i].fd, F_GETFL);
    if (flags < 0 || fcntl(g_conns[i].fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) != 0) die("fcntl");
  }
}

static uint64_t run_epoll(double seconds) {
  const int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  set_nonblocking(1);
  for (int i = 0; i < g_n; ++i) {
    struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.ptr = &g_conns[i]};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, g_conns[i].fd, &e) != 0) die("epoll_ctl");
    send_request(&g_conns[i]);
  }
  uint64_t done = 0;
  const double end = now_s() + seconds;
  struct epoll_event events[kMaxConns];
  while (now_s() < end) {
    const int n = epoll_wait(ep, events, kMaxConns, 100);
    for (int k = 0; k < n; ++k) {
      Conn* c = events[k].data.ptr;
      for (;;) {
        const size_t room = kBuf - c->have;
        const ssize_t got = read(c->fd, c->buf + c->have, room);
        if (got < 0 && errno == EAGAIN) break;
        if (got <= 0) die("read (the target closed a connection?)");
        c->have += (size_t)got;
        if (answer_done(c)) {
          ++done;
          send_request(c);
          break;
        }
        if ((size_t)got < room) break;  // drained: the edge comes again with more
      }
    }
  }
  // Drain the answers still in flight so the next turn starts clean (their
  // CPU is in the turn's, so they count too).
  for (int i = 0; i < g_n; ++i, ++done) {
    Conn* c = &g_conns[i];
    while (!answer_done(c)) {
      struct epoll_event e;
      epoll_wait(ep, &e, 1, 10);
      const ssize_t got = read(c->fd, c->buf + c->have, kBuf - c->have);
      if (got > 0) c->have += (size_t)got;
      else if (got == 0 || errno != EAGAIN) die("read");
    }
  }
  close(ep);
  set_nonblocking(0);
  return done;
}

#ifdef HAVE_LIBURING
static void queue_exchange(struct io_uring* ring, Conn* c, int with_send) {
  if (with_send) {
    struct io_uring_sqe* s = io_uring_get_sqe(ring);
    io_uring_prep_send(s, c->fd, g_request, g_request_len, 0);
    s->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data(s, NULL);
  }
  struct io_uring_sqe* r = io_uring_get_sqe(ring);
  io_uring_prep_recv(r, c->fd, c->buf + c->have, kBuf - c->have, 0);
  io_uring_sqe_set_data(r, c);
}

static uint64_t run_uring(double seconds) {
  struct io_uring ring;
  struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN |
                                       IORING_SETUP_DEFER_TASKRUN};
  if (io_uring_queue_init_params((unsigned)(2 * g_n), &ring, &p) < 0) {
    struct io_uring_params plain = {0};  // an older kernel: without the task-running flags
    const int rc = io_uring_queue_init_params((unsigned)(2 * g_n), &ring, &plain);
    if (rc < 0) errno = -rc, die("io_uring_queue_init");
  }
  for (int i = 0; i < g_n; ++i) queue_exchange(&ring, &g_conns[i], 1);
  uint64_t done = 0;
  int in_flight = g_n;
  const double end = now_s() + seconds;
  int stopping = 0;
  while (in_flight > 0) {
    if (!stopping && now_s() >= end) stopping = 1;  // from here on, no new request: drain
    const int rc = io_uring_submit_and_wait(&ring, 1);
    if (rc < 0 && rc != -EINTR) errno = -rc, die("io_uring_submit_and_wait");
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      Conn* c = io_uring_cqe_get_data(cqe);
      if (!c) {  // a failed send (a successful one posts nothing)
        errno = -cqe->res;
        die("send");
      }
      if (cqe->res <= 0) errno = cqe->res ? -cqe->res : ECONNRESET, die("recv (the target closed a connection?)");
      c->have += (size_t)cqe->res;
      if (!answer_done(c)) {
        queue_exchange(&ring, c, 0);
        continue;
      }
      ++done;
      if (stopping) --in_flight;
      else queue_exchange(&ring, c, 1);
    }
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  return done;
}
#endif

int main(int argc, char** argv) {
  const char* path = "/";
  const char* methods = "epoll,uring";
  double duration = 3;
  int rounds = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port")) g_port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--path")) path = argv[i + 1];
    else if (!strcmp(argv[i], "--conns")) g_n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--duration")) duration = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--methods")) methods = argv[i + 1];
    else {
      fprintf(stderr, "get_floor: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (g_port <= 0 || g_n < 1 || g_n > kMaxConns || duration <= 0 || rounds < 1) {
    fprintf(stderr, "usage: get_floor --port P [--path /x] [--conns 1-%d] [--duration S] [--rounds R] "
                    "[--methods epoll,uring]\n", kMaxConns);
    return 2;
  }
  const char* key = getenv("CRH_API_KEY");
  g_request_len = (size_t)snprintf(g_request, sizeof g_request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%s%s\r\n",
                                   path, g_port, key ? "Apikey: " : "", key ? key : "", key ? "\r\n" : "");
  if (g_request_len >= sizeof g_request) fprintf(stderr, "get_floor: the request is too long\n"), exit(2);
  for (int i = 0; i < g_n; ++i) g_conns[i].fd = open_conn();
  for (int r = 0; r < rounds; ++r) {
    char list[256];
    snprintf(list, sizeof list, "%s", methods);
    for (char* m = strtok(list, ","); m; m = strtok(NULL, ",")) {
      uint64_t (*run)(double) = NULL;
      if (!strcmp(m, "epoll")) run = run_epoll;
#ifdef HAVE_LIBURING
      else if (!strcmp(m, "uring")) run = run_uring;
#else
      else if (!strcmp(m, "uring")) {
        printf("uring left out: built without liburing (apt-get install liburing-dev)\n");
        continue;
      }
#endif
      else {
        fprintf(stderr, "get_floor: unknown method %s\n", m);
        return 2;
      }
      const double t0 = now_s(), c0 = cpu_s();
      const uint64_t n = run(duration);
      const double t1 = now_s(), c1 = cpu_s();
      printf("%s %.0f %.2f %llu\n", m, (double)n / (t1 - t0), n ? (c1 - c0) * 1e6 / (double)n : 0.0,
             (unsigned long long)n);
      fflush(stdout);
    }
  }
  return 0;
}
