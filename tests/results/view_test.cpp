// The renderers' lenient view of a result document: a missing or mistyped
// field gives a neutral value and is recorded by its path, once; a field
// documents may lack by design is not; nothing ever throws.
#include "results/view.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace crh::results {
namespace {

namespace json = boost::json;

json::value document() {
  return json::parse(R"j({
    "kind": "load",
    "totals": {"requests": 12, "achieved_rate": 2.5, "generator_cpu": "busy", "errors": -3},
    "verdict": {"interrupted": false, "status": "passed"},
    "operations": {"call": {"count": 4}, "tag": {"count": 8}},
    "series": [{"t": 0}, {"t": 1}, 7],
    "race": null
  })j");
}

TEST(DocView, ReadsWhatIsThere) {
  const auto doc = document();
  const DocView v(doc);
  EXPECT_EQ(v["kind"].str(), "load");
  EXPECT_EQ(v["totals"]["requests"].num(), 12);
  EXPECT_EQ(v["totals"]["requests"].count(), 12u);
  EXPECT_EQ(v["totals"]["achieved_rate"].num(), 2.5);
  EXPECT_FALSE(v["verdict"]["interrupted"].boolean());
  EXPECT_EQ(v["series"].items().size(), 3u);
  EXPECT_EQ(v["series"].items()[1]["t"].num(), 1);
  const auto ops = v["operations"].fields();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].first, "call");
  EXPECT_EQ(ops[1].second["count"].num(), 8);
  EXPECT_TRUE(v.missing().empty()) << v.missing_footnote();
  EXPECT_EQ(v.missing_footnote(), "");
}

TEST(DocView, AMissingFieldIsRecordedByItsPath) {
  const auto doc = document();
  const DocView v(doc);
  EXPECT_EQ(v["totals"]["measured_s"].num(), 0);
  EXPECT_EQ(v["config"]["scenario"].str(), "");
  EXPECT_TRUE(v["thresholds"].items().empty());
  EXPECT_EQ(v.missing().paths(), (std::vector<std::string>{"totals.measured_s", "config", "thresholds"}))
      << "a missing parent is recorded, not each field under it: " << v.missing_footnote();
  EXPECT_EQ(v.missing_footnote(), "missing from the document: totals.measured_s, config, thresholds");
}

TEST(DocView, AMistypedFieldIsRecordedWithWhatWasExpected) {
  const auto doc = document();
  const DocView v(doc);
  EXPECT_EQ(v["totals"]["generator_cpu"].num(), 0);
  EXPECT_EQ(v["totals"]["errors"].count(), 0u);
  EXPECT_EQ(v["kind"].num(), 0);
  EXPECT_FALSE(v["verdict"]["status"].boolean());
  EXPECT_EQ(v["totals"]["requests"].str(), "");
  EXPECT_TRUE(v["kind"].items().empty());
  EXPECT_TRUE(v["kind"].fields().empty());
  EXPECT_EQ(v["series"].items()[2]["t"].num(), 0);
  EXPECT_EQ(v.missing().paths(),
            (std::vector<std::string>{"totals.generator_cpu (not a number)", "totals.errors (not a whole number >= 0)",
                                      "kind (not a number)", "verdict.status (not true or false)",
                                      "totals.requests (not a string)", "kind (not an array)", "kind (not an object)",
                                      "series[2] (not an object)"}));
}

TEST(DocView, EachPathIsRecordedOnce) {
  const auto doc = document();
  const DocView v(doc);
  for (int i = 0; i < 3; ++i) (void)v["totals"]["measured_s"].num();
  EXPECT_EQ(v.missing().paths().size(), 1u);
}

TEST(DocView, ViewsOfOneDocumentShareTheirList) {
  const auto doc = document();
  const DocView v(doc);
  const auto totals = v["totals"];
  (void)totals["late"].num();
  (void)v["history"];
  EXPECT_EQ(totals.missing_footnote(), "missing from the document: totals.late, history");
  const DocView other(doc);
  EXPECT_TRUE(other.missing().empty()) << "another view of the same JSON keeps its own list";
}

TEST(DocView, FindAllowsAFieldToBeAbsent) {
  const auto doc = document();
  const DocView v(doc);
  EXPECT_FALSE(v.find("series_step_s"));
  EXPECT_EQ(v.find("series_step_s").num(), 0);
  EXPECT_TRUE(v.find("race").is_null()) << "present, null";
  EXPECT_FALSE(v.find("race").is_object());
  EXPECT_FALSE(v["race"].maybe_num()) << "a null is an answer (e.g. no change): not a number, not recorded";
  EXPECT_FALSE(v["totals"]["generator_cpu"].maybe_num());
  EXPECT_EQ(v["totals"]["achieved_rate"].maybe_num(), 2.5);
  EXPECT_TRUE(v.missing().empty()) << v.missing_footnote();
}

TEST(DocView, NeverThrows) {
  for (const auto* text : {"null", "3", "\"text\"", "[]", "[1, {\"a\": null}]", "{}", "{\"totals\": []}"}) {
    const auto doc = json::parse(text);
    const DocView v(doc, "load");
    EXPECT_NO_THROW({
      (void)v["totals"]["achieved_rate"].num();
      (void)v["verdict"]["status"].str();
      (void)v["verdict"]["interrupted"].boolean();
      (void)v["operations"].fields();
      (void)v["series"].items();
      (void)v.items();
      (void)v.fields();
      (void)v.count();
      (void)v.str();
      for (const auto& item : v.items()) (void)item["a"]["b"].str();
    }) << text;
  }
  const DocView nothing;
  EXPECT_FALSE(nothing);
  EXPECT_EQ(nothing["a"]["b"].str(), "");
  EXPECT_TRUE(nothing.missing().empty()) << "a view of nothing has nothing to say is missing";
}

TEST(DocView, PathsStartAtTheGivenRoot) {
  const auto doc = document();
  const DocView v(doc, "loads[1]");
  (void)v["totals"]["measured_s"].num();
  EXPECT_EQ(v.missing().paths(), (std::vector<std::string>{"loads[1].totals.measured_s"}));
  const json::object& object = doc.as_object();
  const DocView of_object(object);
  EXPECT_EQ(of_object["totals"]["requests"].num(), 12);
  EXPECT_EQ(of_object.str(), "");
  EXPECT_EQ(of_object.missing().paths(), (std::vector<std::string>{"the document (not a string)"}));
}

TEST(MissingFields, TheFootnoteNamesTheFirstAndCountsTheRest) {
  MissingFields m;
  EXPECT_EQ(m.footnote(), "");
  for (int i = 0; i < 5; ++i) m.add("checks[" + std::to_string(i) + "].summary");
  m.add("checks[0].summary");
  EXPECT_EQ(m.paths().size(), 5u);
  EXPECT_EQ(m.footnote(2), "missing from the document: checks[0].summary, checks[1].summary and 3 more");
}

}  // namespace
}  // namespace crh::results
