// crh_lenient_target: a small, correct, independent implementation of the
// Call-Routing Service API for the load's CLI tests (issues 22 and 35), with
// switches a profile-less harness must cope with or catch:
//
//   crh_lenient_target [--alias-fields TAG,NUMBER] [--shape alias-numbers] [--unreadable list|tag]
//                      [--never-retag] [--aliases N] [--minute-ms N]
//
//   --alias-fields label,e164  the alias objects name their tag and their
//                              number so (default tag,number), as a service
//                              the spec lets name them as it likes
//   --shape alias-numbers      channel 42, its list wrapped under
//                              "alias_numbers" with numeric ids and fields of
//                              its own (issue 35): {"channel": 42,
//                              "alias_numbers": [{"id": 1, "e164": "+14420001",
//                              "label": null, "expiresAt": null, "lockedTo": null}]};
//                              the tag and its deletion answer such an object
//   --unreadable list          the alias list answers 200 with a body that is
//                              not JSON (lines of text): nothing can read it
//   --unreadable tag           a tag answers 200 with the alias's number and
//                              no id: nothing can tell which alias it tagged
//   --never-retag              a broken service: an alias whose tag was
//                              deleted is never tagged again (tag answers 409,
//                              "every alias is tagged", once they all were)
//
// The key is CRH_API_KEY. Channel "1" (with --shape alias-numbers "42") with N
// aliases (default 16, ids 1..N);
// agents 101..103; any database key. Form, JSON or query parameters. It shares
// no code with reference/ or the harness; a thread per connection, one mutex
// around the state (the caller binding is atomic). Loopback only; prints
// "listening on http://127.0.0.1:PORT"; ends on SIGTERM or SIGINT.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <cctype>
#include <chrono>
#include <csignal>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

struct Options {
  std::string tag_field = "tag", number_field = "number";
  bool alias_numbers = false;  // --shape alias-numbers
  std::string unreadable;      // "list", "tag" or ""
  std::string channel = "1";
  bool never_retag = false;
  int aliases = 16;
  long minute_ms = 60'000;
  std::string key;
};
Options g_opt;

struct Alias {
  std::string id, number;
  std::optional<std::string> tag;
  Clock::time_point expires{};
  std::optional<std::string> bound;
  long long last_use = -1;  // -1: never used (those go first, in order)
  bool burnt = false;       // --never-retag: its tag was deleted once
};

struct State {
  std::mutex m;
  std::vector<Alias> aliases;
  std::map<std::string, std::string> agents{{"101", "available"}, {"102", "available"}, {"103", "available"}};
  std::map<std::string, std::string> database;
  long long uses = 0;

  void expire(Clock::time_point now) {
    for (auto& a : aliases)
      if (a.tag && now >= a.expires) a.tag.reset(), a.bound.reset();
  }
  Alias* find(const std::string& id) {
    for (auto& a : aliases)
      if (a.id == id) return &a;
    return nullptr;
  }
};
State g_state;

struct Reply {
  int status = 200;
  std::string body;
  std::string type = "application/json";
};

Reply ok(const json::value& v) { return {200, json::serialize(v)}; }
Reply err(int status, std::string msg) { return {status, json::serialize(json::object{{"msg", std::move(msg)}})}; }

// RFC 3339 in UTC, as a service shows a tag's end.
std::string rfc3339(Clock::time_point t) {
  const auto wall = std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(t - Clock::now());
  const std::time_t secs = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json::value or_null(const std::optional<std::string>& v) { return v ? json::value(*v) : json::value(nullptr); }

json::value alias_json(const Alias& a) {
  if (g_opt.alias_numbers)
    return json::object{{"id", std::stoll(a.id)},
                        {"e164", a.number},
                        {"label", or_null(a.tag)},
                        {"expiresAt", a.tag ? json::value(rfc3339(a.expires)) : json::value(nullptr)},
                        {"lockedTo", or_null(a.bound)}};
  json::object o{{"id", a.id}, {g_opt.number_field, a.number}};
  o[g_opt.tag_field] = a.tag ? json::value(*a.tag) : json::value(nullptr);
  o["bound_caller"] = a.bound ? json::value(*a.bound) : json::value(nullptr);
  return o;
}
json::value agent_json(const std::string& id, const std::string& state) {
  return json::object{{"id", id}, {"name", "Agent " + id}, {"state", state}};
}

std::optional<std::string> pct_decode(std::string_view s, bool plus) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus) out += ' ';
    else if (s[i] != '%') out += s[i];
    else {
      if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
        return std::nullopt;
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    }
  }
  return out;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

// Parameters from the query, then a JSON or form body.
bool parse_params(std::string_view query, const std::string& body, std::map<std::string, std::string>& out) {
  auto pairs = [&](std::string_view text) {
    while (!text.empty()) {
      auto amp = text.find('&');
      auto pair = text.substr(0, amp);
      auto eq = pair.find('=');
      auto k = pct_decode(pair.substr(0, eq), true);
      auto v = pct_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
      if (!k || !v || !valid_utf8(*k) || !valid_utf8(*v)) return false;
      if (!k->empty()) out[*k] = *v;
      if (amp == std::string_view::npos) break;
      text.remove_prefix(amp + 1);
    }
    return true;
  };
  if (!pairs(query)) return false;
  if (body.empty()) return true;
  if (body.find_first_not_of(" \t\r\n") != std::string::npos && body[body.find_first_not_of(" \t\r\n")] == '{') {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) return false;
    for (const auto& [k, x] : v.get_object())
      out[std::string(k)] = x.is_string() ? std::string(x.get_string()) : json::serialize(x);
    return true;
  }
  return pairs(body);
}

std::vector<std::string> split_path(std::string_view p) {
  std::vector<std::string> seg;
  if (p.starts_with('/')) p.remove_prefix(1);
  while (true) {
    auto s = p.find('/');
    seg.emplace_back(p.substr(0, s));
    if (s == std::string_view::npos) break;
    p.remove_prefix(s + 1);
  }
  return seg;
}

Reply tag(const std::map<std::string, std::string>& params) {
  auto t = params.find("tag"), m = params.find("minutes");
  if (t == params.end() || t->second.empty()) return err(400, "tag is required");
  if (m == params.end() || m->second.empty() || m->second.size() > 5 ||
      m->second.find_first_not_of("0123456789") != std::string::npos)
    return err(400, "minutes must be an integer");
  const long minutes = std::stol(m->second);
  if (minutes < 1 || minutes > 1440) return err(400, "minutes must be from 1 to 1440");
  Alias* pick = nullptr;
  for (auto& a : g_state.aliases)
    if (!a.tag && !(g_opt.never_retag && a.burnt) && (!pick || a.last_use < pick->last_use)) pick = &a;
  if (!pick) return err(409, "every alias is tagged");
  pick->tag = t->second;
  pick->bound.reset();
  pick->last_use = ++g_state.uses;
  pick->expires = Clock::now() + std::chrono::milliseconds(minutes * g_opt.minute_ms);
  if (g_opt.unreadable == "tag") return ok(json::object{{"status", "tagged"}, {"number", pick->number}});
  return ok(alias_json(*pick));
}

Reply route(const std::string& method, const std::string& path, const std::map<std::string, std::string>& params) {
  auto seg = split_path(path);
  for (auto& s : seg) {
    auto d = pct_decode(s, false);
    if (!d || !valid_utf8(*d)) return err(400, "bad percent-encoding in the path");
    s = *d;
  }
  const std::size_t n = seg.size();
  std::lock_guard lock(g_state.m);
  g_state.expire(Clock::now());
  if (n >= 3 && seg[0] == "api" && seg[1] == "v1" && seg[2] == "local-agents") {
    if (n == 3) {
      if (method != "GET") return err(405, "method not allowed");
      json::array list;
      for (const auto& [id, st] : g_state.agents) list.push_back(agent_json(id, st));
      return ok(json::object{{"agents", list}});
    }
    auto it = g_state.agents.find(seg[3]);
    if (n == 4 && method != "GET") return err(405, "method not allowed");
    if (n == 5 && seg[4] != "snooze" && seg[4] != "wake") return err(404, "no such route");
    if (n == 5 && method != "PUT") return err(405, "method not allowed");
    if (n > 5) return err(404, "no such route");
    if (it == g_state.agents.end()) return err(404, "no such agent");
    if (n == 5) it->second = seg[4] == "snooze" ? "snoozed" : "available";
    return ok(agent_json(it->first, it->second));
  }
  if (n == 2 && seg[0] == "database" && !seg[1].empty()) {
    if (method == "GET") {
      auto it = g_state.database.find(seg[1]);
      if (it == g_state.database.end()) return err(404, "no such key");
      return ok(json::object{{"key", it->first}, {"value", it->second}});
    }
    if (method != "POST") return err(405, "method not allowed");
    auto v = params.find("value");
    if (v == params.end()) return err(400, "value is required");
    g_state.database[seg[1]] = v->second;
    return ok(json::object{{"key", seg[1]}, {"value", v->second}});
  }
  if (n >= 3 && seg[0] == "channels" && seg[2] == "alias-numbers") {
    if (seg[1] != g_opt.channel) return err(404, "no such channel");
    if (n == 3) {
      if (method != "GET") return err(405, "method not allowed");
      if (g_opt.unreadable == "list") {
        Reply text{200, "", "text/plain"};
        for (const auto& a : g_state.aliases) text.body += a.id + " " + a.number + (a.tag ? " tagged\n" : " free\n");
        return text;
      }
      json::array list;
      for (const auto& a : g_state.aliases) list.push_back(alias_json(a));
      if (g_opt.alias_numbers) return ok(json::object{{"channel", 42}, {"alias_numbers", list}});
      return ok(json::object{{"channel", "1"}, {"aliases", list}});
    }
    if (n == 4 && seg[3] == "tag") return method == "POST" ? tag(params) : err(405, "method not allowed");
    if (n != 5 || (seg[4] != "tag" && seg[4] != "calls")) return err(404, "no such route");
    Alias* a = g_state.find(seg[3]);
    if (seg[4] == "tag") {
      if (method != "DELETE") return err(405, "method not allowed");
      if (!a) return err(404, "no such alias");
      if (!a->tag) return err(404, "the alias has no tag");
      a->tag.reset();
      a->bound.reset();
      a->burnt = true;
      return ok(alias_json(*a));
    }
    if (method != "POST") return err(405, "method not allowed");
    if (!a) return err(404, "no such alias");
    auto c = params.find("caller");
    if (c == params.end() || c->second.empty()) return err(400, "caller is required");
    if (a->tag) {
      if (a->bound && *a->bound != c->second) return err(403, "the alias is bound to another caller");
      a->bound = c->second;
    }
    a->last_use = ++g_state.uses;
    return ok(json::object{{"alias", a->id}, {"caller", c->second}, {"connected", true}});
  }
  return err(404, "no such route");
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool write_all(int fd, std::string_view b) {
  while (!b.empty()) {
    ssize_t n = ::send(fd, b.data(), b.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    b.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// More bytes into `in`; false when the peer left, went quiet for 30 s, or we stop.
bool fill(int fd, std::string& in) {
  for (int waited = 0; waited < 30'000 && !g_stop; waited += 100) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[16384];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  return false;
}

void serve(int fd) {
  std::string in;
  while (!g_stop) {
    std::size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos)
      if (in.size() > 65536 || !fill(fd, in)) return (void)::close(fd);
    const std::string head = in.substr(0, end + 2);
    std::map<std::string, std::string> h;
    for (auto pos = head.find("\r\n") + 2; pos < head.size();) {
      auto eol = head.find("\r\n", pos);
      auto line = head.substr(pos, eol - pos);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t") + 1);
        h[lower(line.substr(0, colon))] = v;
      }
      pos = eol + 2;
    }
    const auto sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    const std::string method = head.substr(0, sp1), target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    Reply r;
    bool close_after = h.count("transfer-encoding") > 0 || lower(h["connection"]) == "close";
    std::size_t length = h.count("content-length") ? std::strtoul(h["content-length"].c_str(), nullptr, 10) : 0;
    if (h.count("transfer-encoding")) length = 0, r = err(411, "send the body with a Content-Length");
    if (length > (1u << 20)) return (void)::close(fd);
    while (in.size() < end + 4 + length)
      if (!fill(fd, in)) return (void)::close(fd);
    const std::string body = in.substr(end + 4, length);
    in.erase(0, end + 4 + length);
    if (r.status == 200) {
      std::map<std::string, std::string> params;
      const auto q = target.find('?');
      if (!h.count("apikey") || h["apikey"] != g_opt.key) r = err(401, "missing or wrong Apikey");
      else if (!parse_params(q == std::string::npos ? "" : std::string_view(target).substr(q + 1), body, params))
        r = err(400, "malformed parameters");
      else r = route(method, target.substr(0, q), params);
    }
    const std::string reason = r.status == 200 ? "OK" : "Error";
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason +
                      "\r\nContent-Type: " + r.type + "\r\nContent-Length: " + std::to_string(r.body.size()) +
                      (close_after ? "\r\nConnection: close" : "") + "\r\n\r\n" + r.body;
    if (!write_all(fd, out) || close_after) break;
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--never-retag") g_opt.never_retag = true;
    else if (a == "--aliases") g_opt.aliases = std::atoi(next().c_str());
    else if (a == "--minute-ms") g_opt.minute_ms = std::atol(next().c_str());
    else if (a == "--shape") {
      if (next() != "alias-numbers") return std::fprintf(stderr, "crh_lenient_target: --shape takes alias-numbers\n"), 2;
      g_opt.alias_numbers = true, g_opt.channel = "42";
    } else if (a == "--unreadable") {
      g_opt.unreadable = next();
      if (g_opt.unreadable != "list" && g_opt.unreadable != "tag")
        return std::fprintf(stderr, "crh_lenient_target: --unreadable takes list or tag\n"), 2;
    }
    else if (a == "--alias-fields") {
      const std::string v = next();
      const auto comma = v.find(',');
      g_opt.tag_field = v.substr(0, comma);
      g_opt.number_field = comma == std::string::npos ? "number" : v.substr(comma + 1);
    } else {
      std::fprintf(stderr, "usage: crh_lenient_target [--alias-fields TAG,NUMBER] [--shape alias-numbers] "
                           "[--unreadable list|tag] [--never-retag] [--aliases N] [--minute-ms N]\n");
      return 2;
    }
  }
  if (const char* k = std::getenv("CRH_API_KEY")) g_opt.key = k;
  if (g_opt.key.empty() || g_opt.aliases < 1 || g_opt.minute_ms < 1) {
    std::fprintf(stderr, "crh_lenient_target: set CRH_API_KEY; --aliases and --minute-ms must be positive\n");
    return 2;
  }
  for (int i = 1; i <= g_opt.aliases; ++i) {
    char number[32];
    std::snprintf(number, sizeof number, g_opt.alias_numbers ? "+1442%04d" : "+1555010%04d", i);
    g_state.aliases.push_back({std::to_string(i), number});
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
    std::perror("crh_lenient_target: cannot listen on loopback");
    return 3;
  }
  std::printf("listening on http://127.0.0.1:%u\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  while (!g_stop) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread(serve, fd).detach();
  }
  ::close(listen_fd);
  return 0;
}
