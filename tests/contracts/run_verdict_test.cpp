// The verdict of a contract run: a run that proved nothing never passes
// (README "Verdicts"), a failure always fails, an interruption is incomplete.
#include "contracts/runner.hpp"

#include <boost/json.hpp>
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
  EXPECT_EQ(v.exit_code(), 3);
  EXPECT_EQ(v.status, results::Status::untested);
  EXPECT_NE(v.reason.find("118 of the 120 checks that ran got no usable answer"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, ExactlyHalfIndeterminateStillCounts) {
  EXPECT_EQ(verdict_of(report_with(10, 0, 0, 10), false).exit_code(), 0);
  EXPECT_EQ(verdict_of(report_with(10, 0, 0, 11), false).exit_code(), 3);
}

TEST(ContractVerdict, NothingRanIsUntested) {
  const auto v = verdict_of(report_with(0, 0, 7, 0), false);
  EXPECT_EQ(v.exit_code(), 3);
  EXPECT_NE(v.reason.find("no selected check ran"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, AFailureFailsWhateverElseHappened) {
  const auto v = verdict_of(report_with(0, 1, 0, 50), false);
  EXPECT_EQ(v.exit_code(), 1);
  EXPECT_EQ(v.status, results::Status::failed);
}

TEST(ContractVerdict, AFewIndeterminateChecksPassAndAreCounted) {
  const auto v = verdict_of(report_with(100, 0, 3, 2), false);
  EXPECT_EQ(v.exit_code(), 0);
  EXPECT_EQ(v.status, results::Status::passed);
  EXPECT_NE(v.reason.find("2 indeterminate"), std::string::npos) << v.reason;
}

TEST(ContractVerdict, UnreachableAndInterruptedComeFirst) {
  auto unreachable = report_with(0, 1, 0, 0);
  unreachable.unreachable = true;
  unreachable.unreachable_reason = "cannot reach it";
  EXPECT_EQ(verdict_of(unreachable, false).exit_code(), 3);
  auto interrupted = report_with(1, 0, 40, 0);
  interrupted.interrupted = true;
  const auto v = verdict_of(interrupted, false);
  EXPECT_EQ(v.exit_code(), 1);
  EXPECT_EQ(v.status, results::Status::incomplete);
}

TEST(ContractVerdict, AStalledTargetFailsAndSaysSo) {
  // Three checks in a row timed out; the rest were not run.
  auto stalled = report_with(20, 0, 40, 3);
  stalled.stalled = true;
  stalled.timeout = std::chrono::milliseconds(1500);
  const auto v = verdict_of(stalled, false);
  EXPECT_EQ(v.exit_code(), 1);
  EXPECT_EQ(v.status, results::Status::failed);
  EXPECT_NE(v.reason.find("the target stopped answering: 3 checks in a row got no answer within --timeout 1500 ms"),
            std::string::npos)
      << v.reason;
  // An interruption still comes first: the user stopped it.
  stalled.interrupted = true;
  EXPECT_EQ(verdict_of(stalled, false).status, results::Status::incomplete);
}

TEST(ContractVerdict, MustChecksTheTargetSkippedStandOutGroupedByReason) {
  auto report = report_with(30, 0, 0, 0);
  auto skipped = [&](const char* id, const char* why, Severity severity, bool by_target) {
    CheckResult r;
    r.id = id;
    r.outcome = Outcome::skip;
    r.severity = severity;
    r.message = why;
    r.skipped_by_target = by_target;
    report.results.push_back(r);
  };
  skipped("binding.a", "the target has no call hook", Severity::must, true);
  skipped("binding.b", "the target has no call hook", Severity::must, true);
  skipped("binding.fresh-after-retag", "no untagged alias on the channel", Severity::must, true);
  skipped("expiry.x", "runs only with --slow", Severity::must, false);   // the run's options: not the target's doing
  skipped("errors.tag.minutes-zero", "minutes=0 is valid here", Severity::should, true);  // a SHOULD check
  const auto v = verdict_of(report, false);
  EXPECT_EQ(v.exit_code(), 0);
  EXPECT_NE(v.reason.find("3 MUST check(s) skipped themselves on what the target answered"), std::string::npos)
      << v.reason;
  EXPECT_NE(v.reason.find("2 because \"the target has no call hook\" (binding.a and 1 more)"), std::string::npos)
      << v.reason;
  EXPECT_NE(v.reason.find("1 because \"no untagged alias on the channel\" (binding.fresh-after-retag)"),
            std::string::npos)
      << v.reason;
  EXPECT_EQ(v.reason.find("expiry.x"), std::string::npos) << v.reason;
  EXPECT_EQ(v.reason.find("minutes-zero"), std::string::npos) << v.reason;
  // Without such skips the verdict says nothing of them.
  EXPECT_EQ(verdict_of(report_with(30, 0, 2, 0), false).reason.find("skipped themselves"), std::string::npos);
}

TEST(ContractVerdict, FrameworkRefusalsJudgedApartAreNamed) {
  auto report = report_with(10, 0, 0, 0);
  CheckResult warned;
  warned.id = "errors.odd-requests";
  warned.outcome = Outcome::warn;
  warned.findings.push_back({Severity::should, "X2", "judged apart: ...", true});
  report.results.push_back(warned);
  const auto v = verdict_of(report, true);
  EXPECT_EQ(v.exit_code(), 0);
  EXPECT_NE(v.reason.find("1 check(s) judged apart the HTTP layer's refusal"), std::string::npos) << v.reason;
}


// The rule table never says a rule held that no check judged, and never
// disagrees with the verdict: classes of reports, every rule of each checked.
std::string rule_outcome_in(const boost::json::value& doc, std::string_view id) {
  for (const auto& r : doc.at("rules").as_array())
    if (r.at("id").as_string() == id) return std::string(r.at("outcome").as_string());
  return "absent";
}

TEST(RuleTable, ARuleOfFailedOrSkippedChecksOnlyIsNeverPass) {
  RunOptions options;
  for (auto first : {Outcome::fail, Outcome::skip, Outcome::indeterminate})
    for (auto second : {Outcome::fail, Outcome::skip, Outcome::indeterminate}) {
      RunReport report;
      for (auto o : {first, second}) {
        CheckResult r;
        r.id = "endpoints.agent-get";
        r.suite = "endpoints";
        r.rules = {"E2", "C1", "C2"};
        r.outcome = o;
        if (o == Outcome::fail) r.findings.push_back({Severity::must, "C2", "expected HTTP 200, got 404"});
        report.results.push_back(r);
      }
      const auto doc = result_document(report, options, false);
      for (auto rule : {"E2", "C1", "C2"})
        EXPECT_NE(rule_outcome_in(doc, rule), "pass") << rule << " with checks " << to_string(first) << ", "
                                                       << to_string(second);
    }
}

TEST(RuleTable, ARuleTheVerdictBlamesIsFailedInTheTable) {
  RunReport report;
  CheckResult r;
  r.id = "aliases.tag-shape";
  r.suite = "aliases";
  r.rules = {"E7"};  // the finding names a rule the check does not list
  r.outcome = Outcome::fail;
  r.findings.push_back({Severity::must, "E8", "the tag answer is not the alias"});
  report.results.push_back(r);
  const auto v = verdict_of(report, false);
  ASSERT_NE(v.reason.find("E8"), std::string::npos) << v.reason;
  EXPECT_EQ(rule_outcome_in(result_document(report, RunOptions{}, false), "E8"), "fail");
}

TEST(RuleTable, APreflightStopIsUntestedWithNoRuleShown) {
  RunReport report;
  report.preflight_stop = core::PreflightStop{true, "GET http://h/api/v1/local-agents", "HTTP 401", "the key"};
  const auto v = verdict_of(report, false);
  EXPECT_EQ(v.status, results::Status::untested);
  EXPECT_EQ(v.exit_code(), 3);
  const auto doc = result_document(report, RunOptions{}, false);
  EXPECT_TRUE(doc.at("rules").as_array().empty());
  EXPECT_EQ(doc.at("verdict").at("reason").as_string(), report.preflight_stop->line());
  report.preflight_stop->answered = false;
  EXPECT_EQ(verdict_of(report, false).status, results::Status::unreachable);
}

}  // namespace
}  // namespace crh::contracts
