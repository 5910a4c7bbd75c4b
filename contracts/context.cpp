// The recording client, the verdict helpers and the janitor's bookkeeping.
#include "contracts/context.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <thread>

#include "core/curl.hpp"
#include "core/http_call_driver.hpp"
#include "core/outside.hpp"

namespace crh::contracts {
namespace json = boost::json;

// ---- Janitor

void Janitor::tagged(const std::string& alias) {
  std::lock_guard lock(mutex_);
  tags_.insert(alias);
}
void Janitor::untagged(const std::string& alias) {
  std::lock_guard lock(mutex_);
  tags_.erase(alias);
}
std::vector<std::string> Janitor::tags() const {
  std::lock_guard lock(mutex_);
  return {tags_.begin(), tags_.end()};
}
void Janitor::agent_changed(const std::string& id, const std::string& start_state) {
  std::lock_guard lock(mutex_);
  agents_.emplace(id, start_state);  // the first note is the state the run found
}
void Janitor::agent_restored(const std::string& id) {
  std::lock_guard lock(mutex_);
  agents_.erase(id);
}
std::map<std::string, std::string> Janitor::agents() const {
  std::lock_guard lock(mutex_);
  return agents_;
}
bool Janitor::database_key(const std::string& key, std::optional<std::string> old_value) {
  std::lock_guard lock(mutex_);
  return keys_.emplace(key, std::move(old_value)).second;
}
bool Janitor::knows_database_key(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return keys_.contains(key);
}
std::map<std::string, std::optional<std::string>> Janitor::database_keys() const {
  std::lock_guard lock(mutex_);
  return keys_;
}

// ---- RunShared

void RunShared::record(const Recorded& r) {
  std::lock_guard lock(recorded_mutex_);
  recorded_.push_back(r);
}
std::vector<Recorded> RunShared::recorded() const {
  std::lock_guard lock(recorded_mutex_);
  return recorded_;
}

// ---- CheckContext

CheckContext::CheckContext(RunShared& run, core::HttpClient& client, CheckResult& result)
    : run_(run), client_(client), result_(result) {}

void CheckContext::sleep_until(std::chrono::steady_clock::time_point t) {
  using namespace std::chrono_literals;
  while (std::chrono::steady_clock::now() < t) {
    if (run_.stop && run_.stop->load()) skip("not finished: the run was interrupted (Ctrl-C) while this check waited");
    std::this_thread::sleep_until(std::min(t, std::chrono::steady_clock::now() + 50ms));
  }
}

std::string CheckContext::caller(int n) const {
  return run_.caller_base + (n < 10 ? "0" : "") + std::to_string(n % 100);
}

core::HttpRequest CheckContext::authenticated(core::HttpRequest r, KeyMode key) const {
  const std::string& k = run_.target.api_key;
  switch (key) {
    case KeyMode::proper: r.headers.push_back({"Apikey", k}); break;
    case KeyMode::missing: break;
    case KeyMode::empty: r.headers.push_back({"Apikey", ""}); break;
    case KeyMode::wrong: r.headers.push_back({"Apikey", run_.wrong_key}); break;
    case KeyMode::other_header:
      r.headers.push_back({"Authorization", "Apikey " + k});
      r.headers.push_back({"X-Api-Key", k});
      break;
    case KeyMode::lower_case: r.headers.push_back({"apikey", k}); break;
  }
  return r;
}

core::Exchange CheckContext::send(core::HttpRequest request, KeyMode key) {
  if (run_.target_lost) {
    core::Exchange e{authenticated(std::move(request), key)};
    e.error = core::TransportError::connect_failed;
    e.error_detail = "not sent: the target stopped accepting connections earlier in the run";
    record(e);
    return e;
  }
  auto e = client_.send(authenticated(std::move(request), key));
  if (e.error == core::TransportError::connect_failed) run_.target_lost = true;
  record(e);
  return e;
}

core::HttpRequest CheckContext::request(std::string method, std::string path,
                                        const std::vector<core::Param>& params) const {
  return core::build_request(std::move(method), std::move(path), params, run_.target.dialect.encoding);
}

core::Exchange CheckContext::send(std::string method, std::string path, const std::vector<core::Param>& params,
                                  KeyMode key) {
  return send(request(std::move(method), std::move(path), params), key);
}

core::HttpRequest CheckContext::request(core::api::Operation op, const core::api::Arguments& args) const {
  return core::api::request(run_.target, op, args);
}

core::Exchange CheckContext::send(core::api::Operation op, const core::api::Arguments& args, KeyMode key) {
  return send(request(op, args), key);
}

core::HttpRequest CheckContext::call_request(const std::string& alias, const std::string& caller) const {
  return request(core::api::Operation::call, {.id = alias, .caller = caller});
}

core::CallDriver& CheckContext::calls() {
  if (!calls_) calls_ = std::make_unique<core::HttpCallDriver>(run_.target, run_.client);
  return *calls_;
}

core::Exchange CheckContext::call(const std::string& alias, const std::string& caller, KeyMode key) {
  return send(call_request(alias, caller), key);
}

std::unique_ptr<core::HttpClient> CheckContext::new_client() const {
  return std::make_unique<core::HttpClient>(run_.target.base, run_.client);
}

void CheckContext::record(const core::Exchange& e) {
  result_.evidence.push_back(
      {core::to_curl(e.request, run_.target.base, run_.target.api_key), describe_answer(e), e.elapsed});
  if (!e.answered()) return;
  const auto& r = *e.response;
  const auto content_type = r.header("Content-Type");
  run_.record({result_.id, result_.evidence.back().curl, r.status, content_type, r.body,
               protocol_level_refusal(e.request.target, r.status, content_type, r.body)});
}

void CheckContext::cite(const Recorded& r) {
  result_.evidence.push_back(
      {r.curl,
       "HTTP " + std::to_string(r.status) + (r.content_type.empty() ? " (no Content-Type)" : " " + r.content_type) +
           ", " + std::to_string(r.body.size()) + " bytes" +
           (r.body.empty() ? "" : ": " + excerpt(r.body, 200).substr(5)) + " (made by " + r.check + ")",
       {}});
}

void CheckContext::require(bool ok, std::string_view rule, const std::string& text) {
  if (!ok) fail(rule, text);
}

void CheckContext::prefer(bool ok, std::string_view rule, const std::string& text) {
  if (!ok) result_.findings.push_back({Severity::should, rule, text});
}

void CheckContext::fail(std::string_view rule, const std::string& text) {
  result_.findings.push_back({Severity::must, rule, text});
  throw CheckEnded{Outcome::fail, text};
}

void CheckContext::skip(const std::string& why) { throw CheckEnded{Outcome::skip, why}; }

void CheckContext::indeterminate(const std::string& why) { throw CheckEnded{Outcome::indeterminate, why}; }

const core::HttpResponse& CheckContext::response(const core::Exchange& e, const std::string& what) {
  // An answer that is not HTTP, or beyond every cap, is a wrong answer; only
  // silence (timeout, reset, refused connection) leaves the outcome unknown.
  if (e.error == core::TransportError::malformed || e.error == core::TransportError::too_large)
    fail("C2", what + ": expected an HTTP/1.1 answer, got " + describe_answer(e));
  if (!e.answered())
    indeterminate(what + ": no answer (" + std::string(core::to_string(e.error)) + ": " + e.error_detail +
                  "); the outcome is unknown");
  return *e.response;
}

json::value CheckContext::ok_json(const core::Exchange& e, std::string_view rule, const std::string& what) {
  const auto& r = response(e, what);
  if (r.status != 200) fail(rule, what + ": expected HTTP 200, got " + describe_answer(e));
  std::string why;
  auto body = parse_json(r.body, why);
  if (!body) fail("C1", what + ": expected a JSON body (responses are JSON), got HTTP 200 where " + why);
  return std::move(*body);
}

void CheckContext::refused(const core::Exchange& e, std::string_view rule, const std::string& what,
                           const std::vector<unsigned>& statuses) {
  const auto& r = response(e, what);
  if (r.status >= 200 && r.status < 300)
    fail(rule,
         what + ": expected an error answer (" + statuses_text(statuses) + " with a msg), got " + describe_answer(e));
  for (auto& f : error_shape_findings(r.status, r.header("Content-Type"), r.body))
    if (f.severity == Severity::must) fail(f.rule, what + ": " + f.text);
  prefer(std::find(statuses.begin(), statuses.end(), r.status) != statuses.end(), rule,
         what + ": expected HTTP " + statuses_text(statuses) + ", got HTTP " + std::to_string(r.status) +
             " (any error status with a msg satisfies the spec; the profile names " + statuses_text(statuses) + ")");
}

std::string describe_answer(const core::Exchange& e) {
  if (!e.answered()) return "no answer: " + std::string(core::to_string(e.error)) + " (" + e.error_detail + ")";
  const auto& r = *e.response;
  std::string ct = core::from_target(r.header("Content-Type"), 120);
  return "HTTP " + std::to_string(r.status) + (ct.empty() ? " (no Content-Type)" : " " + ct) + ", " +
         std::to_string(r.body.size()) + " bytes" + (r.body.empty() ? "" : ": " + excerpt(r.body, 200).substr(5));
}

std::string statuses_text(const std::vector<unsigned>& statuses) {
  std::string out;
  for (std::size_t i = 0; i < statuses.size(); ++i)
    out += (i == 0 ? "" : i + 1 == statuses.size() ? " or " : ", ") + std::to_string(statuses[i]);
  return out;
}

}  // namespace crh::contracts
