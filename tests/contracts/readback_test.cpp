// A contract result document read back gives the same document again, and
// runs of different suites (shards) merge into the document of one run.
#include "contracts/readback.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "results/keys_contract.hpp"

namespace crh::contracts {
namespace {

namespace json = boost::json;

// Results for the first `n` checks of the registry; outcomes cycle through all five.
RunReport report_of(std::size_t from, std::size_t to) {
  RunReport report;
  report.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  report.duration = std::chrono::microseconds(1'234'567);
  const Outcome outcomes[] = {Outcome::pass, Outcome::warn, Outcome::fail, Outcome::skip, Outcome::indeterminate};
  for (std::size_t i = from; i < to; ++i) {
    const auto& c = all_checks()[i];
    CheckResult r{c.id, c.suite, c.rules, c.severity, outcomes[i % 5], "", {}, {}, std::chrono::microseconds(1000 + i)};
    if (r.outcome == Outcome::fail || r.outcome == Outcome::warn) {
      r.message = "expected 200, got 500 <b>\"x\"</b>";
      r.findings.push_back(
          {r.outcome == Outcome::fail ? Severity::must : Severity::should, c.rules.front(), r.message});
    }
    r.evidence.push_back({"curl -sS 'http://127.0.0.1:18080/api/v1/local-agents' -H 'Apikey: '\"$CRH_API_KEY\"",
                          "HTTP 500 text/plain, 3 bytes: boo", std::chrono::microseconds(250 + i)});
    report.results.push_back(std::move(r));
  }
  const bool failed = std::any_of(report.results.begin(), report.results.end(),
                                  [](const CheckResult& r) { return r.outcome == Outcome::fail; });
  report.exit_code = failed ? 1 : 0;
  return report;
}

RunOptions options() {
  RunOptions o;
  std::string why;
  o.target.base = *core::parse_base_url("http://127.0.0.1:18080", why);
  o.target.channel = "7";
  return o;
}

TEST(ContractReadback, DocumentRoundTripsExactly) {
  const auto doc = result_document(report_of(0, 12), options(), false);
  const auto again = result_document(read_contract_document(json::parse(json::serialize(doc)).as_object()));
  EXPECT_EQ(json::serialize(again), json::serialize(doc));
}

TEST(ContractReadback, ShardsMergeIntoOneRun) {
  const auto whole = result_document(report_of(0, 12), options(), false);
  const auto a = read_contract_document(result_document(report_of(0, 5), options(), false).as_object());
  const auto b = read_contract_document(result_document(report_of(5, 12), options(), false).as_object());
  EXPECT_EQ(json::serialize(result_document(merge_contract_runs(b, a))), json::serialize(whole));
  EXPECT_EQ(result_document(merge_contract_runs(a, b)).at("verdict").at("exit_code"), 1);
}

TEST(ContractReadback, ACheckInBothShardsKeepsTheWorseOutcome) {
  auto passing = report_of(2, 3);
  passing.results[0].outcome = Outcome::pass;
  passing.results[0].findings.clear();
  passing.exit_code = 0;
  const auto a = read_contract_document(result_document(passing, options(), false).as_object());
  const auto b = read_contract_document(result_document(report_of(2, 3), options(), false).as_object());  // fail
  const auto merged = result_document(merge_contract_runs(a, b));
  EXPECT_EQ(merged.at("checks").as_array().size(), 1u);
  EXPECT_EQ(merged.at("checks").at(0).at("outcome"), "fail");
  EXPECT_EQ(merged.at("verdict").at("status"), "failed");
}

// The counts are keyed by outcome names (keys::counts); a reader uses the
// constants, the producer to_string(Outcome): they must agree.
TEST(ContractReadback, CountKeysAreTheOutcomeNames) {
  const auto doc = result_document(report_of(0, 10), options(), false);
  const auto& counts = doc.at("counts").as_object();
  EXPECT_EQ(counts.size(), 6u);
  for (const auto* key : {"total", "pass", "warn", "fail", "skip", "indeterminate"})
    EXPECT_TRUE(counts.contains(key)) << key;
  namespace n = results::keys::counts;
  EXPECT_EQ(to_string(Outcome::pass), n::pass);
  EXPECT_EQ(to_string(Outcome::warn), n::warn);
  EXPECT_EQ(to_string(Outcome::fail), n::fail);
  EXPECT_EQ(to_string(Outcome::skip), n::skip);
  EXPECT_EQ(to_string(Outcome::indeterminate), n::indeterminate);
  EXPECT_EQ(counts.at("total"), 10);
  EXPECT_EQ(counts.at("fail"), 2);
}

TEST(ContractReadback, ErrorsNameTheField) {
  auto doc = result_document(report_of(0, 3), options(), false).as_object();
  doc["checks"].as_array()[1].as_object()["outcome"] = "maybe";
  try {
    read_contract_document(doc);
    FAIL() << "an unknown outcome was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown outcome \"maybe\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(all_checks()[1].id), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace crh::contracts
