// Whole load runs against the in-process reference service: the race finds
// no violation on a correct service and finds them on a racy one every run;
// the schedulers, the mix, the history, the thresholds and the document.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "core/histogram.hpp"
#include "loadgen/engine.hpp"
#include "loadgen/result.hpp"
#include "loadgen/setup.hpp"
#include "reference/server.hpp"

namespace crh::loadgen {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

constexpr const char* kKey = "load-test-key-5b21";

class LoadRun : public ::testing::Test {
 protected:
  void start(reference::FaultSet faults = {}, std::chrono::milliseconds minute = 60s, int aliases = 32) {
    reference::ServerConfig server;
    server.threads = 2;
    server.service.api_key = kKey;
    server.service.faults = faults;
    server.service.minute = minute;
    server.fixtures = reference::default_fixtures(2, aliases);
    server_ = std::make_unique<reference::Server>(std::move(server));
    server_->start();
    std::string why;
    config_.target.base = *core::parse_base_url(server_->base_url(), why);
    config_.target.api_key = kKey;
    config_.target.minute = minute;
    config_.duration = 500ms;
    config_.connections = 4;
    config_.callers = 6;
  }

  static reference::FaultSet fault(reference::Fault f) {
    reference::FaultSet s;
    s.add(f);
    return s;
  }

  LoadResult run() {
    FoundState found;
    Discovery d = discover(config_, found);
    Progress progress;
    LoadResult r = run_load(config_, d, progress);
    EXPECT_TRUE(restore(config_, found).empty());
    return r;
  }

  const OpStats& op(const LoadResult& r, OpKind k) { return r.stats.ops[static_cast<std::size_t>(k)]; }

  std::unique_ptr<reference::Server> server_;
  LoadConfig config_;
};

TEST_F(LoadRun, RaceOnTheReferenceServiceHasOneWinnerPerRoundAndNoViolation) {
  start();
  auto r = run();
  EXPECT_EQ(r.violation_count, 0u);
  ASSERT_GT(r.stats.race.rounds, 10u);
  ASSERT_GE(r.stats.race.winners.size(), 2u);
  EXPECT_EQ(r.stats.race.winners[1], r.stats.race.rounds) << "every round has exactly one winner";
  EXPECT_EQ(r.stats.race.skew.count(), r.stats.race.rounds);
  const auto& call = op(r, OpKind::call);
  EXPECT_EQ(call.count(), r.stats.race.rounds * 6);
  EXPECT_EQ(call.refusals, r.stats.race.rounds * 5) << "the five losers of each round are refused";
  EXPECT_EQ(call.errors, 0u);
  EXPECT_EQ(op(r, OpKind::recall).statuses[200], r.stats.race.rounds) << "the winner calls again and connects";
  EXPECT_EQ(op(r, OpKind::untag).errors, 0u);
}

TEST_F(LoadRun, RaceCatchesTheRacyBindEveryRun) {
  start(fault(reference::Fault::binding_racy));
  config_.duration = 300ms;
  for (int i = 0; i < 3; ++i) {
    auto r = run();
    EXPECT_GT(r.violation_count, 0u) << "run " << i;
    ASSERT_FALSE(r.violations.empty());
    EXPECT_EQ(r.violations.front().kind, ViolationKind::two_winners);
    EXPECT_EQ(r.violations.front().proof.size(), 2u);
  }
}

TEST_F(LoadRun, RaceCatchesTheLastCallerTakingOverEveryRun) {
  start(fault(reference::Fault::binding_last_caller));
  config_.duration = 300ms;
  for (int i = 0; i < 3; ++i) {
    auto r = run();
    EXPECT_GT(r.violation_count, 0u) << "run " << i;
  }
}

TEST_F(LoadRun, TagsThatNeverExpireAreNotFlaggedWithinTheLifetime) {
  start(fault(reference::Fault::expiry_never));
  EXPECT_EQ(run().violation_count, 0u);
}

TEST_F(LoadRun, TagsExpiringMidRoundAreNotFlagged) {
  // One tag minute of 2 ms: some rounds outlive their tag, and a call after
  // the expiry connects any caller. The checker must not judge those calls.
  start({}, 2ms);
  config_.tag_minutes = 1;
  auto r = run();
  EXPECT_EQ(r.violation_count, 0u);
  EXPECT_GT(r.stats.race.rounds, 0u);
}

TEST_F(LoadRun, ClosedLoopGetCountsEveryAnswer) {
  start();
  config_.scenario = Scenario::get;
  config_.path = "/api/v1/local-agents/101";
  auto r = run();
  const auto& get = op(r, OpKind::get);
  EXPECT_GT(get.count(), 100u);
  EXPECT_EQ(get.statuses[200], get.count());
  EXPECT_EQ(get.errors, 0u);
  EXPECT_GT(r.achieved_rate, 0);
  EXPECT_EQ(r.intended_rate, 0);
  EXPECT_NEAR(r.wall_s, 0.5, 0.2);
}

TEST_F(LoadRun, GetWithoutTheKeyCountsRefusalsAsErrors) {
  start();
  config_.scenario = Scenario::get;
  config_.target.api_key = "";
  auto r = run();
  const auto& get = op(r, OpKind::get);
  EXPECT_GT(get.statuses[401], 0u);
  EXPECT_EQ(get.errors, get.count());
}

TEST_F(LoadRun, OpenLoopKeepsTheAskedRate) {
  start();
  config_.scenario = Scenario::get;
  config_.rate = 1000;
  config_.duration = 1000ms;
  auto r = run();
  EXPECT_EQ(r.intended_rate, 1000);
  EXPECT_NEAR(r.achieved_rate, 1000, 100);
  EXPECT_TRUE(r.invalid.empty()) << r.invalid.front();
}

TEST_F(LoadRun, OpenLoopMeasuresFromTheDueTimeSoAStallCannotHide) {
  // A tag takes 20 ms; one connection asked for 200 tags a second falls
  // behind: latency from the due time grows, latency from the send does not.
  start(fault(reference::Fault::slow_tag));
  config_.scenario = Scenario::mixed;
  config_.mix = {{OpKind::tag, 1}};
  config_.connections = 1;
  config_.rate = 200;
  config_.duration = 600ms;
  auto r = run();
  const auto& tag = op(r, OpKind::tag);
  core::Histogram corrected;
  for (const auto& h : tag.latency) corrected.merge(h);
  ASSERT_GT(tag.count(), 5u);
  EXPECT_GT(corrected.quantile(0.99), 3 * tag.uncorrected.quantile(0.99));
  EXPECT_LT(r.achieved_rate, 100);
  ASSERT_FALSE(r.invalid.empty());
  EXPECT_NE(r.invalid.back().find("behind schedule"), std::string::npos);
}

TEST_F(LoadRun, MixedTouchesEveryEndpointAndPutsTheTargetBack) {
  start();
  config_.scenario = Scenario::mixed;
  config_.mix = {{OpKind::list_agents, 1}, {OpKind::get_agent, 1}, {OpKind::snooze, 1}, {OpKind::wake, 1},
                 {OpKind::db_get, 1},      {OpKind::db_set, 1},    {OpKind::list_aliases, 1},
                 {OpKind::tag, 1},         {OpKind::call, 1}};
  FoundState before;
  discover(config_, before);  // it writes the key the mix reads: undo that first
  ASSERT_TRUE(restore(config_, before).empty());
  auto r = run();
  for (auto k : {OpKind::list_agents, OpKind::get_agent, OpKind::snooze, OpKind::wake, OpKind::db_set,
                 OpKind::list_aliases, OpKind::tag, OpKind::untag, OpKind::call}) {
    EXPECT_GT(op(r, k).count(), 0u) << to_string(k);
    EXPECT_EQ(op(r, k).errors, 0u) << to_string(k);
  }
  FoundState after;
  discover(config_, after);
  EXPECT_EQ(after.agent_states, before.agent_states);
  EXPECT_EQ(after.database_value.value_or(""), before.database_value.value_or(""));
  EXPECT_EQ(op(r, OpKind::db_get).errors, 0u) << "the key the mix reads exists";
}

TEST_F(LoadRun, HistoryHoldsEveryOperationOfTheRaceAsJsonLines) {
  start();
  const std::string path = ::testing::TempDir() + "crh-history-test.jsonl";
  config_.history_file = path;
  config_.duration = 200ms;
  auto r = run();
  std::ifstream in(path);
  std::string line;
  std::uint64_t lines = 0, calls = 0, tags = 0;
  while (std::getline(in, line)) {
    ++lines;
    auto v = json::parse(line).as_object();
    ASSERT_TRUE(v.contains("invoke_ns") && v.contains("complete_ns") && v.contains("outcome")) << line;
    EXPECT_LE(v.at("invoke_ns").as_int64(), v.at("complete_ns").as_int64()) << line;
    calls += v.at("op").as_string() == "call";
    tags += v.at("op").as_string() == "tag";
  }
  EXPECT_EQ(lines, r.history_ops);
  EXPECT_GT(tags, 0u);
  EXPECT_EQ(calls, tags * 6);
  std::remove(path.c_str());
}

TEST_F(LoadRun, ThresholdsGateTheExitCode) {
  start();
  config_.duration = 200ms;
  auto r = run();
  auto verdicts = evaluate(parse_thresholds({"violations==0", "call.p99<1ns", "errors<0.1%", "rounds>0"}), r);
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_TRUE(verdicts[0].held);
  EXPECT_FALSE(verdicts[1].held) << "no call answers in under a nanosecond";
  EXPECT_TRUE(verdicts[2].held);
  EXPECT_TRUE(verdicts[3].held);
  EXPECT_EQ(exit_code_of(r, verdicts), 1);
  verdicts.erase(verdicts.begin() + 1);
  EXPECT_EQ(exit_code_of(r, verdicts), 0);
  EXPECT_THROW(parse_thresholds({"dial.p99<2ms"}), std::invalid_argument) << "no such operation";
}

TEST_F(LoadRun, ResultDocumentHistogramsRebuildTheFigures) {
  start();
  config_.duration = 300ms;
  auto r = run();
  auto doc = result_document(config_, r, {}, {});
  EXPECT_EQ(doc.at("schema").as_string(), "crh.result");
  EXPECT_EQ(doc.at("kind").as_string(), "load");
  const auto& call = doc.at("operations").at("call");
  auto h = core::Histogram::from_json(call.at("latency").at("histogram"));
  EXPECT_EQ(h.count(), op(r, OpKind::call).count());
  EXPECT_EQ(h.quantile(0.99), call.at("latency").at("p99_ns").to_number<std::int64_t>());
  std::uint64_t per_second = 0;
  for (const auto& s : doc.at("series").as_array()) per_second += s.at("requests").to_number<std::uint64_t>();
  std::uint64_t total = 0;
  for (const auto& s : r.stats.ops) total += s.count();
  EXPECT_EQ(per_second, total);
  EXPECT_EQ(doc.at("race").at("violation_count").to_number<int>(), 0);
  EXPECT_EQ(json::serialize(doc).find(kKey), std::string::npos) << "the key never reaches the document";
}

TEST_F(LoadRun, SetupNamesWhatIsMissing) {
  start();
  config_.target.call_hook.path = "/no/such/hook/{alias}";
  FoundState found;
  try {
    discover(config_, found);
    FAIL() << "a target without the call hook must not race";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("call hook"), std::string::npos) << e.what();
  }
  config_.target.call_hook = {};
  config_.target.api_key = "wrong";
  EXPECT_THROW(discover(config_, found), SetupError);
  server_->stop();
  config_.target.api_key = kKey;
  EXPECT_THROW(discover(config_, found), SetupError);
}

}  // namespace
}  // namespace crh::loadgen
