// JUnit XML rendering.
#include "reports/junit.hpp"

#include <boost/json.hpp>
#include <cstdio>

#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "reports/comparison_view.hpp"
#include "reports/rerun.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t':
      case '\n':
      case '\r': out.push_back(static_cast<char>(c)); break;
      default: out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));  // not allowed in XML 1.0
    }
  }
  return out;
}

namespace {

namespace k = results::keys;
using results::DocView;

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

std::string evidence_text(const DocView& check) {
  std::string out;
  for (const auto& f : check[k::check::findings].items())
    out += clean(f[k::finding::severity]) + " " + clean(f[k::finding::rule]) + ": " + clean(f[k::finding::text]) + "\n";
  const auto evidence = check[k::check::evidence].items();
  if (!evidence.empty()) out += "Exchanges (export CRH_API_KEY to rerun):\n";
  for (const auto& e : evidence)
    out += "$ " + clean(e[k::evidence::curl]) + "\n  -> " + clean(e[k::evidence::answer]) + "\n";
  return out;
}

std::string rules_text(const DocView& check) {
  std::string out;
  for (const auto& r : check[k::check::rules].items()) out += (out.empty() ? "" : " ") + r.str();
  return out;
}

// What one testsuite holds: its testcases and their tally.
struct Suite {
  std::string cases;
  long tests = 0, failures = 0, errors = 0, skipped = 0;
  double ms = 0;
  bool untimed = false;  // time="0": the rules take no time of their own
};

struct Totals {
  long total = 0, failures = 0, errors = 0, skipped = 0;
};

std::string suite_xml(const std::string& name, const Suite& s, const std::string& timestamp, Totals& totals) {
  totals.total += s.tests;
  totals.failures += s.failures;
  totals.errors += s.errors;
  totals.skipped += s.skipped;
  return "  <testsuite name=\"" + xml_escape(name) + "\" tests=\"" + std::to_string(s.tests) + "\" failures=\"" +
         std::to_string(s.failures) + "\" errors=\"" + std::to_string(s.errors) + "\" skipped=\"" +
         std::to_string(s.skipped) + "\" time=\"" + (s.untimed ? std::string("0") : seconds(s.ms)) + "\" timestamp=\"" +
         xml_escape(timestamp) + "\">\n" + s.cases + "  </testsuite>\n";
}

std::string timestamp_of(const DocView& doc) { return clean(doc[k::envelope::started_at]).substr(0, 19); }

// How to rerun a failed or warned check of a `crh contract` result (a
// capture's checks judged by `crh pcap check` have no such rerun): the
// command, and where its key comes from.
std::string rerun_text(const DocView& contract, const DocView& check) {
  if (contract.find(k::envelope::kind).str() != k::kind_contract) return {};
  std::string out = "Rerun: " + clean(rerun_command(contract, check[k::check::id].str())) + "\n";
  if (!contract[k::envelope::target][k::target::embedded].boolean() && !rerun_reads_key_file(contract))
    out += "(export CRH_API_KEY, the target's key, first)\n";
  return out;
}

// A check as a testcase: a failure with its evidence, an indeterminate one as an error, a skip with its reason.
void add_check_case(const DocView& contract, const DocView& c, const std::string& suite_name, Suite& suite) {
  namespace ch = k::check;
  ++suite.tests;
  const std::string outcome = clean(c[ch::outcome]);
  const std::string message = clean(c[ch::message]);
  const double ms = c[ch::duration_ms].num();
  suite.ms += ms;
  std::string& cases = suite.cases;
  cases += "    <testcase classname=\"crh.contract." + xml_escape(suite_name) + "\" name=\"" +
           xml_escape(clean(c[ch::id])) + "\" time=\"" + seconds(ms) + "\">\n";
  const std::string header =
      clean(c[ch::severity]) + " check covering " + rules_text(c) + ": " + clean(c[ch::summary]) + "\n";
  if (outcome == "fail") {
    ++suite.failures;
    cases += "      <failure type=\"" + clean(c[ch::severity]) + "\" message=\"" + xml_escape(message) + "\">" +
             xml_escape(header + rerun_text(contract, c) + evidence_text(c)) + "</failure>\n";
  } else if (outcome == "indeterminate") {
    ++suite.errors;
    cases += "      <error type=\"indeterminate\" message=\"" + xml_escape(message) + "\">" +
             xml_escape(header + "The outcome is unknown (no answer); this is not a failure of the target.\n" +
                        evidence_text(c)) +
             "</error>\n";
  } else if (outcome == "skip") {
    ++suite.skipped;
    cases += "      <skipped message=\"" + xml_escape(message) + "\"/>\n";
  } else if (outcome == "warn") {
    cases += "      <system-out>" +
             xml_escape("WARNING (SHOULD, a failure with --strict): " + message + "\n" + header +
                        rerun_text(contract, c) + evidence_text(c)) +
             "</system-out>\n";
  } else {
    cases += "      <system-out>" + xml_escape(header) + "</system-out>\n";
  }
  cases += "    </testcase>\n";
}

// A rule of the catalogue as a testcase, failing when a check found it broken
// (a check that failed on another rule covered this one without contradicting it).
void add_rule_case(const DocView& rule, Suite& suite) {
  ++suite.tests;
  const std::string outcome = clean(rule[k::rule::outcome]);
  const std::string id = clean(rule[k::rule::id]);
  std::string listing =
      "Spec section " + clean(rule[k::rule::section]) + ": " + clean(rule[k::rule::text]) + "\nChecks:\n";
  const auto checks = rule[k::rule::checks].items();
  for (const auto& c : checks) {
    const std::string own = clean(c.find(k::rule_check::check_outcome));
    listing += "  " + clean(c[k::rule_check::outcome]) + "  " + clean(c[k::rule_check::id]) + " (" +
               clean(c[k::rule_check::severity]) + (own.empty() ? "" : "; the check's own outcome: " + own) + ")\n";
  }
  if (checks.empty()) listing += "  (none selected)\n";
  std::string& cases = suite.cases;
  cases += "    <testcase classname=\"crh.contract.rules\" name=\"" +
           xml_escape(id + " " + clean(rule[k::rule::text])) + "\" time=\"0\">\n";
  if (outcome == "fail") {
    ++suite.failures;
    cases += "      <failure type=\"rule\" message=\"a check found " + xml_escape(id) + " broken\">" +
             xml_escape(listing) + "</failure>\n";
  } else if (outcome == "indeterminate") {
    ++suite.errors;
    cases += "      <error type=\"indeterminate\" message=\"a check covering " + xml_escape(id) + " got no answer\">" +
             xml_escape(listing) + "</error>\n";
  } else if (outcome == "warn") {
    cases += "      <system-out>" + xml_escape("WARNING (SHOULD): a check warned on it\n" + listing) +
             "</system-out>\n";
  } else if (outcome == "uncovered" || outcome == "skip") {
    ++suite.skipped;
    cases += "      <skipped message=\"" +
             xml_escape(outcome == "skip" ? "no check covering it got as far as judging it (skipped, or stopped at an earlier failure)" : "no selected check covers it") +
             "\"/>\n      <system-out>" + xml_escape(listing) + "</system-out>\n";
  } else {
    cases += "      <system-out>" + xml_escape(listing) + "</system-out>\n";
  }
  cases += "    </testcase>\n";
}

// A run the preflight stopped: one failing testcase that says why (what was
// asked, what came back, the likely mistake), not a failure per check.
std::string preflight_suite(const DocView& result, Totals& totals) {
  namespace p = k::preflight;
  const auto preflight = result[k::envelope::preflight];
  const std::string reason = clean(result[k::envelope::verdict][k::verdict::reason]);
  Suite suite;
  suite.tests = suite.failures = 1;
  suite.cases = "    <testcase classname=\"crh.preflight\" name=\"preflight: the target can be tested as configured\" "
                "time=\"0\">\n      <failure type=\"" + xml_escape(clean(result[k::envelope::verdict][k::verdict::status])) +
                "\" message=\"" + xml_escape(reason) + "\">" +
                xml_escape("Request: " + clean(preflight[p::request]) + "\nAnswer: " + clean(preflight[p::answer]) +
                           "\nLikely mistake: " + clean(preflight[p::mistake]) + "\nNothing else was run.\n") +
                "</failure>\n    </testcase>\n";
  return suite_xml("preflight", suite, timestamp_of(result), totals);
}

// A testsuite per contract suite, and one of the rules.
std::string contract_suites(const DocView& result, Totals& totals) {
  if (result.find(k::envelope::preflight).is_object()) return preflight_suite(result, totals);
  const auto checks = result[k::contract::checks].items();
  const std::string timestamp = timestamp_of(result);
  std::string body;
  for (const auto& s : result[k::contract::suites].items()) {
    const std::string name = clean(s[k::suite::name]);
    Suite suite;
    for (const auto& c : checks)
      if (clean(c[k::check::suite]) == name) add_check_case(result, c, name, suite);
    body += suite_xml(name, suite, timestamp, totals);
  }
  Suite rules;
  rules.untimed = true;
  for (const auto& rule : result[k::contract::rules].items()) add_rule_case(rule, rules);
  return body + suite_xml("rules", rules, timestamp, totals);
}

// The outages of a load, one a line: when, how long, the answers.
std::string outage_listing(const DocView& load) {
  namespace x = k::outage;
  std::string out;
  for (const auto& o : load.find(k::load::outages).find(k::outages::stretches).items()) {
    out += "down from " + fixed(o[x::start_s].num(), 3) + " s to " + fixed(o[x::end_s].num(), 3) + " s (" +
           fixed(o[x::duration_s].num(), 2) + " s):";
    for (const auto& [name, n] : o[x::answers].fields()) out += " " + clean(name) + "×" + fixed(n.num(), 0);
    out += "\n";
  }
  return out;
}

// A load result: the race's invariant, each threshold, and what was measured.
std::string load_suite(const DocView& load, Totals& totals) {
  if (load.find(k::envelope::preflight).is_object()) return preflight_suite(load, totals);
  const std::string scenario = clean(load[k::envelope::config][k::load_config::scenario]);
  const std::string classname = "crh.load." + xml_escape(scenario);
  const auto t = load[k::load::totals];
  const auto verdict = load[k::envelope::verdict];
  const double measured_ms = t[k::totals::measured_s].num() * 1000;
  Suite suite;
  ++suite.tests;
  suite.cases +=
      "    <testcase classname=\"" + classname + "\" name=\"completed\" time=\"" + seconds(measured_ms) + "\">\n";
  std::string summary = fixed(t[k::totals::requests].num(), 0) + " requests, " +
                        fixed(t[k::totals::achieved_rate].num(), 0) + "/s, " + fixed(t[k::totals::errors].num(), 0) +
                        " errors\n";
  for (const auto& why : verdict[k::verdict::invalid_reasons].items()) summary += "INVALID: " + why.str() + "\n";
  if (verdict[k::verdict::interrupted].boolean()) {
    ++suite.errors;
    suite.cases += "      <error type=\"interrupted\" message=\"the load was interrupted (Ctrl-C)\">" +
                   xml_escape(summary) + "</error>\n";
  } else {
    suite.cases += "      <system-out>" + xml_escape(summary) + "</system-out>\n";
  }
  suite.cases += "    </testcase>\n";
  if (const auto race = load.find(k::load::race)) {
    ++suite.tests;
    const double count = race[k::race::violation_count].num();
    suite.cases += "    <testcase classname=\"" + classname +
                   "\" name=\"first caller wins: exactly one winner per round\" time=\"0\">\n";
    std::string listing = fixed(race[k::race::rounds].num(), 0) + " rounds, " + fixed(count, 0) + " violation(s)\n";
    for (const auto& v : race[k::race::violations].items())
      listing += clean(v[k::violation::kind]) + " (round " + fixed(v[k::violation::round].num(), 0) +
                 "): " + clean(v[k::violation::explanation]) + "\n";
    if (count > 0) {
      ++suite.failures;
      suite.cases += "      <failure type=\"violation\" message=\"" + fixed(count, 0) + " invariant violation(s)\">" +
                     xml_escape(listing) + "</failure>\n";
    } else {
      suite.cases += "      <system-out>" + xml_escape(listing) + "</system-out>\n";
    }
    suite.cases += "    </testcase>\n";
  }
  if (const auto check = load.find(k::load::history_check); check.is_object()) {
    // The mixed load's history: a failure per run with every violation kept.
    ++suite.tests;
    namespace h = k::history_check;
    const double count = load[k::race::violation_count].num();
    suite.cases += "    <testcase classname=\"" + classname +
                   "\" name=\"history: every read is one a linearizable service could answer\" time=\"0\">\n";
    std::string listing = fixed(check[h::database_reads].num(), 0) + " database reads, " +
                          fixed(check[h::agent_reads].num(), 0) + " agent states, " + fixed(check[h::tags].num(), 0) +
                          " tags judged; " + fixed(count, 0) + " violation(s)\n";
    for (const auto& why : check[h::unjudged].items()) listing += "not judged: " + clean(why) + "\n";
    for (const auto& v : load[k::race::violations].items()) {
      listing += clean(v[k::violation::kind]) + ": " + clean(v[k::violation::explanation]) + "\n";
      for (const auto& op : v[k::violation::proof].items())
        listing += "  " + clean(op[k::proof::op]) + " " + clean(op.find(k::proof::value)) + " [" +
                   fixed(op[k::proof::invoke_ns].num() / 1e6, 3) + "–" +
                   fixed(op[k::proof::complete_ns].num() / 1e6, 3) + " ms] " + clean(op[k::proof::outcome]) + " " +
                   fixed(op[k::proof::status].num(), 0) + "\n";
    }
    // One command runs the load again: every violation of a run has the same.
    if (const auto kept = load[k::race::violations].items(); !kept.empty())
      if (const auto again = kept.front().find(k::violation::reproduce).str(); !again.empty())
        listing += "reproduce: " + clean(again) + "\n";
    if (count > 0) {
      ++suite.failures;
      suite.cases += "      <failure type=\"violation\" message=\"" + fixed(count, 0) + " invariant violation(s)\">" +
                     xml_escape(listing) + "</failure>\n";
    } else {
      suite.cases += "      <system-out>" + xml_escape(listing) + "</system-out>\n";
    }
    suite.cases += "    </testcase>\n";
  }
  if (const auto set = load.find(k::load::shard_set); set.is_object()) {
    // Merged shards: every index of the run there once, and how far apart they began.
    ++suite.tests;
    namespace ss = k::shard_set;
    suite.cases += "    <testcase classname=\"" + classname + "\" name=\"every shard of run " +
                   xml_escape(clean(set[ss::run_id])) + " merged once\" time=\"0\">\n";
    const std::string text = fixed(static_cast<double>(set[ss::present].items().size()), 0) + " of " +
                             fixed(set[ss::count].num(), 0) + " shards; start skew " +
                             format_ns(set[ss::start_skew_ns].num());
    if (!set[ss::complete].boolean()) {
      ++suite.failures;
      suite.cases += "      <failure type=\"incomplete\" message=\"" + xml_escape(clean(verdict[k::verdict::reason])) +
                     "\">" + xml_escape(text) + "</failure>\n";
    } else {
      suite.cases += "      <system-out>" + xml_escape(text) + "</system-out>\n";
    }
    suite.cases += "    </testcase>\n";
  }
  for (const auto& th : load[k::load::thresholds].items()) {
    ++suite.tests;
    const std::string description = xml_escape(clean(th[k::threshold::description]));
    suite.cases += "    <testcase classname=\"" + classname + ".thresholds\" name=\"" +
                   xml_escape(clean(th[k::threshold::expression])) + "\" time=\"0\">\n";
    if (th.find(k::threshold::deferred).boolean()) {  // a shard's: judged on the merged shards
      ++suite.skipped;
      suite.cases += "      <skipped message=\"" + description + "\"/>\n";
    } else if (!th[k::threshold::held].boolean()) {
      ++suite.failures;
      const std::string expression = clean(th[k::threshold::expression]);
      const bool outage = expression.starts_with("outage.") || expression.starts_with("unavailable");
      suite.cases += "      <failure type=\"threshold\" message=\"" + description + "\"" +
                     (outage ? ">" + xml_escape(outage_listing(load)) + "</failure>\n" : "/>\n");
    } else {
      suite.cases += "      <system-out>" + description + "</system-out>\n";
    }
    suite.cases += "    </testcase>\n";
  }
  suite.ms = measured_ms;
  return suite_xml("load." + scenario, suite, timestamp_of(load), totals);
}

// A testcase per compared figure: a failure where it regressed, skipped with
// the reason where the data could not tell (inconclusive, not backed); and a
// testcase per change point, failing when its level is beyond the limit.
std::string regression_suite(const DocView& comparison, const std::string& timestamp, Totals& totals) {
  const ShownComparison c = read_comparison(comparison);
  Suite suite;
  auto add = [&suite](const std::string& name, const std::string& verdict, const std::string& line) {
    ++suite.tests;
    suite.cases += "    <testcase classname=\"crh.regressions\" name=\"" + xml_escape(name) + "\" time=\"0\">\n";
    if (verdict == "regressed") {
      ++suite.failures;
      suite.cases += "      <failure type=\"regression\" message=\"" + xml_escape(line) + "\"/>\n";
    } else if (verdict == "inconclusive" || verdict == "not backed" || verdict == "too noisy") {
      ++suite.skipped;
      suite.cases += "      <skipped message=\"" + xml_escape(verdict + ": " + line) + "\"/>\n";
    } else {
      suite.cases += "      <system-out>" + xml_escape(line) + "</system-out>\n";
    }
    suite.cases += "    </testcase>\n";
  };
  for (const auto& f : c.figures) {
    std::string line = f.figure + " of " + f.operation + " (" + f.scenario + " load) ";
    if (c.against) {
      line += "is " + f.shown_or_unmeasured(f.current) + " on the candidate against " +
              f.shown_or_unmeasured(f.reference) + " on the baseline deployment, " + f.paired_change_text() + " over " + std::to_string(f.pairs) +
              (c.design == "duet" ? " seconds" : " pairs") + "; limit " + fixed(c.limit_pct, 1) + "% worse" +
              (f.reason.empty() ? "" : ": " + f.reason);
    } else if (c.nights) {
      line += "is " + f.current_text() + " tonight against " + f.format(f.reference) +
              (f.band_text().empty() ? "" : " (the nights' band " + f.band_text() + ")") + ", " + f.change_text() +
              "; limit " + fixed(c.limit_pct, 1) + "% worse" +
              (f.min_detectable_pct ? "; detectable from " + fixed(*f.min_detectable_pct, 0) + "%" : "") +
              (f.reason.empty() ? "" : ": " + f.reason);
    } else {
      line += "was " + f.format(f.reference) + " in the baseline and is " + f.current_text() + " now (" +
              f.change_text() + "; limit " + fixed(c.limit_pct, 1) + "% worse)";
    }
    add(f.name(), f.verdict, line);
  }
  for (const auto& p : c.change_points)
    add("change point: " + p.scenario + " " + p.operation + " " + p.figure,
        p.beyond_limit ? "regressed" : p.pending ? "inconclusive" : "",
        "a new level from night " + p.night + ": " + format_figure(p.unit, p.before) + " before, " +
            format_figure(p.unit, p.after) + " after" +
            (p.change_pct ? " (" + signed_percent(*p.change_pct) + ")" : "") +
            (p.beyond_limit || p.pending ? ", " + p.status() + " (limit " + fixed(c.limit_pct, 1) + "%)" : ""));
  return suite_xml("regressions", suite, timestamp, totals);
}

// What the document lacked, as an error a CI server shows: the report above may be incomplete.
std::string missing_suite(const DocView& doc, const std::string& timestamp, Totals& totals) {
  const std::string footnote = doc.missing_footnote();
  if (footnote.empty()) return {};
  Suite suite;
  suite.tests = suite.errors = 1;
  suite.cases =
      "    <testcase classname=\"crh.document\" name=\"every field the report reads is present\" time=\"0\">\n"
      "      <error type=\"missing\" message=\"" +
      xml_escape(footnote) + "\">" + xml_escape(clean(footnote) + "\nThe testcases above show what was there.\n") +
      "</error>\n    </testcase>\n";
  return suite_xml("document", suite, timestamp, totals);
}

}  // namespace

std::string junit_xml(const json::value& result) {
  const DocView doc(result);
  Totals totals;
  std::string body;
  const std::string kind = clean(doc[k::envelope::kind]);
  const std::string timestamp = timestamp_of(doc);
  if (kind == k::kind_contract || kind == k::kind_pcap) body = contract_suites(doc, totals);  // pcap: the same shape
  else if (kind == k::kind_load) body = load_suite(doc, totals);
  else {
    if (const auto c = doc[k::run::contract]; c.is_object()) body += contract_suites(c, totals);
    for (const auto& l : doc[k::run::loads].items()) body += load_suite(l, totals);
    if (const auto c = doc[k::run::comparison]; c.is_object()) body += regression_suite(c, timestamp, totals);
  }
  const double duration_ms = doc[k::envelope::duration_ms].num();
  body += missing_suite(doc, timestamp, totals);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crh " + xml_escape(kind) + "\" tests=\"" +
         std::to_string(totals.total) + "\" failures=\"" + std::to_string(totals.failures) + "\" errors=\"" +
         std::to_string(totals.errors) + "\" skipped=\"" + std::to_string(totals.skipped) + "\" time=\"" +
         seconds(duration_ms) + "\">\n" + body + "</testsuites>\n";
}

}  // namespace crh::reports
