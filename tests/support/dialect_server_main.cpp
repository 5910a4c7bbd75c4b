// crh_dialect_server: an independent implementation of the Call-Routing
// Service API that answers differently from reference/ wherever the spec is
// silent (DESIGN.md §3): JSON bodies only, 403/422/423/409 statuses, numeric
// agent ids under "uid", other list and field names, a call hook at another
// path with another parameter. tests/support/dialect_profile.json describes
// it; tests/cli/dialect_cli_test.sh proves that crh, given that profile,
// raises no false alarm on a correct service that is not the reference.
//
//   crh_dialect_server --port 0 --api-key-file FILE --minute-ms N [--channels N --aliases M]
//                      [--invalid-uri json|html|text] [--flaw NAME]... [--stop-answering-after N]
//                      [--choice NAME=VALUE]...
//   crh_dialect_server --list-choices
//
// --choice picks another correct answer where the spec is silent (the
// silent-gap zoo of issue 35; tests/support/dialect/choices.hpp lists the
// switches, bench/explore/zoo.sh runs crh against every combination). With no
// --choice the server answers as described above.
//
// --invalid-uri html answers a request target that is not a valid URI
// (GET /database/%zz%) with a framework's 400 text/html page before any API
// code runs, as the JDK's built-in HTTP server does; text answers it
// "400 Bad Request" in text/plain, as Go's net/http does; json (the default)
// answers it like any bad input.
//
// Flaws, for the tests of the harness's verdicts (--flaw NAME, repeatable):
//   crash-on-unknown-wake  PUT .../local-agents/{unknown}/wake closes the connection
//                          with no answer, as a Go handler's panic does
//   untagged-omit-label    an untagged alias shows no label, valid_until or holder
//                          field at all (correct: absent means untagged)
//   stale-tag-answer       the tag answer shows the tag of the tag request before
// --stop-answering-after N: after N requests every request hangs unanswered (a deadlock).
//
// It shares no code with reference/, core/, contracts/ or loadgen/ (a bug
// shared with the harness would hide itself): its own HTTP/1.1 framing over
// POSIX sockets, a thread per connection, one mutex around the state so that
// the caller-binding decision is atomic. Listens on 127.0.0.1 only; prints
// "listening on http://127.0.0.1:PORT" once ready; runs until SIGTERM/SIGINT.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <random>
#include <vector>

#include "dialect/choices.hpp"

namespace {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
constexpr auto npos = std::string::npos;

constexpr std::size_t kMaxHead = 64 * 1024;
constexpr std::size_t kMaxBody = 1024 * 1024;
constexpr int kIdleMs = 30'000;  // a silent peer is dropped, so threads never pile up
constexpr int kSliceMs = 100;    // how soon a waiting thread notices a stop
constexpr int kMaxConnections = 1024;
// A week by default, not the reference's day: the spec gives no bound, so ours differs on purpose.
constexpr std::int64_t kMinMinutes = 1;

std::atomic<bool> g_stop{false};
std::atomic<int> g_active{0};  // connection threads still running
std::atomic<std::int64_t> g_answered{0};  // requests taken, for --stop-answering-after

extern "C" void on_signal(int) { g_stop = true; }

// ---------------------------------------------------------------- configuration

struct Config {
  int port = 0;
  std::string key;
  std::int64_t minute_ms = 60'000;
  int channels = 2;
  int aliases = 64;  // the load's race keeps many aliases tagged at once
  // "html": a target that is not a valid URI is refused with 400 text/html
  // before any API code runs, as the JDK's built-in server does.
  bool framework_refusal = false;
  std::string refusal_type = "text/html";  // "text/plain; charset=utf-8" for Go's net/http
  // Flaws of a broken or differently-answering service, for the tests of the
  // verdicts (--flaw, repeatable): see the usage above.
  bool crash_on_unknown_wake = false;
  bool untagged_omit_label = false;
  bool stale_tag_answer = false;
  std::int64_t stop_answering_after = -1;  // requests answered before every later one hangs
  dialect::Choices choice;                  // --choice: the silent-gap switches
};

bool parse_int(const char* text, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

std::optional<std::string> read_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  // Only the line end an editor or `echo` adds is not part of the key.
  if (!key.empty() && key.back() == '\n') key.pop_back();
  if (!key.empty() && key.back() == '\r') key.pop_back();
  return key;
}

std::optional<Config> parse_flags(int argc, char** argv) {
  Config c;
  std::string key_file;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) return std::nullopt;
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    std::int64_t n = 0;
    if (flag == "--api-key-file") key_file = value;
    else if (flag == "--port" && parse_int(value, 0, 65535, n)) c.port = static_cast<int>(n);
    else if (flag == "--minute-ms" && parse_int(value, 1, 3'600'000, n)) c.minute_ms = n;
    else if (flag == "--channels" && parse_int(value, 1, 999, n)) c.channels = static_cast<int>(n);
    else if (flag == "--aliases" && parse_int(value, 1, 9999, n)) c.aliases = static_cast<int>(n);
    else if (flag == "--invalid-uri" && (value == std::string_view("html") || value == std::string_view("json") ||
                                         value == std::string_view("text"))) {
      c.framework_refusal = value != std::string_view("json");
      if (value == std::string_view("text")) c.refusal_type = "text/plain; charset=utf-8";
    } else if (flag == "--flaw" && value == std::string_view("crash-on-unknown-wake")) c.crash_on_unknown_wake = true;
    else if (flag == "--flaw" && value == std::string_view("untagged-omit-label")) c.untagged_omit_label = true;
    else if (flag == "--flaw" && value == std::string_view("stale-tag-answer")) c.stale_tag_answer = true;
    else if (flag == "--stop-answering-after" && parse_int(value, 0, 1'000'000, n)) c.stop_answering_after = n;
    else if (flag == "--choice") {
      std::string why;
      if (!c.choice.set(value, why)) {
        std::fprintf(stderr, "crh_dialect_server: %s\n", why.c_str());
        return std::nullopt;
      }
    } else return std::nullopt;
  }
  auto key = key_file.empty() ? std::nullopt : read_key(key_file);
  if (!key || key->empty()) {
    std::fprintf(stderr, "crh_dialect_server: --api-key-file must name a readable file holding a non-empty key\n");
    return std::nullopt;
  }
  c.key = std::move(*key);
  return c;
}

// ---------------------------------------------------------------- state

struct Agent {
  int uid;
  std::string label;
  int calls_today;
  bool snoozed = false;
  std::string snoozed_since;  // RFC 3339; empty while on (answered as null)
  std::string last_change;    // RFC 3339 of the last snooze or wake that changed it; empty: never
};

struct Alias {
  std::string tag;             // empty: untagged
  Clock::time_point expires;   // of the tag; the steady clock decides, not the wall clock
  std::string valid_until;     // the same instant in RFC 3339 UTC, as answered
  std::int64_t valid_until_s = 0;  // and in Unix seconds (--choice expiry=epoch)
  std::string holder;          // the bound caller; empty: nobody yet
  std::uint64_t last_use = 0;  // a sequence number, not a time: two uses never tie
};

struct State {
  std::mutex mutex;  // one lock around everything: check-and-bind is atomic
  std::vector<Agent> agents;
  std::map<std::string, std::string> database;
  std::vector<std::vector<Alias>> channels;
  std::uint64_t uses = 0;
  std::string last_tag;  // --flaw stale-tag-answer
  std::mt19937 random{std::random_device{}()};  // --choice ties=random
};

Config g_config;
State g_state;

// The switch `name` has the value `value` (--choice).
bool chose(const std::string& name, std::string_view value) { return g_config.choice.is(name, value); }

void init_state(const Config& c) {
  g_state.agents = {{7, "Ann", 0}, {8, "Bo", 3}, {9, "Cy", 12}};
  g_state.channels.assign(static_cast<std::size_t>(c.channels),
                          std::vector<Alias>(static_cast<std::size_t>(c.aliases)));
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "1".."count" exactly (no sign, no leading zero): the index from 0, else nothing.
std::optional<std::size_t> index_of(std::string_view text, std::size_t count) {
  if (text.empty() || text.size() > 9 || text[0] == '0') return std::nullopt;
  std::size_t n = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(ch - '0');
  }
  if (n < 1 || n > count) return std::nullopt;
  return n - 1;
}

std::optional<std::size_t> alias_index(std::string_view id, std::size_t count) {
  if (!id.starts_with("a-")) return std::nullopt;
  return index_of(id.substr(2), count);
}

// ---------------------------------------------------------------- HTTP messages

struct Request {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool http11 = true;
  bool keep_alive = true;  // HTTP/1.0 closes unless it asks otherwise
};

struct Response {
  unsigned status = 200;
  json::value body;
  std::string allow;  // the Allow header of a 405
  std::string html;   // when set, the body instead of `body`, as text/html (a framework's page)
  bool drop = false;  // no answer: the connection is closed, as a handler's crash does
};

const char* reason(unsigned status);

Response error(unsigned status, std::string msg) {
  json::object body{{"msg", std::move(msg)}};
  if (chose("errors", "rich")) {  // more than the msg the spec asks for
    body["code"] = status;
    body["error"] = reason(status);
  }
  return {status, std::move(body), {}};
}

std::vector<std::string_view> header_values(const Request& r, std::string_view lower_name) {
  std::vector<std::string_view> out;
  for (const auto& [name, value] : r.headers)
    if (name == lower_name) out.push_back(value);
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* reason(unsigned status) {
  switch (status) {
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 423: return "Locked";
    case 431: return "Request Header Fields Too Large";
    default: return "Internal Server Error";
  }
}

std::string wire(const Response& r, bool head_only, bool keep_alive, bool http11 = false) {
  const std::string body = r.html.empty() ? json::serialize(r.body) : r.html;
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  const bool charset = chose("ctype", "charset");
  out += r.html.empty() ? std::string(charset ? "Content-Type: application/json; charset=utf-8\r\n"
                                              : "Content-Type: application/json\r\n")
                        : "Content-Type: " + g_config.refusal_type + "\r\n";
  // --choice framing=chunked: the body in two chunks, as a streaming framework sends it.
  const bool chunked = http11 && chose("framing", "chunked");
  out += chunked ? std::string("Transfer-Encoding: chunked\r\n") : "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (!r.allow.empty()) out += "Allow: " + r.allow + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (head_only) return out;  // a HEAD answer announces the body's length but carries none
  if (!chunked) return out + body;
  auto chunk = [&out](std::string_view part) {
    if (part.empty()) return;
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", part.size());
    out += size;
    out += part;
    out += "\r\n";
  };
  chunk(std::string_view(body).substr(0, body.size() / 2));
  chunk(std::string_view(body).substr(body.size() / 2));
  return out + "0\r\n\r\n";
}

// ---------------------------------------------------------------- HTTP framing

bool is_tchar(unsigned char ch) {
  return std::isalnum(ch) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(ch)) != npos;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char ch : s)
    if (!is_tchar(ch)) return false;
  return true;
}

std::optional<std::string> parse_request_line(std::string_view line, Request& r) {
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == npos ? npos : line.find(' ', sp1 + 1);
  if (sp2 == npos || line.find(' ', sp2 + 1) != npos) return "the request line is not METHOD TARGET HTTP-VERSION";
  r.method = line.substr(0, sp1);
  r.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const auto version = line.substr(sp2 + 1);
  if (!is_token(r.method)) return "the method is not a token";
  if (r.target.empty() || r.target[0] != '/') return "the request target must be a path beginning with /";
  for (unsigned char ch : r.target)
    if (ch <= 0x20 || ch >= 0x7f) return "the request target holds a space, control or non-ASCII byte";
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return "only HTTP/1.0 and HTTP/1.1 are spoken here";
  r.http11 = version == "HTTP/1.1";
  r.keep_alive = r.http11;
  return std::nullopt;
}

std::optional<std::string> parse_header(std::string_view line, Request& r) {
  if (line.front() == ' ' || line.front() == '\t') return "obsolete line folding is not accepted";
  const auto colon = line.find(':');
  // A space before the colon makes the name a non-token: refused, as RFC 9112 §5.1 asks.
  if (colon == npos || !is_token(line.substr(0, colon))) return "a header line without a token name and a colon";
  const auto value = trim(line.substr(colon + 1));
  for (unsigned char ch : value)
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return "a header value holds a control character";
  r.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
  return std::nullopt;
}

// Connection options and the Host rule, once every header is known.
std::optional<std::string> apply_headers(Request& r) {
  if (r.http11 && header_values(r, "host").size() != 1) return "an HTTP/1.1 request needs exactly one Host header";
  for (auto v : header_values(r, "connection")) {
    std::string options = lower(v);
    for (std::size_t pos = 0; pos <= options.size();) {
      auto comma = options.find(',', pos);
      if (comma == npos) comma = options.size();
      const auto option = trim(std::string_view(options).substr(pos, comma - pos));
      if (option == "close") r.keep_alive = false;
      else if (option == "keep-alive" && !r.http11) r.keep_alive = true;
      pos = comma + 1;
    }
  }
  return std::nullopt;
}

// Lines end in CRLF, or a bare LF (RFC 9112 §2.2 lets a recipient accept it).
std::optional<std::string> parse_head(std::string_view head, Request& r) {
  bool first = true;
  while (!head.empty()) {
    auto eol = head.find('\n');
    auto line = head.substr(0, eol);
    head.remove_prefix(eol == npos ? head.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the blank line that ends the head
    for (unsigned char ch : line)
      if (ch == '\r' || ch == 0) return "a bare CR or a NUL byte in the request head";
    auto why = first ? parse_request_line(line, r) : parse_header(line, r);
    if (why) return why;
    first = false;
  }
  if (first) return "an empty request head";
  return apply_headers(r);
}

// The index just past the blank line that ends the head, or npos.
std::size_t head_end(const std::string& b) {
  for (auto i = b.find('\n'); i != npos; i = b.find('\n', i + 1)) {
    auto j = i + 1;
    if (j < b.size() && b[j] == '\r') ++j;
    if (j < b.size() && b[j] == '\n') return j + 1;
  }
  return npos;
}

// The body's length, or the refusal of a body this server cannot frame.
std::optional<Response> body_length(const Request& r, std::size_t& length) {
  const auto te = header_values(r, "transfer-encoding");
  const auto cl = header_values(r, "content-length");
  // Both together is the request-smuggling shape: never guess which one wins.
  if (!te.empty() && !cl.empty()) return error(400, "Transfer-Encoding and Content-Length together");
  if (!te.empty()) return error(411, "Transfer-Encoding is not supported: send the body with a Content-Length");
  length = 0;
  for (std::size_t i = 0; i < cl.size(); ++i) {
    const auto v = cl[i];
    if (v.empty() || v.size() > 15 || v.find_first_not_of("0123456789") != npos)
      return error(400, "Content-Length is not a decimal length");
    const auto n = static_cast<std::size_t>(std::stoull(std::string(v)));
    if (i > 0 && n != length) return error(400, "Content-Length headers that disagree");
    length = n;
  }
  if (length > kMaxBody) return error(413, "the body is larger than 1 MiB");
  return std::nullopt;
}

class Connection {
 public:
  enum class Read { ok, closed, timeout };

  explicit Connection(int fd) : fd_(fd) {}
  ~Connection() { ::close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Appends what the peer sends next, waiting up to kIdleMs in short slices
  // so that a stop is noticed.
  Read more() {
    for (int waited = 0; waited < kIdleMs; waited += kSliceMs) {
      if (g_stop) return Read::closed;
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, kSliceMs);
      if (ready < 0 && errno != EINTR) return Read::closed;
      if (ready <= 0) continue;
      char chunk[16384];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::closed;
      buffer.append(chunk, static_cast<std::size_t>(n));
      return Read::ok;
    }
    return Read::timeout;
  }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // includes SO_SNDTIMEO: a peer that reads nothing is dropped
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  std::string buffer;  // bytes read but not yet consumed (pipelined requests stay here)

 private:
  int fd_;
};

// One attempt to read a request: a request, the peer gone (neither), or a
// refusal after which the connection closes because its framing is lost.
struct Framed {
  std::optional<Request> request;
  std::optional<Response> refusal;
};

Framed refuse(unsigned status, std::string msg) { return {std::nullopt, error(status, std::move(msg))}; }

// Waits for a whole head; its length, or a Framed that ends the connection.
std::optional<Framed> await_head(Connection& c, std::size_t& end) {
  for (;;) {
    // Blank lines before a request line are skipped (RFC 9112 §2.2).
    while (c.buffer.starts_with("\r\n") || c.buffer.starts_with("\n")) c.buffer.erase(0, c.buffer[0] == '\r' ? 2 : 1);
    end = head_end(c.buffer);
    if (end != npos)
      return end > kMaxHead ? std::optional(refuse(431, "the request head is larger than 64 KiB")) : std::nullopt;
    if (c.buffer.size() > kMaxHead) return refuse(431, "the request head is larger than 64 KiB");
    const auto got = c.more();
    if (got == Connection::Read::closed) return Framed{};
    if (got == Connection::Read::timeout)
      return c.buffer.empty() ? Framed{} : refuse(408, "the request head did not arrive in time");
  }
}

// A client that waits for "100 Continue" before its body must get it, or both sides wait.
std::optional<Framed> answer_expect(Connection& c, const Request& r, std::size_t have, std::size_t length) {
  const auto expect = header_values(r, "expect");
  if (expect.empty()) return std::nullopt;
  if (expect.size() != 1 || lower(expect[0]) != "100-continue")
    return refuse(417, "the only expectation understood is 100-continue");
  if (length > 0 && have < length && !c.send("HTTP/1.1 100 Continue\r\n\r\n")) return Framed{};
  return std::nullopt;
}

Framed read_request(Connection& c) {
  std::size_t end = 0;
  if (auto done = await_head(c, end)) return std::move(*done);
  Request r;
  if (auto why = parse_head(std::string_view(c.buffer).substr(0, end), r)) return refuse(400, *why);
  std::size_t length = 0;
  if (auto refusal = body_length(r, length)) return {std::nullopt, std::move(refusal)};
  if (auto done = answer_expect(c, r, c.buffer.size() - end, length)) return std::move(*done);
  while (c.buffer.size() < end + length) {
    const auto got = c.more();
    if (got == Connection::Read::closed) return {};
    if (got == Connection::Read::timeout) return refuse(408, "the request body did not arrive in time");
  }
  r.body = c.buffer.substr(end, length);
  c.buffer.erase(0, end + length);
  return {std::move(r), std::nullopt};
}

// ---------------------------------------------------------------- text helpers

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

// A path segment decoded; '+' stays '+' (form encoding is not path encoding).
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Well-formed UTF-8 (no overlong forms, no surrogates): keys go back out in JSON.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? b : b & (0xff >> (n + 1));
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

// The path's segments, each percent-decoded on its own (so %2F stays inside one).
std::optional<std::vector<std::string>> segments_of(std::string_view target) {
  auto path = target.substr(0, target.find('?'));  // query parameters are not read here, ever
  std::vector<std::string> out;
  path.remove_prefix(1);
  for (;;) {
    const auto slash = path.find('/');
    auto decoded = percent_decode(path.substr(0, slash));
    if (!decoded) return std::nullopt;
    out.push_back(std::move(*decoded));
    if (slash == npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// A value from the request, fit to be echoed in a msg: JSON must stay valid UTF-8.
std::string in_quotes(std::string_view s) {
  if (s.size() > 100 || !valid_utf8(s)) return "(the one given)";
  return "\"" + std::string(s) + "\"";
}

json::value text_or_null(const std::string& s) { return s.empty() ? json::value(nullptr) : json::value(s); }

// The wall-clock instant `after` from now, RFC 3339 UTC with milliseconds.
std::string rfc3339_after(std::chrono::milliseconds after) {
  const auto t = std::chrono::system_clock::now() + after;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::string text = rfc3339(std::chrono::time_point_cast<std::chrono::seconds>(t));
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03lldZ", static_cast<long long>(ms));
  text.pop_back();  // the Z, which now follows the fraction
  return text + frac;
}

// ---------------------------------------------------------------- auth and parameters

// Exact and case-sensitive, and only under the Apikey header (its name in any
// case): a key under Authorization or X-Api-Key does not count.
bool authorized(const Request& r) {
  const auto keys = header_values(r, "apikey");
  if (keys.size() != 1) return false;  // two keys: which one was meant? neither
  const std::string_view given = keys[0], want = g_config.key;
  if (given.size() != want.size()) return false;
  unsigned diff = 0;  // no early exit: how much of a guess matched must not show in the timing
  for (std::size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ want[i]);
  return diff == 0;
}

// ---------------------------------------------------------------- parameters

// The request's parameters as a JSON object. `text`: they came as form or
// query text, so every value is a string and minutes is read from its digits.
struct Params {
  json::object values;
  bool text = false;
};

// application/x-www-form-urlencoded: '+' is a space here, unlike in a path.
std::optional<json::object> form_decode(std::string_view s) {
  json::object out;
  if (s.empty()) return out;
  for (std::size_t pos = 0; pos <= s.size();) {
    auto amp = s.find('&', pos);
    if (amp == npos) amp = s.size();
    auto pair = s.substr(pos, amp - pos);
    pos = amp + 1;
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name(pair.substr(0, eq)), value(eq == npos ? "" : pair.substr(eq + 1));
    for (auto* t : {&name, &value})
      for (auto& ch : *t)
        if (ch == '+') ch = ' ';
    auto n = percent_decode(name), v = percent_decode(value);
    if (!n || !v || !valid_utf8(*n) || !valid_utf8(*v)) return std::nullopt;
    if (!out.contains(*n)) out[*n] = *v;  // the first of a repeated name counts
  }
  return out;
}

std::string media_type(const Request& r) {
  const auto types = header_values(r, "content-type");
  return types.size() == 1 ? lower(trim(types[0].substr(0, types[0].find(';')))) : "";
}

std::optional<Params> json_body(const Request& r, Response& refusal) {
  boost::system::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec) {
    refusal = error(g_config.choice.status("bad"), "the body is not JSON (" + ec.message() + ")");
    return std::nullopt;
  }
  if (!v.is_object()) {
    refusal = error(g_config.choice.status("bad"), "the body must be a JSON object");
    return std::nullopt;
  }
  return Params{std::move(v.get_object()), false};
}

std::optional<Params> text_params(std::string_view text, Response& refusal) {
  auto o = form_decode(text);
  if (!o) {
    refusal = error(g_config.choice.status("bad"), "the parameters are not validly percent-encoded UTF-8");
    return std::nullopt;
  }
  return Params{std::move(*o), true};
}

// The parameters, from where --choice encoding says they go (a JSON body by
// default); from anywhere else they are bad input.
std::optional<Params> params_of(const Request& r, Response& refusal) {
  const auto& enc = g_config.choice["encoding"];
  const std::string media = media_type(r);
  const auto q = r.target.find('?');
  const std::string_view query = q == npos ? std::string_view() : std::string_view(r.target).substr(q + 1);
  if ((enc == "json" || enc == "any") && media == "application/json") return json_body(r, refusal);
  if ((enc == "form" || enc == "any") && media == "application/x-www-form-urlencoded") return text_params(r.body, refusal);
  if ((enc == "query" || enc == "any") && !query.empty()) return text_params(query, refusal);
  const char* where = enc == "json"    ? "a JSON object body with Content-Type: application/json"
                      : enc == "form"  ? "a form body with Content-Type: application/x-www-form-urlencoded"
                      : enc == "query" ? "the query string"
                                       : "a JSON body, a form body or the query string";
  refusal = error(g_config.choice.status("bad"), std::string("parameters go in ") + where);
  return std::nullopt;
}

// A non-empty string parameter, else nothing.
std::optional<std::string> text_param(const Params& p, std::string_view name) {
  const json::value* v = p.values.if_contains(name);
  if (!v || !v->is_string() || v->get_string().empty()) return std::nullopt;
  return std::string(v->get_string());
}

// ---------------------------------------------------------------- agents and database

bool plain_names() { return chose("names", "plain"); }

json::value agent_id_json(const Agent& a) {
  return chose("ids", "string") ? json::value(std::to_string(a.uid)) : json::value(a.uid);
}

// A field that has no value yet: null, or left out (--choice empty=omit).
void maybe(json::object& o, std::string_view name, const std::string& value) {
  if (!value.empty()) o[name] = value;
  else if (!chose("empty", "omit")) o[name] = nullptr;
}

json::value agent_json(const Agent& a) {
  json::object o;
  if (plain_names()) o = {{"id", agent_id_json(a)}, {"name", a.label}};
  else o = {{"uid", agent_id_json(a)}, {"label", a.label}};
  if (chose("state", "bool")) o["snoozed"] = a.snoozed;  // the state as a boolean
  else if (plain_names()) o["state"] = a.snoozed ? "snoozed" : "available";
  else o["status"] = a.snoozed ? "off" : "on";
  o["calls_today"] = a.calls_today;
  maybe(o, "snoozed_since", a.snoozed_since);
  maybe(o, "last_change", a.last_change);
  return o;
}

Agent* find_agent(const std::string& id) {
  for (auto& a : g_state.agents)
    if (std::to_string(a.uid) == id) return &a;
  return nullptr;
}

bool find_agent_locked(const std::string& id) {
  std::lock_guard lock(g_state.mutex);
  return find_agent(id) != nullptr;
}

// A list: the array itself, or an object holding it (--choice lists).
json::value list_json(json::array items, json::object wrapper, std::string_view name) {
  if (chose("listorder", "reverse")) std::reverse(items.begin(), items.end());
  if (chose("lists", "bare")) return items;
  wrapper[name] = std::move(items);
  return wrapper;
}

Response list_agents() {
  std::lock_guard lock(g_state.mutex);
  json::array members;
  for (const auto& a : g_state.agents) members.push_back(agent_json(a));
  const auto count = members.size();
  return {200, list_json(std::move(members), {{"count", count}}, plain_names() ? "agents" : "members")};
}

// GET (snooze empty), snooze or wake: all three answer the same agent object.
Response agent_op(const std::string& id, std::optional<bool> snooze) {
  std::lock_guard lock(g_state.mutex);
  Agent* a = find_agent(id);
  if (!a) return error(404, "no local agent with uid " + in_quotes(id));
  if (snooze && *snooze == a->snoozed && chose("again", "refused"))
    return error(409, std::string("local agent ") + id + " is already " + (a->snoozed ? "snoozed" : "awake"));
  if (snooze && *snooze != a->snoozed) a->last_change = rfc3339_after({});
  if (snooze && *snooze && !a->snoozed) a->snoozed_since = rfc3339_after({});
  if (snooze) a->snoozed = *snooze;
  if (!a->snoozed) a->snoozed_since.clear();
  return {200, agent_json(*a)};
}

std::optional<Response> check_key(const std::string& key) {
  if (key.empty()) return error(404, "no key given after /database/");
  if (!valid_utf8(key)) return error(g_config.choice.status("bad"), "the key is not UTF-8 text once percent-decoded");
  return std::nullopt;
}

// Where a key is stored: itself, or its ASCII lower case (--choice keycase=fold).
std::string stored_key(const std::string& key) { return chose("keycase", "fold") ? lower(key) : key; }

json::value entry_json(const std::string& key, const std::string& value) {
  if (chose("db", "bare")) return json::value(value);
  if (plain_names()) return json::object{{"key", key}, {"value", value}};
  return json::object{{"name", key}, {"data", value}};
}

Response database_get(const std::string& key) {
  if (auto bad = check_key(key)) return *bad;
  std::lock_guard lock(g_state.mutex);
  auto it = g_state.database.find(stored_key(key));
  if (it == g_state.database.end()) return error(404, "no value is stored under the key " + in_quotes(key));
  return {200, entry_json(key, it->second)};
}

Response database_post(const Request& r, const std::string& key) {
  if (auto bad = check_key(key)) return *bad;
  Response refusal;
  auto params = params_of(r, refusal);
  if (!params) return refusal;
  const json::value* v = params->values.if_contains("value");
  if (!v || !v->is_string()) return error(g_config.choice.status("bad"), "value must be a string");
  std::string value(v->get_string());
  if (chose("limit", "255") && value.size() > 255)
    return error(g_config.choice.status("bad"), "value is longer than 255 bytes");
  {
    std::lock_guard lock(g_state.mutex);
    g_state.database[stored_key(key)] = value;
  }
  if (chose("db", "confirm")) return {200, json::object{{"stored", true}}};
  if (chose("db", "bare") || plain_names()) return {200, entry_json(key, value)};
  return {200, json::object{{"stored", true}, {"name", key}, {"data", std::move(value)}}};
}

// ---------------------------------------------------------------- aliases and the call hook

std::string msisdn(std::size_t channel, std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "+1555%02zu%04zu", channel + 1, i + 1);
  return buf;
}

std::string alias_id_text(std::size_t i) { return (chose("ids", "number") ? "" : "a-") + std::to_string(i + 1); }

json::value alias_json(std::size_t channel, std::size_t i, const Alias& a) {
  const bool plain = plain_names();
  json::object o;
  if (chose("ids", "number")) o[plain ? "id" : "alias_uid"] = i + 1;
  else o[plain ? "id" : "alias_uid"] = alias_id_text(i);
  o[plain ? "number" : "msisdn"] = msisdn(channel, i);
  if (!a.tag.empty() || !g_config.untagged_omit_label) {  // the flaw: an untagged alias shows no tag fields at all
    maybe(o, plain ? "tag" : "label", a.tag);
    const char* expiry = plain ? "expires_at" : "valid_until";
    if (chose("expiry", "epoch") && !a.tag.empty()) o[expiry] = a.valid_until_s;
    else maybe(o, expiry, a.valid_until);
    maybe(o, plain ? "bound_caller" : "holder", a.holder);
  }
  return o;
}

void untag(Alias& a) {
  a.tag.clear();
  a.valid_until.clear();
  a.valid_until_s = 0;
  a.holder.clear();  // the caller lock ends with the tag
}

// Ends the tags whose lifetime is over. Called under the lock before a
// channel's aliases are read or changed, so nobody sees a tag past its end.
void expire(std::vector<Alias>& aliases, Clock::time_point now) {
  for (auto& a : aliases)
    if (!a.tag.empty() && now >= a.expires) untag(a);
}

std::optional<std::size_t> channel_index(const std::string& id) { return index_of(id, g_state.channels.size()); }

Response list_aliases(const std::string& channel) {
  auto ch = channel_index(channel);
  if (!ch) return error(404, "no channel " + in_quotes(channel));
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[*ch];
  expire(aliases, Clock::now());
  json::array numbers;
  for (std::size_t i = 0; i < aliases.size(); ++i) numbers.push_back(alias_json(*ch, i, aliases[i]));
  const bool plain = plain_names();
  return {200, list_json(std::move(numbers), {{plain ? "channel" : "channel_id", *ch + 1}}, plain ? "aliases" : "numbers")};
}

std::int64_t max_minutes() {
  return chose("minutes", "week") ? 10'080 : chose("minutes", "hour") ? 60 : 1440;
}
std::int64_t min_minutes() { return chose("minutes", "min5") ? 5 : kMinMinutes; }

// Minutes as an integer: a JSON integer, or (form and query) optional '-' and digits.
std::optional<std::int64_t> minutes_of(const Params& p) {
  const json::value* m = p.values.if_contains("minutes");
  if (!m) return std::nullopt;
  if (m->is_int64()) return m->get_int64();
  if (m->is_uint64()) return max_minutes() + 1;  // beyond int64: out of range
  if (!p.text || !m->is_string()) return std::nullopt;
  std::string_view t = m->get_string();
  const bool negative = t.starts_with('-');
  if (negative) t.remove_prefix(1);
  if (t.empty() || t.find_first_not_of("0123456789") != npos) return std::nullopt;
  if (t.size() > 15) return negative ? -1 : max_minutes() + 1;  // out of range either way
  const auto n = static_cast<std::int64_t>(std::stoll(std::string(t)));
  return negative ? -n : n;
}

// tag: a non-empty string; minutes: an integer within the range (1.5, 5.0 are not).
std::optional<Response> read_tag(const Request& r, std::string& tag, std::int64_t& minutes) {
  Response refusal;
  auto params = params_of(r, refusal);
  if (!params) return refusal;
  const unsigned bad = g_config.choice.status("bad");
  auto t = text_param(*params, "tag");
  if (!t) return error(bad, "tag must be a non-empty string");
  auto m = minutes_of(*params);
  if (!m) return error(bad, "minutes must be an integer");
  minutes = *m;
  if (minutes < min_minutes() || minutes > max_minutes())
    return error(bad, "minutes must be from " + std::to_string(min_minutes()) + " to " + std::to_string(max_minutes()));
  tag = std::move(*t);
  return std::nullopt;
}

// The untagged alias used least recently; never-used ones tie, and --choice
// ties says which of them goes first.
std::optional<std::size_t> least_recently_used(const std::vector<Alias>& aliases) {
  std::optional<std::size_t> pick;
  std::vector<std::size_t> never;
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    if (!aliases[i].tag.empty()) continue;
    if (aliases[i].last_use == 0) never.push_back(i);
    if (!pick || aliases[i].last_use < aliases[*pick].last_use) pick = i;
  }
  if (never.size() < 2 || chose("ties", "low")) return pick;
  if (chose("ties", "high")) return never.back();
  return never[std::uniform_int_distribution<std::size_t>(0, never.size() - 1)(g_state.random)];
}

Response tag_alias(const Request& r, const std::string& channel) {
  auto ch = channel_index(channel);
  if (!ch) return error(404, "no channel " + in_quotes(channel));
  std::string tag;
  std::int64_t minutes = 0;
  if (auto bad = read_tag(r, tag, minutes)) return *bad;
  const std::chrono::milliseconds lifetime(minutes * g_config.minute_ms);
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[*ch];
  const auto now = Clock::now();
  expire(aliases, now);
  if (chose("tagnames", "unique"))
    for (const auto& other : aliases)
      if (other.tag == tag) return error(409, "the tag " + in_quotes(tag) + " is on another alias of channel " + channel);
  const auto pick = least_recently_used(aliases);
  if (!pick) return error(g_config.choice.status("full"), "every alias of channel " + channel + " is tagged");
  Alias& a = aliases[*pick];
  a.tag = std::move(tag);
  a.expires = now + lifetime;  // from the tag operation; calls never extend it
  a.valid_until = rfc3339_after(lifetime);
  a.valid_until_s = std::chrono::duration_cast<std::chrono::seconds>(
                        (std::chrono::system_clock::now() + lifetime).time_since_epoch())
                        .count();
  a.holder.clear();
  a.last_use = ++g_state.uses;
  auto answer = alias_json(*ch, *pick, a);
  if (g_config.stale_tag_answer) {  // the flaw: the answer shows the tag of the request before
    answer.as_object()["label"] = text_or_null(g_state.last_tag);
    g_state.last_tag = a.tag;
  }
  if (chose("taganswer", "wrapped")) return {200, json::object{{"tagged", std::move(answer)}}};
  return {200, std::move(answer)};
}

// The channel's and alias's indexes, or the 404 for whichever is missing.
std::optional<Response> find_alias(const std::string& channel, const std::string& alias, std::size_t& ch,
                                   std::size_t& i) {
  auto c = channel_index(channel);
  if (!c) return error(404, "no channel " + in_quotes(channel));
  auto a = chose("ids", "number") ? index_of(alias, g_state.channels[*c].size())
                                  : alias_index(alias, g_state.channels[*c].size());
  if (!a) return error(404, "channel " + channel + " has no alias " + in_quotes(alias));
  ch = *c;
  i = *a;
  return std::nullopt;
}

Response delete_tag(const std::string& channel, const std::string& alias) {
  std::size_t ch = 0, i = 0;
  if (auto missing = find_alias(channel, alias, ch, i)) return *missing;
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[ch];
  expire(aliases, Clock::now());
  if (aliases[i].tag.empty()) return error(g_config.choice.status("notag"), "alias " + alias + " has no tag");
  untag(aliases[i]);
  if (chose("untag", "confirm")) return {200, json::object{{"removed", true}}};
  return {200, alias_json(ch, i, aliases[i])};
}

// The call hook. On a tagged alias the first caller is bound and only it
// connects until the tag ends; checking and binding happen under one lock.
Response dial(const Request& r, const std::string& channel, const std::string& alias) {
  std::size_t ch = 0, i = 0;
  if (auto missing = find_alias(channel, alias, ch, i)) return *missing;
  Response refusal;
  auto params = params_of(r, refusal);
  if (!params) return refusal;
  const char* name = chose("hook", "calls") ? "caller" : "from";
  auto from = text_param(*params, name);
  if (!from) return error(g_config.choice.status("bad"), std::string(name) + " must be the calling number");
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[ch];
  expire(aliases, Clock::now());
  Alias& a = aliases[i];
  if (!a.tag.empty() && a.holder.empty()) a.holder = *from;
  else if (!a.tag.empty() && a.holder != *from)
    return error(g_config.choice.status("refused"), "alias " + alias + " is bound to another caller until its tag ends");
  a.last_use = ++g_state.uses;
  return {200, json::object{{"dialed", true}, {plain_names() ? "alias" : "alias_uid", alias}, {name, *from}}};
}

// ---------------------------------------------------------------- routing

enum class Route { none, agents, agent, snooze, wake, entry, aliases, tag, untag, dial };

struct Match {
  Route route = Route::none;
  std::string a, b;  // a: the agent, key or channel; b: the alias
};

Match match(std::vector<std::string> s) {
  // A trailing '/': an empty last segment. Refused (no route has one), the
  // same resource, or (distinct) part of a database key.
  if (s.size() > 1 && s.back().empty() && !chose("slash", "refused")) {
    if (chose("slash", "same")) s.pop_back();
    else if (s.size() == 3 && s[0] == "database" && !s[1].empty()) return {Route::entry, s[1] + "/", {}};
  }
  const auto n = s.size();
  if (n >= 3 && s[0] == "api" && s[1] == "v1" && s[2] == "local-agents") {
    if (n == 3) return {Route::agents, {}, {}};
    if (n == 4) return {Route::agent, s[3], {}};
    if (n == 5 && s[4] == "snooze") return {Route::snooze, s[3], {}};
    if (n == 5 && s[4] == "wake") return {Route::wake, s[3], {}};
  }
  if (n == 2 && s[0] == "database") return {Route::entry, s[1], {}};
  if (n >= 3 && s[0] == "channels" && s[2] == "alias-numbers") {
    if (n == 3) return {Route::aliases, s[1], {}};
    if (n == 4 && s[3] == "tag") return {Route::tag, s[1], {}};
    if (n == 5 && s[4] == "tag") return {Route::untag, s[1], s[3]};
    const char* hook = chose("hook", "dial") ? "dial" : chose("hook", "calls") ? "calls" : nullptr;
    if (n == 5 && hook && s[4] == hook) return {Route::dial, s[1], s[3]};
  }
  return {};
}

std::string_view allowed(Route r) {
  switch (r) {
    case Route::agents:
    case Route::agent:
    case Route::aliases: return "GET, HEAD";
    case Route::snooze:
    case Route::wake: return "PUT";
    case Route::entry: return "GET, HEAD, POST";
    case Route::tag:
    case Route::dial: return "POST";
    case Route::untag: return "DELETE";
    case Route::none: break;
  }
  return "";
}

bool method_allowed(std::string_view allow, std::string_view method) {
  for (std::size_t pos = 0; pos < allow.size();) {
    auto comma = allow.find(',', pos);
    if (comma == npos) comma = allow.size();
    if (trim(allow.substr(pos, comma - pos)) == method) return true;  // methods are case-sensitive
    pos = comma + 1;
  }
  return false;
}

// Auth first (every endpoint needs the key; --choice order=route answers a
// path that is no endpoint 404 first), then the route, the method and the
// handler. HEAD is answered as GET, without the body.
Response route(const Request& r) {
  const auto segments = segments_of(r.target);
  if (!segments && g_config.framework_refusal)
    return {400, nullptr, {},
            g_config.refusal_type == "text/html" ? "<html><body><h1>400 Bad Request</h1>URISyntaxException</body></html>"
                                                  : "400 Bad Request"};
  const Match m = segments ? match(*segments) : Match{};
  const bool route_first = chose("order", "route") && segments && m.route == Route::none;
  if (!route_first && !authorized(r)) return error(g_config.choice.status("auth"), "a missing, empty or wrong Apikey header");
  if (!segments) return error(g_config.choice.status("bad"), "the path is not validly percent-encoded");
  if (m.route == Route::none) return error(404, "no such route: " + r.target.substr(0, 200));
  const std::string_view allow = allowed(m.route);
  if (!method_allowed(allow, r.method)) {
    const unsigned status = g_config.choice.status("method");
    auto e = error(status, r.method + " is not allowed here (allowed: " + std::string(allow) + ")");
    if (status == 405) e.allow = allow;
    return e;
  }
  const bool get = r.method == "GET" || r.method == "HEAD";
  switch (m.route) {
    case Route::agents: return list_agents();
    case Route::agent: return agent_op(m.a, std::nullopt);
    case Route::snooze: return agent_op(m.a, true);
    case Route::wake:
      if (g_config.crash_on_unknown_wake && !find_agent_locked(m.a)) return {.drop = true};  // a panic in the handler
      return agent_op(m.a, false);
    case Route::entry: return get ? database_get(m.a) : database_post(r, m.a);
    case Route::aliases: return list_aliases(m.a);
    case Route::tag: return tag_alias(r, m.a);
    case Route::untag: return delete_tag(m.a, m.b);
    case Route::dial: return dial(r, m.a, m.b);
    case Route::none: break;
  }
  return error(404, "no such route");
}

// ---------------------------------------------------------------- connections and main

// One connection's requests in order, until the peer leaves, a framing
// error, "Connection: close" or a stop.
void serve_requests(Connection& c) {
  for (;;) {
    Framed f = read_request(c);
    if (f.refusal) {
      c.send(wire(*f.refusal, false, false));
      return;
    }
    if (!f.request) return;
    const Request& r = *f.request;
    if (g_config.stop_answering_after >= 0 && g_answered.fetch_add(1) >= g_config.stop_answering_after) {
      while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(kSliceMs));  // a deadlock
      return;
    }
    Response answer;
    try {
      answer = route(r);
    } catch (const std::exception&) {
      answer = error(500, "the dialect server failed on this request");  // a bug of ours: shown, not hidden
    }
    if (answer.drop) return;
    const bool keep = r.keep_alive && !g_stop && chose("keepalive", "yes");
    if (!c.send(wire(answer, r.method == "HEAD", keep, r.http11)) || !keep) return;
  }
}

void serve(int fd) {
  try {
    Connection c(fd);
    serve_requests(c);
  } catch (...) {
    // Out of memory for one connection must not end the process (std::terminate).
  }
  --g_active;
}

int listen_on(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: a test server, never exposed
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 1024) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("crh_dialect_server: cannot listen on loopback");
    if (fd >= 0) ::close(fd);
    return -1;
  }
  std::printf("listening on http://127.0.0.1:%u\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  return fd;
}

void accept_loop(int listen_fd) {
  while (!g_stop) {
    if (g_active >= kMaxConnections) {  // back-pressure: the kernel queues the rest, nobody gets a 5xx
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, kSliceMs) <= 0) continue;
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const timeval send_limit{10, 0};  // a peer that stops reading cannot hold a thread for ever
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
    ++g_active;
    try {
      std::thread(serve, fd).detach();
    } catch (const std::system_error&) {  // no thread to be had: drop this connection, keep serving
      --g_active;
      ::close(fd);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && argv[1] == std::string_view("--list-choices")) {
    dialect::print_switches();
    return 0;
  }
  auto config = parse_flags(argc, argv);
  if (!config) {
    std::fprintf(stderr,
                 "usage: crh_dialect_server --port N --api-key-file FILE --minute-ms N [--channels N --aliases M]\n");
    return 2;
  }
  g_config = std::move(*config);
  init_state(g_config);
  struct sigaction stop {};
  stop.sa_handler = on_signal;
  ::sigaction(SIGTERM, &stop, nullptr);
  ::sigaction(SIGINT, &stop, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  const int listen_fd = listen_on(g_config.port);
  if (listen_fd < 0) return 3;
  accept_loop(listen_fd);
  ::close(listen_fd);
  // Connection threads notice the stop within a slice; wait for them so that
  // none runs while the globals are destroyed.
  for (int i = 0; i < 50 && g_active > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fflush(stdout);
  if (g_active > 0) std::_Exit(0);  // one stuck in a send: leave without destructors under it
  return 0;
}
