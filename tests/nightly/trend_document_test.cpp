// The trend document (nightly/trend.hpp): every night as the page draws it,
// and the last night judged by the gate itself, so that reports/ only draws.
#include <gtest/gtest.h>

#include <cstdio>

#include <boost/json.hpp>

#include "nightly/compare.hpp"
#include "nightly/trend.hpp"

namespace crh::nightly::trend_document_test {
namespace {
namespace json = boost::json;

// `count` passed nights of one fingerprint at p50 1 ms, the last `last_scale` times that.
std::vector<Night> record(int count, double last_scale) {
  std::vector<Night> out;
  for (int i = 0; i < count; ++i) {
    Night n;
    char id[64], at[64];
    std::snprintf(id, sizeof id, "202611%02dT010000Z-%08x", i + 1, i);
    std::snprintf(at, sizeof at, "2026-11-%02dT01:00:00Z", i + 1);
    n.id = id;
    n.started_at = at;
    n.status = "passed";
    n.comparable = true;
    n.fingerprint = "fp";
    n.report = "night-" + std::to_string(i) + ".html";
    NightFigure f{"mixed", "call", "p50", "ns", Better::lower, {}, 5000};
    f.estimate.value = (i + 1 == count ? last_scale : 1.0) * 1e6 * (1 + 0.01 * (i % 3));
    f.estimate.lower = f.estimate.value * 0.98;
    f.estimate.upper = f.estimate.value * 1.02;
    n.figures.push_back(f);
    out.push_back(std::move(n));
  }
  return out;
}

TEST(TrendDocument, CarriesEveryNightAndTheGatesOwnJudgementOfTheLast) {
  const auto nights = record(26, 1.5);
  const auto doc = trend_document(nights, {}, "nights/", 20);
  EXPECT_EQ(doc.at("schema"), "crh.trend");
  EXPECT_EQ(doc.at("dir"), "nights/");
  const auto& drawn = doc.at("nights").as_array();
  ASSERT_EQ(drawn.size(), nights.size());
  const auto& third = drawn[3].as_object();
  EXPECT_EQ(third.at("night").as_string(), nights[3].id);
  EXPECT_EQ(third.at("report"), "night-3.html");
  EXPECT_EQ(third.at("comparable"), true);
  const auto& figure = third.at("figures").as_array().at(0).as_object();
  EXPECT_EQ(figure.at("figure"), "p50");
  EXPECT_DOUBLE_EQ(figure.at("value").as_double(), nights[3].figures[0].estimate.value);
  EXPECT_DOUBLE_EQ(figure.at("upper").as_double(), *nights[3].figures[0].estimate.upper);

  // The judgement is the gate's, made as a run makes it for tonight.
  const auto& last = nights.back();
  const Tonight tonight{last.figures, last.fingerprint, last.started_at, last.tool_version, last.cpu, {}};
  EXPECT_EQ(doc.at("comparison"), json::value(compare_with_nights(tonight, nights, {}, "nights/", 20)));
  EXPECT_EQ(doc.at("comparison").at("regressions"), json::value(1)) << "1.5x slower must regress";
  // 25 comparable nights before the last: the band starts at the last kWindow of them.
  EXPECT_EQ(doc.at("window_first").as_string(), nights[25 - kWindow].id);
}

TEST(TrendDocument, AShortRecordStartsItsBandAtItsFirstNightAndAnEmptyOneHasNone) {
  const auto nights = record(4, 1.0);
  EXPECT_EQ(trend_document(nights, {}, "n", 20).at("window_first").as_string(), nights[0].id);
  const auto empty = trend_document({}, {}, "n", 20);
  EXPECT_TRUE(empty.at("nights").as_array().empty());
  EXPECT_TRUE(empty.at("window_first").is_null());
  EXPECT_FALSE(empty.contains("comparison"));
}

TEST(TrendDocument, ASideBySideNightIsShownAsItWasJudgedNotAgainstTheRecord) {
  auto nights = record(12, 1.5);  // a 1.5x ratio the gate would call a regression against the record
  const json::object judged{{"mode", "against"}, {"regressions", 0}, {"figures", json::array{}}};
  nights.back().gate = judged;
  const auto doc = trend_document(nights, {}, "nights/", 5);
  EXPECT_EQ(doc.at("comparison"), json::value(judged));
  EXPECT_TRUE(doc.at("window_first").is_null()) << "no band of nights: tonight was judged against its baseline";
}

}  // namespace
}  // namespace crh::nightly::trend_document_test
