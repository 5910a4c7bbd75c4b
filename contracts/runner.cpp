// The executor, restoration of the target, and the result document.
#include "contracts/runner.hpp"


#include <algorithm>
#include <boost/json.hpp>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "contracts/api.hpp"
#include "contracts/context.hpp"
#include "contracts/rules.hpp"
#include "core/curl.hpp"
#include "core/output_file.hpp"
#include "core/result_envelope.hpp"

namespace crh::contracts {
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

std::vector<const Check*> select_checks(const std::vector<std::string>& suites, const std::vector<std::string>& checks) {
  for (const auto& s : suites)
    if (std::find(all_suites().begin(), all_suites().end(), s) == all_suites().end()) {
      std::string names;
      for (const auto& n : all_suites()) names += (names.empty() ? "" : ", ") + n;
      throw std::invalid_argument("unknown suite \"" + s + "\"; the suites are " + names);
    }
  auto matches = [](const std::string& pattern, const std::string& id) {
    if (pattern.ends_with('*')) return id.starts_with(pattern.substr(0, pattern.size() - 1));
    return id == pattern;
  };
  std::vector<const Check*> out;
  std::set<std::string> used;
  for (const auto& c : all_checks()) {
    if (!suites.empty() && std::find(suites.begin(), suites.end(), c.suite) == suites.end()) continue;
    if (!checks.empty()) {
      bool any = false;
      for (const auto& p : checks)
        if (matches(p, c.id)) {
          used.insert(p);
          any = true;
        }
      if (!any) continue;
    }
    out.push_back(&c);
  }
  for (const auto& p : checks)
    if (!used.contains(p))
      throw std::invalid_argument("no check matches \"" + p + "\" in the selected suites; crh contract --list-checks lists them");
  return out;
}

namespace {

std::string random_text(std::size_t n, std::string_view alphabet) {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(alphabet[pick(rng)]);
  return out;
}

class Executor {
 public:
  Executor(const RunOptions& o, RunReport& report) : options_(o), report_(report) {
    shared_.target = o.target;
    shared_.profile = o.profile;
    shared_.client = o.client;
    do {
      shared_.wrong_key = random_text(std::max<std::size_t>(o.target.api_key.size(), 8),
                                      "abcdefghijklmnopqrstuvwxyz0123456789");
    } while (shared_.wrong_key == o.target.api_key);
    shared_.caller_base = "+1999" + random_text(4, "0123456789");
  }

  void run(const std::vector<const Check*>& selected) {
    report_.results.resize(selected.size());
    if (!preflight()) return;
    std::vector<std::size_t> first, slow, rest, last;
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const Check& c = *selected[i];
      if (c.run_wide) last.push_back(i);
      else if (c.slow && options_.slow) slow.push_back(i);
      else if (c.owns_channel) first.push_back(i);
      else rest.push_back(i);
    }
    core::HttpClient client(shared_.target.base, shared_.client);
    for (auto i : first) run_quick(*selected[i], client, i);
    std::thread background([&] {
      core::HttpClient own(shared_.target.base, shared_.client);
      for (auto i : slow) run_one(*selected[i], own, i);
    });
    for (auto i : rest) run_quick(*selected[i], client, i);
    background.join();
    for (auto i : last) run_one(*selected[i], client, i);
    restore(client);
    if (shared_.target_lost && !report_.unreachable) {
      report_.unreachable = true;
      report_.unreachable_reason = "the target stopped accepting connections during the run";
    }
  }

 private:
  bool preflight() {
    core::ClientConfig quick = shared_.client;
    quick.timeout = std::min(quick.timeout, std::chrono::milliseconds(3000));
    core::HttpClient client(shared_.target.base, quick);
    auto e = client.send({"GET", api::agents_path(), {{"Apikey", shared_.target.api_key}}, {}});
    using core::TransportError;
    if (e.error == TransportError::resolve_failed || e.error == TransportError::connect_failed ||
        e.error == TransportError::timeout) {
      report_.unreachable = true;
      report_.unreachable_reason = "cannot reach " + shared_.target.base.to_string() + ": " +
                                   std::string(core::to_string(e.error)) + " (" + e.error_detail + ")";
      for (auto& r : report_.results) r.outcome = Outcome::skip;
      return false;
    }
    if (e.answered() && (e.response->status == 401 || e.response->status == 403))
      report_.notes.push_back("the target refused the configured key (GET " + api::agents_path() + " answered HTTP " +
                              std::to_string(e.response->status) +
                              "): is CRH_API_KEY (or --api-key-file) the key of this target?");
    return true;
  }

  void run_quick(const Check& c, core::HttpClient& client, std::size_t slot) {
    std::lock_guard channel(shared_.channel_mutex);  // a slow check may be waiting to look at the channel
    run_one(c, client, slot);
  }

  void run_one(const Check& c, core::HttpClient& client, std::size_t slot) {
    CheckResult& r = report_.results[slot];
    r.id = c.id;
    r.suite = c.suite;
    r.rules = c.rules;
    r.severity = c.severity;
    const auto start = Clock::now();
    std::string ended_message;
    Outcome ended = Outcome::pass;
    if (options_.stop && options_.stop->load()) {
      ended = Outcome::skip;
      ended_message = "not run: the run was interrupted (Ctrl-C)";
    } else if (c.slow && !options_.slow) {
      ended = Outcome::skip;
      ended_message = "runs only with --slow: it waits for a tag to expire (one minute, or --minute-ms)";
    } else if (c.needs_call_hook && !shared_.profile.call_hook.enabled) {
      ended = Outcome::skip;
      ended_message = "the profile says the target has no call hook (call_hook: null)";
    } else {
      CheckContext ctx(shared_, client, r);
      try {
        c.body(ctx);
      } catch (const CheckEnded& e) {
        ended = e.outcome;
        ended_message = e.message;
      } catch (const std::exception& e) {
        ended = Outcome::indeterminate;
        ended_message = std::string("the check could not finish: ") + e.what();
      }
    }
    r.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    finish(r, ended, ended_message);
    if (options_.on_result) {
      std::lock_guard lock(progress_mutex_);
      options_.on_result(r);
    }
  }

  void finish(CheckResult& r, Outcome ended, const std::string& message) {
    const bool must = std::any_of(r.findings.begin(), r.findings.end(),
                                  [](const Finding& f) { return f.severity == Severity::must; });
    if (ended == Outcome::skip || ended == Outcome::indeterminate) {
      r.outcome = ended;
      r.message = message;
    } else if (must) {
      r.outcome = Outcome::fail;
      r.message = message;
    } else if (!r.findings.empty()) {
      r.outcome = options_.strict ? Outcome::fail : Outcome::warn;
      r.message = r.findings.front().text;
    } else {
      r.outcome = Outcome::pass;
    }
    // Whatever the target echoed, the key must not reach any output.
    const std::string& key = shared_.target.api_key;
    r.message = core::redact(r.message, key);
    for (auto& f : r.findings) f.text = core::redact(f.text, key);
    for (auto& e : r.evidence) e.answer = core::redact(e.answer, key);
    constexpr std::size_t kMaxEvidence = 60;
    if (r.evidence.size() > kMaxEvidence) r.evidence.resize(kMaxEvidence);
  }

  // Puts back what the run changed (DESIGN.md §5); problems become notes.
  void restore(core::HttpClient& client) {
    CheckResult scratch;
    scratch.id = "restore";
    CheckContext ctx(shared_, client, scratch);
    auto& janitor = shared_.janitor;
    try {
      for (const auto& alias : janitor.tags()) api::untag_quietly(ctx, alias);
      // A tag the target made although it should have refused (a fault) is swept too.
      auto e = ctx.send("GET", api::aliases_path(shared_.target.channel));
      if (e.answered() && e.response->status == 200) {
        std::string why;
        if (auto body = parse_json(e.response->body, why))
          if (auto list = find_list(*body, shared_.profile.aliases_list_field, why))
            for (const auto& item : *list->items)
              if (api::tag_of(ctx, item).value_or("").starts_with(api::kProbePrefix))
                if (auto id = api::alias_id(ctx, item)) {
                  janitor.tagged(*id);
                  api::untag_quietly(ctx, *id);
                }
      }
      for (const auto& alias : janitor.tags())
        report_.notes.push_back("could not delete the tag this run put on alias " + alias + " of channel " +
                                shared_.target.channel);
      for (const auto& [id, state] : janitor.agents())
        if (!api::restore_agent(ctx, id, state))
          report_.notes.push_back("could not put agent " + id + " back to its state " + state);
      for (const auto& [key, old] : janitor.database_keys()) {
        auto w = ctx.send("POST", api::database_path(key), {{"value", old.value_or("")}});
        if (!w.answered() || w.response->status != 200)
          report_.notes.push_back("could not restore database key " + key);
      }
    } catch (const CheckEnded&) {
      report_.notes.push_back("restoring the target stopped early: it stopped answering");
    }
  }

  const RunOptions& options_;
  RunReport& report_;
  RunShared shared_;
  std::mutex progress_mutex_;
};

}  // namespace

RunReport run_contract(const RunOptions& options) {
  RunReport report;
  report.started = std::chrono::system_clock::now();
  const auto start = Clock::now();
  auto selected = select_checks(options.suites, options.checks);
  Executor(options, report).run(selected);
  if (report.unreachable) {
    for (std::size_t i = 0; i < selected.size(); ++i)
      if (report.results[i].id.empty()) {
        report.results[i].id = selected[i]->id;
        report.results[i].suite = selected[i]->suite;
        report.results[i].rules = selected[i]->rules;
        report.results[i].severity = selected[i]->severity;
        report.results[i].outcome = Outcome::skip;
        report.results[i].message = "not run: " + report.unreachable_reason;
      }
  }
  report.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  const bool failed = std::any_of(report.results.begin(), report.results.end(),
                                  [](const CheckResult& r) { return r.outcome == Outcome::fail; });
  report.exit_code = report.unreachable ? 3 : failed ? 1 : 0;
  return report;
}

// ---- the result document

namespace {

double ms(std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

json::object counts_of(const std::vector<const CheckResult*>& results) {
  json::object c{{"total", results.size()}};
  for (auto o : {Outcome::pass, Outcome::warn, Outcome::fail, Outcome::skip, Outcome::indeterminate})
    c[to_string(o)] = std::count_if(results.begin(), results.end(), [o](const CheckResult* r) { return r->outcome == o; });
  return c;
}

// A rule's outcome: the worst of its checks (fail, indeterminate, warn), else
// pass when one passed, else skip; "uncovered" when no selected check covers it.
std::string_view rule_outcome(const std::vector<const CheckResult*>& checks) {
  if (checks.empty()) return "uncovered";
  for (auto o : {Outcome::fail, Outcome::indeterminate, Outcome::warn, Outcome::pass})
    if (std::any_of(checks.begin(), checks.end(), [o](const CheckResult* r) { return r->outcome == o; }))
      return to_string(o);
  return "skip";
}

}  // namespace

json::value result_document(const RunReport& report, const RunOptions& options, bool embedded) {
  using core::valid_utf8;
  std::vector<const CheckResult*> all;
  for (const auto& r : report.results) all.push_back(&r);

  json::array checks;
  for (const auto& r : report.results) {
    json::array rules, findings, evidence;
    for (const auto& id : r.rules) rules.emplace_back(id);
    for (const auto& f : r.findings)
      findings.push_back(json::object{{"severity", to_string(f.severity)}, {"rule", f.rule}, {"text", valid_utf8(f.text)}});
    for (const auto& e : r.evidence)
      evidence.push_back(json::object{{"curl", valid_utf8(e.curl)}, {"answer", valid_utf8(e.answer)}, {"elapsed_ms", ms(e.elapsed)}});
    const Check* check = nullptr;
    for (const auto& c : all_checks())
      if (c.id == r.id) check = &c;
    checks.push_back(json::object{{"id", r.id},
                                  {"suite", r.suite},
                                  {"summary", check ? check->summary : ""},
                                  {"rules", std::move(rules)},
                                  {"severity", to_string(r.severity)},
                                  {"outcome", to_string(r.outcome)},
                                  {"message", valid_utf8(r.message)},
                                  {"duration_ms", ms(r.duration)},
                                  {"findings", std::move(findings)},
                                  {"evidence", std::move(evidence)}});
  }

  json::array rules;
  for (const auto& rule : rule_catalogue()) {
    std::vector<const CheckResult*> covering;
    json::array ids;
    for (const auto& r : report.results)
      if (std::find(r.rules.begin(), r.rules.end(), rule.id) != r.rules.end()) {
        covering.push_back(&r);
        ids.push_back(json::object{{"id", r.id}, {"outcome", to_string(r.outcome)}, {"severity", to_string(r.severity)}});
      }
    rules.push_back(json::object{{"id", rule.id},
                                 {"section", rule.section},
                                 {"text", rule.text},
                                 {"outcome", rule_outcome(covering)},
                                 {"checks", std::move(ids)}});
  }

  json::array suites;
  for (const auto& s : all_suites()) {
    std::vector<const CheckResult*> in;
    for (const auto& r : report.results)
      if (r.suite == s) in.push_back(&r);
    if (!in.empty()) suites.push_back(json::object{{"name", s}, {"counts", counts_of(in)}});
  }

  json::array notes, suite_names, check_patterns;
  for (const auto& n : report.notes) notes.emplace_back(valid_utf8(core::redact(n, options.target.api_key)));
  for (const auto& s : options.suites) suite_names.emplace_back(s);
  for (const auto& c : options.checks) check_patterns.emplace_back(c);

  const auto counts = counts_of(all);
  std::string status = report.exit_code == 3 ? "unreachable" : report.exit_code == 1 ? "failed" : "passed";
  std::string reason;
  if (report.unreachable) reason = report.unreachable_reason;
  else if (report.exit_code == 1)
    reason = std::to_string(counts.at("fail").to_number<long>()) + " check(s) failed" +
             (options.strict ? " (--strict: SHOULD findings fail)" : "");
  else
    reason = "every MUST check held; " + std::to_string(counts.at("warn").to_number<long>()) + " warning(s), " +
             std::to_string(counts.at("indeterminate").to_number<long>()) + " indeterminate, " +
             std::to_string(counts.at("skip").to_number<long>()) + " skipped";

  json::object doc = core::result_envelope("contract", report.started, ms(report.duration), options.target.base,
                                           options.target.channel, embedded);
  json::object body{
      {"config", json::object{{"suites", std::move(suite_names)},
                              {"checks", std::move(check_patterns)},
                              {"slow", options.slow},
                              {"strict", options.strict},
                              {"minute_ms", options.target.minute.count()},
                              {"timeout_ms", options.client.timeout.count()},
                              {"profile", to_json(options.profile)}}},
      {"verdict", json::object{{"status", status}, {"exit_code", report.exit_code}, {"reason", valid_utf8(reason)}}},
      {"counts", counts},
      {"notes", std::move(notes)},
      {"suites", std::move(suites)},
      {"rules", std::move(rules)},
      {"checks", std::move(checks)},
  };
  for (auto& field : body) doc.emplace(field.key(), std::move(field.value()));
  return doc;
}

}  // namespace crh::contracts
