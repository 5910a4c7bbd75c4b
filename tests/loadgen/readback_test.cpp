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
  EXPECT_EQ(result_document(merge_load_runs(a, b)).at("operations"), result_document(merge_load_runs(b, a)).at("operations"));
}

TEST(LoadReadback, ThresholdsAreEvaluatedAgainOnTheMergedData) {
  auto a = synthetic_load_run(Scenario::mixed, 1);
  auto b = synthetic_load_run(Scenario::mixed, 2);
  b.thresholds = {parse_threshold("requests>3000")};  // neither shard alone has 3000 requests
  const auto merged = result_document(merge_load_runs(read_load_document(result_document(a)), read_load_document(result_document(b))));
  bool found = false;
  for (const auto& t : merged.at("thresholds").as_array())
    if (t.at("expression") == "requests>3000") {
      found = true;
      EXPECT_TRUE(t.at("held").as_bool()) << json::serialize(t);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(merged.at("thresholds").as_array().size(), 3u);  // the union, without duplicates
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
    EXPECT_NE(std::string(e.what()).find("operations.call.latency_uncorrected.histogram"), std::string::npos) << e.what();
  }
  broken = doc;
  broken["kind"] = "contract";
  EXPECT_THROW(read_load_document(broken), std::runtime_error);
}

}  // namespace
}  // namespace crh::loadgen
