// Reading a contract result document back, and merging shards.
#include "contracts/readback.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <boost/json.hpp>

#include "oracle/rules.hpp"
#include "results/json_read.hpp"
#include "results/envelope.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"

namespace crh::contracts {
namespace json = boost::json;
namespace k = results::keys;
using results::array_at;
using results::bool_at;
using results::integer_at;
using results::number_at;
using results::object_at;
using results::string_at;

namespace {

std::chrono::microseconds from_ms(double ms) { return std::chrono::microseconds(std::llround(ms * 1000.0)); }

Outcome outcome_named(const std::string& name, const std::string& where) {
  for (auto o : {Outcome::pass, Outcome::warn, Outcome::fail, Outcome::skip, Outcome::indeterminate})
    if (to_string(o) == name) return o;
  throw std::runtime_error(where + ": unknown outcome \"" + name + "\"");
}

Severity severity_named(const std::string& name, const std::string& where) {
  for (auto s : {Severity::must, Severity::should})
    if (to_string(s) == name) return s;
  throw std::runtime_error(where + ": unknown severity \"" + name + "\"");
}

// Worse first: what a check in two shards keeps.
int badness(Outcome o) {
  switch (o) {
    case Outcome::fail: return 4;
    case Outcome::indeterminate: return 3;
    case Outcome::warn: return 2;
    case Outcome::pass: return 1;
    case Outcome::skip: return 0;
  }
  return 0;
}

CheckResult check_from_json(const json::object& o) {
  namespace c = k::check;
  const std::string where = "checks[" + string_at(o, c::id, "checks[]") + "]";
  CheckResult r;
  r.id = string_at(o, c::id, where);
  r.suite = string_at(o, c::suite, where);
  for (const auto& rule : array_at(o, c::rules, where))
    if (rule.is_string()) r.rules.emplace_back(rule.get_string());
  r.severity = severity_named(string_at(o, c::severity, where), where);
  r.outcome = outcome_named(string_at(o, c::outcome, where), where);
  r.message = string_at(o, c::message, where);
  r.duration = from_ms(number_at(o, c::duration_ms, where));
  for (const auto& f : array_at(o, c::findings, where)) {
    const auto& finding = results::as_object(f, where + ".findings[]");
    const oracle::Rule* rule = oracle::find_rule(string_at(finding, k::finding::rule, where + ".findings[]"));
    r.findings.push_back({severity_named(string_at(finding, k::finding::severity, where + ".findings[]"), where),
                          rule ? rule->id : std::string_view{},
                          string_at(finding, k::finding::text, where + ".findings[]")});
  }
  for (const auto& e : array_at(o, c::evidence, where)) {
    namespace ev = k::evidence;
    const auto& exchange = results::as_object(e, where + ".evidence[]");
    r.evidence.push_back({string_at(exchange, ev::curl, where + ".evidence[]"),
                          string_at(exchange, ev::answer, where + ".evidence[]"),
                          from_ms(number_at(exchange, ev::elapsed_ms, where + ".evidence[]"))});
  }
  if (const auto* script = o.if_contains(c::reproducer); script && script->is_string())
    r.reproducer = script->get_string();
  return r;
}

std::vector<std::string> strings_at(const json::object& o, std::string_view key, std::string_view where) {
  std::vector<std::string> out;
  for (const auto& v : array_at(o, key, where))
    if (v.is_string()) out.emplace_back(v.get_string());
  return out;
}

// The registry's order; checks it does not know (another harness version) last, by id.
void sort_in_catalogue_order(std::vector<CheckResult>& results) {
  std::map<std::string, std::size_t> position;
  const auto& checks = all_checks();
  for (std::size_t i = 0; i < checks.size(); ++i) position[checks[i].id] = i;
  std::stable_sort(results.begin(), results.end(), [&](const CheckResult& x, const CheckResult& y) {
    auto px = position.count(x.id) ? position[x.id] : checks.size();
    auto py = position.count(y.id) ? position[y.id] : checks.size();
    return px != py ? px < py : (px == checks.size() && x.id < y.id);
  });
}

}  // namespace

ContractRun read_contract_document(const json::object& doc) {
  const auto* kind = doc.if_contains(k::envelope::kind);
  if (!kind || !kind->is_string() || kind->get_string() != k::kind_contract)
    throw std::runtime_error("not a contract result document (kind is not \"contract\")");
  ContractRun run;
  const auto& target = object_at(doc, k::envelope::target, "");
  std::string why;
  auto base = core::parse_base_url(string_at(target, k::target::base_url, k::envelope::target), why);
  if (!base) throw std::runtime_error("target.base_url: " + why);
  run.options.target.base = *base;
  run.options.target.channel = string_at(target, k::target::channel, k::envelope::target);
  run.embedded = bool_at(target, k::target::embedded, k::envelope::target);
  auto started = results::parse_iso8601(string_at(doc, k::envelope::started_at, ""));
  if (!started) throw std::runtime_error("started_at: not an ISO 8601 UTC time");
  run.report.started = *started;
  run.report.duration = from_ms(number_at(doc, k::envelope::duration_ms, ""));

  namespace o = k::contract_config;
  const auto& config = object_at(doc, k::envelope::config, "");
  run.options.suites = strings_at(config, o::suites, k::envelope::config);
  run.options.checks = strings_at(config, o::checks, k::envelope::config);
  run.options.slow = bool_at(config, o::slow, k::envelope::config);
  run.options.strict = bool_at(config, o::strict, k::envelope::config);
  run.options.target.minute = std::chrono::milliseconds(integer_at(config, o::minute_ms, k::envelope::config));
  run.options.client.timeout = std::chrono::milliseconds(integer_at(config, o::timeout_ms, k::envelope::config));
  const auto profile = core::parse_profile(results::field_at(config, o::profile, k::envelope::config), "config.profile");
  run.options.target.dialect = profile.dialect;
  run.options.statuses = profile.statuses;

  const auto& verdict = object_at(doc, k::envelope::verdict, "");
  const auto status = results::status_from(string_at(verdict, k::verdict::status, k::envelope::verdict));
  run.report.interrupted = status == results::Status::incomplete;
  if (status == results::Status::unreachable) {
    run.report.unreachable = true;
    run.report.unreachable_reason = string_at(verdict, k::verdict::reason, k::envelope::verdict);
  }
  run.report.notes = strings_at(doc, k::contract::notes, "");
  for (const auto& c : array_at(doc, k::contract::checks, ""))
    run.report.results.push_back(check_from_json(results::as_object(c, "checks[]")));
  run.report.exit_code = verdict_of(run.report, run.options.strict).exit_code();
  return run;
}

ContractRun merge_contract_runs(ContractRun a, const ContractRun& b) {
  for (const auto& theirs : b.report.results) {
    auto mine = std::find_if(a.report.results.begin(), a.report.results.end(),
                             [&](const CheckResult& r) { return r.id == theirs.id; });
    if (mine == a.report.results.end()) a.report.results.push_back(theirs);
    else if (badness(theirs.outcome) > badness(mine->outcome)) *mine = theirs;
  }
  sort_in_catalogue_order(a.report.results);
  auto add_missing = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
    for (const auto& s : from)
      if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
  };
  // An empty selection means "everything": the union stays everything.
  if (a.options.suites.empty() || b.options.suites.empty()) a.options.suites.clear();
  else add_missing(a.options.suites, b.options.suites);
  if (a.options.checks.empty() || b.options.checks.empty()) a.options.checks.clear();
  else add_missing(a.options.checks, b.options.checks);
  a.options.slow = a.options.slow || b.options.slow;
  a.options.strict = a.options.strict || b.options.strict;
  add_missing(a.report.notes, b.report.notes);
  a.report.interrupted = a.report.interrupted || b.report.interrupted;
  if (b.report.unreachable && !a.report.unreachable) {
    a.report.unreachable = true;
    a.report.unreachable_reason = b.report.unreachable_reason;
  }
  a.report.started = std::min(a.report.started, b.report.started);
  a.report.duration = std::max(a.report.duration, b.report.duration);
  a.embedded = a.embedded && b.embedded;
  a.report.exit_code = verdict_of(a.report, a.options.strict).exit_code();
  return a;
}

json::value result_document(const ContractRun& run) { return result_document(run.report, run.options, run.embedded); }

}  // namespace crh::contracts
