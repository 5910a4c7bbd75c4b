// The executor and the restoration of the target (the verdict and the result document: result_document.cpp).
#include "contracts/runner.hpp"

#include <algorithm>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "contracts/api.hpp"
#include "contracts/context.hpp"
#include "contracts/reproducer.hpp"
#include "core/curl.hpp"
#include "core/outside.hpp"
#include "oracle/answers.hpp"

namespace crh::contracts {
using Clock = std::chrono::steady_clock;

std::vector<const Check*> select_checks(const std::vector<std::string>& suites,
                                        const std::vector<std::string>& checks) {
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
      throw std::invalid_argument("no check matches \"" + p +
                                  "\" in the selected suites; crh contract --list-checks lists them");
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

// The database key the encoding probe writes (DESIGN.md §5: probes live under crh-probe-).
constexpr std::string_view kEncodingProbeKey = "crh-probe-encoding";

class Executor {
 public:
  Executor(const RunOptions& o, RunReport& report) : options_(o), report_(report) {
    shared_.target = o.target;
    shared_.statuses = o.statuses;
    shared_.client = o.client;
    shared_.client.cancel = o.stop;  // Ctrl-C cuts the checks' exchanges short, never the restore's
    shared_.stop = o.stop;
    shared_.explore = o.explore;
    shared_.explore.slow = o.slow;
    shared_.restore = [this] {
      core::HttpClient restorer(shared_.target.base, restoring());
      restore(restorer, false);
    };
    do {
      shared_.wrong_key =
          random_text(std::max<std::size_t>(o.target.api_key.size(), 8), "abcdefghijklmnopqrstuvwxyz0123456789");
    } while (shared_.wrong_key == o.target.api_key);
    shared_.caller_base = "+1999" + random_text(4, "0123456789");
  }

  void run(const std::vector<const Check*>& selected) {
    report_.results.resize(selected.size());
    report_.encoding = shared_.target.dialect.encoding;
    report_.timeout = shared_.client.timeout;
    if (!preflight()) return;
    if (options_.detect_encoding) detect_encoding();
    report_.encoding = shared_.target.dialect.encoding;
    std::vector<std::size_t> first, slow, rest, alone, last;
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const Check& c = *selected[i];
      if (c.run_wide) last.push_back(i);
      else if (c.alone) alone.push_back(i);
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
    for (auto i : alone) run_one(*selected[i], client, i);
    for (auto i : last) run_one(*selected[i], client, i);
    report_.stalled = shared_.stalled;
    core::HttpClient restorer(shared_.target.base, restoring());  // a fresh connection: the checks' may be broken
    restore(restorer, true);
    if (shared_.target_lost && !report_.unreachable) {
      report_.unreachable = true;
      report_.unreachable_reason = "the target stopped accepting connections during the run";
    }
  }

 private:
  // The client of the requests around the checks (the preflight, the
  // encoding probe): a "not now" is waited out, never taken for an answer.
  core::ClientConfig around_checks() const {
    core::ClientConfig c = shared_.client;
    c.not_now_retries = core::throttled(429, shared_.statuses) ? core::kNotNowRetries : 0;
    return c;
  }
  // Restoring: not cut short by Ctrl-C (it leaves the target as found).
  core::ClientConfig restoring() const {
    core::ClientConfig c = around_checks();
    c.cancel = nullptr;
    return c;
  }

  // A database write of a crh-probe- key as `encoding` says.
  core::Exchange probe_write(core::HttpClient& client, core::ParamEncoding encoding) {
    auto target = shared_.target;
    target.dialect.encoding = encoding;
    auto r = core::api::request(target, core::api::Operation::db_set,
                                {.id = std::string(kEncodingProbeKey), .value = "crh"});
    r.headers.push_back({"Apikey", target.api_key});
    return client.send(std::move(r));
  }

  // The spec does not say how parameters travel (DESIGN.md §3), and neither
  // did the profile. A target that refuses the default as bad input would
  // fail every check with parameters for a setting, not a broken rule: try
  // the other encodings on a probe write and use the one it takes, saying so.
  void detect_encoding() {
    core::HttpClient client(shared_.target.base, around_checks());
    const auto given = shared_.target.dialect.encoding;
    const auto first = probe_write(client, given);
    const auto& auth = shared_.statuses.auth;
    if (!first.answered() || first.response->status == 200 || first.response->status >= 500 ||
        std::find(auth.begin(), auth.end(), first.response->status) != auth.end())
      return;  // taken, or refused for another reason: the checks will judge it
    for (auto other : {core::ParamEncoding::form, core::ParamEncoding::json, core::ParamEncoding::query}) {
      if (other == given) continue;
      const auto e = probe_write(client, other);
      if (!e.answered() || e.response->status != 200) continue;
      shared_.janitor.database_key(std::string(kEncodingProbeKey), std::nullopt);
      shared_.target.dialect.encoding = other;
      report_.notes.push_back("parameters sent as " + std::string(core::to_string(given)) + " were refused (POST " +
                              core::api::database_path(std::string(kEncodingProbeKey)) + " answered HTTP " +
                              std::to_string(first.response->status) + ") and taken as " +
                              std::string(core::to_string(other)) + ": the checks send them as " +
                              std::string(core::to_string(other)) + "; say \"encoding\": \"" +
                              std::string(core::to_string(other)) + "\" in a profile to make it part of the contract");
      return;
    }
  }

  // The preflight every command shares (core/preflight.hpp): a run that
  // cannot test the target stops before any check, with the user's mistake.
  bool preflight() {
    bool answered = false;
    auto stop = core::preflight(shared_.target, shared_.statuses, shared_.client.timeout, &answered);
    if (answered) shared_.answered_any = true;
    if (!stop) return true;
    report_.preflight_stop = std::move(stop);
    report_.results.clear();
    return false;
  }

  void run_quick(const Check& c, core::HttpClient& client, std::size_t slot) {
    while (shared_.channel_wanted.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
    } else if (shared_.stalled) {
      ended = Outcome::skip;
      ended_message = "not run: the target stopped answering (" + std::to_string(kStallChecks) +
                      " checks in a row got no answer within --timeout " +
                      std::to_string(shared_.client.timeout.count()) + " ms)";
    } else if (c.needs_call_hook && !(c.calls_by_driver ? shared_.target.can_place_calls()
                                                           : shared_.target.dialect.call_hook.enabled)) {
      ended = Outcome::skip;
      ended_message = "the profile says the target has no call hook (call_hook: null)";
    } else {
      CheckContext ctx(shared_, client, r);
      try {
        c.body(ctx);
      } catch (const CheckEnded& e) {
        ended = e.outcome;
        ended_message = e.message;
        r.skipped_by_target = e.outcome == Outcome::skip;
      } catch (const std::exception& e) {
        ended = Outcome::indeterminate;
        ended_message = std::string("the check could not finish: ") + e.what();
      }
    }
    r.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
    finish(r, ended, ended_message);
    note_stall(r);
    if (options_.on_result) {
      std::lock_guard lock(progress_mutex_);
      options_.on_result(r);
    }
  }

  // Three checks in a row that ended undecided on --timeout: the target
  // stopped answering, and waiting on it check by check would take minutes.
  void note_stall(const CheckResult& r) {
    if (r.outcome == Outcome::skip) return;
    if (!r.timed_out) {
      timeouts_in_a_row_ = 0;
      return;
    }
    if (++timeouts_in_a_row_ >= kStallChecks) shared_.stalled = true;
  }

  void finish(CheckResult& r, Outcome ended, const std::string& message) {
    const auto any = [&](auto pred) { return std::any_of(r.findings.begin(), r.findings.end(), pred); };
    const bool must = any([](const Finding& f) { return f.severity == Severity::must; });
    // A framework's refusal judged apart stays a warning under --strict: no
    // service on that stack could answer otherwise.
    const auto counts_for_strict = [](const Finding& f) { return f.severity == Severity::should && !f.apart; };
    r.timed_out = r.timed_out && ended == Outcome::indeterminate;
    r.skipped_by_target = r.skipped_by_target && ended == Outcome::skip;
    if (ended == Outcome::skip || ended == Outcome::indeterminate) {
      r.outcome = ended;
      r.message = message;
    } else if (must) {
      r.outcome = Outcome::fail;
      r.message = message;
    } else if (!r.findings.empty()) {
      const bool fails = options_.strict && any(counts_for_strict);
      r.outcome = fails ? Outcome::fail : Outcome::warn;
      r.message = (fails ? *std::find_if(r.findings.begin(), r.findings.end(), counts_for_strict) : r.findings.front()).text;
    } else {
      r.outcome = Outcome::pass;
    }
    // Excerpts of the target's bytes were redacted where they were made; a
    // value the target sent that a message quotes whole is caught here, when
    // the key is long enough not to match the harness's own words.
    r.message = core::composed(r.message);
    for (auto& f : r.findings) f.text = core::composed(f.text);
    if (r.outcome == Outcome::fail) r.reproducer = core::composed(reproducer(r, shared_.target, sent_before(r)));
    for (auto& e : r.evidence) e.answer = core::composed(e.answer);
    constexpr std::size_t kMaxEvidence = 60;
    if (r.evidence.size() > kMaxEvidence) r.evidence.resize(kMaxEvidence);
  }

  // What the run had sent before the first exchange of `r`'s script (a
  // check's own, or one a run-wide check cites), found as it was recorded;
  // else (a sequence the check rebuilt: the exploration's) before the
  // check's first exchange, and the writes no run-wide check judges.
  std::vector<ReplayStep> sent_before(const CheckResult& r) const {
    auto run = shared_.recorded();
    const auto start = first_step(r);
    const auto* first = start && r.evidence[*start].replay ? &*r.evidence[*start].replay : nullptr;
    auto end = std::find_if(run.begin(), run.end(), [&](const Recorded& e) {
      return first && e.replay && e.replay->at == first->at && e.replay->request.method == first->request.method &&
             e.replay->request.target == first->request.target && e.replay->request.body == first->request.body;
    });
    const bool rebuilt = end == run.end();
    if (rebuilt) end = std::find_if(run.begin(), run.end(), [&](const Recorded& e) { return e.check == r.id; });
    std::vector<ReplayStep> before;
    for (auto e = run.begin(); e != end; ++e)
      if (e->replay) before.push_back(std::move(*e->replay));
    if (rebuilt)
      for (auto& w : shared_.unjudged_writes()) before.push_back(std::move(w));
    return before;
  }

  // Puts back what the run changed (DESIGN.md §5), then looks again: every
  // item that is not verifiably back is named in a note, one by one.
  // Mid-run (`final` false) it says nothing: the last restore's notes count.
  void restore(core::HttpClient& client, bool final) {
    CheckResult scratch;
    scratch.id = "restore";
    CheckContext ctx(shared_, client, scratch);
    auto& janitor = shared_.janitor;
    auto agents = janitor.agents();
    auto keys = janitor.database_keys();
    std::optional<std::vector<std::string>> left_tagged;  // probe tags seen after the restore
    // A target that stopped answering gets one try: the restore's first
    // request past --timeout ends its sending (CheckContext::gave_up), so the
    // run still ends within about 4 × --timeout.
    if (final) shared_.stalled = false;
    if (!final) keys.clear();  // the run's sequences read a key before they predict it
    try {
      for (const auto& alias : janitor.tags()) api::untag_quietly(ctx, alias);
      // Tags whose alias the run does not know (a tag it made although it
      // should have refused, or whose answer was unreadable) are found by name.
      if (auto tagged = probe_tagged_aliases(ctx))
        for (const auto& id : *tagged) {
          janitor.tagged(id);
          api::untag_quietly(ctx, id);
        }
      for (auto it = agents.begin(); it != agents.end();)
        it = api::restore_agent(ctx, it->first, it->second) ? agents.erase(it) : std::next(it);
      for (auto it = keys.begin(); it != keys.end();)
        it = core::put_database_value_back(api::sender(ctx), shared_.target, it->first, it->second) ? std::next(it)
                                                                                                   : keys.erase(it);
      if (final) left_tagged = probe_tagged_aliases(ctx);
    } catch (const CheckEnded&) {
      if (final) report_.notes.push_back("restoring the target stopped early: it stopped answering");
    }
    if (!final) return;
    if (ctx.gave_up())
      report_.notes.push_back("restoring the target stopped early: a request got no answer within --timeout " +
                              std::to_string(shared_.client.timeout.count()) + " ms");
    note_left_tags(left_tagged);
    for (const auto& [id, state] : agents)
      report_.notes.push_back("not restored: agent " + id + " could not be put back to its state \"" + state + "\"");
    for (const auto& [key, old] : keys)
      report_.notes.push_back("not restored: database key " + key + " could not be given back its value" +
                              (old ? "" : " (it had none before the run; the spec has no database DELETE, so the "
                                          "empty string was to be written: the key stays, under the \"" +
                                              std::string(api::kProbePrefix) + "\" prefix a run may leave)"));
  }

  // The tags the run may have left: the alias list read after the restore is
  // the truth; without it, every tag the run made and could not delete, and
  // every tag request whose alias it never learned, may still be there.
  void note_left_tags(const std::optional<std::vector<std::string>>& left_tagged) {
    const std::string& channel = shared_.target.channel;
    const std::string prefix(api::kProbePrefix);
    if (left_tagged) {
      for (const auto& alias : *left_tagged)
        report_.notes.push_back("not restored: alias " + alias + " of channel " + channel + " still carries a \"" +
                                prefix + "...\" tag after the restore");
      return;
    }
    report_.notes.push_back("not verified: could not list the aliases of channel " + channel +
                            " after restoring, to see that no \"" + prefix + "...\" tag is left");
    for (const auto& alias : shared_.janitor.tags())
      report_.notes.push_back("not restored: alias " + alias + " of channel " + channel + " may still carry the \"" +
                              prefix + "...\" tag this run made");
    for (const auto& [name, count] : shared_.janitor.unsure_tags())
      report_.notes.push_back(
          "not restored: " + std::to_string(count) + " tag request(s) named \"" + name + "\" on channel " + channel +
          " got no readable answer, so the alias each may have tagged is unknown; it keeps the tag until it expires " +
          "(the run asks for 10 minutes or the profile's minimum) unless you list the aliases and DELETE it");
  }

  // The aliases of the channel that carry a probe tag now; nothing when the
  // list cannot be read.
  std::optional<std::vector<std::string>> probe_tagged_aliases(CheckContext& ctx) {
    auto e = ctx.send(core::api::Operation::list_aliases);
    if (!e.answered() || e.response->status != 200) return std::nullopt;
    std::string why;
    auto body = parse_json(e.response->body, why);
    if (!body) return std::nullopt;
    return core::api::aliases_tagged(ctx.fields(), *body, api::kProbePrefix);
  }

  const RunOptions& options_;
  RunReport& report_;
  RunShared shared_;
  std::mutex progress_mutex_;
  std::atomic<int> timeouts_in_a_row_{0};
};

}  // namespace

RunReport run_contract(const RunOptions& options) {
  core::register_run_key(options.target.api_key);
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
  report.interrupted = options.stop && options.stop->load();
  report.exit_code = verdict_of(report, options.strict).exit_code();
  return report;
}

}  // namespace crh::contracts
