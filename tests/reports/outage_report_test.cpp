// Outages as a reader sees them (issue 35): the terminal lists each with its
// start, end and answers and the closed loop's back-off, the verdict names
// the longest, the JUnit's outage threshold lists them, and the HTML report
// draws each as a band on the time charts beside a table.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "load_fixture.hpp"
#include "loadgen/result.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"
#include "reports/load_terminal.hpp"
#include "reports/run_document.hpp"

namespace crh::reports {
namespace {

namespace json = boost::json;
using loadgen::Scenario;

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The synthetic mixed load (down from 3 s to 4.5 s) judged by the default thresholds.
json::object load_with_outage() {
  auto run = test::synthetic_load_run(Scenario::mixed, 0);
  run.thresholds = loadgen::parse_thresholds({});
  return loadgen::result_document(run);
}

TEST(OutageReport, TerminalListsTheOutageTheBackOffAndTheVerdictNamesIt) {
  const auto text = load_summary(json::value(load_with_outage()), {});
  EXPECT_TRUE(contains(text, "DOWN 2.998 s to 4.500 s (1.50 s): connect×375, HTTP 503×375")) << text;
  EXPECT_TRUE(contains(text, "1, 1.50 s down in all (18.77% of the measured time)")) << text;
  EXPECT_TRUE(contains(text, "closed loop: 375 pause(s) after a failed connect, 23.44 connection-s")) << text;
  EXPECT_TRUE(contains(text, "outage.max<1s: 1.50 s (limit 1 s, the default")) << text;
  EXPECT_TRUE(contains(text, "the longest from 2.998 s to 4.500 s (1.50 s): connect×375, HTTP 503×375")) << text;
  EXPECT_TRUE(contains(text, "verdict: FAILED")) << text;
}

TEST(OutageReport, AnOlderDocumentWithoutOutagesSaysNothingOfThem) {
  auto doc = load_with_outage();
  doc.erase("outages");
  const auto text = load_summary(json::value(doc), {});
  EXPECT_FALSE(contains(text, "outages (")) << text;
  EXPECT_FALSE(contains(text, "missing from the document")) << text;
}

TEST(OutageReport, JUnitFailsTheOutageThresholdListingTheOutage) {
  const auto xml = junit_xml(json::value(load_with_outage()));
  const auto at = xml.find("name=\"outage.max&lt;1s\"");
  ASSERT_NE(at, std::string::npos) << xml;
  const auto testcase = xml.substr(at, xml.find("</testcase>", at) - at);
  EXPECT_TRUE(contains(testcase, "<failure type=\"threshold\"")) << testcase;
  EXPECT_TRUE(contains(testcase, "down from 2.998 s to 4.500 s (1.50 s): connect×375 503×375")) << testcase;
}

RunMeta meta() {
  RunMeta m;
  m.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  m.base_url = "http://127.0.0.1:18080";
  m.channel = "1";
  m.environment = environment();
  return m;
}

TEST(OutageReport, HtmlDrawsABandOverTheOutageAndATable) {
  RunParts parts;
  parts.loads.push_back(load_with_outage());
  const auto html = html_report(run_document(parts, std::nullopt, meta()));
  EXPECT_TRUE(contains(html, "<h3>Outages</h3>")) << "no outage section";
  EXPECT_TRUE(contains(html, "fill=\"#cf222e\" fill-opacity=\"0.15\"><title>outage: 2.998 s to 4.500 s"))
      << "no band over the outage on the time charts";
  EXPECT_TRUE(contains(html, "<td class=\"n\">2.998</td><td class=\"n\">4.500</td><td class=\"n\">1.502 s</td>"))
      << "no row for the outage";
}

}  // namespace
}  // namespace crh::reports
