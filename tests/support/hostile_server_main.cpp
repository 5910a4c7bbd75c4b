// crh_hostile_server: a loopback HTTP server that misbehaves in one chosen way,
// for the CLI tests that put crh contract, load and run in front of it.
//
//   crh_hostile_server MODE [--delay-ms N] [--upstream PORT] [--answer-first N]
//
// Modes (each connection on its own thread; runs until SIGTERM or SIGINT):
//   continue-forever  after a request head, "100 Continue" forever (every --delay-ms);
//                     the first --answer-first N requests get a plain 200 instead
//   headers-then-close  a 200 head promising 100 bytes of body, then close
//   redirect          every request answered 302 Location: / (keep-alive)
//   echo-key          every request answered 500 with the Apikey echoed in many encodings
//   double-length-proxy  forwards to 127.0.0.1:--upstream, each answer given a second,
//                     disagreeing Content-Length header (unreadable; the service still acts)
//   unsolicited-after-204  every request answered "204 No Content" and, at once
//                     (a second write), an unsolicited "200 OK {}" nobody asked for
//   unsolicited-with-204  the same bytes in one write: they arrive with the 204, so a
//                     client sees them whatever the scheduling (the contract step's
//                     evidence can name them every run)
//   interim-proxy     forwards to 127.0.0.1:--upstream, with an interim 103 or 100
//                     answer before each real one (legal, RFC 9110 §15.2)
// Prints "listening on http://127.0.0.1:PORT" once ready.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

namespace {

std::atomic<bool> g_stop{false};
std::string g_mode;
int g_delay_ms = 0;
int g_upstream = 0;
std::atomic<int> g_answer_first{0};  // requests still to answer normally

extern "C" void on_signal(int) { g_stop = true; }

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Waits up to `ms` for fd to be readable; false on timeout or stop.
bool readable(int fd, int ms) {
  for (int waited = 0; waited < ms && !g_stop; waited += 50) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) return true;
  }
  return false;
}

// Reads one request (head, and a Content-Length body) from `fd` into `buffered`'s
// front; returns its head, or "" when the peer went away.
std::string read_request(int fd, std::string& buffered) {
  for (;;) {
    auto end = buffered.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::string head = buffered.substr(0, end + 4);
      std::size_t length = 0;
      std::string lower = head;
      for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      auto cl = lower.find("\r\ncontent-length:");
      if (cl != std::string::npos) length = std::strtoul(lower.c_str() + cl + 17, nullptr, 10);
      while (buffered.size() < end + 4 + length) {
        if (!readable(fd, 10000)) return {};
        char buf[16384];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return {};
        buffered.append(buf, static_cast<std::size_t>(n));
      }
      buffered.erase(0, end + 4 + length);
      return head;
    }
    if (buffered.size() > 65536 || !readable(fd, 30000)) return {};
    char buf[16384];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return {};
    buffered.append(buf, static_cast<std::size_t>(n));
  }
}

std::string header_value(const std::string& head, std::string_view name) {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    auto next = head.find("\r\n", pos + 2);
    std::string_view line(head.data() + pos + 2, (next == std::string::npos ? head.size() : next) - pos - 2);
    auto colon = line.find(':');
    if (colon == name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0) {
      auto v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
    pos = next;
  }
  return {};
}

std::string base64(std::string_view in, bool url) {
  const char* table = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                          : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += table[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    if (!url) out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    if (!url) out += '=';
  }
  return out;
}

std::string percent(std::string_view in, bool lower, bool plus_for_space) {
  std::string out;
  char buf[4];
  for (unsigned char c : in) {
    if (plus_for_space && c == ' ') out += '+';
    else if (std::isalnum(c)) out += static_cast<char>(c);
    else {
      std::snprintf(buf, sizeof buf, lower ? "%%%02x" : "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// The key as a JSON string body would carry it with every optional escape used.
std::string json_escaped(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\' || c == '/') out += '\\';
    out += c;
  }
  return out;
}

void serve_echo(int fd) {
  std::string buffered;
  for (std::string head; !(head = read_request(fd, buffered)).empty();) {
    const std::string key = header_value(head, "Apikey");
    // A long body, so that excerpts of it are shortened, with the raw key last.
    std::string body = "{\"msg\":\"server error\",\"padding\":\"" + std::string(300, 'x') + "\",\"json\":\"" +
                       json_escaped(key) + "\",\"pct\":\"" + percent(key, false, false) + "\",\"pct_lower\":\"" +
                       percent(key, true, true) + "\",\"b64\":\"" + base64(key, false) + "\",\"b64url\":\"" +
                       base64(key, true) + "\",\"basic\":\"" + base64("crh:" + key, false) + "\",\"raw\":\"" + key +
                       "\"}";
    // The key near the front too, so a shortened excerpt would cut through it.
    body.insert(1, "\"echo_key\":\"" + key + "\",");
    std::string answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nX-Echo: " + key +
                         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    if (!write_all(fd, answer)) return;
  }
}

// A connection to 127.0.0.1:--upstream for a proxy mode; -1 when refused.
int connect_upstream() {
  int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<unsigned short>(g_upstream));
  if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(up);
    return -1;
  }
  return up;
}

void serve_interim_proxy(int fd) {
  const int up = connect_upstream();
  if (up < 0) return;
  bool awaiting_answer = false;  // the client sent bytes since the last answer began
  int answers = 0;
  char buf[16384];
  while (!g_stop) {
    pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
    if (::poll(p, 2, 100) <= 0) continue;
    if (p[0].revents) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0 || !write_all(up, {buf, static_cast<std::size_t>(n)})) break;
      awaiting_answer = true;
    }
    if (p[1].revents) {
      ssize_t n = ::recv(up, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (awaiting_answer) {
        awaiting_answer = false;
        const char* interim = ++answers % 2 ? "HTTP/1.1 103 Early Hints\r\nLink: </agents.css>; rel=preload\r\n\r\n"
                                            : "HTTP/1.1 100 Continue\r\n\r\n";
        if (!write_all(fd, interim)) break;
      }
      if (!write_all(fd, {buf, static_cast<std::size_t>(n)})) break;
    }
  }
  ::close(up);
}

// Forwards to 127.0.0.1:--upstream and gives every answer a second
// Content-Length header that disagrees with the first: an answer no client
// may read (RFC 9112 §6.3), while the service behind acts on every request.
void serve_double_length_proxy(int fd) {
  const int up = connect_upstream();
  if (up < 0) return;
  bool awaiting_answer = false;  // the next bytes from upstream begin an answer
  std::string head;              // the start of an answer, until its status line is whole
  char buf[16384];
  while (!g_stop) {
    pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
    if (::poll(p, 2, 100) <= 0) continue;
    if (p[0].revents) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0 || !write_all(up, {buf, static_cast<std::size_t>(n)})) break;
      awaiting_answer = true;
    }
    if (p[1].revents) {
      ssize_t n = ::recv(up, buf, sizeof buf, 0);
      if (n <= 0) break;
      std::string_view got(buf, static_cast<std::size_t>(n));
      if (awaiting_answer || !head.empty()) {
        head.append(got);
        const auto eol = head.find("\r\n");
        if (eol == std::string::npos) continue;
        awaiting_answer = false;
        head.insert(eol + 2, "Content-Length: 7\r\n");
        got = head;
      }
      const bool ok = write_all(fd, got);
      head.clear();
      if (!ok) break;
    }
  }
  ::close(up);
}

void serve(int fd) {
  if (g_mode == "echo-key") serve_echo(fd);
  else if (g_mode == "interim-proxy") serve_interim_proxy(fd);
  else if (g_mode == "double-length-proxy") serve_double_length_proxy(fd);
  else if (g_mode == "unsolicited-after-204" || g_mode == "unsolicited-with-204") {
    static constexpr std::string_view k204 = "HTTP/1.1 204 No Content\r\n\r\n";
    static constexpr std::string_view k200 = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    const std::string together = std::string(k204) + std::string(k200);
    const bool one_write = g_mode == "unsolicited-with-204";
    std::string buffered;
    for (std::string head; !(head = read_request(fd, buffered)).empty();)
      if (one_write ? !write_all(fd, together) : (!write_all(fd, k204) || !write_all(fd, k200))) break;
  } else if (g_mode == "redirect") {
    std::string buffered;
    for (std::string head; !(head = read_request(fd, buffered)).empty();)
      if (!write_all(fd, "HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 0\r\n\r\n")) break;
  } else if (g_mode == "headers-then-close") {
    std::string buffered;
    if (!read_request(fd, buffered).empty())
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"agents\"");
  } else if (g_mode == "continue-forever") {
    std::string buffered;
    while (!read_request(fd, buffered).empty()) {
      if (g_answer_first.fetch_sub(1) > 0) {
        static constexpr std::string_view kPlain =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"agents\":[]}";
        if (write_all(fd, kPlain)) continue;
        break;
      }
      while (!g_stop && write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n"))
        if (g_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(g_delay_ms));
      break;
    }
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crh_hostile_server MODE [--delay-ms N] [--upstream PORT] [--answer-first N]\n");
    return 2;
  }
  g_mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--delay-ms") g_delay_ms = std::atoi(argv[i + 1]);
    else if (flag == "--upstream") g_upstream = std::atoi(argv[i + 1]);
    else if (flag == "--answer-first") g_answer_first = std::atoi(argv[i + 1]);
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  int listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listen_fd, 512) != 0 ||
      ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("crh_hostile_server: cannot listen on loopback");
    return 3;
  }
  std::printf("listening on http://127.0.0.1:%u\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  while (!g_stop) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int nodelay = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    std::thread(serve, fd).detach();
  }
  ::close(listen_fd);
  return 0;
}
