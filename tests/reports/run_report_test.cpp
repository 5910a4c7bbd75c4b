// The run document, the baseline comparison and its gate, and the HTML report
// and JUnit XML of a run with every section present: well-formed, nothing
// fetched from elsewhere, each section there, regressions marked.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "crafted_contract.hpp"
#include "load_fixture.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"
#include "reports/load_terminal.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"
#include "xml_reader.hpp"

namespace crh::reports {
namespace {

namespace json = boost::json;
using loadgen::Scenario;
using test::synthetic_load_run;
using test::XmlReader;

// A run's parts: the crafted contract result and a race and a mixed load whose
// latencies are `scale` times the baseline's.
RunParts parts(double scale = 1.0) {
  RunParts p;
  p.contract = test::crafted_contract_result().as_object();
  p.loads.push_back(loadgen::result_document(synthetic_load_run(Scenario::race, 0, scale)));
  p.loads.push_back(loadgen::result_document(synthetic_load_run(Scenario::mixed, 0, scale)));
  return p;
}

RunMeta meta() {
  RunMeta m;
  m.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  m.duration_ms = 12'000;
  m.base_url = "http://127.0.0.1:18080";
  m.channel = "1";
  m.config = json::object{{"load_duration_s", 8}};
  m.environment = environment();
  return m;
}

json::object with_error_rate(json::object load, std::uint64_t errors) {
  auto& op = load["operations"].as_object()["call"].as_object();
  op["errors"] = errors;
  return load;
}

const json::object* figure(const json::object& comparison, std::string_view scenario, std::string_view op,
                           std::string_view name) {
  for (const auto& f : comparison.at("figures").as_array())
    if (f.at("scenario").as_string() == scenario && f.at("operation").as_string() == op &&
        f.at("figure").as_string() == name)
      return &f.get_object();
  return nullptr;
}

// ---- the regression gate

TEST(Comparison, LatencyWorseBeyondTheLimitRegresses) {
  const auto base = parts();
  const auto c = compare(parts(1.5), base, 20, "old.json", base.loads[0]);
  const auto* p99 = figure(c, "race", "call", "p99");
  ASSERT_TRUE(p99);
  EXPECT_TRUE(p99->at("regressed").as_bool()) << json::serialize(*p99);
  EXPECT_NEAR(p99->at("change_pct").as_double(), 50, 2);
  EXPECT_GT(c.at("regressions").as_uint64(), 0u);
  // Regressions come first, the worst first.
  EXPECT_TRUE(c.at("figures").at(0).at("regressed").as_bool());
}

TEST(Comparison, NoiseInsideTheLimitDoesNotRegress) {
  const auto base = parts();
  const auto c = compare(parts(1.1), base, 20, "old.json", base.loads[0]);
  EXPECT_EQ(c.at("regressions").as_uint64(), 0u) << json::serialize(c);
  EXPECT_FALSE(figure(c, "mixed", "tag", "p50")->at("regressed").as_bool());
  // Faster is never a regression, however much.
  EXPECT_EQ(compare(parts(0.2), base, 20, "old.json", base.loads[0]).at("regressions").as_uint64(), 0u);
  // The limit is a strict bound: the same figures with a 0% limit hold.
  EXPECT_EQ(compare(base, base, 0, "old.json", base.loads[0]).at("regressions").as_uint64(), 0u);
}

TEST(Comparison, ThroughputDownBeyondTheLimitRegresses) {
  const auto base = parts();
  auto slower = parts();
  auto& totals = slower.loads[1]["totals"].as_object();
  totals["achieved_rate"] = totals["achieved_rate"].to_number<double>() * 0.7;
  const auto c = compare(slower, base, 20, "old.json", base.loads[0]);
  const auto* all = figure(c, "mixed", "all", "throughput");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->at("regressed").as_bool());
  EXPECT_EQ(all->at("better"), "higher");
}

TEST(Comparison, ErrorRateNeedsARealRise) {
  auto base = parts();
  base.loads[1] = with_error_rate(base.loads[1], 0);
  base.loads[1]["operations"].as_object()["call"].as_object()["count"] = 4000;
  auto one_stray = parts();
  one_stray.loads[1]["operations"].as_object()["call"].as_object()["count"] = 4000;
  one_stray.loads[1] = with_error_rate(one_stray.loads[1], 1);  // 1 in 4000: below 0.1 point
  const double calls = 4000;
  auto c = compare(one_stray, base, 20, "old.json", base.loads[0]);
  const auto* stray = figure(c, "mixed", "call", "error rate");
  ASSERT_TRUE(stray);
  EXPECT_FALSE(stray->at("regressed").as_bool()) << json::serialize(*stray);
  EXPECT_TRUE(stray->contains("note"));

  auto many = parts();
  many.loads[1] = with_error_rate(many.loads[1], static_cast<std::uint64_t>(calls / 20));  // 5%
  c = compare(many, base, 20, "old.json", base.loads[0]);
  EXPECT_TRUE(figure(c, "mixed", "call", "error rate")->at("regressed").as_bool());
}

TEST(Comparison, NotesWhatCannotBeCompared) {
  auto base = parts();
  base.loads.pop_back();  // no mixed load in the baseline
  auto current = parts();
  current.loads[0]["config"].as_object()["connections"] = 99;
  const auto c = compare(current, base, 20, "old.json", base.loads[0]);
  const auto notes = json::serialize(c.at("notes"));
  EXPECT_NE(notes.find("the baseline has no mixed load"), std::string::npos) << notes;
  EXPECT_NE(notes.find("config.connections"), std::string::npos) << notes;
}

// ---- the run document's verdict

TEST(RunDocument, VerdictIsTheWorstOfItsParts) {
  auto good = parts();
  good.contract.reset();
  good.loads[0]["verdict"].as_object()["exit_code"] = 0;  // the fixture's race has violations
  auto doc = run_document(good, std::nullopt, meta());
  EXPECT_EQ(doc.at("verdict").at("exit_code"), 0) << json::serialize(doc.at("verdict"));

  doc = run_document(parts(), std::nullopt, meta());  // the crafted contract failed a check
  EXPECT_EQ(doc.at("verdict").at("exit_code"), 1);
  EXPECT_NE(json::serialize(doc.at("verdict").at("reasons")).find("contract: 1 check(s) failed"), std::string::npos);

  const auto base = parts();
  doc = run_document(good, compare(parts(2.0), base, 20, "old.json", base.loads[0]), meta());
  EXPECT_EQ(doc.at("verdict").at("exit_code"), 1);
  EXPECT_NE(std::string(doc.at("verdict").at("reason").as_string()).find("regressed beyond 20.0% of the baseline"),
            std::string::npos);

  auto m = meta();
  m.problems.push_back("race load: cannot reach the target");
  EXPECT_EQ(run_document(good, std::nullopt, m).at("verdict").at("exit_code"), 3);
  m = meta();
  m.incomplete = true;
  doc = run_document(good, std::nullopt, m);
  EXPECT_EQ(doc.at("verdict").at("exit_code"), 1);
  EXPECT_EQ(doc.at("verdict").at("status"), "incomplete");
}

TEST(RunDocument, PartsOfEveryKind) {
  const auto doc = run_document(parts(), std::nullopt, meta());
  const auto again = parts_of(doc);
  EXPECT_TRUE(again.contract);
  EXPECT_EQ(again.loads.size(), 2u);
  EXPECT_TRUE(parts_of(parts().loads[0]).contract == std::nullopt);
  auto foreign = doc;
  foreign["kind"] = "poem";
  EXPECT_THROW(parts_of(foreign), std::runtime_error);
  foreign = doc;
  foreign["schema_version"] = 3;  // a version from after this crh
  EXPECT_THROW(parts_of(foreign), std::runtime_error);
  foreign["schema_version"] = 0;
  EXPECT_THROW(parts_of(foreign), std::runtime_error);
  foreign["schema_version"] = 1;  // before percentile intervals: still read, as a baseline
  EXPECT_EQ(parts_of(foreign).loads.size(), 2u);
}

// ---- the HTML report

json::object full_run() {
  const auto base = parts();
  auto m = meta();
  m.skipped.push_back("get load: not asked for");
  return run_document(parts(1.5), compare(parts(1.5), base, 20, "old.json", base.loads[0]), m);
}

TEST(HtmlReport, IsWellFormedWithEverySection) {
  const auto html = html_report(full_run());
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  EXPECT_EQ(root->name, "html");
  std::vector<std::string> ids;
  for (const auto* tag : {"h2", "h3"})
    for (const auto* h : root->descendants(tag))
      if (auto id = h->attr("id")) ids.push_back(*id);
  for (const auto* want :
       {"comparison", "contract", "coverage", "checks", "load-race", "load-mixed", "race", "configuration"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), want), ids.end()) << "no section " << want;
  // Percentile curves, latency and throughput over time, per load; winners and skew for the race.
  EXPECT_EQ(root->descendants("svg").size(), 3u + 3u + 2u);
  for (const auto* svg : root->descendants("svg")) {
    EXPECT_GE(svg->descendants("text").size(), 3u) << "a chart without title or axis labels";
  }
  for (const auto* want : {"Latency by percentile, race", "percentile (log scale: each step is one more nine)", "99.9%",
                           "Winners per round", "Release skew by percentile", "seconds since measuring began",
                           "requests per second", "VIOLATION", "two-winners", "$CRH_API_KEY", "call.p99&lt;1s"})
    EXPECT_NE(html.find(want), std::string::npos) << "the report lacks " << want;
}

TEST(HtmlReport, FetchesNothing) {
  const auto html = html_report(full_run());
  for (const auto* banned : {"<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "http-equiv"})
    EXPECT_EQ(html.find(banned), std::string::npos) << "the report contains " << banned;
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root);
  for (const auto* a : root->descendants("a")) {
    const auto href = a->attr("href").value_or("");
    EXPECT_TRUE(href.starts_with("#")) << "a link leaves the file: " << href;
  }
}

TEST(HtmlReport, MarksRegressionsRed) {
  const auto html = html_report(full_run());
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root);
  std::size_t red = 0;
  for (const auto* tr : root->descendants("tr"))
    if (tr->attr("class") == "regressed") {
      ++red;
      const auto cells = tr->all("td");
      ASSERT_GE(cells.size(), 7u);
      EXPECT_NE(cells.back()->text.find("REGRESSED"), std::string::npos) << "a red row does not say why";
    }
  EXPECT_GT(red, 0u);
  EXPECT_NE(html.find(".regressed td{background:#ffebe9}"), std::string::npos) << "regressed rows are not styled red";
  EXPECT_NE(html.find("<strong>FAILED</strong>"), std::string::npos);
}

TEST(HtmlReport, HostileTextStaysText) {
  const auto html = html_report(full_run());
  EXPECT_EQ(html.find("<html> &"), std::string::npos);
  EXPECT_NE(html.find("tag answered &lt;html&gt; &amp; &quot;oops&quot;"), std::string::npos);
}

TEST(HtmlReport, RendersAContractOnlyOrALoadOnlyRun) {
  for (int which = 0; which < 2; ++which) {
    auto p = parts();
    if (which == 0) p.loads.clear();
    else p.contract.reset();
    const auto html = html_report(run_document(p, std::nullopt, meta()));
    XmlReader reader(html);
    EXPECT_TRUE(reader.parse()) << reader.error();
  }
}

// Issue 22 item 4: a failed check in the HTML report shows how to rerun it,
// with every option the producer recorded, quoted for the shell.
TEST(HtmlReport, FailedCheckShowsTheRecordedRerunCommand) {
  auto p = parts();
  p.contract = test::crafted_contract_with_rerun().as_object();
  const auto html = html_report(run_document(p, std::nullopt, meta()));
  const std::string expected = "rerun: <code>" + xml_escape(test::kCraftedRerunPrefix) + "endpoints.tag</code>";
  EXPECT_NE(html.find(expected), std::string::npos) << "expected " << expected;
  EXPECT_EQ(html.find("rerun: <code>crh contract --check endpoints.agents-list"), std::string::npos)
      << "a passing check needs no rerun";
  const auto old = html_report(full_run());  // written before config.rerun existed
  EXPECT_NE(old.find("rerun: <code>crh contract --base-url http://127.0.0.1:18080 --channel 1 --check "
                     "endpoints.tag</code>"),
            std::string::npos);
}

// ---- JUnit of a run

TEST(RunJunit, TestcasePerCheckThresholdAndRegressionFigure) {
  const auto doc = full_run();
  const auto xml = junit_xml(doc);  // the reader keeps a view of it
  XmlReader reader(xml);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  ASSERT_EQ(root->name, "testsuites");
  std::size_t cases = 0, failures = 0;
  std::vector<std::string> suites;
  for (const auto* suite : root->all("testsuite")) {
    suites.push_back(suite->attr("name").value_or("?"));
    const auto mine = suite->all("testcase");
    EXPECT_EQ(suite->attr("tests"), std::to_string(mine.size())) << suites.back();
    std::size_t failed = 0;
    for (const auto* c : mine) {
      EXPECT_TRUE(c->attr("classname") && c->attr("name") && c->attr("time"))
          << "a testcase lacks the common attributes";
      failed += c->child("failure") != nullptr;
    }
    EXPECT_EQ(suite->attr("failures"), std::to_string(failed)) << suites.back();
    cases += mine.size();
    failures += failed;
  }
  EXPECT_EQ(root->attr("tests"), std::to_string(cases));
  EXPECT_EQ(root->attr("failures"), std::to_string(failures));
  EXPECT_EQ(suites,
            (std::vector<std::string>{"endpoints", "binding", "rules", "load.race", "load.mixed", "regressions"}));
  const auto regressions = root->all("testsuite").back()->all("testcase");
  EXPECT_EQ(regressions.size(), doc.at("comparison").at("figures").as_array().size());
  bool named = false;
  for (const auto* c : regressions)
    if (c->attr("name") == "race call p99") {
      named = true;
      ASSERT_TRUE(c->child("failure"));
      EXPECT_NE(c->child("failure")->attr("message").value_or("").find("in the baseline and is"), std::string::npos);
    }
  EXPECT_TRUE(named);
  const auto race = root->all("testsuite")[3]->all("testcase");
  EXPECT_EQ(race[1]->attr("name"), "first caller wins: exactly one winner per round");
  EXPECT_TRUE(race[1]->child("failure")) << "the fixture's race has violations";
  EXPECT_EQ(race[2]->attr("name"), "call.p99<1s");
}

TEST(RunTerminal, NamesRegressionsAndTheVerdict) {
  const auto text = run_summary(full_run(), {});
  EXPECT_NE(text.find("REGRESSED race call p99"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict of the run: FAILED"), std::string::npos) << text;
}

// Issue 22 item 11: `crh run` prints each part's summary when the part ends
// and the rest at the end; the pieces, in order, are the whole summary that
// `crh report` prints, and no piece holds another's lines.
TEST(RunTerminal, PiecesPrintedAsTheRunGoesMakeTheWholeSummary) {
  const auto doc = full_run();
  const TerminalStyle style{};
  const auto& contract = doc.at("contract").as_object();
  const auto& loads = doc.at("loads").as_array();
  ASSERT_EQ(loads.size(), 2u);
  const auto first = run_part_summary(contract, style);
  const auto race = run_part_summary(loads[0].as_object(), style);
  const auto mixed = run_part_summary(loads[1].as_object(), style);
  const auto closing = run_closing(doc, style);
  EXPECT_EQ(first + race + mixed + closing, run_summary(doc, style));
  EXPECT_EQ(first.rfind("crh contract: ", 0), 0u) << first;
  EXPECT_NE(first.find("FAILED (exit 1)"), std::string::npos) << "the contract's verdict comes with it: " << first;
  EXPECT_EQ(first.find("crh load:"), std::string::npos) << first;
  EXPECT_EQ(race.rfind("crh load: race", 0), 0u) << race;
  EXPECT_EQ(mixed.rfind("crh load: mixed", 0), 0u) << mixed;
  for (const auto* part : {&first, &race, &mixed}) {
    EXPECT_EQ(part->find("verdict of the run"), std::string::npos) << *part;
    EXPECT_EQ(part->find("REGRESSED"), std::string::npos) << "the comparison waits for the end: " << *part;
  }
  EXPECT_EQ(closing.find("crh contract:"), std::string::npos) << closing;
  EXPECT_EQ(closing.find("crh load:"), std::string::npos) << closing;
  EXPECT_NE(closing.find("REGRESSED race call p99"), std::string::npos) << closing;
  EXPECT_NE(closing.find("verdict of the run: FAILED"), std::string::npos) << closing;
  EXPECT_NE(closing.find("left out: get load: not asked for"), std::string::npos) << closing;
}

TEST(RunTerminal, APartLackingFieldsNamesThemInItsOwnPiece) {
  auto contract = test::crafted_contract_result().as_object();
  contract.erase("suites");
  const auto text = run_part_summary(contract, {});
  EXPECT_NE(text.find("missing from the document: suites"), std::string::npos) << text;
}

// ---- what the producer knew, the report shows

std::string load_paragraph(const std::string& html, std::string_view scenario) {
  const auto at = html.find("id=\"load-" + std::string(scenario) + "\"");
  if (at == std::string::npos) return {};
  const auto from = html.find("<p class=\"muted\">", at);
  return html.substr(from, html.find("</p>", from) - from);
}

TEST(HtmlReport, ShowsTheRoundsInFlightTheProducerWrote) {
  auto race = synthetic_load_run(Scenario::race, 0);
  race.config.connections = 0;  // the scenario's default: only the engine knows how many ran
  race.result.connections = 3;
  RunParts p;
  p.loads.push_back(loadgen::result_document(race));
  ASSERT_EQ(p.loads[0].at("totals").at("connections"), 3);
  auto html = html_report(run_document(p, std::nullopt, meta()));
  auto intro = load_paragraph(html, "race");
  EXPECT_NE(intro.find(", 3 rounds in flight"), std::string::npos) << intro;
  EXPECT_EQ(html.find("8 rounds in flight"), std::string::npos) << "the old guess";
  EXPECT_EQ(html.find("missing from the document"), std::string::npos);

  // The configured number, when the engine did not say: the fixture's 5.
  html = html_report(run_document(parts(), std::nullopt, meta()));
  EXPECT_NE(load_paragraph(html, "race").find(", 5 rounds in flight"), std::string::npos)
      << load_paragraph(html, "race");

  // Neither: not guessed, and said to be missing.
  race.result.connections = 0;
  p.loads[0] = loadgen::result_document(race);
  ASSERT_FALSE(p.loads[0].at("totals").as_object().contains("connections"));
  html = html_report(run_document(p, std::nullopt, meta()));
  intro = load_paragraph(html, "race");
  EXPECT_NE(intro.find("rounds in flight not recorded"), std::string::npos) << intro;
  EXPECT_NE(html.find("missing from the document: loads[0].totals.connections"), std::string::npos);
}

TEST(HtmlReport, ShowsTheErrorRateRiseTheComparisonUsed) {
  auto doc = full_run();
  auto html = html_report(doc);
  EXPECT_NE(html.find("an error rate also by at least 0.1 percentage point"), std::string::npos);
  doc["comparison"].as_object()["min_error_rate_rise"] = 0.005;
  html = html_report(doc);
  EXPECT_NE(html.find("an error rate also by at least 0.5 percentage point"), std::string::npos);
}

// ---- a document with fields removed: every rendering shows what is there,
// names what is not, and does not throw

json::object damaged_run() {
  auto doc = full_run();
  auto& contract = doc["contract"].as_object();
  contract["checks"].as_array()[0].as_object().erase("summary");
  contract.erase("counts");
  auto& race = doc["loads"].as_array()[0].as_object();
  race["totals"].as_object().erase("achieved_rate");
  race["race"].as_object()["violations"] = "none";
  race["thresholds"].as_array()[0].as_object().erase("held");
  doc["loads"].as_array()[1].as_object().erase("operations");
  doc["comparison"].as_object()["figures"].as_array()[0].as_object().erase("current");
  return doc;
}

// What every rendering of damaged_run reads, and so names.
const char* const kDamaged[] = {"loads[0].totals.achieved_rate", "loads[0].race.violations (not an array)",
                                "loads[0].thresholds[0].held", "comparison.figures[0].current"};

TEST(HtmlReport, NamesTheFieldsADocumentLacks) {
  std::string html;
  ASSERT_NO_THROW(html = html_report(damaged_run()));
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  const test::Element* missing = nullptr;
  for (const auto* p : root->descendants("p"))
    if (p->attr("id") == "missing") missing = p;
  ASSERT_TRUE(missing) << "no line lists the missing fields";
  for (const auto* path : kDamaged)
    EXPECT_NE(missing->text.find(path), std::string::npos) << path << ": " << missing->text;
  for (const auto* path : {"contract.checks[0].summary", "contract.counts", "loads[1].operations"})
    EXPECT_NE(missing->text.find(path), std::string::npos) << path << ": " << missing->text;
  EXPECT_NE(html.find("id=\"load-mixed\""), std::string::npos) << "the rest is still shown";
  EXPECT_EQ(html_report(full_run()).find("id=\"missing\""), std::string::npos)
      << "a complete document has no such line";
}

TEST(RunTerminal, NamesTheFieldsADocumentLacks) {
  std::string text;
  ASSERT_NO_THROW(text = run_summary(damaged_run(), {.verbose = true}));
  const auto at = text.find("missing from the document: ");
  ASSERT_NE(at, std::string::npos) << text;
  for (const auto* path : kDamaged) EXPECT_NE(text.find(path, at), std::string::npos) << path << ": " << text;
  for (const auto* path : {"contract.counts", "loads[1].operations"})
    EXPECT_NE(text.find(path, at), std::string::npos) << path << ": " << text;
  EXPECT_EQ(text.find("missing from the document", at + 1), std::string::npos) << "one list for the whole run";
  EXPECT_EQ(run_summary(full_run(), {.verbose = true}).find("missing from the document"), std::string::npos);
}

TEST(LoadTerminal, NamesTheFieldsADocumentLacks) {
  auto load = loadgen::result_document(synthetic_load_run(Scenario::race, 0));
  load["totals"].as_object().erase("achieved_rate");
  load["race"].as_object().erase("skew");
  load.erase("verdict");
  std::string text;
  ASSERT_NO_THROW(text = load_summary(load, {}));
  EXPECT_NE(text.find("rounds of 8 callers"), std::string::npos) << "what is there is shown: " << text;
  EXPECT_NE(text.find("missing from the document: "), std::string::npos) << text;
  for (const auto* path : {"totals.achieved_rate", "race.skew", "verdict"})
    EXPECT_NE(text.find(path), std::string::npos) << path << ": " << text;
  EXPECT_EQ(load_summary(loadgen::result_document(synthetic_load_run(Scenario::race, 0)), {}).find("missing from"),
            std::string::npos);
}

TEST(RunJunit, NamesTheFieldsADocumentLacksInATestcaseOfItsOwn) {
  const auto doc = damaged_run();
  std::string xml;
  ASSERT_NO_THROW(xml = junit_xml(doc));
  XmlReader reader(xml);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  const auto suites = root->all("testsuite");
  ASSERT_FALSE(suites.empty());
  const auto* document = suites.back();
  EXPECT_EQ(document->attr("name"), "document");
  EXPECT_EQ(document->attr("errors"), "1");
  const auto cases = document->all("testcase");
  ASSERT_EQ(cases.size(), 1u);
  const auto* error = cases[0]->child("error");
  ASSERT_TRUE(error);
  const auto message = error->attr("message").value_or("");
  for (const auto* path : kDamaged) EXPECT_NE(message.find(path), std::string::npos) << path << ": " << message;
  EXPECT_NE(message.find("contract.checks[0].summary"), std::string::npos) << message;
  std::size_t tests = 0, errors = 0;
  for (const auto* s : suites) {
    tests += s->all("testcase").size();
    errors += std::stoul(s->attr("errors").value_or("0"));
  }
  EXPECT_EQ(root->attr("tests"), std::to_string(tests));
  EXPECT_EQ(root->attr("errors"), std::to_string(errors));
}

}  // namespace
}  // namespace crh::reports
