// release_limit: how close together this machine can make N requests arrive
// (issue 39). No crh code: the floor that crh's race release is measured
// against. A sender thread holds N TCP connections (and N UDP sockets) to a
// sink thread of this process and, each round, releases one byte on every
// one of them at once, by one of these methods:
//   tcp-write     a loop of write(2), one syscall per connection
//   tcp-uring     N sends in one io_uring_enter (liburing)
//   udp-sendto    a loop of send(2) on N connected UDP sockets
//   udp-sendmmsg  N datagrams in one sendmmsg(2) from one socket
//   udp-uring     N sends on N connected UDP sockets in one io_uring_enter
// Methods take turns round by round, so a slow spell of the machine falls on
// all of them alike. Per round it records:
//   send span     from just before the first send call to just after the
//                 last returns (a batched call: its whole duration)
//   arrival skew  the spread of the kernel's receive stamps of the N bytes at
//                 the sink (SO_TIMESTAMPNS): when each reached the target's
//                 socket, whatever the target's own threads do after
// and prints each method's p50, p90, p99 and max in microseconds.
// A TCP release is one byte (an HTTP call's last); a UDP one is a whole
// datagram of --datagram-bytes (default 1; a SIP INVITE's size to compare
// with crh's SIP race, which cannot hold back part of a datagram).
//
// Against a real target instead of the sink (--http-target PORT: the TCP
// connections go there, each round writes "GET / HTTP/1.1 ..." but its last
// byte, releases the last bytes and reads the answers; --udp-target PORT:
// the datagrams go there): the target's own way of waiting for input sets
// part of what each send costs the sender (a waiting reader on the socket's
// queue is woken in the sender's call), so the limit for crh's race against
// a target is measured against that target. There is no sink then: the
// arrival skew is read from a capture (bench/arrival_skew.py), and only the
// methods of the targeted protocols run.
//
// With --call-aliases FILE as well (HTTP target only), each round races
// real calls instead: every connection arms "POST --call-path" (its
// "{alias}" the round's line of FILE, an alias tagged beforehand; a caller
// of its own; the key from $CRH_API_KEY) but the last byte, and a round
// catches the target's check-then-bind window when more than one answer is
// a 2xx. Per method it prints the rounds and the rounds caught: the bare
// program's catch rate, beside crh's (bench/race_catch_rate.sh).
//
// usage: release_limit [--conns N] [--rounds R] [--gap-us G] [--sender-cpu C]
//                      [--sink-cpu C] [--methods m1,m2,...] [--warmup W]
//                      [--datagram-bytes D] [--http-target PORT] [--udp-target PORT]
//                      [--call-aliases FILE] [--call-path P]
//                      [--realtime 1|2]   (the sender at SCHED_FIFO's lowest
//                      priority: 1 throughout, 2 for each release only, as
//                      crh's release is; needs root)
// Loopback only. Exit 0, or 2 on a set-up failure (said on stderr).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

enum { kMaxConns = 64 };
enum Method { TCP_WRITE, TCP_URING, UDP_SENDTO, UDP_SENDMMSG, UDP_URING, METHODS };
static const char* const kNames[METHODS] = {"tcp-write", "tcp-uring", "udp-sendto", "udp-sendmmsg", "udp-uring"};

static int conns = 8, rounds = 3000, warmup = 100, gap_us = 500, sender_cpu = 0, sink_cpu = 1;
static int http_target = 0, udp_target = 0;  // ports of a real target (0: the sink)
static const char* call_aliases = NULL;       // --call-aliases: race calls, one alias per round
static char tcp_last[kMaxConns];              // each TCP connection's release: its armed request's last byte
static int realtime = 0;
static const char* datagram_file = NULL;  // the datagram's bytes (a SIP INVITE), instead of --datagram-bytes of 'x' 
static const char kArmed[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r";  // and "\n" releases it
static int tcp_client[kMaxConns], tcp_sink[kMaxConns], udp_client[kMaxConns], udp_sink = -1;
static enum Method order[METHODS];
static int n_methods = 0;
static _Atomic int round_done = -1;       // the last round the sink has every byte of
static int64_t* arrival;                  // per round: the spread of the receive stamps (ns)
static int64_t* span;                     // per round: the send span (ns)
static char* caught;                      // per round (--call-aliases): more than one caller connected
static char** call_alias;                 // per round (--call-aliases): the alias raced
static const char* call_path = "/channels/1/alias-numbers/{alias}/calls";

static void die(const char* what) {
  fprintf(stderr, "release_limit: %s: %s\n", what, strerror(errno));
  exit(2);
}

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) fprintf(stderr, "release_limit: not pinned to CPU %d\n", cpu);
}

static void stamp_on(int fd) {
  const int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) die("SO_TIMESTAMPNS");
}

// One byte (or datagram) from fd; returns its kernel receive stamp.
static int64_t receive_stamped(int fd) {
  char byte, control[256];
  struct iovec iov = {&byte, 1};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  ssize_t got;
  do got = recvmsg(fd, &msg, 0);
  while (got < 0 && errno == EINTR);
  if (got != 1) die("the sink's read");
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof ts);
      return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
  fprintf(stderr, "release_limit: no receive stamp on a read\n");
  exit(2);
}

static void* sink(void* unused) {
  (void)unused;
  pin(sink_cpu);
  for (int r = 0; r < rounds; ++r) {
    const enum Method m = order[r % n_methods];
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (int i = 0; i < conns; ++i) {
      const int64_t t = receive_stamped(m == TCP_WRITE || m == TCP_URING ? tcp_sink[i] : udp_sink);
      if (t < first) first = t;
      if (t > last) last = t;
    }
    arrival[r] = last - first;
    atomic_store_explicit(&round_done, r, memory_order_release);
  }
  return NULL;
}

#ifdef HAVE_LIBURING
static struct io_uring ring;
// Connection i sends `size` bytes from bytes + i * stride.
static void uring_release(const int* fds, const char* bytes, size_t stride, size_t size) {
  for (int i = 0; i < conns; ++i) io_uring_prep_send(io_uring_get_sqe(&ring), fds[i], bytes + i * stride, size, 0);
  if (io_uring_submit(&ring) != conns) die("io_uring_submit");
}
static void uring_reap(void) {
  for (int i = 0; i < conns; ++i) {
    struct io_uring_cqe* cqe;
    if (io_uring_wait_cqe(&ring, &cqe) != 0) die("io_uring_wait_cqe");
    if (cqe->res <= 0) {
      errno = -cqe->res;
      die("an io_uring send");
    }
    io_uring_cqe_seen(&ring, cqe);
  }
}
#endif

static char datagram[65507];
static int datagram_bytes = 1;

static void release(enum Method m) {
  const size_t d = (size_t)datagram_bytes;
  switch (m) {
    case TCP_WRITE:
      for (int i = 0; i < conns; ++i)
        if (write(tcp_client[i], &tcp_last[i], 1) != 1) die("write");
      break;
    case UDP_SENDTO:
      for (int i = 0; i < conns; ++i)
        if (send(udp_client[i], datagram, d, 0) != (ssize_t)d) die("send");
      break;
    case UDP_SENDMMSG: {
      struct iovec iov = {datagram, d};
      struct mmsghdr msgs[kMaxConns];
      memset(msgs, 0, sizeof msgs);
      for (int i = 0; i < conns; ++i) msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
      if (sendmmsg(udp_client[0], msgs, (unsigned)conns, 0) != conns) die("sendmmsg");
      break;
    }
#ifdef HAVE_LIBURING
    case TCP_URING: uring_release(tcp_client, tcp_last, 1, 1); break;
    case UDP_URING: uring_release(udp_client, datagram, 0, d); break;
#endif
    default: break;
  }
}

static void connect_targets(void) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  const int on = 1;
  for (int i = 0; i < conns && http_target; ++i) {
    a.sin_port = htons((uint16_t)http_target);
    tcp_client[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (tcp_client[i] < 0 || connect(tcp_client[i], (struct sockaddr*)&a, sizeof a) != 0) die("connect to the HTTP target");
    setsockopt(tcp_client[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  for (int i = 0; i < conns && udp_target; ++i) {
    a.sin_port = htons((uint16_t)udp_target);
    udp_client[i] = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp_client[i] < 0 || connect(udp_client[i], (struct sockaddr*)&a, sizeof a) != 0) die("UDP connect to the target");
  }
}

// Reads one HTTP answer (head and Content-Length body) from fd; its status.
static int read_answer(int fd) {
  char buf[16384];
  size_t have = 0;
  long need = -1;
  for (;;) {
    const ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n <= 0) die("reading the target's answer");
    have += (size_t)n;
    buf[have] = 0;
    const char* end = strstr(buf, "\r\n\r\n");
    if (end && need < 0) {
      const char* cl = strcasestr(buf, "\r\ncontent-length:");
      need = (long)(end + 4 - buf) + (cl && cl < end ? atol(cl + 17) : 0);
    }
    if (need >= 0 && (long)have >= need) return have > 12 && !strncmp(buf, "HTTP/1.", 7) ? atoi(buf + 9) : 0;
    if (have >= sizeof buf - 1) die("an answer over 16 KiB");
  }
}

static void connect_all(uint16_t* tcp_port, uint16_t* udp_port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0 || bind(listener, (struct sockaddr*)&a, sizeof a) != 0 || listen(listener, kMaxConns) != 0 ||
      getsockname(listener, (struct sockaddr*)&a, &len) != 0)
    die("the TCP sink");
  *tcp_port = ntohs(a.sin_port);
  const int on = 1;
  for (int i = 0; i < conns; ++i) {
    tcp_client[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (tcp_client[i] < 0 || connect(tcp_client[i], (struct sockaddr*)&a, sizeof a) != 0) die("connect");
    setsockopt(tcp_client[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if ((tcp_sink[i] = accept(listener, NULL, NULL)) < 0) die("accept");
    stamp_on(tcp_sink[i]);
  }
  close(listener);
  struct sockaddr_in u = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  len = sizeof u;
  udp_sink = socket(AF_INET, SOCK_DGRAM, 0);
  if (udp_sink < 0 || bind(udp_sink, (struct sockaddr*)&u, sizeof u) != 0 || getsockname(udp_sink, (struct sockaddr*)&u, &len) != 0)
    die("the UDP sink");
  stamp_on(udp_sink);
  *udp_port = ntohs(u.sin_port);
  for (int i = 0; i < conns; ++i) {
    udp_client[i] = socket(AF_INET, SOCK_DGRAM, 0);
    if (udp_client[i] < 0 || connect(udp_client[i], (struct sockaddr*)&u, sizeof u) != 0) die("UDP connect");
  }
}

// Round r's call on connection i, all but its last byte written.
static void arm_call(int r, int i) {
  char path[512], request[1024];
  const char* at = strstr(call_path, "{alias}");
  if (at) snprintf(path, sizeof path, "%.*s%s%s", (int)(at - call_path), call_path, call_alias[r], at + 7);
  else snprintf(path, sizeof path, "%s", call_path);
  const char* key = getenv("CRH_API_KEY");
  char body[32];
  const int body_len = snprintf(body, sizeof body, "caller=%09d", 100000000 + r * conns + i);
  const int n = snprintf(request, sizeof request,
                         "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%sContent-Type: application/x-www-form-urlencoded\r\n"
                         "Content-Length: %d\r\n\r\n%s",
                         path, key ? "Apikey: " : "", key ? key : "", key ? "\r\n" : "", body_len, body);
  if (n <= 0 || n >= (int)sizeof request) fprintf(stderr, "release_limit: a call request over 1 KiB\n"), exit(2);
  if (write(tcp_client[i], request, (size_t)n - 1) != n - 1) die("arming a call");
  tcp_last[i] = request[n - 1];
}

static void read_call_aliases(const char* file) {
  FILE* f = fopen(file, "r");
  if (!f) die(file);
  call_alias = calloc((size_t)rounds, sizeof *call_alias);
  char line[256];
  for (int r = 0; r < rounds; ++r) {
    if (!fgets(line, sizeof line, f)) {
      fprintf(stderr, "release_limit: %s has fewer aliases than the %d rounds (warm-up included)\n", file, rounds);
      exit(2);
    }
    line[strcspn(line, "\r\n")] = 0;
    call_alias[r] = strdup(line);
  }
  fclose(f);
}

static int compare(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static void print_row(const char* method, const char* what, int64_t* v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare);
  const int p50 = n / 2, p90 = (int)(n * 0.9), p99 = (int)(n * 0.99);
  printf("%-13s %-13s %6d  %8.1f  %8.1f  %8.1f  %8.1f\n", method, what, n, v[p50] / 1e3, v[p90] / 1e3, v[p99] / 1e3,
         v[n - 1] / 1e3);
}

static void parse(int argc, char** argv) {
  const char* methods = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (i + 1 >= argc) goto usage;
    const char* value = argv[++i];
    if (!strcmp(flag, "--conns")) conns = atoi(value);
    else if (!strcmp(flag, "--rounds")) rounds = atoi(value);
    else if (!strcmp(flag, "--warmup")) warmup = atoi(value);
    else if (!strcmp(flag, "--gap-us")) gap_us = atoi(value);
    else if (!strcmp(flag, "--sender-cpu")) sender_cpu = atoi(value);
    else if (!strcmp(flag, "--sink-cpu")) sink_cpu = atoi(value);
    else if (!strcmp(flag, "--methods")) methods = value;
    else if (!strcmp(flag, "--datagram-bytes")) datagram_bytes = atoi(value);
    else if (!strcmp(flag, "--http-target")) http_target = atoi(value);
    else if (!strcmp(flag, "--udp-target")) udp_target = atoi(value);
    else if (!strcmp(flag, "--realtime")) realtime = atoi(value);
    else if (!strcmp(flag, "--datagram-file")) datagram_file = value;
    else if (!strcmp(flag, "--call-aliases")) call_aliases = value;
    else if (!strcmp(flag, "--call-path")) call_path = value;
    else goto usage;
  }
  if (conns < 2 || conns > kMaxConns || rounds < 1 || warmup < 0 || gap_us < 0 || datagram_bytes < 1 ||
      datagram_bytes > (int)sizeof datagram || (call_aliases && (!http_target || udp_target)))
    goto usage;
  memset(datagram, 'x', sizeof datagram);
  if (datagram_file) {
    FILE* f = fopen(datagram_file, "rb");
    if (!f) die(datagram_file);
    datagram_bytes = (int)fread(datagram, 1, sizeof datagram, f);
    fclose(f);
    if (datagram_bytes < 1) goto usage;
  }
  for (int m = 0; m < METHODS; ++m) {
#ifndef HAVE_LIBURING
    if (m == TCP_URING || m == UDP_URING) {
      if (methods && strstr(methods, kNames[m])) fprintf(stderr, "release_limit: built without liburing: no %s\n", kNames[m]);
      continue;
    }
#endif
    const int tcp = m == TCP_WRITE || m == TCP_URING;
    if ((http_target || udp_target) && !(tcp ? http_target : udp_target)) continue;  // only the targeted protocols
    if (!methods || strstr(methods, kNames[m])) order[n_methods++] = (enum Method)m;
  }
  if (n_methods == 0) goto usage;
  rounds = (rounds + warmup) * n_methods;
  return;
usage:
  fprintf(stderr, "usage: release_limit [--conns 2-64] [--rounds R] [--warmup W] [--gap-us G] [--sender-cpu C] "
                  "[--sink-cpu C] [--methods tcp-write,tcp-uring,udp-sendto,udp-sendmmsg,udp-uring] [--datagram-bytes D] "
                  "[--http-target PORT] [--udp-target PORT] [--realtime 0|1|2] [--datagram-file F]\n"
                  "       [--call-aliases FILE [--call-path P]]   (with --http-target only)\n");
  exit(2);
}

int main(int argc, char** argv) {
  parse(argc, argv);
  arrival = calloc((size_t)rounds, sizeof *arrival);
  span = calloc((size_t)rounds, sizeof *span);
  caught = calloc((size_t)rounds, 1);
  if (!arrival || !span || !caught) die("calloc");
  if (call_aliases) read_call_aliases(call_aliases);
  memset(tcp_last, http_target ? '\n' : 'x', sizeof tcp_last);  // kArmed's last byte, or any byte for the sink
  const int targeted = http_target || udp_target;
  uint16_t tcp_port, udp_port;
  if (targeted) connect_targets();
  else connect_all(&tcp_port, &udp_port);
#ifdef HAVE_LIBURING
  if (io_uring_queue_init(2 * kMaxConns, &ring, 0) != 0) die("io_uring_queue_init");
#endif
  pthread_t sink_thread;
  if (!targeted && pthread_create(&sink_thread, NULL, sink, NULL) != 0) die("pthread_create");
  pin(sender_cpu);
  const struct sched_param fifo = {.sched_priority = sched_get_priority_min(SCHED_FIFO)}, other = {0};
  if (realtime) {  // 2: taken here only to learn that it is allowed
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) != 0) {
      errno = EPERM;
      die("--realtime: SCHED_FIFO refused (root or CAP_SYS_NICE)");
    }
    if (realtime == 2) pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
  }
  const struct timespec gap = {.tv_sec = gap_us / 1000000, .tv_nsec = (long)(gap_us % 1000000) * 1000};
  for (int r = 0; r < rounds; ++r) {
    const enum Method m = order[r % n_methods];
    const int tcp = m == TCP_WRITE || m == TCP_URING;
    if (targeted && tcp) {  // armed, as crh arms its callers: all but the last byte, a gap before the release
      for (int i = 0; i < conns; ++i) {
        if (call_aliases) arm_call(r, i);
        else if (write(tcp_client[i], kArmed, sizeof kArmed - 1) != (ssize_t)sizeof kArmed - 1) die("arming");
      }
    }
    if (targeted) nanosleep(&gap, NULL);
    if (realtime == 2) pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);  // for the release only, as crh
    const int64_t start = now_ns(CLOCK_MONOTONIC);
    release(m);
    span[r] = now_ns(CLOCK_MONOTONIC) - start;
    if (realtime == 2) pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
#ifdef HAVE_LIBURING
    if (m == TCP_URING || m == UDP_URING) uring_reap();
#endif
    if (targeted) {
      arrival[r] = -1;  // not measured here: capture it
      int connected = 0;
      for (int i = 0; i < conns && tcp; ++i) connected += read_answer(tcp_client[i]) / 100 == 2;
      caught[r] = connected > 1;
      continue;
    }
    while (atomic_load_explicit(&round_done, memory_order_acquire) < r) sched_yield();
    nanosleep(&gap, NULL);
  }
  if (!targeted) pthread_join(sink_thread, NULL);

  printf("release_limit: %d connections, %d rounds per method after %d warm-up, %d us apart; sender CPU %d, ", conns,
         rounds / n_methods - warmup, warmup, gap_us, sender_cpu);
  if (targeted) printf("against the target (its arrival skew: from a capture)");
  else printf("sink CPU %d", sink_cpu);
  printf("%s\n", realtime == 1 ? "; the sender at real-time priority"
                 : realtime == 2 ? "; the sender at real-time priority for each release only"
                                 : "");
  printf("%-13s %-13s %6s  %8s  %8s  %8s  %8s\n", "method", "figure (us)", "rounds", "p50", "p90", "p99", "max");
  const int kept = rounds / n_methods - warmup;
  int64_t* a = calloc((size_t)kept, sizeof *a);
  int64_t* s = calloc((size_t)kept, sizeof *s);
  for (int k = 0; k < n_methods; ++k) {
    int n = 0, caught_rounds = 0;
    for (int r = warmup * n_methods; r < rounds; ++r)
      if (r % n_methods == k) {
        a[n] = arrival[r];
        s[n] = span[r];
        caught_rounds += caught[r];
        ++n;
      }
    print_row(kNames[order[k]], "send span", s, n);
    if (call_aliases) printf("%-13s %-13s %6d  caught %d\n", kNames[order[k]], "calls raced", n, caught_rounds);
    if (!targeted) print_row(kNames[order[k]], "arrival skew", a, n);
  }
  return 0;
}
