#include "core/preflight.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json/parse.hpp>

#include "core/api.hpp"
#include "core/http_client.hpp"
#include "core/outside.hpp"

namespace crh::core {
namespace {

bool listed(const std::vector<unsigned>& statuses, unsigned s) {
  return std::find(statuses.begin(), statuses.end(), s) != statuses.end();
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view haystack_lower, std::string_view needle) {
  return haystack_lower.find(needle) != std::string_view::npos;
}

std::string trimmed(std::string_view text) {
  const auto* ws = " \t\r\n";
  const auto b = text.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = text.find_last_not_of(ws);
  return std::string(text.substr(b, e - b + 1));
}

bool is_html(const HttpResponse& r) {
  if (contains(lower(r.header("Content-Type")), "html")) return true;
  const auto start = lower(trimmed(std::string_view(r.body).substr(0, 512)));
  return start.starts_with("<!doctype html") || start.starts_with("<html") || start.starts_with("<head") ||
         start.starts_with("<body");
}

// The text between <tag...> and </tag>, whitespace folded; empty when absent.
std::string element_text(std::string_view body, std::string_view tag) {
  const auto low = lower(body.substr(0, 64 * 1024));
  const auto open = low.find("<" + std::string(tag));
  if (open == std::string::npos) return {};
  const auto gt = low.find('>', open);
  if (gt == std::string::npos) return {};
  const auto close = low.find("</" + std::string(tag), gt);
  if (close == std::string::npos) return {};
  std::string out;
  for (char c : body.substr(gt + 1, close - gt - 1)) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return trimmed(out);
}

// "HTTP 502 (text/html, "502 Bad Gateway")": the status, the type and a short
// excerpt (an HTML page's title or heading; else the start of the body).
std::string answer_of(const HttpResponse& r) {
  std::string type = r.header("Content-Type");
  if (const auto semi = type.find(';'); semi != std::string::npos) type = trimmed(type.substr(0, semi));
  std::string excerpt;
  if (is_html(r)) {
    excerpt = element_text(r.body, "title");
    if (excerpt.empty()) excerpt = element_text(r.body, "h1");
  }
  if (excerpt.empty()) excerpt = trimmed(r.body);
  std::string shown;
  for (char c : from_target(excerpt, 80)) shown += std::iscntrl(static_cast<unsigned char>(c)) ? ' ' : c;
  if (excerpt.size() > 80) shown += "...";
  const bool quoted = !shown.starts_with('{') && !shown.starts_with('[');
  if (shown.empty()) shown = "an empty body";
  else if (quoted) shown = "\"" + shown + "\"";
  type = from_target(type, 60);
  return "HTTP " + std::to_string(r.status) + " (" + (type.empty() ? "" : type + ": ") + shown + ")";
}

// A Location header's scheme and authority ("https", "host:443"); a relative
// reference has neither.
struct Origin {
  std::string scheme, authority, path;
};
Origin origin_of(std::string_view location) {
  Origin o;
  const auto colon = location.find("://");
  if (colon == std::string_view::npos) {
    o.path = std::string(location);
    return o;
  }
  o.scheme = lower(location.substr(0, colon));
  auto rest = location.substr(colon + 3);
  const auto slash = rest.find_first_of("/?#");
  o.authority = lower(rest.substr(0, slash));
  o.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  return o;
}

bool sign_in_path(std::string_view path) {
  const auto p = lower(path);
  for (auto word : {"login", "signin", "sign-in", "sign_in", "sso", "oauth", "auth", "saml", "cas/"})
    if (contains(p, word)) return true;
  return false;
}

bool sign_in_page(const HttpResponse& r) {
  const auto body = lower(std::string_view(r.body).substr(0, 64 * 1024));
  return contains(body, "type=\"password\"") || contains(body, "type='password'") || contains(body, "type=password") ||
         contains(body, "sign in") || contains(body, "log in") || contains(body, "login");
}

constexpr std::string_view kCheckBaseUrl = "check --base-url (host, port and path)";

// A mistake an answer shows. `alone`: this one answer shows it (TLS, a
// redirect away, a sign-in), whichever request got it; else it is what a
// whole target answers when it is not the service (a proxy's page, a web
// site), and only when both preflight answers show it: a service that
// answers one request with an HTML error is broken, for the checks to judge.
struct Seen {
  std::string mistake;
  bool alone = true;
};

// Nothing when the answer is one an implementation of the API could give
// (right or wrong: the checks judge it).
std::optional<Seen> mistake_in(const HttpResponse& r, const BaseUrl& base) {
  const unsigned s = r.status;
  const auto body_low = lower(std::string_view(r.body).substr(0, 4096));
  if (s == 400 && (contains(body_low, "https port") || contains(body_low, "http request to an https server") ||
                   contains(body_low, "speaking plain http to an ssl")))
    return Seen{"this port speaks HTTPS (TLS), and crh speaks plain HTTP only: point --base-url at the service's "
                "HTTP port, or put a plain-HTTP proxy in front of it"};
  if (s >= 300 && s < 400) {
    const auto location = r.header("Location");
    if (!location.empty()) {
      const auto o = origin_of(location);
      if (o.scheme == "https")
        return Seen{"it redirects to https (" + from_target(location, 80) +
                    "), and crh speaks plain HTTP only and follows no redirect: point --base-url at the service's "
                    "HTTP port, or put a plain-HTTP proxy in front of it"};
      const auto here = lower(base.host_header());
      const bool same = o.scheme.empty() || o.authority == here ||
                        (base.port == "80" && o.authority == lower(base.host) + ":80");
      if (!same)
        return Seen{"it redirects to another address (" + from_target(location, 80) +
                    "), and crh follows no redirect: point --base-url at the service itself"};
      if (sign_in_path(o.path))
        return Seen{"it redirects to a sign-in page (" + from_target(location, 80) +
                    "): something in front of the service asks people to log in; point --base-url at the service "
                    "itself, past the sign-in"};
    }
  }
  if (is_html(r)) {
    if ((s == 200 || s == 401 || s == 403 || s == 302) && sign_in_page(r))
      return Seen{"a sign-in page: something in front of the service asks people to log in; point --base-url at the "
                  "service itself, past the sign-in"};
    if (s == 502 || s == 503 || s == 504)
      return Seen{"a proxy's error page: the proxy answers, the service behind it is down or not reachable from the "
                  "proxy; check the service behind the proxy, or point --base-url at the service itself",
                  false};
    return Seen{"a web page, not the API (no implementation of it answers HTML): " + std::string(kCheckBaseUrl) +
                    ", is this the Call-Routing Service?",
                false};
  }
  // A plain-text or empty gateway answer: what proxies send when their upstream is gone.
  if ((s == 502 || s == 503 || s == 504) && !contains(lower(r.header("Content-Type")), "json"))
    return Seen{"a gateway's error (HTTP " + std::to_string(s) +
                    "): whatever answers is in front of the service, which is down or not reachable from it; check "
                    "the service behind the proxy, or point --base-url at the service itself",
                false};
  return std::nullopt;
}

// The first bytes a TLS server sends to a TLS client hello: a handshake
// (0x16) or alert (0x15) record of version 3.x. A raw probe, only when the
// HTTP exchange failed without an answer.
bool speaks_tls(const BaseUrl& base, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(base.host.c_str(), base.port.c_str(), &hints, &found) != 0 || found == nullptr) return false;
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool tls = false;
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    // A TLS 1.2 ClientHello: common AEAD suites, supported groups, signature algorithms.
    static constexpr std::array<unsigned char, 86> hello{
        0x16, 0x03, 0x01, 0x00, 0x51,                                                  // record
        0x01, 0x00, 0x00, 0x4d,                                                        // client_hello
        0x03, 0x03,                                                                    // TLS 1.2
        0x63, 0x72, 0x68, 0x2d, 0x70, 0x72, 0x65, 0x66, 0x6c, 0x69, 0x67, 0x68, 0x74, 0x2d, 0x72, 0x61,  // random
        0x6e, 0x64, 0x6f, 0x6d, 0x2d, 0x33, 0x32, 0x2d, 0x62, 0x79, 0x74, 0x65, 0x73, 0x2e, 0x2e, 0x21,  //
        0x00,                                                                          // session id
        0x00, 0x08, 0xc0, 0x2f, 0xc0, 0x30, 0xc0, 0x2b, 0x00, 0x9c,                    // cipher suites
        0x01, 0x00,                                                                    // compression
        0x00, 0x1c,                                                                    // extensions
        0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x1d, 0x00, 0x17,                    // supported_groups
        0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,                                            // ec_point_formats
        0x00, 0x0d, 0x00, 0x08, 0x00, 0x06, 0x04, 0x01, 0x04, 0x03, 0x08, 0x04,        // signature_algorithms
    };
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size())) {
      unsigned char got[2] = {};
      std::size_t n = 0;
      while (n < 2) {
        const auto r = ::recv(fd, got + n, 2 - n, 0);
        if (r <= 0) break;
        n += static_cast<std::size_t>(r);
      }
      tls = n == 2 && (got[0] == 0x16 || got[0] == 0x15) && got[1] == 0x03;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return tls;
}

std::optional<boost::json::value> json_of(const HttpResponse& r) {
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec) return std::nullopt;
  return v;
}

// Whether the value could be a list answer, right or wrong: an array, or an
// object with the list's field (of any type: a wrong type is the service's
// bug, for the checks) or any array field.
bool may_hold_list(const boost::json::value& v, std::string_view field) {
  if (v.is_array()) return true;
  if (!v.is_object()) return false;
  if (v.as_object().contains(field)) return true;
  for (const auto& f : v.as_object())
    if (f.value().is_array()) return true;
  return false;
}

}  // namespace

std::string PreflightStop::line() const {
  return request + (answered ? " answered " : " got no answer (") + answer + (answered ? "" : ")") + ": " + mistake;
}

std::optional<PreflightStop> preflight(const Target& target, const ExpectedStatuses& statuses,
                                       std::chrono::milliseconds timeout, bool* answered) {
  ClientConfig config;
  config.timeout = std::min(timeout, std::chrono::milliseconds(3000));  // a silent target costs seconds, not minutes
  config.not_now_retries = throttled(429, statuses) ? kNotNowRetries : 0;
  HttpClient client(target.base, config);
  const auto base = target.base.to_string();
  const auto send = [&](api::Operation op) {
    auto request = api::request(target, op);
    request.headers.push_back({"Apikey", target.api_key});
    return client.send(std::move(request));
  };
  const auto stop = [](std::string request, const HttpResponse& r, std::string mistake) {
    return PreflightStop{true, std::move(request), answer_of(r), std::move(mistake)};
  };

  const std::string agents_request = "GET " + base + api::agents_path();
  const auto agents = send(api::Operation::list_agents);
  if (!agents.answered()) {
    const auto e = agents.error;
    // A TLS server refuses plain HTTP at once (a reset, or an alert record no HTTP reader takes).
    const bool tls = (e == TransportError::reset || e == TransportError::malformed) &&
                     speaks_tls(target.base, config.timeout);
    if (tls)
      return PreflightStop{true, agents_request, "in TLS, not HTTP",
                           "this port speaks HTTPS (TLS), and crh speaks plain HTTP only: point --base-url at the "
                           "service's HTTP port, or put a plain-HTTP proxy in front of it"};
    if (e == TransportError::timeout)
      return PreflightStop{false, agents_request, std::string(to_string(e)) + ": " + from_target(agents.error_detail, 160),
                           "nothing answered within " + std::to_string(config.timeout.count()) +
                               " ms: is the service running there and taking connections, and is --base-url right "
                               "(host and port)? A service that needs longer: raise --timeout"};
    if (e == TransportError::resolve_failed || e == TransportError::connect_failed)
      return PreflightStop{false, agents_request, std::string(to_string(e)) + ": " + from_target(agents.error_detail, 160),
                           "could not reach the service: is it running there, and is --base-url right (host and port)?"};
    return std::nullopt;  // an answer no HTTP reader takes: the checks judge the target
  }
  if (answered) *answered = true;
  const auto& a = *agents.response;
  const auto in_agents = mistake_in(a, target.base);
  if (in_agents && in_agents->alone) return stop(agents_request, a, in_agents->mistake);
  if (!in_agents && (listed(statuses.auth, a.status) || a.status == 401 || a.status == 403)) {
    std::string m =
        "the service refused the key: check CRH_API_KEY (or --api-key-file) is this service's key (a service that "
        "refuses every key, the right one too, looks the same from here)";
    if (!listed(statuses.auth, a.status))
      m += "; if HTTP " + std::to_string(a.status) + " means something else here, say so in --profile (statuses.auth)";
    return stop(agents_request, a, m);
  }

  const std::string aliases_request = "GET " + base + api::aliases_path(target.channel);
  const auto aliases = send(api::Operation::list_aliases);
  if (!aliases.answered()) return std::nullopt;
  const auto& l = *aliases.response;
  const auto in_aliases = mistake_in(l, target.base);
  if (in_aliases && in_aliases->alone) return stop(aliases_request, l, in_aliases->mistake);
  if (in_agents && in_aliases) return stop(agents_request, a, in_agents->mistake);  // the whole target is not the service
  if (in_agents || in_aliases) return std::nullopt;  // one answer is odd: the checks judge it
  const bool agents_missing = listed(statuses.not_found, a.status);
  const bool aliases_missing = listed(statuses.not_found, l.status);
  if (agents_missing && aliases_missing) {
    const auto prefix = target.base.path_prefix;
    return stop(agents_request, a,
                prefix.empty()
                    ? "both the agent list and channel " + target.channel +
                          "'s aliases are not found here: is this host and port the Call-Routing Service, or does "
                          "it sit under a path (check the path of --base-url)?"
                    : "both the agent list and channel " + target.channel + "'s aliases are not found under " +
                          prefix + ": check the path of --base-url (the service may not sit under " + prefix + ")");
  }
  if (a.status == 200 && aliases_missing)
    return stop(aliases_request, l,
                "the agent list answers, channel " + target.channel +
                    "'s aliases are not found: check --channel (a channel of this service that has aliases)");
  if (a.status == 200 && l.status == 200) {
    const auto av = json_of(a);
    const auto lv = json_of(l);
    if (av && lv && !may_hold_list(*av, target.dialect.fields.agents_list) &&
        !may_hold_list(*lv, target.dialect.fields.aliases_list))
      return stop(aliases_request, l,
                  "neither the agent list nor the alias list holds a list: check --base-url (is this the "
                  "Call-Routing Service?) and, if the lists sit in other fields, --profile (lists.agents, lists.aliases)");
    // Only names a profile gave can be wrong: under the defaults the checks read ids leniently.
    if (lv && target.dialect.fields.alias_id != FieldNames{}.alias_id) {
      std::string why;
      if (const auto found = api::find_list(*lv, target.dialect.fields.aliases_list, why);
          found && !found->items->empty()) {
        bool objects = true, any_id = false;
        for (const auto& item : *found->items) {
          objects = objects && item.is_object();
          any_id = any_id || api::alias_id(target.dialect.fields, item).has_value();
        }
        if (objects && !any_id)
          return stop(aliases_request, l,
                      "no alias in the list has an id under the profile's names (" +
                          api::fields_text(found->items->front()) +
                          "): check --profile (id_fields.alias) matches this service");
      }
    }
  }
  return std::nullopt;
}

}  // namespace crh::core
