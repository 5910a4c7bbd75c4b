// Routing, authentication, parameter decoding and JSON answers of the
// reference service, following DESIGN.md §3 (choices where the spec is silent)
// and §4 (the call hook).
#include "service.hpp"

#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <map>
#include <span>
#include <vector>

namespace crh::reference {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kMaxTagMinutes = 1440;
constexpr auto kSlowTagDelay = 20ms;
constexpr auto kRacyBindYield = 5ms;

enum class Endpoint {
  agents_list,
  agent_get,
  agent_snooze,
  agent_wake,
  db_get,
  db_set,
  aliases_list,
  tag,
  untag,
  call,
};

struct Pattern {
  std::string_view method;
  std::array<std::string_view, 5> parts;  // "*" is a path parameter
  std::size_t size;
  Endpoint endpoint;
};

constexpr std::array kRoutes{
    Pattern{"GET", {"api", "v1", "local-agents"}, 3, Endpoint::agents_list},
    Pattern{"GET", {"api", "v1", "local-agents", "*"}, 4, Endpoint::agent_get},
    Pattern{"PUT", {"api", "v1", "local-agents", "*", "snooze"}, 5, Endpoint::agent_snooze},
    Pattern{"PUT", {"api", "v1", "local-agents", "*", "wake"}, 5, Endpoint::agent_wake},
    Pattern{"GET", {"database", "*"}, 2, Endpoint::db_get},
    Pattern{"POST", {"database", "*"}, 2, Endpoint::db_set},
    Pattern{"GET", {"channels", "*", "alias-numbers"}, 3, Endpoint::aliases_list},
    Pattern{"POST", {"channels", "*", "alias-numbers", "tag"}, 4, Endpoint::tag},
    Pattern{"DELETE", {"channels", "*", "alias-numbers", "*", "tag"}, 5, Endpoint::untag},
    Pattern{"POST", {"channels", "*", "alias-numbers", "*", "calls"}, 5, Endpoint::call},
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the UTF-8 character starting at s[i], or 0 if none starts there.
std::size_t utf8_char_length(std::string_view s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 1;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3;
    cp = c & 0x07;
  } else return 0;
  if (i + n >= s.size()) return 0;
  for (std::size_t k = 1; k <= n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) ||
      cp > 0x10FFFF)
    return 0;
  return n + 1;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_char_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `s` with every byte that is not part of a UTF-8 character written as the
// text \xHH. Boost.JSON copies a string's bytes as they are, and a body that
// is not UTF-8 is not JSON (RFC 8259 §8.1); messages quote what the peer sent.
std::string as_utf8_text(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (std::size_t n = utf8_char_length(s, i)) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      auto c = static_cast<unsigned char>(s[i++]);
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// Percent-decodes `in`; in form encoding '+' stands for a space. Nothing on
// bad escapes or when the result is not UTF-8.
std::optional<std::string> percent_decode(std::string_view in, bool form) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (form && c == '+') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  if (!valid_utf8(out)) return std::nullopt;
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() != b.size();
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

using Params = std::map<std::string, std::string, std::less<>>;

// Adds `name=value` to `params`; the same name twice with different values is an error.
std::optional<std::string> add_param(Params& params, std::string name, std::string value) {
  auto [it, inserted] = params.emplace(std::move(name), value);
  if (!inserted && it->second != value) return "parameter \"" + it->first + "\" is given twice with different values";
  return std::nullopt;
}

std::optional<std::string> parse_form(std::string_view text, Params& params) {
  while (!text.empty()) {
    auto amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!name || !value)
      return "malformed form encoding in \"" + std::string(pair.substr(0, 64)) + "\": bad percent-escape or not UTF-8";
    if (auto err = add_param(params, std::move(*name), std::move(*value))) return err;
  }
  return std::nullopt;
}

std::optional<std::string> parse_json_params(std::string_view body, Params& params) {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return "request body is not valid JSON (" + ec.message() + ")";
  if (!doc.is_object()) return "a JSON request body must be an object of parameters";
  for (const auto& [k, v] : doc.get_object()) {
    std::string value;
    if (v.is_string()) value = std::string(v.get_string());
    else if (v.is_int64()) value = std::to_string(v.get_int64());
    else if (v.is_uint64()) value = std::to_string(v.get_uint64());
    else return "parameter \"" + std::string(k) + "\" must be a string or an integer";
    if (auto err = add_param(params, std::string(k), std::move(value))) return err;
  }
  return std::nullopt;
}

// Parameters from the query string and the body (form-encoded or JSON).
// Returns an error status and message when they cannot be read.
std::optional<std::pair<unsigned, std::string>> read_params(const Request& req, std::string_view query,
                                                            Params& params) {
  if (auto err = parse_form(query, params)) return std::pair{400u, *err};
  if (req.body.empty()) return std::nullopt;
  std::string type = lower(trim(req.content_type.substr(0, req.content_type.find(';'))));
  if (type == "application/json" || (type.size() > 5 && type.ends_with("+json"))) {
    if (auto err = parse_json_params(req.body, params)) return std::pair{400u, *err};
  } else if (type.empty() || type == "application/x-www-form-urlencoded") {
    if (auto err = parse_form(req.body, params)) return std::pair{400u, *err};
  } else {
    return std::pair{415u, "unsupported Content-Type \"" + std::string(req.content_type) +
                               "\": send application/x-www-form-urlencoded or application/json"};
  }
  return std::nullopt;
}

json::value agent_json(const Agent& a) {
  return json::object{{"id", a.id}, {"name", a.name}, {"state", a.snoozed ? "snoozed" : "available"}};
}

json::value alias_json(const AliasView& a, const Clock& clock) {
  auto opt = [](const std::optional<std::string>& s) -> json::value {
    return s ? json::value(*s) : json::value(nullptr);
  };
  auto stamp = [&](const std::optional<Clock::time_point>& t) -> json::value {
    return t ? json::value(clock.rfc3339(*t)) : json::value(nullptr);
  };
  return json::object{{"id", a.id},
                      {"number", a.number},
                      {"tag", opt(a.tag)},
                      {"expires_at", stamp(a.expires_at)},
                      {"bound_caller", opt(a.bound_caller)},
                      {"last_used_at", stamp(a.last_used_at)}};
}

Response ok(const json::value& body) { return Response{200, "application/json", json::serialize(body), {}}; }

// `s` as a JSON string for a message, shortened to about 72 bytes. The cut
// falls between characters, never inside one.
std::string quoted(std::string_view s) {
  constexpr std::size_t kMax = 72;
  bool cut = s.size() > kMax;
  if (cut) {
    std::size_t end = kMax;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    s = s.substr(0, end);
  }
  std::string out = json::serialize(json::value(json::string(s)));
  if (cut) out.insert(out.size() - 1, "...");
  return out;
}

}  // namespace

struct Service::Route {
  Endpoint endpoint;
  std::string id;     // agent id, database key or channel id
  std::string alias;  // alias id (untag, call)
  std::string_view query;
};

Service::Service(ServiceConfig config, const Fixtures& fixtures, const Clock& clock)
    : config_(std::move(config)), state_(fixtures, clock, config_.minute, config_.faults) {}

Response Service::error(unsigned status, std::string_view raw_msg) const {
  const std::string msg = as_utf8_text(raw_msg);
  const auto& f = config_.faults;
  if (f.has(Fault::error_status_200) && status == 404) status = 200;
  if (f.has(Fault::text_errors)) return Response{status, "text/plain; charset=utf-8", std::string(msg) + "\n", {}};
  if (f.has(Fault::error_no_msg))
    return Response{status, "application/json", json::serialize(json::object{{"error", msg}}), {}};
  return Response{status, "application/json", json::serialize(json::object{{"msg", msg}}), {}};
}

Reply Service::handle(const Request& req) {
  std::string_view target = req.target;
  if (target.empty() || target.front() != '/')
    return {error(400, "request target must be an absolute path such as /api/v1/local-agents")};
  auto qmark = target.find('?');
  std::string_view path = target.substr(0, qmark);
  std::string_view query = qmark == std::string_view::npos ? "" : target.substr(qmark + 1);
  if (auto hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);

  std::vector<std::string> segments;
  for (std::string_view rest = path.substr(1);;) {
    auto slash = rest.find('/');
    auto seg = percent_decode(rest.substr(0, slash), false);
    if (!seg) return {error(400, "malformed path " + quoted(path) + ": bad percent-escape or not UTF-8")};
    segments.push_back(std::move(*seg));
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }

  const Pattern* match = nullptr;
  std::string allow;
  for (const auto& p : kRoutes) {
    if (p.size != segments.size()) continue;
    bool fits = true;
    for (std::size_t i = 0; i < p.size && fits; ++i)
      fits = p.parts[i] == "*" ? !segments[i].empty() : p.parts[i] == segments[i];
    if (!fits) continue;
    if (p.method == req.method) {
      match = &p;
      break;
    }
    if (!allow.empty()) allow += ", ";
    allow += p.method;
  }

  const bool database = match && (match->endpoint == Endpoint::db_get || match->endpoint == Endpoint::db_set);
  const auto& f = config_.faults;
  if (!authorized(req, query, database)) {
    if (match && match->endpoint == Endpoint::db_set && f.has(Fault::rejected_write_applies)) {
      Params params;
      if (!read_params(req, query, params))
        if (auto v = params.find("value"); v != params.end()) state_.db_set(segments[1], v->second);
    }
    const char* why = req.apikey_repeated   ? "more than one Apikey header was sent"
                      : !req.apikey         ? "missing Apikey header"
                      : req.apikey->empty() ? "empty Apikey header"
                                            : "wrong Apikey";
    return {error(401, std::string(why) + ": send the key from the service console in the Apikey header")};
  }
  if (!match) {
    if (!allow.empty()) {
      Response r = error(
          405, "method " + std::string(req.method) + " is not allowed on " + quoted(path) + "; allowed: " + allow);
      r.allow = allow;
      return {std::move(r)};
    }
    return {error(404, "no such route: " + std::string(req.method) + " " + quoted(path))};
  }
  Route route{match->endpoint, {}, {}, query};
  if (match->endpoint != Endpoint::agents_list) route.id = segments[segments[0] == "api" ? 3 : 1];
  if (match->endpoint == Endpoint::untag || match->endpoint == Endpoint::call) route.alias = segments[3];
  return dispatch(route, req);
}

bool Service::authorized(const Request& req, std::string_view query, bool database) const {
  const auto& f = config_.faults;
  if (database && f.has(Fault::auth_skip_database)) return true;
  if (req.apikey_repeated) return false;
  if (!req.apikey) return f.has(Fault::auth_missing_ok) || key_elsewhere(req, query);
  return f.has(Fault::auth_wrong_ok) || key_matches(*req.apikey);
}

bool Service::key_matches(std::string_view offered) const {
  const auto& f = config_.faults;
  const std::string_view key = config_.api_key;
  // The faults are the shortcuts a hand-written comparison takes.
  if (f.has(Fault::auth_key_prefix)) return constant_time_equal(offered.substr(0, 8), key.substr(0, 8));
  if (f.has(Fault::auth_key_case)) return constant_time_equal(lower(offered), lower(key));
  return constant_time_equal(offered, key);
}

// Without an Apikey header: the places a service that "helpfully" accepts the
// key elsewhere would look. Only the auth-key-* faults look at all.
bool Service::key_elsewhere(const Request& req, std::string_view query) const {
  const auto& f = config_.faults;
  if (f.has(Fault::auth_key_query)) {
    Params params;
    if (!parse_form(query, params))
      for (const auto& [name, value] : params)
        if (lower(name) == "apikey" && constant_time_equal(value, config_.api_key)) return true;
  }
  if (f.has(Fault::auth_key_bearer) && req.authorization) {
    std::string_view v = *req.authorization;
    if (lower(v.substr(0, 7)) == "bearer ") v.remove_prefix(7);
    if (constant_time_equal(trim(v), config_.api_key)) return true;
  }
  if (f.has(Fault::auth_key_cookie)) {
    for (std::string_view header : req.cookies) {
      while (!header.empty()) {
        auto semi = header.find(';');
        std::string pair = trim(header.substr(0, semi));
        header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
        if (pair.starts_with("Apikey=") && constant_time_equal(std::string_view(pair).substr(7), config_.api_key))
          return true;
      }
    }
  }
  return false;
}

Response Service::unknown_channel(const Route& route) const {
  return error(404, "no channel with id " + quoted(route.id));
}

Response Service::unknown_alias(const Route& route) const {
  return error(404, "channel " + quoted(route.id) + " has no alias with id " + quoted(route.alias));
}

Response Service::unknown_agent(const Route& route) const {
  return error(404, "no local agent with id " + quoted(route.id));
}

Reply Service::dispatch(const Route& route, const Request& req) {
  Params params;
  if (route.endpoint == Endpoint::db_set || route.endpoint == Endpoint::tag || route.endpoint == Endpoint::call) {
    if (auto err = read_params(req, route.query, params)) return {error(err->first, err->second)};
  }
  auto param = [&](std::string_view name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };

  switch (route.endpoint) {
    case Endpoint::agents_list: return {list_agents()};
    case Endpoint::agent_get: return {get_agent(route)};
    case Endpoint::agent_snooze: return {set_snoozed(route, true)};
    case Endpoint::agent_wake:
      if (config_.faults.has(Fault::crash_unknown_wake) && !state_.agent(route.id)) return Reply{.drop = true};
      return {set_snoozed(route, false)};
    case Endpoint::db_get: return {db_get(route)};
    case Endpoint::db_set: return {db_set(route, param("value"))};
    case Endpoint::aliases_list: return {list_aliases(route)};
    case Endpoint::tag: return tag(route, param("tag"), param("minutes"));
    case Endpoint::untag: return {untag(route)};
    case Endpoint::call: return call(route, param("caller"));
  }
  return {error(404, "no such route")};
}

Response Service::list_agents() const {
  json::array list;
  for (const auto& a : state_.agents()) list.push_back(agent_json(a));
  return ok(json::object{{"agents", std::move(list)}});
}

Response Service::get_agent(const Route& route) const {
  auto a = state_.agent(route.id);
  return a ? ok(agent_json(*a)) : unknown_agent(route);
}

Response Service::set_snoozed(const Route& route, bool snooze) {
  auto a = state_.set_snoozed(route.id, snooze);
  if (!a) return unknown_agent(route);
  if (snooze && config_.faults.has(Fault::snooze_shape)) return ok(json::object{{"ok", true}});
  json::value body = agent_json(*a);
  if (!snooze && config_.faults.has(Fault::wake_types)) {
    // Same field names and the same id, only a type differs from the GET.
    std::uint64_t number = 0;
    std::from_chars(a->id.data(), a->id.data() + a->id.size(), number);
    if (std::to_string(number) == a->id) body.as_object()["id"] = number;
    else body.as_object()["name"] = json::array{json::value(a->name)};
  }
  return ok(body);
}

Response Service::db_get(const Route& route) const {
  auto v = state_.db_get(route.id);
  if (!v) return error(404, "no value stored for key " + quoted(route.id));
  return ok(json::object{{"key", route.id}, {"value", *v}});
}

Response Service::db_set(const Route& route, const std::string* value) {
  if (!value) return error(400, "missing parameter \"value\" (send value=... form-encoded or as JSON)");
  if (state_.db_set(route.id, *value) == DbWriteStatus::full)
    return error(409, "the database is full: the reference service keeps at most 256 MiB of keys and values");
  return ok(json::object{{"key", route.id}, {"value", *value}});
}

Response Service::list_aliases(const Route& route) const {
  auto aliases = state_.aliases(route.id);
  if (!aliases) return unknown_channel(route);
  json::array list;
  for (const auto& a : *aliases) list.push_back(alias_json(a, state_.clock()));
  return ok(json::object{{"channel", route.id}, {"aliases", std::move(list)}});
}

Reply Service::tag(const Route& route, const std::string* name, const std::string* minutes_text) {
  const auto& f = config_.faults;
  if (!state_.has_channel(route.id)) return {unknown_channel(route)};
  if (!name) return {error(400, "missing parameter \"tag\" (required by the tag operation)")};
  if (name->empty()) return {error(400, "parameter \"tag\" must not be empty")};
  std::int64_t minutes = 5;
  if (const std::string* m = minutes_text) {
    auto [end, ec] = std::from_chars(m->data(), m->data() + m->size(), minutes);
    bool digits_only = !m->empty() && m->front() != '-' && m->front() != '+';
    if (ec != std::errc{} || end != m->data() + m->size() || !digits_only || minutes < 1 || minutes > kMaxTagMinutes)
      return {error(400, "parameter \"minutes\" must be an integer from 1 to 1440, got " + quoted(*m))};
  } else if (!f.has(Fault::tag_minutes_optional)) {
    return {error(400, "missing parameter \"minutes\" (required by the tag operation)")};
  }
  auto r = state_.tag(route.id, *name, minutes);
  if (r.status == TagStatus::unknown_channel) return {unknown_channel(route)};
  if (r.status == TagStatus::all_tagged)
    return {error(409,
                  "every alias of channel " + quoted(route.id) + " is tagged; delete a tag or wait for one to expire")};
  Reply reply{ok(alias_json(r.alias, state_.clock()))};
  if (f.has(Fault::slow_tag)) reply.wait = kSlowTagDelay;
  return reply;
}

Response Service::untag(const Route& route) {
  auto r = state_.untag(route.id, route.alias);
  switch (r.status) {
    case UntagStatus::unknown_channel: return unknown_channel(route);
    case UntagStatus::unknown_alias: return unknown_alias(route);
    case UntagStatus::not_tagged:
      return error(404, "alias " + quoted(route.alias) + " of channel " + quoted(route.id) + " has no tag to delete");
    case UntagStatus::untagged: break;
  }
  return ok(alias_json(r.alias, state_.clock()));
}

Reply Service::call(const Route& route, const std::string* caller) {
  if (!caller || caller->empty()) return {error(400, "missing or empty parameter \"caller\" (the calling number)")};
  const auto& f = config_.faults;
  if (!f.has(Fault::binding_racy) && !f.has(Fault::binding_racy_turn))
    return {call_answer(route, *caller, state_.call(route.id, route.alias, *caller))};
  // Check, yield, then bind: racing callers can all pass the check. The
  // timer makes the window wide; the bare turn leaves only what was queued.
  CallResult checked = state_.call_check(route.id, route.alias, *caller);
  if (checked.status != CallStatus::connected) return {call_answer(route, *caller, checked)};
  Reply reply;
  if (f.has(Fault::binding_racy)) reply.wait = kRacyBindYield;
  else reply.yield = true;
  reply.then = [this, route, caller = *caller] {
    return call_answer(route, caller, state_.call_apply(route.id, route.alias, caller));
  };
  return reply;
}

Response Service::call_answer(const Route& route, const std::string& caller, const CallResult& r) const {
  switch (r.status) {
    case CallStatus::unknown_channel: return unknown_channel(route);
    case CallStatus::unknown_alias: return unknown_alias(route);
    case CallStatus::locked:
      return error(403, "alias " + quoted(route.alias) + " is tagged and bound to another caller until " +
                            (r.alias.expires_at ? state_.clock().rfc3339(*r.alias.expires_at) : "its tag ends"));
    case CallStatus::connected: break;
  }
  return ok(json::object{{"alias", route.alias}, {"caller", caller}, {"connected", true}});
}

}  // namespace crh::reference
