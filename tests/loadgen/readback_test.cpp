// A load result document read back gives the same document again, and two
// shards merge into exactly the document of one run over all their samples.
#include "loadgen/readback.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "load_fixture.hpp"

namespace crh::loadgen {
namespace {

namespace json = boost::json;
using test::synthetic_load_run;

TEST(LoadReadback, DocumentRoundTripsExactly) {
  for (auto scenario : {Scenario::race, Scenario::mixed, Scenario::get}) {
    const auto doc = result_document(synthetic_load_run(scenario, 0));
    // Through text, as crh report reads it.
    const auto again = result_document(read_load_document(json::parse(json::serialize(doc)).as_object()));
    EXPECT_EQ(json::serialize(again), json::serialize(doc)) << to_string(scenario);
  }
}

TEST(LoadReadback, MergeOfTwoShardsEqualsOneRunOverTheSameSamples) {
  for (auto scenario : {Scenario::race, Scenario::mixed}) {
    const auto whole = result_document(synthetic_load_run(scenario, 0));
    const auto a = read_load_document(result_document(synthetic_load_run(scenario, 1)));
    const auto b = read_load_document(result_document(synthetic_load_run(scenario, 2)));
    const auto merged = result_document(merge_load_runs(a, b));
    EXPECT_EQ(json::serialize(merged), json::serialize(whole)) << to_string(scenario);
    // The figures a reader sees come from the merged histograms, not from averaging.
    EXPECT_EQ(merged.at("operations").at("call").at("latency").at("p99_ns"),
              whole.at("operations").at("call").at("latency").at("p99_ns"));
  }
}

TEST(LoadReadback, MergeIsCommutativeInItsFigures) {
  const auto a = read_load_document(result_document(synthetic_load_run(Scenario::mixed, 1)));
  const auto b = read_load_document(result_document(synthetic_load_run(Scenario::mixed, 2)));
  EXPECT_EQ(result_document(merge_load_runs(a, b)).at("operations"),
            result_document(merge_load_runs(b, a)).at("operations"));
}

TEST(LoadReadback, ThresholdsAreEvaluatedAgainOnTheMergedData) {
  auto a = synthetic_load_run(Scenario::mixed, 1);
  auto b = synthetic_load_run(Scenario::mixed, 2);
  b.thresholds = {parse_threshold("requests>3000")};  // neither shard alone has 3000 requests
  const auto merged =
      result_document(merge_load_runs(read_load_document(result_document(a)), read_load_document(result_document(b))));
  bool found = false;
  for (const auto& t : merged.at("thresholds").as_array())
    if (t.at("expression") == "requests>3000") {
      found = true;
      EXPECT_TRUE(t.at("held").as_bool()) << json::serialize(t);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(merged.at("thresholds").as_array().size(), 3u);  // the union, without duplicates
}

// A long run keeps a coarser series: at most kMaxSeriesPoints points, each the
// exact merge of the seconds it spans; it reads back and merges as it was.
TEST(LoadReadback, ALongRunsSeriesIsCoarsenedExactly) {
  Stats fine;
  const std::size_t seconds = Stats::kMaxSeriesPoints * 3 + 7;  // needs a step of 4
  for (std::size_t t = 0; t < seconds; ++t)
    for (int i = 0; i < 3; ++i)
      fine.record_second(static_cast<std::int64_t>(t) * 1'000'000'000 + i, 1000 + static_cast<std::int64_t>(t * 10 + i),
                         i == 0);
  fine.close_seconds();
  Stats coarse = fine;
  coarse.coarsen(Stats::kMaxSeriesPoints);
  ASSERT_EQ(coarse.series_step_s, 4u);
  ASSERT_EQ(coarse.seconds.size(), (seconds + 3) / 4);
  for (std::size_t j = 0; j < coarse.seconds.size(); ++j) {
    core::Histogram want;
    std::uint64_t requests = 0, errors = 0;
    for (std::size_t t = j * 4; t < std::min(seconds, j * 4 + 4); ++t) {
      want.merge(fine.seconds[t].latency.histogram());
      requests += fine.seconds[t].requests;
      errors += fine.seconds[t].errors;
    }
    EXPECT_EQ(coarse.seconds[j].requests, requests) << j;
    EXPECT_EQ(coarse.seconds[j].errors, errors) << j;
    EXPECT_EQ(coarse.seconds[j].latency.quantile(0.99), want.quantile(0.99)) << j;
  }

  auto run = synthetic_load_run(Scenario::get, 0);
  run.result.stats.seconds = coarse.seconds;
  run.result.stats.series_step_s = coarse.series_step_s;
  const auto doc = result_document(run);
  EXPECT_EQ(doc.at("series_step_s").to_number<std::uint64_t>(), 4u);
  EXPECT_EQ(doc.at("series").as_array().at(1).at("t").to_number<std::uint64_t>(), 4u);
  const auto again = read_load_document(json::parse(json::serialize(doc)).as_object());
  EXPECT_EQ(json::serialize(result_document(again)), json::serialize(doc));

  // A short shard (step 1) merges with the long one at the coarser step.
  const auto merged = merge_load_runs(again, read_load_document(result_document(synthetic_load_run(Scenario::get, 0))));
  EXPECT_EQ(merged.result.stats.series_step_s, 4u);
  EXPECT_EQ(merged.result.stats.seconds[0].requests,
            coarse.seconds[0].requests + synthetic_load_run(Scenario::get, 0).result.stats.seconds[0].requests +
                synthetic_load_run(Scenario::get, 0).result.stats.seconds[1].requests +
                synthetic_load_run(Scenario::get, 0).result.stats.seconds[2].requests +
                synthetic_load_run(Scenario::get, 0).result.stats.seconds[3].requests);
}

// What the generator ran with (race: rounds in flight) is in the document, for
// the reports to show instead of guessing; it reads back and shards add up.
TEST(LoadReadback, TheConnectionsRunAreWrittenReadBackAndAdded) {
  auto run = synthetic_load_run(Scenario::race, 0);
  EXPECT_EQ(result_document(run).at("totals").at("connections"), 5)
      << "the configured number, when the engine did not say";
  run.config.connections = 0;  // the scenario's default
  run.result.connections = 7;    // what the engine ran
  auto doc = result_document(run);
  EXPECT_EQ(doc.at("totals").at("connections"), 7);
  EXPECT_EQ(doc.at("config").at("connections"), 0) << "the config stays what was asked";
  EXPECT_EQ(read_load_document(json::parse(json::serialize(doc)).as_object()).result.connections, 7);

  run.result.connections = 0;  // neither known: left out, not guessed
  doc = result_document(run);
  EXPECT_FALSE(doc.at("totals").as_object().contains("connections"));
  EXPECT_EQ(json::serialize(result_document(read_load_document(doc))), json::serialize(doc));

  auto a = read_load_document(result_document(synthetic_load_run(Scenario::race, 1)));
  auto b = read_load_document(result_document(synthetic_load_run(Scenario::race, 2)));
  a.result.connections = 4;
  b.result.connections = 6;
  EXPECT_EQ(result_document(merge_load_runs(a, b)).at("totals").at("connections"), 10);
  b.result.connections = 0;  // one shard did not say: the configured connections (2 + 3) are what is known
  EXPECT_EQ(result_document(merge_load_runs(a, b)).at("totals").at("connections"), 5);
}

TEST(LoadReadback, DifferentScenariosDoNotMerge) {
  const auto race = read_load_document(result_document(synthetic_load_run(Scenario::race, 1)));
  const auto mixed = read_load_document(result_document(synthetic_load_run(Scenario::mixed, 2)));
  EXPECT_THROW(merge_load_runs(race, mixed), std::invalid_argument);
}

TEST(LoadReadback, ErrorsNameTheField) {
  auto doc = result_document(synthetic_load_run(Scenario::mixed, 0));
  auto broken = doc;
  broken["totals"].as_object().erase("measured_s");
  try {
    read_load_document(broken);
    FAIL() << "a document without totals.measured_s was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("totals.measured_s"), std::string::npos) << e.what();
  }
  broken = doc;
  broken["operations"].as_object()["call"].as_object()["latency_uncorrected"].as_object()["histogram"] = "nonsense";
  try {
    read_load_document(broken);
    FAIL() << "a broken histogram was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("operations.call.latency_uncorrected.histogram"), std::string::npos)
        << e.what();
  }
  broken = doc;
  broken["kind"] = "contract";
  EXPECT_THROW(read_load_document(broken), std::runtime_error);
}

}  // namespace
}  // namespace crh::loadgen
