// The verdict of a contract run: a run that proved nothing never passes
// (README "Verdicts"), a failure always fails, an interruption is incomplete.
#include "contracts/runner.hpp"

#include <gtest/gtest.h>

namespace crh::contracts {
namespace {

RunReport report_with(std::size_t pass, std::size_t fail, std::size_t skip, std::size_t indeterminate) {
  RunReport report;
  auto add = [&](std::size_t n, Outcome o) {
    for (std::size_t i = 0; i < n; ++i) {
      CheckResult r;
      r.id = "check-" + std::to_string(report.results.size());
      r.outcome = o;
      report.results.push_back(r);
    }
  };
  add(pass, Outcome::pass);
  add(fail, Outcome::fail);
  add(skip, Outcome::skip);
  add(indeterminate, Outcome::indeterminate);
  return report;
}

TEST(ContractVerdict, MostChecksIndeterminateIsUntestedExit3) {
  // The audit's case: a target that sends headers and then closes.
  const auto v = verdict_of(report_with(2, 0, 1, 118), false);
  EXPECT_EQ(v.exit_code, 3);
  EXPECT_EQ(v.status, "untested");
  EXPECT_NE(v.reason.find("118 of the 120 checks that ran got no usable answer"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, ExactlyHalfIndeterminateStillCounts) {
  EXPECT_EQ(verdict_of(report_with(10, 0, 0, 10), false).exit_code, 0);
  EXPECT_EQ(verdict_of(report_with(10, 0, 0, 11), false).exit_code, 3);
}

TEST(ContractVerdict, NothingRanIsUntested) {
  const auto v = verdict_of(report_with(0, 0, 7, 0), false);
  EXPECT_EQ(v.exit_code, 3);
  EXPECT_NE(v.reason.find("no selected check ran"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, AFailureFailsWhateverElseHappened) {
  const auto v = verdict_of(report_with(0, 1, 0, 50), false);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.status, "failed");
}

TEST(ContractVerdict, AFewIndeterminateChecksPassAndAreCounted) {
  const auto v = verdict_of(report_with(100, 0, 3, 2), false);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.status, "passed");
  EXPECT_NE(v.reason.find("2 indeterminate"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, UnreachableAndInterruptedComeFirst) {
  auto unreachable = report_with(0, 1, 0, 0);
  unreachable.unreachable = true;
  unreachable.unreachable_reason = "cannot reach it";
  EXPECT_EQ(verdict_of(unreachable, false).exit_code, 3);
  auto interrupted = report_with(1, 0, 40, 0);
  interrupted.interrupted = true;
  const auto v = verdict_of(interrupted, false);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.status, "incomplete");
}

}  // namespace
}  // namespace crh::contracts
