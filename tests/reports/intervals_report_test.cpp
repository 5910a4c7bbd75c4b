// Percentile intervals and not-backed percentiles as a reader sees them
// (terminal, HTML), and the comparison with a record of nights (terminal,
// HTML, JUnit): tonight's interval, the nights' band, the verdict, the minimum
// detectable change, change points; the could-not-tell verdict in amber.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "load_fixture.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"
#include "reports/load_terminal.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"
#include "xml_reader.hpp"

namespace crh::reports::intervals_report_test {
namespace {

namespace json = boost::json;
using loadgen::Scenario;
using test::XmlReader;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// A percentile of `value` ns with a ±3% interval, or not backed.
json::object percentile(double value, std::uint64_t n, bool backed) {
  json::object p{{"value", value}, {"lower", value * 0.97}, {"upper", value * 1.03}, {"n", n},
                 {"method", "blocks"}, {"binomial", json::object{{"lower", value * 0.98}, {"upper", value * 1.02}}},
                 {"blocks", json::object{{"lower", value * 0.97}, {"upper", value * 1.03}, {"count", 12}}},
                 {"backed", backed}, {"beyond", backed ? 40 : 2}};
  if (!backed) p["backing_s"] = 24.0;
  return p;
}

// The synthetic mixed load with intervals on every operation's latency
// (p99.9 not backed, as with 1,000 samples), as schema_version 2 writes them.
json::object load_with_intervals() {
  json::object load = loadgen::result_document(test::synthetic_load_run(Scenario::mixed, 0));
  for (auto& [name, op] : load["operations"].as_object()) {
    auto& latency = op.as_object()["latency"].as_object();
    latency["percentiles"] = json::object{
        {"p50", percentile(1'240'000, 1000, true)},
        {"p90", percentile(2'000'000, 1000, true)},
        {"p99", percentile(2'900'000, 1000, true)},
        {"p99.9", percentile(3'100'000, 1000, false)}};
  }
  return load;
}

json::object load_without_intervals() {
  json::object load = loadgen::result_document(test::synthetic_load_run(Scenario::mixed, 0));
  for (auto& [name, op] : load["operations"].as_object()) op.as_object()["latency"].as_object().erase("percentiles");
  return load;
}

TEST(Intervals, TerminalShowsEachPercentileWithItsInterval) {
  const auto text = load_summary(json::value(load_with_intervals()), {});
  EXPECT_TRUE(contains(text, "p99 2.90 ms [2.81, 2.99]")) << text;
  EXPECT_TRUE(contains(text, "p99.9 3.10 ms (not backed: 1000 samples; ~24 s at this rate would back it)")) << text;
  EXPECT_TRUE(contains(text, "[95% interval: the wider of the rank (binomial) and per-second-block intervals")) << text;
  EXPECT_TRUE(contains(text, "3.10 ms*")) << "the table does not mark the not-backed percentile: " << text;
}

RunMeta meta();

// A short load (fewer than 10 one-second blocks): the rank interval is shown, and said so.
TEST(Intervals, FewBlocksAreSaid) {
  auto load = load_with_intervals();
  EXPECT_FALSE(contains(load_summary(json::value(load), {}), "fewer than 10 one-second blocks"));
  for (auto& [name, op] : load["operations"].as_object())
    op.as_object()["latency"].as_object()["percentiles"].as_object()["p99"].as_object().erase("blocks");
  EXPECT_TRUE(contains(load_summary(json::value(load), {}), "fewer than 10 one-second blocks behind some percentiles"));
  RunParts parts;
  parts.loads.push_back(load);
  EXPECT_TRUE(contains(html_report(run_document(parts, std::nullopt, meta())), "fewer than 10 one-second blocks"));
}

TEST(Intervals, OlderDocumentsSayTheyHaveNone) {
  const auto text = load_summary(json::value(load_without_intervals()), {});
  EXPECT_TRUE(contains(text, "no percentile intervals")) << text;
  EXPECT_FALSE(contains(text, "95% interval")) << text;
  EXPECT_FALSE(contains(text, "missing from the document")) << "an older document is not a broken one: " << text;
}

RunMeta meta() {
  RunMeta m;
  m.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  m.base_url = "http://127.0.0.1:18080";
  m.channel = "1";
  m.environment = environment();
  return m;
}

TEST(Intervals, HtmlTableAndWhiskers) {
  RunParts parts;
  parts.loads.push_back(load_with_intervals());
  const auto html = html_report(run_document(parts, std::nullopt, meta()));
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  std::size_t whiskers = 0;
  for (const auto* g : root->descendants("g")) whiskers += g->attr("class") == "whisker";
  EXPECT_EQ(whiskers, 4u * 4u) << "a whisker per percentile and operation on the percentile chart";
  EXPECT_TRUE(contains(html, "[2.81, 2.99]")) << "the table lacks the interval";
  EXPECT_TRUE(contains(html, "<span class=\"notbacked\"")) << "the table does not mark the not-backed percentile";

  parts.loads[0] = load_without_intervals();
  const auto old = html_report(run_document(parts, std::nullopt, meta()));
  EXPECT_FALSE(contains(old, "class=\"whisker\""));
  EXPECT_TRUE(contains(old, "No percentile intervals"));
}

// `crh run --repeat 3`: each repetition's figures beside the merged ones.
TEST(Intervals, RepetitionsAreShownEach) {
  auto load = load_with_intervals();
  json::array reps;
  for (int i = 1; i <= 3; ++i)
    reps.push_back(json::object{
        {"index", i},
        {"verdict", {{"status", "passed"}, {"exit_code", 0}}},
        {"totals", {{"achieved_rate", 2800 + 50 * i}, {"error_rate", 0.001}}},
        {"operations", {{"call", {{"latency", {{"p50_ns", 1'000'000 + 100'000 * i}, {"p99_ns", 3'000'000}}},
                                  {"count", 1000}}}}}});
  load["repetitions"] = std::move(reps);
  const auto text = load_summary(json::value(load), {});
  EXPECT_TRUE(contains(text, "  2: 2900/s, errors 0.10%; call p50 1.20 ms p99 3.00 ms")) << text;
  RunParts parts;
  parts.loads.push_back(load);
  const auto html = html_report(run_document(parts, std::nullopt, meta()));
  EXPECT_TRUE(contains(html, "<h3>Repetitions</h3>"));
  EXPECT_TRUE(contains(html, "<td class=\"n\">1.30 ms / 3.00 ms</td>")) << "the third repetition's call latency";
}

// A run judged against a record of nights: one figure regressed, one
// inconclusive, one not backed, one too noisy, one without change; a change
// point beyond the limit, one pending, and a machine change.
json::object nights_run(const std::string& status = "failed", int exit_code = 1) {
  RunParts parts;
  parts.loads.push_back(load_with_intervals());
  auto doc = run_document(parts, std::nullopt, meta());
  doc["comparison"] = json::parse(R"j({
    "mode": "nights", "max_regression_pct": 20, "regressions": 1, "inconclusive": 1, "min_error_rate_rise": 0.001,
    "nights": {"dir": "nights/", "recorded": 31, "window": 20, "fingerprint": "3f2a9c1b", "accepted_from": null},
    "notes": [], "unreliable": ["mixed load: its halves differ by 31% in p50 (more than the 20% limit)"],
    "figures": [
      {"scenario": "mixed", "operation": "call", "figure": "p50", "unit": "ns", "better": "lower",
       "baseline": 1000000, "current": 1050000, "current_lower": 1020000, "current_upper": 1080000,
       "change_pct": 5, "change_lower_pct": 2, "change_upper_pct": 8, "worse_pct": 5, "limit_pct": 20,
       "regressed": false, "verdict": "no change", "band_lower": 950000, "band_upper": 1060000,
       "min_detectable_pct": 22, "nights_used": 20, "n": 300000, "backed": true, "rule": "median and MAD",
       "reason": "within the nights' spread"},
      {"scenario": "mixed", "operation": "tag", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 2000000, "current": 2500000, "current_lower": 2200000, "current_upper": 2900000,
       "change_pct": 25, "change_lower_pct": 10, "change_upper_pct": 45, "worse_pct": 25, "limit_pct": 20,
       "regressed": false, "verdict": "inconclusive", "band_lower": 1800000, "band_upper": 2300000,
       "min_detectable_pct": 41, "nights_used": 20, "n": 3000, "backed": true, "rule": "median and MAD",
       "reason": "the interval of the change straddles the limit"},
      {"scenario": "mixed", "operation": "all", "figure": "throughput", "unit": "per_second", "better": "higher",
       "baseline": 3000, "current": 2000, "change_pct": -33.3, "change_lower_pct": -36, "change_upper_pct": -30,
       "worse_pct": 33.3, "limit_pct": 20, "regressed": true, "verdict": "regressed", "band_lower": 2850,
       "band_upper": 3150, "min_detectable_pct": 21, "nights_used": 20, "repetitions": [1990, 2000, 2010],
       "rule": "median and MAD", "reason": "beyond the nights' spread and 33% worse"},
      {"scenario": "mixed", "operation": "untag", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 2000000, "current": 4000000, "change_pct": 100, "worse_pct": 100, "limit_pct": 20,
       "regressed": false, "verdict": "not backed", "backed": false, "n": 400, "nights_used": 20,
       "reason": "400 samples: fewer than 10 beyond the p99"},
      {"scenario": "mixed", "operation": "wake", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 1000000, "current": 1300000, "change_pct": 30, "worse_pct": 30, "limit_pct": 20,
       "regressed": false, "verdict": "too noisy", "band_lower": 200000, "band_upper": 5000000, "n": 300000,
       "backed": true, "min_detectable_pct": 640, "nights_used": 20,
       "reason": "within the band, which is wider than a worsening of 1.5 x the 20% limit: too noisy to judge at this limit"}],
    "change_points": [{"scenario": "mixed", "operation": "call", "figure": "p50", "night": "20261120T010000Z-ab12cd34",
       "started_at": "2026-11-20T01:00:00Z", "before": 800000, "after": 1000000, "change_pct": 25, "beyond_limit": true},
      {"scenario": "mixed", "operation": "get-agent", "figure": "p50", "night": "20261121T010000Z-cd34ef56",
       "started_at": "2026-11-21T01:00:00Z", "before": 800000, "after": 1000000, "change_pct": 25, "beyond_limit": false,
       "pending": true, "nights_at_level": 2}],
    "changes": [{"night": "20261118T010000Z-0badf00d", "what": "machine", "from": "Xeon E5", "to": "EPYC 7B13"}]
  })j");
  doc["verdict"].as_object()["status"] = status;
  doc["verdict"].as_object()["exit_code"] = exit_code;
  return doc;
}

TEST(NightsComparison, TerminalPutsRegressedAndInconclusiveFirst) {
  const auto text = run_closing(nights_run(), {});
  const auto regressed = text.find("REGRESSED mixed all throughput: 2000/s");
  const auto inconclusive = text.find("INCONCLUSIVE mixed tag p99: 2.50 ms [2.20, 2.90] against 2.00 ms");
  ASSERT_NE(regressed, std::string::npos) << text;
  ASSERT_NE(inconclusive, std::string::npos) << text;
  EXPECT_LT(regressed, inconclusive);
  EXPECT_TRUE(contains(text, "(nights [1.80, 2.30]), +25.0% [+10.0, +45.0%]; detectable from 41%")) << text;
  EXPECT_TRUE(contains(text, "the interval of the change straddles the limit")) << "no reason given: " << text;
  EXPECT_TRUE(contains(text, "1 regressed, 1 inconclusive")) << text;
  EXPECT_TRUE(contains(text, "UNRELIABLE mixed load: its halves differ by 31%")) << text;
  EXPECT_TRUE(contains(text, "CHANGE POINT  mixed call p50 from night 20261120T010000Z-ab12cd34")) << text;
  EXPECT_TRUE(contains(text, "machine changed on night 20261118T010000Z-0badf00d: Xeon E5 → EPYC 7B13")) << text;
  EXPECT_FALSE(contains(text, "NO CHANGE mixed call p50")) << "unchanged figures only with --verbose: " << text;
  EXPECT_TRUE(contains(run_closing(nights_run(), {.verbose = true}), "NOT BACKED mixed untag p99"));
}

TEST(NightsComparison, CouldNotTellIsAmberNeitherPassedNorFailed) {
  const auto doc = nights_run("inconclusive", 4);
  const auto text = run_closing(doc, {.color = true});
  EXPECT_TRUE(contains(text, "\x1b[1;33mINCONCLUSIVE\x1b[0m")) << text;
  const auto html = html_report(doc);
  EXPECT_TRUE(contains(html, "<div class=\"verdict inconclusive\"><strong>INCONCLUSIVE</strong> (exit code 4)"));
  EXPECT_TRUE(contains(html, ".verdict.inconclusive,.verdict.unreliable{background:#fff8c5"));
}

TEST(NightsComparison, HtmlShowsIntervalBandVerdictAndDetectableChange) {
  const auto html = html_report(nights_run());
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  std::size_t strips = 0, rows = 0;
  for (const auto* svg : root->descendants("svg")) strips += svg->attr("class") == "strip";
  EXPECT_EQ(strips, 5u) << "a strip per compared figure";
  for (const auto* tr : root->descendants("tr")) {
    const auto cells = tr->all("td");
    if (cells.size() != 8 || tr->descendants("svg").empty()) continue;  // a figure's row, with its strip
    ++rows;
    if (tr->attr("class") == "regressed") {  // says why it is red
      const auto* mark = cells.back()->child("strong");
      ASSERT_TRUE(mark);
      EXPECT_EQ(mark->text, "REGRESSED");
    }
  }
  EXPECT_EQ(rows, 5u);
  // The figure too noisy to judge and the one without change are folded away, the others are not.
  const auto folded = root->descendants("details");
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[0]->descendants("svg").size(), 1u);
  EXPECT_TRUE(contains(folded[0]->child("summary")->text, "too noisy to judge at this limit"));
  EXPECT_EQ(folded[1]->descendants("svg").size(), 1u);
  for (const auto* want : {"Comparison with the record of nights", "2.50 ms [2.20, 2.90]", "[1.80, 2.30]",
                           "+25.0% [+10.0, +45.0%]", "o-inconclusive", "o-not-backed", "41%", "repetitions: 1990/s",
                           "Change points", "a new level beyond the limit", "machine changed on night",
                           "UNRELIABLE</span> mixed load: its halves differ"})
    EXPECT_TRUE(contains(html, want)) << "the report lacks " << want;
}

TEST(NightsComparison, JUnitSkipsInconclusiveAndFailsRegressed) {
  const auto xml = junit_xml(json::value(nights_run()));
  XmlReader reader(xml);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  const auto* suite = [&]() -> const test::Element* {
    for (const auto* s : root->descendants("testsuite"))
      if (s->attr("name") == "regressions") return s;
    return nullptr;
  }();
  ASSERT_TRUE(suite);
  EXPECT_EQ(suite->attr("tests"), "7");     // five figures and two change points
  EXPECT_EQ(suite->attr("failures"), "2");  // the throughput and the lasting change point
  EXPECT_EQ(suite->attr("skipped"), "4");   // inconclusive, not backed, too noisy, the pending change point
  for (const auto* c : suite->all("testcase")) {
    const auto name = c->attr("name").value_or("");
    if (name == "mixed tag p99") {
      ASSERT_EQ(c->all("skipped").size(), 1u);
      EXPECT_TRUE(contains(c->all("skipped")[0]->attr("message").value_or(""), "inconclusive: "));
      EXPECT_TRUE(contains(c->all("skipped")[0]->attr("message").value_or(""), "straddles the limit"));
    }
    if (name == "mixed wake p99") {
      ASSERT_EQ(c->all("skipped").size(), 1u);
      EXPECT_TRUE(contains(c->all("skipped")[0]->attr("message").value_or(""), "too noisy: "));
    }
    if (name == "change point: mixed get-agent p50") {
      ASSERT_EQ(c->all("skipped").size(), 1u);
      EXPECT_TRUE(contains(c->all("skipped")[0]->attr("message").value_or(""), "could not tell yet"));
    }
    if (name == "mixed all throughput") {
      EXPECT_EQ(c->all("failure").size(), 1u);
    }
  }
}

// A run compared with a baseline deployment side by side (crh run
// --against), its comparison as runners/against.cpp writes it: p50
// regressed, tag p99 inconclusive, wake p99 too noisy, untag p99 not
// measured on both sides. Built through run_document, so the verdict is
// the tally's.
json::object against_run(bool with_regression = true) {
  RunParts parts;
  parts.loads.push_back(load_with_intervals());
  auto comparison = json::parse(R"j({
    "mode": "against", "max_regression_pct": 5, "regressions": 1, "inconclusive": 1, "unreliable": [], "notes":
      ["contract check errors.unknown-route: fail on the candidate, pass on the baseline deployment"],
    "against": {"base_url": "http://release.example:8080", "design": "trials", "pairs": 10, "duration_s": 2,
                "seed": 7, "confidence": 0.990234375},
    "figures": [
      {"scenario": "mixed", "operation": "call", "figure": "p50", "unit": "ns", "better": "lower",
       "baseline": 1000000, "current": 1120000, "change_pct": 12, "worse_pct": 12, "limit_pct": 5,
       "verdict": "regressed", "regressed": true, "pairs": 10, "ratio": 1.12, "ratio_lower": 1.08,
       "ratio_upper": 1.16, "confidence": 0.990234375, "change_lower_pct": 8, "change_upper_pct": 16,
       "min_detectable_pct": 2.1, "rule": "Hodges-Lehmann ratio of 10 interleaved pairs",
       "reason": "candidate / baseline 1.120: worse than the 5% limit, and every ratio in the interval is worse than 1"},
      {"scenario": "mixed", "operation": "tag", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 2000000, "current": 2140000, "change_pct": 7, "worse_pct": 7, "limit_pct": 5,
       "verdict": "inconclusive", "regressed": false, "pairs": 10, "ratio": 1.07, "ratio_lower": 0.995,
       "ratio_upper": 1.075, "confidence": 0.990234375, "change_lower_pct": -0.5, "change_upper_pct": 7.5,
       "min_detectable_pct": 6.8, "reason": "worse than the 5% limit on its face, but the interval reaches 1"},
      {"scenario": "mixed", "operation": "wake", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 1000000, "current": 1300000, "change_pct": 30, "worse_pct": 30, "limit_pct": 5,
       "verdict": "too noisy", "regressed": false, "pairs": 10, "ratio": 1.3, "ratio_lower": 0.7,
       "ratio_upper": 1.9, "confidence": 0.990234375, "change_lower_pct": -30, "change_upper_pct": 90,
       "min_detectable_pct": 80, "reason": "the pairs disagree too much"},
      {"scenario": "mixed", "operation": "untag", "figure": "p99", "unit": "ns", "better": "lower",
       "baseline": 0, "current": 0, "change_pct": null, "worse_pct": null, "limit_pct": 5,
       "verdict": "not backed", "regressed": false, "pairs": 0,
       "reason": "measured on both sides in 0 pair(s) only"}]
  })j").as_object();
  if (!with_regression) {
    comparison["regressions"] = 0;
    comparison["figures"].as_array().erase(comparison["figures"].as_array().begin());
  }
  return run_document(parts, std::move(comparison), meta());
}

TEST(AgainstComparison, TheVerdictNamesTheBaselineDeploymentAndAnInconclusiveFigureCannotTell) {
  const auto failed = against_run();
  EXPECT_EQ(failed.at("verdict").at("exit_code").to_number<int>(), 1);
  const std::string reason(failed.at("verdict").at("reason").as_string());
  EXPECT_TRUE(contains(reason, "1 figure(s) regressed beyond 5.0% of the baseline deployment, over their whole interval: "
                               "mixed call p50 +12.0%")) << reason;
  const auto unclear = against_run(false);
  EXPECT_EQ(unclear.at("verdict").at("exit_code").to_number<int>(), 4);
  EXPECT_EQ(unclear.at("verdict").at("status").as_string(), "inconclusive");
  EXPECT_TRUE(contains(std::string(unclear.at("verdict").at("reason").as_string()),
                       "1 figure(s) inconclusive: worse than the limit on their face, but their interval over the "
                       "pairs reaches no change"));
}

TEST(AgainstComparison, TerminalHtmlAndJUnitShowBothSidesTheChangeAndItsPairs) {
  const auto doc = against_run();
  const auto text = run_closing(doc, {});
  EXPECT_TRUE(contains(text, "comparison with the baseline deployment http://release.example:8080 (10 pairs of 2 s "
                             "trials, one side after the other in a random order), limit 5.0% worse")) << text;
  EXPECT_TRUE(contains(text, "mixed call p50: candidate 1.12 ms against baseline 1.00 ms, +12.0% [+8.0, +16.0%] over "
                             "10 pairs")) << text;
  EXPECT_TRUE(contains(text, "1 regressed, 1 inconclusive")) << text;
  EXPECT_TRUE(contains(text, "note: contract check errors.unknown-route: fail on the candidate")) << text;

  const auto html = html_report(doc);
  for (const auto* want : {"Comparison with the baseline deployment", "<code>http://release.example:8080</code>",
                           "change [99%]", "+12.0% [+8.0, +16.0%]", "not measured on both sides", "10 pairs"})
    EXPECT_TRUE(contains(html, want)) << want;

  const auto xml = junit_xml(json::value(doc));
  XmlReader reader(xml);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  for (const auto* s : root->descendants("testsuite"))
    if (s->attr("name") == "regressions") {
      EXPECT_EQ(s->attr("tests"), "4");
      EXPECT_EQ(s->attr("failures"), "1");
      EXPECT_EQ(s->attr("skipped"), "3");  // inconclusive, too noisy, not backed
      for (const auto* c : s->all("testcase"))
        if (c->attr("name") == "mixed call p50") {
          ASSERT_EQ(c->all("failure").size(), 1u);
          EXPECT_TRUE(contains(c->all("failure")[0]->attr("message").value_or(""),
                               "on the candidate against 1.00 ms on the baseline deployment, +12.0% [+8.0, +16.0%] "
                               "over 10 pairs"));
        }
    }
}

}  // namespace
}  // namespace crh::reports::intervals_report_test
