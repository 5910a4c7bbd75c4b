// A contract run's verdict and its result document (DESIGN.md §1).
#include <algorithm>
#include <set>
#include <boost/json.hpp>

#include "contracts/runner.hpp"
#include "oracle/rules.hpp"
#include "core/outside.hpp"
#include "core/output_file.hpp"
#include "results/envelope.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"

namespace crh::contracts {
namespace json = boost::json;

namespace {

// "; 2 MUST checks skipped themselves on what the target answered, so their
// rules went untested: 1 "no untagged alias on the channel" (binding.x), ...":
// coverage a user would otherwise lose in silence. Empty when none did.
std::string coverage_lost(const RunReport& report) {
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // reason, checks; in run order
  std::size_t n = 0;
  for (const auto& r : report.results) {
    if (!r.skipped_by_target || r.severity != Severity::must) continue;
    ++n;
    // The reason without its particulars (a body, an alias id in brackets),
    // so checks that skipped for one cause group together.
    std::string why = r.message.substr(0, r.message.find(" ("));
    if (why.size() > 140) why = why.substr(0, 137) + "...";
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& e) { return e.first == why; });
    if (it == reasons.end()) reasons.push_back({why, {r.id}});
    else it->second.push_back(r.id);
  }
  if (n == 0) return {};
  constexpr std::size_t kShown = 3;
  std::string out = "; " + std::to_string(n) + " MUST check(s) skipped themselves on what the target answered, so " +
                    "their rules went untested:";
  for (std::size_t i = 0; i < reasons.size() && i < kShown; ++i) {
    const auto& [why, ids] = reasons[i];
    out += std::string(i ? ";" : "") + " " + std::to_string(ids.size()) + " because \"" + why + "\" (" + ids.front() +
           (ids.size() > 1 ? " and " + std::to_string(ids.size() - 1) + " more" : "") + ")";
  }
  if (reasons.size() > kShown) out += "; and " + std::to_string(reasons.size() - kShown) + " other reason(s)";
  return out;
}

// "; 2 check(s) judged apart a framework's refusal of a malformed request
// (a warning, also under --strict)": said wherever the verdict is shown.
std::string judged_apart_text(const RunReport& report) {
  const auto n = std::count_if(report.results.begin(), report.results.end(), [](const CheckResult& r) {
    return std::any_of(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.apart; });
  });
  if (n == 0) return {};
  return "; " + std::to_string(n) +
         " check(s) judged apart the HTTP layer's refusal of a malformed request (a framework's answer before the "
         "API runs: a warning, also under --strict)";
}

// ", breaking E5 and R1": the rules the failed checks' MUST findings name.
std::string broken_rules_text(const RunReport& report) {
  std::set<std::string_view> rules;
  for (const auto& r : report.results)
    if (r.outcome == Outcome::fail)
      for (const auto& f : r.findings)
        if (f.severity == Severity::must) rules.insert(f.rule);
  std::string out;
  std::size_t i = 0;
  for (const auto& rule : rules)
    out += (i++ == 0 ? ", breaking " : i == rules.size() ? " and " : ", ") + std::string(rule);
  return out;
}

}  // namespace

results::Verdict verdict_of(const RunReport& report, bool strict) {
  std::size_t n[5] = {};
  for (const auto& r : report.results) ++n[static_cast<std::size_t>(r.outcome)];
  const auto count = [&](Outcome o) { return n[static_cast<std::size_t>(o)]; };
  const std::size_t ran = report.results.size() - count(Outcome::skip);
  const std::size_t undecided = count(Outcome::indeterminate);
  const std::string tally = std::to_string(count(Outcome::pass)) + " passed, " + std::to_string(count(Outcome::warn)) +
                            " warned, " + std::to_string(count(Outcome::fail)) + " failed, " +
                            std::to_string(undecided) + " indeterminate, " + std::to_string(count(Outcome::skip)) +
                            " skipped";
  const std::string also = coverage_lost(report) + judged_apart_text(report);
  if (report.interrupted)
    return {results::Status::incomplete,
            "interrupted (Ctrl-C or SIGTERM): the checks not yet started were skipped (" + tally + ")"};
  if (report.preflight_stop) return results::preflight_verdict(*report.preflight_stop);
  if (report.unreachable) return {results::Status::unreachable, report.unreachable_reason};
  if (report.stalled)
    return {results::Status::failed,
            "the target stopped answering: " + std::to_string(kStallChecks) +
                " checks in a row got no answer within --timeout " + std::to_string(report.timeout.count()) +
                " ms, so the checks after them were not run (" + tally + ")" + also};
  if (count(Outcome::fail) > 0)
    return {results::Status::failed,
            std::to_string(count(Outcome::fail)) + " check(s) failed" + broken_rules_text(report) +
                (strict ? " (--strict: SHOULD findings fail)" : "") + " (" + tally + ")" + also};
  // A run that proved nothing must not pass: a CI gate would go green on a
  // target that only timed out, reset or sent truncated answers.
  if (ran == 0) return {results::Status::untested, "the target could not be tested: no selected check ran (" + tally + ")" + also};
  if (2 * undecided > ran)
    return {results::Status::untested,
            "the target could not be tested: " + std::to_string(undecided) + " of the " + std::to_string(ran) +
                " checks that ran got no usable answer (timeouts, resets or truncated answers; " + tally + ")" + also};
  return {results::Status::passed, "every MUST check that ran held (" + tally + ")" + also};
}

// ---- the result document

namespace {

namespace k = results::keys;
using core::valid_utf8;

double ms(std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

// The total and one count per outcome, keyed by its name (to_string(Outcome), as keys::counts names them).
json::object counts_of(const std::vector<const CheckResult*>& results) {
  json::object c{{k::counts::total, results.size()}};
  for (auto o : {Outcome::pass, Outcome::warn, Outcome::fail, Outcome::skip, Outcome::indeterminate})
    c[to_string(o)] =
        std::count_if(results.begin(), results.end(), [o](const CheckResult* r) { return r->outcome == o; });
  return c;
}

// A rule's outcome: the worst of its checks' outcomes on it (fail,
// indeterminate, warn; oracle::outcome_for_rule), else pass when one passed
// it, else skip (no check got as far as judging it); "uncovered" when no
// selected check covers it.
std::string_view rule_outcome(const std::vector<std::string_view>& on_rule) {
  if (on_rule.empty()) return "uncovered";
  for (auto o : {Outcome::fail, Outcome::indeterminate, Outcome::warn, Outcome::pass})
    if (std::find(on_rule.begin(), on_rule.end(), to_string(o)) != on_rule.end()) return to_string(o);
  return "skip";
}

json::object check_json(const CheckResult& r) {
  namespace c = k::check;
  json::array rules, findings, evidence;
  for (const auto& id : r.rules) rules.emplace_back(id);
  for (const auto& f : r.findings) {
    json::object finding{{k::finding::severity, to_string(f.severity)},
                         {k::finding::rule, f.rule},
                         {k::finding::text, valid_utf8(f.text)}};
    if (f.apart) finding[k::finding::judged_apart] = true;
    findings.push_back(std::move(finding));
  }
  for (const auto& e : r.evidence)
    evidence.push_back(json::object{{k::evidence::curl, valid_utf8(e.curl)},
                                    {k::evidence::answer, valid_utf8(e.answer)},
                                    {k::evidence::elapsed_ms, ms(e.elapsed)}});
  const Check* check = nullptr;
  for (const auto& known : all_checks())
    if (known.id == r.id) check = &known;
  json::object out{{c::id, r.id},
                      {c::suite, r.suite},
                      {c::summary, check ? check->summary : ""},
                      {c::rules, std::move(rules)},
                      {c::severity, to_string(r.severity)},
                      {c::outcome, to_string(r.outcome)},
                      {c::message, valid_utf8(r.message)},
                      {c::duration_ms, ms(r.duration)},
                      {c::findings, std::move(findings)},
                      {c::evidence, std::move(evidence)}};
  if (r.skipped_by_target) out[c::skipped_by_target] = true;
  if (!r.reproducer.empty()) out[c::reproducer] = valid_utf8(r.reproducer);
  return out;
}

// Every rule of the catalogue with its outcome and the checks covering it:
// a check that failed on one rule leaves its other rules covered, not failed.
json::array rules_json(const RunReport& report) {
  json::array rules;
  for (const auto& rule : rule_catalogue()) {
    std::vector<std::string_view> on_rule;
    json::array ids;
    for (const auto& r : report.results)
      // A check covers its own rules, and any rule a finding of it names (the verdict blames those).
      if (std::find(r.rules.begin(), r.rules.end(), rule.id) != r.rules.end() ||
          std::any_of(r.findings.begin(), r.findings.end(), [&](const oracle::Finding& f) { return f.rule == rule.id; })) {
        const auto outcome = oracle::outcome_for_rule(to_string(r.outcome), r.findings, rule.id);
        on_rule.push_back(outcome);
        json::object entry{{k::rule_check::id, r.id},
                           {k::rule_check::outcome, outcome},
                           {k::rule_check::severity, to_string(r.severity)}};
        if (outcome != to_string(r.outcome)) entry[k::rule_check::check_outcome] = to_string(r.outcome);
        ids.push_back(std::move(entry));
      }
    rules.push_back(json::object{{k::rule::id, rule.id},
                                 {k::rule::section, rule.section},
                                 {k::rule::text, rule.text},
                                 {k::rule::outcome, rule_outcome(on_rule)},
                                 {k::rule::checks, std::move(ids)}});
  }
  return rules;
}

json::array suites_json(const RunReport& report) {
  json::array suites;
  for (const auto& s : all_suites()) {
    std::vector<const CheckResult*> in;
    for (const auto& r : report.results)
      if (r.suite == s) in.push_back(&r);
    if (!in.empty()) suites.push_back(json::object{{k::suite::name, s}, {k::suite::counts, counts_of(in)}});
  }
  return suites;
}

json::object config_json(const RunOptions& options) {
  namespace o = k::contract_config;
  json::array suite_names, check_patterns;
  for (const auto& s : options.suites) suite_names.emplace_back(s);
  for (const auto& c : options.checks) check_patterns.emplace_back(c);
  return json::object{{o::suites, std::move(suite_names)},
                      {o::checks, std::move(check_patterns)},
                      {o::slow, options.slow},
                      {o::strict, options.strict},
                      {o::explore, options.explore.operations},
                      {o::explore_seed, options.explore.seed},
                      {o::minute_ms, options.target.minute.count()},
                      {o::timeout_ms, options.client.timeout.count()},
                      {o::call_driver, options.target.calls.name()},
                      {o::sip_target, options.target.calls.sip ? json::value(options.target.calls.sip_target.text()) : nullptr},
                      {o::profile, core::to_json(core::Profile{options.target.dialect, options.statuses})}};
}

}  // namespace

json::value result_document(const RunReport& report, const RunOptions& options, bool embedded) {
  std::vector<const CheckResult*> all;
  for (const auto& r : report.results) all.push_back(&r);
  json::array checks, notes;
  for (const auto& r : report.results) checks.push_back(check_json(r));
  for (const auto& n : report.notes) notes.emplace_back(valid_utf8(core::composed(n)));
  const auto verdict = verdict_of(report, options.strict);

  json::object doc = results::result_envelope(k::kind_contract, report.started, ms(report.duration), options.target.base,
                                           options.target.channel, embedded);
  doc[k::envelope::config] = config_json(options);
  doc[k::envelope::verdict] = results::verdict_json({verdict.status, valid_utf8(verdict.reason)});
  doc[k::contract::counts] = counts_of(all);
  doc[k::contract::notes] = std::move(notes);
  doc[k::contract::suites] = suites_json(report);
  doc[k::contract::rules] = rules_json(report);
  doc[k::contract::checks] = std::move(checks);
  if (report.preflight_stop) {
    doc[k::envelope::preflight] = results::preflight_json(*report.preflight_stop);
    doc[k::contract::rules] = json::array{};  // nothing was tested: no rule is shown as covered
  }
  return doc;
}

}  // namespace crh::contracts
