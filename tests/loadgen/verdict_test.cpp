// A load that proved nothing never passes: no successful request fails the
// run, and every load has a default error-rate limit a threshold can replace.
#include <gtest/gtest.h>

#include "loadgen/result.hpp"

namespace crh::loadgen {
namespace {
using oracle::OpKind;
using oracle::Outcome;

LoadResult answered_with(unsigned status, std::uint64_t n, std::uint64_t ok = 0) {
  LoadResult r;
  r.wall_s = 1;
  auto& s = r.stats.ops[static_cast<std::size_t>(OpKind::get)];
  for (std::uint64_t i = 0; i < n; ++i) {
    s.latency[static_cast<std::size_t>(Outcome::fail)].record(100'000);
    ++s.statuses[status];
    ++s.errors;
  }
  for (std::uint64_t i = 0; i < ok; ++i) {
    s.latency[static_cast<std::size_t>(Outcome::ok)].record(100'000);
    ++s.statuses[200];
  }
  return r;
}

TEST(LoadVerdict, EveryAnswerARedirectFailsTheRun) {
  const auto r = answered_with(302, 39'260);
  const auto why = proved_nothing(r);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("39260x HTTP 302"), std::string::npos) << *why;
  // Even a threshold that allows every error cannot make it pass.
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({"errors<=100%"}), r)), 1);
}

TEST(LoadVerdict, NoRequestMeasuredProvesNothing) {
  LoadResult r;
  EXPECT_EQ(proved_nothing(r).value_or(""), "no request was measured");
  EXPECT_EQ(exit_code_of(r, {}), 1);
}

TEST(LoadVerdict, DefaultErrorLimitIsAddedAndBreachedAbove1Percent) {
  const auto thresholds = parse_thresholds({"get.p99<10s"});
  ASSERT_EQ(thresholds.size(), 4u) << "the error limit and the two outage limits";
  EXPECT_TRUE(thresholds[1].implicit);
  EXPECT_EQ(thresholds[1].text, kDefaultErrorLimit);
  const auto r = answered_with(404, 5, 95);  // 5% errors
  const auto verdicts = evaluate(thresholds, r);
  EXPECT_FALSE(verdicts[1].held);
  EXPECT_EQ(exit_code_of(r, verdicts), 1);
  EXPECT_NE(describe(verdicts[1].threshold, verdicts[1].actual, false).find("the default"), std::string::npos);
}

TEST(LoadVerdict, AUserErrorLimitReplacesTheDefault) {
  const auto thresholds = parse_thresholds({"errors<10%"});
  ASSERT_EQ(thresholds.size(), 3u) << "the user's error limit and the two outage limits";
  EXPECT_FALSE(thresholds.front().implicit);
  const auto r = answered_with(404, 5, 95);
  EXPECT_EQ(exit_code_of(r, evaluate(thresholds, r)), 0);
  // An error limit on one operation does not replace the run's.
  EXPECT_EQ(parse_thresholds({"tag.errors<10%"}).size(), 4u);
}

TEST(LoadVerdict, AnInvalidLoadCannotTellUnlessItFailed) {
  auto r = answered_with(404, 0, 1000);
  r.invalid.push_back("the generator thread was busy 97% of the run");
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({}), r)), 4);
  r.violation_count = 1;  // a broken invariant is a failure whoever limited the figures
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({}), r)), 1);
}

TEST(LoadVerdict, AnInterruptedLoadIsIncompleteAndNeverPasses) {
  auto r = answered_with(404, 0, 1000);
  r.interrupted = true;
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({}), r)), 1);
  const auto doc = result_document(LoadConfig{}, r, evaluate(parse_thresholds({}), r), RunInfo{});
  const auto& verdict = doc.at("verdict").as_object();
  EXPECT_EQ(verdict.at("status"), "incomplete");
  EXPECT_EQ(verdict.at("exit_code"), 1);
  EXPECT_EQ(verdict.at("interrupted"), true);
  EXPECT_NE(std::string(verdict.at("reason").as_string()).find("interrupted (Ctrl-C or SIGTERM)"), std::string::npos);
  r.invalid.push_back("the generator thread was busy 97% of the run");  // 1 before 4
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({}), r)), 1);
}

TEST(LoadVerdict, ACleanRunPassesWithTheDefault) {
  const auto r = answered_with(404, 0, 1000);
  EXPECT_FALSE(proved_nothing(r));
  EXPECT_EQ(exit_code_of(r, evaluate(parse_thresholds({}), r)), 0);
}

}  // namespace
}  // namespace crh::loadgen
