// The trend page on a synthetic record of nights: self-contained and
// well-formed, the last night's verdict first, each figure drawn over the
// nights with its intervals, the band, hollow nights that were not compared,
// accepted levels and machine changes marked, each night linked to its report.
#include <gtest/gtest.h>

#include <cstdio>

#include <boost/json.hpp>

#include "nightly/trend.hpp"
#include "reports/trend_html.hpp"
#include "xml_reader.hpp"

namespace crh::reports::trend_test {
namespace {

using nightly::Night;
using test::XmlReader;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The page as `crh report --nights nights/` draws it: the gate's trend document, then the drawing.
std::string page(const std::vector<Night>& record, const std::vector<std::string>& accepted, double limit_pct = 20) {
  return trend_html(nightly::trend_document(record, accepted, "nights/", limit_pct));
}

nightly::NightFigure figure(std::string operation, std::string name, std::string unit, nightly::Better better,
                            double value) {
  nightly::NightFigure f{"mixed", std::move(operation), std::move(name), std::move(unit), better, {}, 0};
  f.estimate.value = value;
  f.estimate.lower = value * 0.98;
  f.estimate.upper = value * 1.02;
  return f;
}

// Night i of 12 (2026-11-01 on): p50 about 1 ms and 3000 requests/s, the
// last night 50% slower; night 8 failed; a new machine from night 5; a level
// accepted at night 3; and one night of other settings.
std::vector<Night> record() {
  std::vector<Night> out;
  for (int i = 0; i < 12; ++i) {
    Night n;
    char id[64], at[64];
    std::snprintf(id, sizeof id, "202611%02dT010000Z-%08x", i + 1, 0xab00 + i);
    std::snprintf(at, sizeof at, "2026-11-%02dT01:00:00Z", i + 1);
    n.id = id;
    n.started_at = at;
    n.status = i == 8 ? "failed" : i == 11 ? "failed" : "passed";
    n.exit_code = n.status == "passed" ? 0 : 1;
    n.comparable = n.status == "passed";
    n.reason = i == 8 ? "contract: 1 check(s) failed" : "";
    n.fingerprint = "fp-nightly";
    n.tool_version = "0.9.0";
    n.cpu = i < 5 ? "Xeon E5" : "EPYC 7B13";
    n.cores = 2;
    n.report = "reports/night-" + std::to_string(i) + ".html";
    const double wobble = 1 + 0.01 * ((i * 7) % 5 - 2);
    n.figures.push_back(figure("call", "p50", "ns", nightly::Better::lower, (i == 11 ? 1.5e6 : 1e6) * wobble));
    n.figures.push_back(figure("all", "throughput", "per_second", nightly::Better::higher, 3000 * wobble));
    out.push_back(std::move(n));
  }
  Night other = out[2];
  other.id = "20261103T020000Z-0000ffff";
  other.started_at = "2026-11-03T02:00:00Z";
  other.fingerprint = "fp-other";
  out.insert(out.begin() + 3, other);
  return out;
}

std::vector<const test::Element*> with_class(const test::Element& root, std::string_view tag, std::string_view cls) {
  std::vector<const test::Element*> out;
  for (const auto* e : root.descendants(tag))
    if (contains(e->attr("class").value_or(""), cls)) out.push_back(e);
  return out;
}

TEST(TrendPage, DrawsEveryFigureOverTheNights) {
  const auto html = page(record(), {"20261104T010000Z-0000ab03"});
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  // The last night's verdict comes first.
  const auto verdicts = with_class(*root, "div", "verdict");
  ASSERT_FALSE(verdicts.empty());
  EXPECT_EQ(verdicts[0]->attr("class"), "verdict failed");
  EXPECT_LT(html.find("class=\"verdict"), html.find("<svg"));

  std::size_t charts = 0;
  for (const auto* svg : root->descendants("svg")) {
    if (svg->attr("class") == "strip") continue;
    ++charts;
    EXPECT_EQ(with_class(*svg, "g", "whisker").size(), 12u) << "an interval per night of these settings";
    EXPECT_EQ(with_class(*svg, "circle", "hollow").size(), 2u) << "the two failed nights are not compared";
    EXPECT_EQ(with_class(*svg, "rect", "band").size(), 1u) << "no band of the comparison window";
    EXPECT_EQ(with_class(*svg, "g", "marker-accepted").size(), 1u);
    EXPECT_EQ(with_class(*svg, "g", "marker-machine").size(), 1u);
    EXPECT_EQ(svg->descendants("a").size(), 12u) << "each night links to its report";
  }
  EXPECT_EQ(charts, 2u);
  EXPECT_TRUE(contains(html, "href=\"reports/night-8.html\""));
  // The last night against the record: the slower p50 regressed.
  EXPECT_TRUE(contains(html, "Comparison with the record of nights"));
  EXPECT_TRUE(contains(html, "<h3 id=\"mixed-call-p50\">mixed call p50 <span class=\"badge o-regressed\">"));
  EXPECT_TRUE(contains(html, "Nights of other settings")) << "the night of other settings is not listed";
  EXPECT_TRUE(contains(html, "20261103T020000Z-0000ffff"));
}

// Six nights side by side with a baseline deployment (crh run --against
// --nights): each night's p50 ratio, the last one judged 1.02x, no change.
std::vector<Night> side_by_side_record() {
  namespace json = boost::json;
  std::vector<Night> out;
  for (int i = 0; i < 6; ++i) {
    Night n = record()[0];
    n.id = "2026110" + std::to_string(i + 1) + "T010000Z-0000cd0" + std::to_string(i);
    n.started_at = "2026-11-0" + std::to_string(i + 1) + "T01:00:00Z";
    n.figures = {figure("call", "p50", "ratio", nightly::Better::lower, 1 + 0.01 * (i % 3))};
    out.push_back(std::move(n));
  }
  out.back().gate = json::object{
      {"mode", "against"},
      {"against", json::object{{"base_url", "http://release:8080"}, {"design", "trials"}, {"pairs", 10},
                               {"duration_s", 2}, {"seed", 1}, {"confidence", 0.9902}}},
      {"max_regression_pct", 5},
      {"regressions", 0},
      {"inconclusive", 0},
      {"figures", json::array{json::object{{"scenario", "mixed"}, {"operation", "call"}, {"figure", "p50"},
                                           {"unit", "ns"}, {"better", "lower"}, {"baseline", 1e6},
                                           {"current", 1.02e6}, {"change_pct", 2.0}, {"worse_pct", 2.0},
                                           {"limit_pct", 5}, {"verdict", "no change"}, {"regressed", false},
                                           {"pairs", 10}, {"ratio", 1.02}, {"ratio_lower", 1.0},
                                           {"ratio_upper", 1.04}, {"change_lower_pct", 0.0}, {"change_upper_pct", 4.0},
                                           {"confidence", 0.9902}, {"rule", "r"},
                                           {"reason", "within"}}}},
      {"notes", json::array{}}};
  return out;
}

TEST(TrendPage, SideBySideNightsDrawTheirRatiosWithinTheLimit) {
  const auto html = page(side_by_side_record(), {}, 20);
  XmlReader reader(html);
  const auto root = reader.parse();
  ASSERT_TRUE(root) << reader.error();
  EXPECT_TRUE(contains(html, "Comparison with the baseline deployment")) << "the last night as it was judged";
  EXPECT_FALSE(contains(html, "Comparison with the record of nights")) << "not judged again against the record";
  EXPECT_TRUE(contains(html, "candidate ÷ baseline deployment"));
  EXPECT_TRUE(contains(html, "1.020×")) << "a ratio in its unit";
  EXPECT_TRUE(contains(html, "last night +2.0% [+0.0, +4.0%] against the baseline"));
  std::size_t charts = 0;
  for (const auto* svg : root->descendants("svg")) {
    if (svg->attr("class") == "strip") continue;
    ++charts;
    EXPECT_EQ(with_class(*svg, "g", "whisker").size(), 6u);
    EXPECT_EQ(with_class(*svg, "rect", "band").size(), 1u) << "the limit the night was judged with (5%), not 20";
  }
  EXPECT_EQ(charts, 1u);
  EXPECT_TRUE(contains(html, "within the 5% limit"));
}

// Six control-arm nights (crh run --nights --control): each figure the ratio
// target / control, its interval the 99% one of the trial pairs, judged
// against the record like any figure.
TEST(TrendPage, ControlArmNightsNameTheControlAndTheirIntervals) {
  namespace json = boost::json;
  auto nights = side_by_side_record();
  for (auto& n : nights) n.gate = json::object{{"mode", "nights"}};
  nights.back().gate["control"] = json::object{
      {"mode", "against"},
      {"against", json::object{{"base_url", "http://control:8080"}, {"design", "trials"}, {"pairs", 10},
                               {"duration_s", 2}, {"seed", 1}, {"confidence", 0.9902}}}};
  const auto html = page(nights, {}, 20);
  XmlReader reader(html);
  ASSERT_TRUE(reader.parse()) << reader.error();
  EXPECT_TRUE(contains(html, "Comparison with the record of nights")) << "judged against the record";
  EXPECT_TRUE(contains(html, "Each night a ratio target ÷ control <code>http://control:8080</code>"));
  EXPECT_TRUE(contains(html, "the interval of its trial pairs (99%)"));
  EXPECT_FALSE(contains(html, "95% interval")) << "not the repetitions' interval of a single-target night";
}

TEST(TrendPage, NeedsNoScriptAndFetchesNothing) {
  const auto html = page(record(), {});
  for (const auto* banned : {"<script", "<link", "<img", "<iframe", "src=", "url(", "@import"})
    EXPECT_FALSE(contains(html, banned)) << "the page contains " << banned;
}

TEST(TrendPage, AnEmptyRecordSaysSo) {
  const auto html = page({}, {});
  EXPECT_TRUE(contains(html, "No night recorded yet"));
  XmlReader reader(html);
  EXPECT_TRUE(reader.parse()) << reader.error();
}

}  // namespace
}  // namespace crh::reports::trend_test
