// The recording client, the verdict helpers and the janitor's bookkeeping.
#include "contracts/context.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <thread>

#include "core/curl.hpp"
#include "core/http1.hpp"
#include "core/outside.hpp"
#include "oracle/answers.hpp"

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
void Janitor::tag_unsure(const std::string& name) {
  std::lock_guard lock(mutex_);
  ++unsure_tags_[name];
}
std::map<std::string, int> Janitor::unsure_tags() const {
  std::lock_guard lock(mutex_);
  return unsure_tags_;
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
void RunShared::record(const Dropped& d) {
  std::lock_guard lock(recorded_mutex_);
  dropped_.push_back(d);
}
std::vector<Dropped> RunShared::dropped() const {
  std::lock_guard lock(recorded_mutex_);
  return dropped_;
}
void RunShared::record_unjudged_write(ReplayStep write) {
  std::lock_guard lock(recorded_mutex_);
  unjudged_writes_.push_back(std::move(write));
}
std::vector<ReplayStep> RunShared::unjudged_writes() const {
  std::lock_guard lock(recorded_mutex_);
  return unjudged_writes_;
}

namespace {

// The connection closed (or was reset) before a complete answer came.
bool dropped(const core::Exchange& e) { return e.error == core::TransportError::reset; }

// A request the target has no excuse to drop: its target is a valid URI of
// sensible length (a framework may hang up on one that is not).
bool well_formed(const core::HttpRequest& r) { return !oracle::malformed_target(r.target); }

// HTTP's idempotent methods as the API uses them (GET; snooze and wake are
// PUTs): sent once more after a drop. A POST (tag, call, database write) or a
// DELETE is not: the first may have taken effect.
bool idempotent(const core::HttpRequest& r) { return r.method == "GET" || r.method == "HEAD" || r.method == "PUT"; }

}  // namespace

// ---- CheckContext

CheckContext::CheckContext(RunShared& run, core::HttpClient& client, CheckResult& result)
    : run_(run), client_(client), result_(result), started_(std::chrono::steady_clock::now()) {}

void CheckContext::sleep_until(std::chrono::steady_clock::time_point t) {
  using namespace std::chrono_literals;
  while (std::chrono::steady_clock::now() < t) {
    if (run_.stop && run_.stop->load()) skip("not finished: the run was interrupted (Ctrl-C) while this check waited");
    if (run_.stalled) skip("not finished: the target stopped answering while this check waited");
    std::this_thread::sleep_until(std::min(t, std::chrono::steady_clock::now() + 50ms));
  }
}

void CheckContext::note(std::string message) { result_.message = std::move(message); }
void CheckContext::cover(std::vector<std::string> rules) {
  if (!rules.empty()) result_.rules = std::move(rules);
}
void CheckContext::record_evidence(Evidence e) { result_.evidence.push_back(std::move(e)); }

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
  request = authenticated(std::move(request), key);
  if (run_.target_lost || run_.stalled || gave_up_) {
    core::Exchange e{std::move(request)};
    e.error = run_.target_lost ? core::TransportError::connect_failed : core::TransportError::timeout;
    e.error_detail = run_.target_lost ? "not sent: the target stopped accepting connections earlier in the run"
                     : run_.stalled   ? "not sent: the target stopped answering earlier in the run"
                                      : "not sent: an earlier request of this check got no answer within --timeout";
    record(e);
    return e;
  }
  auto e = client_.send(request);
  if (dropped(e) && well_formed(request) && idempotent(request)) {
    record_attempt(e, false);  // the first attempt stays evidence; only a second drop counts
    e = client_.send(std::move(request));
    if (dropped(e)) e.error_detail += "; the same when sent a second time";
  }
  for (int again = 0; not_now(e) && wait_out_not_now(again, e.response->header("Retry-After")); ++again) {
    record_attempt(e, false);  // each "not now" stays evidence
    core::HttpRequest same = e.request;
    e = client_.send(std::move(same));
  }
  if (e.error == core::TransportError::connect_failed) run_.target_lost = true;
  // One request held past --timeout is enough for a check: its later
  // requests (cleanup included: the restore redoes it) would each wait as
  // long on a target that stopped answering.
  if (e.error == core::TransportError::timeout && !(run_.stop && run_.stop->load())) gave_up_ = true;
  note_tag_effect(e);
  record(e);
  return e;
}

bool CheckContext::not_now(const core::Exchange& e) const {
  return e.answered() && core::throttled(e.response->status, run_.statuses);
}

// A "not now" took no effect (core::throttled), so the same request may go
// again once the wait the target asked for has passed (core::not_now_wait),
// up to core::kNotNowRetries times.
bool CheckContext::wait_out_not_now(int again, std::string_view retry_after) {
  return core::wait_out_not_now(again, core::kNotNowRetries, retry_after, run_.stop);
}

void CheckContext::note_tag_effect(const core::Exchange& e) {
  const auto op = core::api::recognize(run_.target.dialect.call_hook, e.request.method, e.request.target);
  if (!op || op->op != core::api::Operation::tag) return;
  if (e.answered() && e.response->status != 200 && e.response->status < 500) return;  // refused: no effect
  if (e.answered() && e.response->status == 200) {
    std::string why;
    if (auto body = oracle::parse_json(e.response->body, why))
      if (core::api::tagged_alias_id(fields(), *body)) return;  // the check knows its alias
  }
  run_.janitor.tag_unsure(core::api::request_parameter(e.request, "tag").value_or("(no tag name)"));
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

calls::CallDriver& CheckContext::calls() {
  if (!calls_) calls_ = calls::make_call_driver(run_.target, run_.statuses, run_.client);
  return *calls_;
}

core::Exchange CheckContext::call(const std::string& alias, const std::string& caller, KeyMode key) {
  return send(call_request(alias, caller), key);
}

std::unique_ptr<core::HttpClient> CheckContext::new_client() const {
  return std::make_unique<core::HttpClient>(run_.target.base, run_.client);
}

void CheckContext::record(const core::Exchange& e) { record_attempt(e, true); }

void CheckContext::record_attempt(const core::Exchange& e, bool final) {
  ReplayStep replay{.request = e.request,
                .at = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                             started_ - e.elapsed)};
  if (e.answered()) {
    replay.status = e.response->status;
    replay.content_type = e.response->header("Content-Type");
    replay.body = e.response->body;
  }
  result_.evidence.push_back(
      {core::to_curl(e.request, run_.target.base, run_.target.api_key), describe_answer(e), e.elapsed, std::move(replay)});
  result_.timed_out = e.error == core::TransportError::timeout;
  if (final && dropped(e) && well_formed(e.request))
    run_.record(Dropped{result_.id, result_.evidence.back().curl, result_.evidence.back().answer,
                        result_.evidence.back().replay});
  if (!e.answered()) return;
  run_.answered_any = true;
  const auto& r = *e.response;
  const auto content_type = r.header("Content-Type");
  const bool keyed = std::any_of(e.request.headers.begin(), e.request.headers.end(),
                                 [](const core::Header& h) { return core::http1::iequals(h.name, "Apikey"); });
  run_.record({result_.id, result_.evidence.back().curl, r.status, content_type, r.body, e.request.target, keyed,
               e.request.method == "HEAD", result_.evidence.back().replay});
}

oracle::AnswerJudgement judge(const Recorded& r) {
  return oracle::judge_answer({.request_target = r.target,
                               .keyed = r.keyed,
                               .head = r.head,
                               .status = r.status,
                               .content_type = r.content_type,
                               .body = r.body});
}

void CheckContext::cite(const Recorded& r) {
  auto replay = r.replay;
  if (replay) replay->cited = true;
  result_.evidence.push_back(
      {r.curl,
       "HTTP " + std::to_string(r.status) + (r.content_type.empty() ? " (no Content-Type)" : " " + r.content_type) +
           ", " + std::to_string(r.body.size()) + " bytes" +
           (r.body.empty() ? "" : ": " + oracle::excerpt(r.body, 200).substr(5)) + " (made by " + r.check + ")",
       {},
       std::move(replay)});
}

void CheckContext::cite(const Dropped& d) {
  auto replay = d.replay;
  if (replay) replay->cited = true;
  result_.evidence.push_back({d.curl, d.answer + " (made by " + d.check + ")", {}, std::move(replay)});
}

void CheckContext::require(bool ok, std::string_view rule, const std::string& text) {
  if (!ok) fail(rule, text);
}

void CheckContext::prefer(bool ok, std::string_view rule, const std::string& text) {
  if (!ok) result_.findings.push_back({Severity::should, rule, text});
}

void CheckContext::add(Finding f) {
  if (f.severity == Severity::must) fail(f.rule, f.text);
  result_.findings.push_back(std::move(f));
}

void CheckContext::fail(std::string_view rule, const std::string& text) {
  if (!result_.evidence.empty() && !result_.failing_step) result_.failing_step = result_.evidence.size() - 1;
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
  if (auto problem = drop_problem(e)) fail("X0", what + ": " + *problem);
  if (not_now(e))
    indeterminate(what + ": HTTP " + std::to_string(e.response->status) +
                  " (\"not now\": a rate limit, which spec 8 names without showing), also when sent again after "
                  "its Retry-After; the outcome is unknown");
  if (!e.answered())
    indeterminate(what + ": no answer (" + std::string(core::to_string(e.error)) + ": " + e.error_detail +
                  ")" + (dropped(e) && !run_.answered_any ? "; no request of this run has been answered yet, so the network to the target may be down" : "") + "; the outcome is unknown");
  return *e.response;
}

std::optional<std::string> CheckContext::drop_problem(const core::Exchange& e) const {
  if (!dropped(e) || !well_formed(e.request) || !run_.answered_any) return std::nullopt;
  return "expected an answer to this well-formed request, but the connection was closed without a complete one (" +
         e.error_detail + ")" +
         (idempotent(e.request) ? ""
                                : "; not sent again: a " + e.request.method + " may have taken effect, so what it did is unknown") +
         ": the target dropped it (a crash?)";
}

json::value CheckContext::ok_json(const core::Exchange& e, std::string_view rule, const std::string& what) {
  const auto& r = response(e, what);
  if (r.status != 200) fail(rule, what + ": expected HTTP 200, got " + describe_answer(e));
  std::string why;
  auto body = oracle::parse_json(r.body, why);
  if (!body) fail("C1", what + ": expected a JSON body (responses are JSON), got HTTP 200 where " + why);
  return std::move(*body);
}

void CheckContext::refused(const core::Exchange& e, std::string_view rule, const std::string& what,
                           const std::vector<unsigned>& statuses) {
  const auto& r = response(e, what);
  if (r.status >= 200 && r.status < 300)
    fail(rule,
         what + ": expected an error answer (" + statuses_text(statuses) + " with a msg), got " + describe_answer(e));
  for (auto& f : oracle::error_shape_findings(r.status, r.header("Content-Type"), r.body))
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
         std::to_string(r.body.size()) + " bytes" +
         (r.body.empty() ? "" : ": " + oracle::excerpt(r.body, 200).substr(5));
}

std::string statuses_text(const std::vector<unsigned>& statuses) {
  std::string out;
  for (std::size_t i = 0; i < statuses.size(); ++i)
    out += (i == 0 ? "" : i + 1 == statuses.size() ? " or " : ", ") + std::to_string(statuses[i]);
  return out;
}

}  // namespace crh::contracts
