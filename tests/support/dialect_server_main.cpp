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
#include <vector>

namespace {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;
constexpr auto npos = std::string::npos;

constexpr std::size_t kMaxHead = 64 * 1024;
constexpr std::size_t kMaxBody = 1024 * 1024;
constexpr int kIdleMs = 30'000;  // a silent peer is dropped, so threads never pile up
constexpr int kSliceMs = 100;    // how soon a waiting thread notices a stop
constexpr int kMaxConnections = 1024;
// A week, not the reference's day: the spec gives no bound, so ours differs on purpose.
constexpr std::int64_t kMinMinutes = 1, kMaxMinutes = 10'080;

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
    else return std::nullopt;
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
};

struct Alias {
  std::string tag;             // empty: untagged
  Clock::time_point expires;   // of the tag; the steady clock decides, not the wall clock
  std::string valid_until;     // the same instant in RFC 3339 UTC, as answered
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
};

Config g_config;
State g_state;

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

Response error(unsigned status, std::string msg) { return {status, json::object{{"msg", std::move(msg)}}, {}}; }

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

std::string wire(const Response& r, bool head_only, bool keep_alive) {
  const std::string body = r.html.empty() ? json::serialize(r.body) : r.html;
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  out += r.html.empty() ? std::string("Content-Type: application/json; charset=utf-8\r\n")
                        : "Content-Type: " + g_config.refusal_type + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (!r.allow.empty()) out += "Allow: " + r.allow + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!head_only) out += body;  // a HEAD answer announces the body's length but carries none
  return out;
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
std::string quoted(std::string_view s) {
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

// The parameters: a JSON object body is the only encoding this service reads;
// a form body or a query string is bad input.
std::optional<json::object> json_params(const Request& r, Response& refusal) {
  const auto types = header_values(r, "content-type");
  const std::string media = types.size() == 1 ? lower(trim(types[0].substr(0, types[0].find(';')))) : "";
  if (media != "application/json") {
    refusal = error(422, "parameters go in a JSON object body with Content-Type: application/json");
    return std::nullopt;
  }
  boost::system::error_code ec;
  json::value v = json::parse(r.body, ec);
  if (ec) {
    refusal = error(422, "the body is not JSON (" + ec.message() + ")");
    return std::nullopt;
  }
  if (!v.is_object()) {
    refusal = error(422, "the body must be a JSON object");
    return std::nullopt;
  }
  return std::move(v.get_object());
}

// ---------------------------------------------------------------- agents and database

json::value agent_json(const Agent& a) {
  return json::object{{"uid", a.uid},
                      {"label", a.label},
                      {"status", a.snoozed ? "off" : "on"},
                      {"calls_today", a.calls_today},
                      {"snoozed_since", text_or_null(a.snoozed_since)}};
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

Response list_agents() {
  std::lock_guard lock(g_state.mutex);
  json::array members;
  for (const auto& a : g_state.agents) members.push_back(agent_json(a));
  const auto count = members.size();
  return {200, json::object{{"count", count}, {"members", std::move(members)}}};
}

// GET (snooze empty), snooze or wake: all three answer the same agent object.
Response agent_op(const std::string& id, std::optional<bool> snooze) {
  std::lock_guard lock(g_state.mutex);
  Agent* a = find_agent(id);
  if (!a) return error(404, "no local agent with uid " + quoted(id));
  if (snooze && *snooze && !a->snoozed) a->snoozed_since = rfc3339_after({});
  if (snooze) a->snoozed = *snooze;
  if (!a->snoozed) a->snoozed_since.clear();
  return {200, agent_json(*a)};
}

std::optional<Response> check_key(const std::string& key) {
  if (key.empty()) return error(404, "no key given after /database/");
  if (!valid_utf8(key)) return error(422, "the key is not UTF-8 text once percent-decoded");
  return std::nullopt;
}

Response database_get(const std::string& key) {
  if (auto bad = check_key(key)) return *bad;
  std::lock_guard lock(g_state.mutex);
  auto it = g_state.database.find(key);
  if (it == g_state.database.end()) return error(404, "no value is stored under the key " + quoted(key));
  return {200, json::object{{"name", key}, {"data", it->second}}};
}

Response database_post(const Request& r, const std::string& key) {
  if (auto bad = check_key(key)) return *bad;
  Response refusal;
  auto params = json_params(r, refusal);
  if (!params) return refusal;
  const json::value* v = params->if_contains("value");
  if (!v || !v->is_string()) return error(422, "value must be a JSON string");
  std::string value(v->get_string());
  {
    std::lock_guard lock(g_state.mutex);
    g_state.database[key] = value;
  }
  return {200, json::object{{"stored", true}, {"name", key}, {"data", std::move(value)}}};
}

// ---------------------------------------------------------------- aliases and the call hook

std::string msisdn(std::size_t channel, std::size_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "+1555%02zu%04zu", channel + 1, i + 1);
  return buf;
}

json::value alias_json(std::size_t channel, std::size_t i, const Alias& a) {
  json::object o{{"alias_uid", "a-" + std::to_string(i + 1)}, {"msisdn", msisdn(channel, i)}};
  if (!a.tag.empty() || !g_config.untagged_omit_label) {  // the flaw: an untagged alias shows no tag fields at all
    o["label"] = text_or_null(a.tag);
    o["valid_until"] = text_or_null(a.valid_until);
    o["holder"] = text_or_null(a.holder);
  }
  return o;
}

void untag(Alias& a) {
  a.tag.clear();
  a.valid_until.clear();
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
  if (!ch) return error(404, "no channel " + quoted(channel));
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[*ch];
  expire(aliases, Clock::now());
  json::array numbers;
  for (std::size_t i = 0; i < aliases.size(); ++i) numbers.push_back(alias_json(*ch, i, aliases[i]));
  return {200, json::object{{"channel_id", *ch + 1}, {"numbers", std::move(numbers)}}};
}

// tag: a non-empty string; minutes: a JSON integer from 1 to 10080 (1.5, 5.0 and "5" are not).
std::optional<Response> read_tag(const Request& r, std::string& tag, std::int64_t& minutes) {
  Response refusal;
  auto params = json_params(r, refusal);
  if (!params) return refusal;
  const json::value* t = params->if_contains("tag");
  if (!t || !t->is_string() || t->get_string().empty()) return error(422, "tag must be a non-empty string");
  const json::value* m = params->if_contains("minutes");
  if (!m || !(m->is_int64() || m->is_uint64())) return error(422, "minutes must be an integer");
  minutes = m->is_int64() ? m->get_int64() : kMaxMinutes + 1;  // a uint64 is beyond int64: out of range
  if (minutes < kMinMinutes || minutes > kMaxMinutes) return error(422, "minutes must be from 1 to 10080");
  tag = t->get_string();
  return std::nullopt;
}

Response tag_alias(const Request& r, const std::string& channel) {
  auto ch = channel_index(channel);
  if (!ch) return error(404, "no channel " + quoted(channel));
  std::string tag;
  std::int64_t minutes = 0;
  if (auto bad = read_tag(r, tag, minutes)) return *bad;
  const std::chrono::milliseconds lifetime(minutes * g_config.minute_ms);
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[*ch];
  const auto now = Clock::now();
  expire(aliases, now);
  std::optional<std::size_t> pick;  // least recently used untagged; a tie goes to the lowest index
  for (std::size_t i = 0; i < aliases.size(); ++i)
    if (aliases[i].tag.empty() && (!pick || aliases[i].last_use < aliases[*pick].last_use)) pick = i;
  if (!pick) return error(423, "every alias of channel " + channel + " is tagged");
  Alias& a = aliases[*pick];
  a.tag = std::move(tag);
  a.expires = now + lifetime;  // from the tag operation; calls never extend it
  a.valid_until = rfc3339_after(lifetime);
  a.holder.clear();
  a.last_use = ++g_state.uses;
  auto answer = alias_json(*ch, *pick, a);
  if (g_config.stale_tag_answer) {  // the flaw: the answer shows the tag of the request before
    answer.as_object()["label"] = text_or_null(g_state.last_tag);
    g_state.last_tag = a.tag;
  }
  return {200, std::move(answer)};
}

// The channel's and alias's indexes, or the 404 for whichever is missing.
std::optional<Response> find_alias(const std::string& channel, const std::string& alias, std::size_t& ch,
                                   std::size_t& i) {
  auto c = channel_index(channel);
  if (!c) return error(404, "no channel " + quoted(channel));
  auto a = alias_index(alias, g_state.channels[*c].size());
  if (!a) return error(404, "channel " + channel + " has no alias " + quoted(alias));
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
  if (aliases[i].tag.empty()) return error(404, "alias " + alias + " has no tag");
  untag(aliases[i]);
  return {200, alias_json(ch, i, aliases[i])};
}

// The call hook. On a tagged alias the first caller is bound and only it
// connects until the tag ends; checking and binding happen under one lock.
Response dial(const Request& r, const std::string& channel, const std::string& alias) {
  std::size_t ch = 0, i = 0;
  if (auto missing = find_alias(channel, alias, ch, i)) return *missing;
  Response refusal;
  auto params = json_params(r, refusal);
  if (!params) return refusal;
  const json::value* f = params->if_contains("from");
  if (!f || !f->is_string() || f->get_string().empty()) return error(422, "from must be the calling number");
  const std::string from(f->get_string());
  std::lock_guard lock(g_state.mutex);
  auto& aliases = g_state.channels[ch];
  expire(aliases, Clock::now());
  Alias& a = aliases[i];
  if (!a.tag.empty() && a.holder.empty()) a.holder = from;
  else if (!a.tag.empty() && a.holder != from)
    return error(409, "alias " + alias + " is bound to another caller until its tag ends");
  a.last_use = ++g_state.uses;
  return {200, json::object{{"dialed", true}, {"alias_uid", alias}, {"from", from}}};
}

// ---------------------------------------------------------------- routing

enum class Route { none, agents, agent, snooze, wake, entry, aliases, tag, untag, dial };

struct Match {
  Route route = Route::none;
  std::string a, b;  // a: the agent, key or channel; b: the alias
};

Match match(const std::vector<std::string>& s) {
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
    if (n == 5 && s[4] == "dial") return {Route::dial, s[1], s[3]};
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

// Auth first (every endpoint needs the key), then the route, the method and
// the handler. HEAD is answered as GET, without the body.
Response route(const Request& r) {
  const auto segments = segments_of(r.target);
  if (!segments && g_config.framework_refusal)
    return {400, nullptr, {},
            g_config.refusal_type == "text/html" ? "<html><body><h1>400 Bad Request</h1>URISyntaxException</body></html>"
                                                  : "400 Bad Request"};
  if (!authorized(r)) return error(403, "a missing, empty or wrong Apikey header");
  if (!segments) return error(422, "the path is not validly percent-encoded");
  const Match m = match(*segments);
  if (m.route == Route::none) return error(404, "no such route: " + r.target.substr(0, 200));
  const std::string_view allow = allowed(m.route);
  if (!method_allowed(allow, r.method)) {
    auto e = error(405, r.method + " is not allowed here (allowed: " + std::string(allow) + ")");
    e.allow = allow;
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
    const bool keep = r.keep_alive && !g_stop;
    if (!c.send(wire(answer, r.method == "HEAD", keep)) || !keep) return;
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
