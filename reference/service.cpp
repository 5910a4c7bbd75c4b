// Routing and authentication of the reference service, following DESIGN.md
// §3 (choices where the spec is silent) and §4 (the call hook): a request
// routed to its endpoint (endpoints.cpp) once its Apikey passes, and the
// error shape every answer shares.
#include "service.hpp"

#include <array>
#include <boost/json.hpp>
#include <vector>

#include "params.hpp"
#include "route.hpp"

namespace crh::reference {
namespace json = boost::json;

namespace {

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

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() != b.size();
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

}  // namespace

Service::Service(ServiceConfig config, const Fixtures& fixtures, const Clock& clock)
    : config_(std::move(config)), state_(fixtures, clock, config_.minute, config_.faults, {}, config_.mutants) {}

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
  if (config_.throttle_every > 0 && ++requests_ % config_.throttle_every == 0) {
    Response r = error(429, "too many requests: every " + std::to_string(config_.throttle_every) +
                                "th is refused (crh serve --throttle-every); send it again");
    r.retry_after = "0";
    return {r};
  }
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
    if (!seg) return {error(400, "malformed path " + in_quotes(path) + ": bad percent-escape or not UTF-8")};
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
  // auth-skip-untag, auth-skip-alias-list: one endpoint forgets the key.
  const auto& m = config_.mutants;
  const bool open = match && ((match->endpoint == Endpoint::untag && m.has(Mutant::auth_skip_untag)) ||
                              (match->endpoint == Endpoint::aliases_list && m.has(Mutant::auth_skip_alias_list)));
  if (!open && !authorized(req, query, database)) {
    if (match && match->endpoint == Endpoint::db_set && f.has(Fault::rejected_write_applies)) {
      Params params;
      if (!read_params(req, query, params))
        if (auto v = params.find("value"); v != params.end()) state_.db_set(segments[1], v->second);
    }
    const char* why = req.apikey_repeated   ? "more than one Apikey header was sent"
                      : !req.apikey         ? "missing Apikey header"
                      : req.apikey->empty() ? "empty Apikey header"
                                            : "wrong Apikey";
    if (m.has(Mutant::error_401_empty_body)) return {Response{401, "application/json", "", {}}};
    return {error(401, std::string(why) + ": send the key from the service console in the Apikey header")};
  }
  if (!match) {
    if (!allow.empty()) {
      Response r = error(
          405, "method " + std::string(req.method) + " is not allowed on " + in_quotes(path) + "; allowed: " + allow);
      r.allow = allow;
      return {std::move(r)};
    }
    return {error(404, "no such route: " + std::string(req.method) + " " + in_quotes(path))};
  }
  Route route{match->endpoint, {}, {}, query};
  if (match->endpoint != Endpoint::agents_list) route.id = segments[segments[0] == "api" ? 3 : 1];
  // db-key-undecoded: the key as it stands in the path ("/database/" is 10 bytes).
  if (database && config_.mutants.has(Mutant::db_key_undecoded)) route.id = std::string(path.substr(10));
  if (match->endpoint == Endpoint::untag || match->endpoint == Endpoint::call) route.alias = segments[3];
  return dispatch(route, req);
}

bool Service::authorized(const Request& req, std::string_view query, bool database) const {
  const auto& f = config_.faults;
  if (database && f.has(Fault::auth_skip_database)) return true;
  if (req.apikey_repeated) return false;
  if (!req.apikey) return f.has(Fault::auth_missing_ok) || key_elsewhere(req, query);
  if (req.apikey->empty() && config_.mutants.has(Mutant::auth_empty_key_ok)) return true;  // `if key and key != ...`
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

}  // namespace crh::reference
