// What a check body works with: the target, the expected statuses, a recording client
// (every exchange becomes evidence), verdict helpers that end the check, and
// the janitor that puts the target back as it was found.
#pragma once

#include <atomic>
#include <functional>
#include <boost/json/value.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "contracts/check.hpp"
#include "core/profile.hpp"
#include "core/api.hpp"
#include "calls/call_drivers.hpp"
#include "core/http_client.hpp"
#include "core/target.hpp"
#include "oracle/answers.hpp"
#include "oracle/shapes.hpp"

namespace crh::contracts {

// The oracle's readers of answers, which the executor and the auth suite name
// unqualified (contracts/runner.cpp, contracts/suites/auth*.cpp).
using oracle::excerpt;
using oracle::parse_json;

// How a request authenticates: the auth suite sends every kind of bad key.
enum class KeyMode {
  proper,        // Apikey: <key>
  missing,       // no Apikey header
  empty,         // Apikey: (empty)
  wrong,         // Apikey: <a random key of the same length>
  other_header,  // the key in Authorization and X-Api-Key, no Apikey header
  lower_case,    // apikey: <key> (header names are case-insensitive)
};

// Thrown by the verdict helpers to end a check body early.
struct CheckEnded {
  Outcome outcome;
  std::string message;
};

// What the run has changed on the target and must undo (DESIGN.md §5).
// Thread-safe: slow checks note their changes from the background.
class Janitor {
 public:
  void tagged(const std::string& alias);
  void untagged(const std::string& alias);
  std::vector<std::string> tags() const;
  // A tag request whose effect is unknown (no answer, a 5xx, or a 200 without
  // a readable alias id): the alias it may have tagged can only be found in
  // the alias list, by the tag's name. Counted per name.
  void tag_unsure(const std::string& name);
  std::map<std::string, int> unsure_tags() const;

  // An agent's state as the run found it (see api::agent_state); the first
  // note counts; forgotten once restored.
  void agent_changed(const std::string& id, const std::string& start_state);
  void agent_restored(const std::string& id);
  std::map<std::string, std::string> agents() const;

  // A database probe key and its value before the run (none: it had none).
  // Only the first note of a key counts. Returns true when it was new.
  bool database_key(const std::string& key, std::optional<std::string> old_value);
  bool knows_database_key(const std::string& key) const;
  std::map<std::string, std::optional<std::string>> database_keys() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string> tags_;
  std::map<std::string, int> unsure_tags_;
  std::map<std::string, std::string> agents_;
  std::map<std::string, std::optional<std::string>> keys_;
};

// An answered exchange as the run-wide checks see it.
struct Recorded {
  std::string check;
  std::string curl;
  unsigned status;
  std::string content_type;
  std::string body;
  std::string target;     // the request's target, for a refusal of a malformed one (shapes.hpp)
  bool keyed = true;      // the request carried an Apikey header
  bool head = false;      // a HEAD request
  std::optional<ReplayStep> replay;
};

// The rules on every answer (oracle/answers.hpp) applied to one answer of the run.
oracle::AnswerJudgement judge(const Recorded& r);

// A well-formed request whose connection closed without an answer (X0), as
// the run-wide check cites it.
struct Dropped {
  std::string check;
  std::string curl;
  std::string answer;  // describe_answer: why there was none
  std::optional<ReplayStep> replay;
};

// What every check of one run shares.
struct RunShared {
  core::Target target;
  core::ExpectedStatuses statuses;  // what the profile expects where the spec is silent
  core::ClientConfig client;
  std::string wrong_key;    // random, same length as the key
  std::string caller_base;  // "+1999NNNN": callers of this run are caller_base + two digits
  Janitor janitor;
  std::mutex channel_mutex;  // held by a check that needs the channel to itself
  // Slow checks that will soon need the channel: quick checks do not start
  // meanwhile, so the one running has time to end before the lock is wanted.
  std::atomic<int> channel_wanted{0};
  std::atomic<bool> target_lost{false};
  // Three checks in a row ran out of --timeout: the target stopped answering,
  // and the run stops sending (checks not started are not run).
  std::atomic<bool> stalled{false};
  const std::atomic<bool>* stop = nullptr;  // set by Ctrl-C: waits end early
  ExploreSettings explore;
  // Puts back what the run changed so far (the janitor's list), mid-run:
  // exploration replays from the state it leaves. Set by the executor.
  std::function<void()> restore;

  // Some exchange of the run (the preflight's included) was answered: the
  // network to the target works, so a dropped request is the target's doing.
  std::atomic<bool> answered_any{false};
  // A check's call got 404, 405 or 501 from the call hook: the target has
  // none, so the exploration places no calls (binding stays untested, not failed).
  std::atomic<bool> no_call_hook{false};

  void record(const Recorded& r);
  std::vector<Recorded> recorded() const;
  void record(const Dropped& d);
  std::vector<Dropped> dropped() const;
  // The writes no run-wide check judges (the exploration's, which its model
  // judges), request and status: the state they left is what a reproducer
  // of the exploration sets up again.
  void record_unjudged_write(ReplayStep write);
  std::vector<ReplayStep> unjudged_writes() const;

 private:
  mutable std::mutex recorded_mutex_;
  std::vector<Recorded> recorded_;
  std::vector<Dropped> dropped_;
  std::vector<ReplayStep> unjudged_writes_;
};

class CheckContext {
 public:
  CheckContext(RunShared& run, core::HttpClient& client, CheckResult& result);

  const core::Target& target() const { return run_.target; }
  const core::ExpectedStatuses& statuses() const { return run_.statuses; }
  const core::FieldNames& fields() const { return run_.target.dialect.fields; }
  RunShared& run() { return run_; }
  Janitor& janitor() { return run_.janitor; }

  // The n-th distinct calling number of this run ("+1999" digits).
  std::string caller(int n) const;

  // A request with `params` placed as the target's dialect says.
  core::HttpRequest request(std::string method, std::string path, const std::vector<core::Param>& params = {}) const;

  // True once a request of this check ran out of --timeout; send() then
  // sends nothing more (each request would wait as long).
  bool gave_up() const { return gave_up_; }

  // Whether the answer is a "not now" (core::throttled: a 429 the profile
  // gives no other meaning); it took no effect.
  bool not_now(const core::Exchange& e) const;
  // Before sending a "not now" request again for the again+1-th time: waits
  // what `retry_after` (a Retry-After header) asks, capped, or a doubling
  // pause. False (no wait) past the 3rd time or on Ctrl-C.
  bool wait_out_not_now(int again, std::string_view retry_after);

  // Sends and records. Never throws on transport errors: see response(). A
  // well-formed idempotent request (GET, PUT, HEAD) whose connection closed
  // without an answer is sent once more, so a one-off blip is not a crash;
  // both exchanges are evidence. A "not now" is sent again as
  // wait_out_not_now says; every answer is evidence.
  core::Exchange send(core::HttpRequest request, KeyMode key = KeyMode::proper);
  core::Exchange send(std::string method, std::string path, const std::vector<core::Param>& params = {},
                      KeyMode key = KeyMode::proper);
  // An operation of the API model (core/api.hpp) on this run's target.
  core::HttpRequest request(core::api::Operation op, const core::api::Arguments& args) const;
  core::Exchange send(core::api::Operation op, const core::api::Arguments& args = {}, KeyMode key = KeyMode::proper);
  // The call driver (calls/call_driver.hpp): how binding checks place calls.
  // The exchanges it makes are not recorded; the caller records the results.
  calls::CallDriver& calls();
  // The call hook as an HTTP request (the auth suite sends it with bad keys).
  core::Exchange call(const std::string& alias, const std::string& caller, KeyMode key = KeyMode::proper);
  core::HttpRequest call_request(const std::string& alias, const std::string& caller) const;

  // A fresh client to the target (for concurrent callers) and a way to add
  // what it exchanged to this check's evidence.
  std::unique_ptr<core::HttpClient> new_client() const;
  core::HttpRequest authenticated(core::HttpRequest request, KeyMode key = KeyMode::proper) const;
  void record(const core::Exchange& e);
  // Evidence from elsewhere in the run (the run-wide checks cite exchanges).
  void cite(const Recorded& r);
  void cite(const Dropped& d);

  // Waits until `t`, ending the check as skipped if the run is interrupted
  // meanwhile (a slow check must not hold Ctrl-C back for a tag lifetime).
  void sleep_until(std::chrono::steady_clock::time_point t);

  // Verdicts. A MUST finding ends the check; a SHOULD finding is noted and
  // the check goes on.
  void require(bool ok, std::string_view rule, const std::string& text);
  void prefer(bool ok, std::string_view rule, const std::string& text);
  // A finding made elsewhere (shapes.hpp): a MUST ends the check, a SHOULD
  // (judged apart or not) is noted.
  void add(Finding f);
  // What a passing check says (exploration: how much it explored).
  void note(std::string message);
  // The rules the check touched, replacing the ones it declares (exploration).
  void cover(std::vector<std::string> rules);
  // Evidence that is not an exchange of this context (a reproducer's lines).
  void record_evidence(Evidence e);
  // The failure this check looks for shows only with callers released at one
  // instant: its reproducer says so and points at the rerun line.
  void needs_one_instant() { result_.needs_one_instant = true; }
  // The evidence so far ends with the exchange the coming failure rests on
  // (else fail() takes the last one when it is called).
  void fails_at_last_evidence() {
    if (!result_.evidence.empty()) result_.failing_step = result_.evidence.size() - 1;
  }
  [[noreturn]] void fail(std::string_view rule, const std::string& text);
  [[noreturn]] void skip(const std::string& why);
  [[noreturn]] void indeterminate(const std::string& why);

  // What is wrong when `e` is a well-formed request the target dropped
  // without an answer while the network to it works (X0); else nothing.
  std::optional<std::string> drop_problem(const core::Exchange& e) const;

  // The answer; without one the check ends: failed after a malformed or
  // oversized answer, and after a well-formed request's connection was
  // closed without an answer (X0; send() retried an idempotent one once);
  // indeterminate when our deadline passed or the connection could not be made.
  const core::HttpResponse& response(const core::Exchange& e, const std::string& what);
  // MUST: HTTP 200 with a JSON body (C2, C1 and `rule`). Returns the body.
  boost::json::value ok_json(const core::Exchange& e, std::string_view rule, const std::string& what);
  // MUST: refused (not 200, not 5xx) with the error shape (X1, X2, `rule`);
  // SHOULD: one of `statuses`.
  void refused(const core::Exchange& e, std::string_view rule, const std::string& what,
               const std::vector<unsigned>& statuses);

 private:
  RunShared& run_;
  core::HttpClient& client_;
  CheckResult& result_;
  std::unique_ptr<calls::CallDriver> calls_;
  bool gave_up_ = false;  // a request of this check ran out of --timeout: send() sends no more
  std::chrono::steady_clock::time_point started_;


  // A tag request whose effect is unknown goes to the janitor by its tag name.
  void note_tag_effect(const core::Exchange& e);
  // Evidence, and the run's record; a first attempt that send() retries is
  // not `final`: only a drop that stayed a drop counts against the target.
  void record_attempt(const core::Exchange& e, bool final);
};

// "HTTP 404 application/json, 31 bytes: {...}" or "no answer: timeout (...)".
std::string describe_answer(const core::Exchange& e);
std::string statuses_text(const std::vector<unsigned>& statuses);  // "401 or 403"

}  // namespace crh::contracts
