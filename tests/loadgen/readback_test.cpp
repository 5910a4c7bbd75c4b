// A load result document read back gives the same document again, and two
// shards merge into exactly the document of one run over all their samples.
#include "loadgen/merge.hpp"
#include "loadgen/readback.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/outside.hpp"
#include "load_fixture.hpp"

namespace crh::loadgen {
namespace {
using oracle::OpKind;
using oracle::Outcome;

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

// The mixed load's history check and its violations (key or agent, expected,
// actual, reproduce, values in the proof) read back whole; shards add up.
TEST(LoadReadback, TheMixedHistoryCheckRoundTripsAndShardsAddUp) {
  // Values go out through core::composed: a run key an earlier test of this
  // process registered ("load") would be redacted out of them.
  core::register_run_key("");
  auto run = synthetic_load_run(Scenario::mixed, 0);
  auto& r = run.result;
  r.judgement = {.judged = true, .database_reads = 40, .agent_reads = 70, .tags = 9, .unjudged = {"why not"}};
  oracle::Op write, read;
  write.kind = OpKind::db_set;
  write.id = read.id = "crh-probe-load";
  write.value = "crh load 0.0.1";
  write.outcome = read.outcome = Outcome::ok;
  write.invoke_ns = 10, write.complete_ns = 20, read.invoke_ns = 30, read.complete_ns = 40;
  read.kind = OpKind::db_get;
  read.value = "crh load";
  oracle::Violation v;
  v.kind = oracle::ViolationKind::database_stale_read;
  v.id = "crh-probe-load";
  v.expected = "\"crh load 0.0.1\"";
  v.actual = "crh load";
  v.reproduce = "crh load --scenario mixed --seed 1";
  v.explanation = "stale";
  oracle::Op not_now;  // a proof may hold a "not now": its mark reads back
  not_now.kind = OpKind::db_set;
  not_now.outcome = Outcome::fail;
  not_now.status = 429;
  not_now.not_now = true;
  v.proof = {write, read, not_now};
  r.violation_count = 1;
  r.violations = {v};
  const auto doc = result_document(run);
  const auto back = read_load_document(json::parse(json::serialize(doc)).as_object());
  EXPECT_EQ(json::serialize(result_document(back)), json::serialize(doc));
  ASSERT_EQ(back.result.violations.size(), 1u);
  EXPECT_EQ(back.result.violations[0].proof[1].value, "crh load");
  EXPECT_FALSE(back.result.violations[0].proof[1].not_now);
  EXPECT_TRUE(back.result.violations[0].proof[2].not_now);
  EXPECT_EQ(back.result.violations[0].reproduce, v.reproduce);
  const auto merged = merge_load_runs(back, back).result;
  EXPECT_EQ(merged.judgement.database_reads, 80u);
  EXPECT_EQ(merged.judgement.unjudged.size(), 1u);
  EXPECT_EQ(merged.violation_count, 2u);
}

// Repetitions (crh run --repeat) add up as shards do, except in time: the
// history each judged counts in the merged document, and a repetition that
// could not judge says so there (it had counted the first repetition's only).
TEST(LoadReadback, RepetitionsAddTheirJudgedHistoriesAndTheirTimes) {
  auto first = synthetic_load_run(Scenario::mixed, 1);
  auto second = synthetic_load_run(Scenario::mixed, 2);
  first.result.judgement = {.judged = true, .database_reads = 40, .agent_reads = 70, .tags = 9, .unjudged = {}};
  second.result.judgement = {.judged = true, .database_reads = 5, .agent_reads = 6, .tags = 1,
                             .unjudged = {"agent 101: changed by another client"}};
  const auto a = json::parse(json::serialize(result_document(first))).as_object();
  const auto b = json::parse(json::serialize(result_document(second))).as_object();
  const auto merged = merge_repetitions({a, b});
  const auto back = read_load_document(merged).result;
  EXPECT_EQ(back.judgement.database_reads, 45u);
  EXPECT_EQ(back.judgement.agent_reads, 76u);
  EXPECT_EQ(back.judgement.tags, 10u);
  ASSERT_EQ(back.judgement.unjudged.size(), 1u);
  EXPECT_EQ(back.judgement.unjudged[0], "agent 101: changed by another client");
  EXPECT_DOUBLE_EQ(back.wall_s, first.result.wall_s + second.result.wall_s) << "one after the other: times add";
  EXPECT_EQ(merged.at("repetitions").as_array().size(), 2u);
  EXPECT_EQ(merge_repetitions({a}), a) << "one repetition is its own document";
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

// A mixed load of 12 seconds whose operations keep their series, as the
// engine records them: every sample in part 0, the odd ones in part 1, the
// even ones in part 2 (two shards of part 0).
LoadRun run_with_series(int part) {
  auto run = synthetic_load_run(Scenario::mixed, part);
  auto& stats = run.result.stats;
  stats = Stats{};
  std::uint64_t n = 0;
  for (std::int64_t i = 0; i < 12 * 250; ++i) {
    if ((part == 1 && i % 2 == 1) || (part == 2 && i % 2 == 0)) continue;
    ++n;
    const auto op = (i / 2) % 3 == 0 ? OpKind::tag : OpKind::call;
    const std::int64_t second = i / 250;
    const std::int64_t ns = 50'000 + (i * 7919) % 400'000 + (second % 3) * 30'000;  // seconds of three levels
    auto& s = stats.ops[static_cast<std::size_t>(op)];
    s.latency[static_cast<std::size_t>(Outcome::ok)].record(ns);
    s.uncorrected.record(ns);
    s.statuses[200]++;
    stats.record_second(op, second * 1'000'000'000 + i, ns, false);
  }
  stats.close_seconds();
  run.result.achieved_rate = static_cast<double>(n) / run.result.wall_s;
  run.result.history_ops = n;
  return run;
}

TEST(LoadReadback, EachOperationsSeriesAndPercentileIntervalsRoundTrip) {
  const auto doc = result_document(run_with_series(0));
  const auto& call = doc.at("operations").at("call").as_object();
  const auto& series = call.at("series").as_array();
  ASSERT_EQ(series.size(), 12u);
  EXPECT_EQ(series.at(11).at("t").to_number<int>(), 11);
  EXPECT_EQ(series.at(0).at("histogram").at("count").to_number<int>(), 166);  // 83 of the second's 125 pairs of samples
  const auto& p99 = call.at("latency").at("percentiles").at("p99").as_object();
  EXPECT_EQ(p99.at("value"), call.at("latency").at("p99_ns"));
  EXPECT_EQ(p99.at("n"), call.at("latency").at("count"));
  EXPECT_EQ(p99.at("blocks").at("count").to_number<int>(), 12);
  EXPECT_LE(p99.at("lower").to_number<std::int64_t>(), p99.at("value").to_number<std::int64_t>());
  EXPECT_GE(p99.at("upper").to_number<std::int64_t>(), p99.at("value").to_number<std::int64_t>());
  EXPECT_TRUE(p99.at("backed").as_bool());  // 2,000 samples
  EXPECT_FALSE(call.at("latency").at("percentiles").at("p99.9").at("backed").as_bool());
  // No series beside the outcomes' latency: the binomial interval alone.
  EXPECT_FALSE(call.at("by_outcome").at("ok").at("percentiles").at("p50").as_object().contains("blocks"));

  const auto again = read_load_document(json::parse(json::serialize(doc)).as_object());
  EXPECT_EQ(json::serialize(result_document(again)), json::serialize(doc));
}

// An operation's blocks span the whole run, not only the seconds it came in.
TEST(LoadReadback, AnOperationsBlocksSpanTheWholeRun) {
  auto run = run_with_series(0);
  for (std::int64_t t = 0; t < 3; ++t)
    for (int i = 0; i < 50; ++i) {
      run.result.stats.ops[static_cast<std::size_t>(OpKind::untag)].latency[0].record(90'000 + i);
      run.result.stats.record_second(OpKind::untag, t * 1'000'000'000 + i, 90'000 + i, false);
    }
  const auto doc = result_document(run);
  const auto& p50 = doc.at("operations").at("untag").at("latency").at("percentiles").at("p50").as_object();
  EXPECT_FALSE(p50.contains("blocks"));
  EXPECT_NE(p50.at("note").as_string().find("only 3 of the run's 12 blocks hold samples"), std::string::npos) << p50;
}

TEST(LoadReadback, MergedShardsGetIntervalsFromTheMergedSeries) {
  const auto whole = result_document(run_with_series(0));
  const auto merged = result_document(merge_load_runs(
      read_load_document(result_document(run_with_series(1))),
      read_load_document(json::parse(json::serialize(result_document(run_with_series(2)))).as_object())));
  EXPECT_EQ(json::serialize(merged.at("operations")), json::serialize(whole.at("operations")));
  EXPECT_NE(
      json::serialize(merged.at("operations").at("tag").at("latency").at("percentiles")),
      json::serialize(result_document(run_with_series(1)).at("operations").at("tag").at("latency").at("percentiles")));
}

// A document of schema_version 1 (no intervals, no series per operation)
// reads back, as a baseline or a shard; its percentiles get the binomial
// interval, and a merge with a newer shard gives no block interval, saying why.
TEST(LoadReadback, SchemaVersion1DocumentsStillRead) {
  auto old = result_document(run_with_series(1));
  old["schema_version"] = 1;
  for (auto& [name, op] : old.at("operations").as_object()) {
    op.as_object().erase("series");
    op.at("latency").as_object().erase("percentiles");
    op.at("latency_uncorrected").as_object().erase("percentiles");
    for (auto& [outcome, latency] : op.at("by_outcome").as_object()) latency.as_object().erase("percentiles");
  }
  old.at("totals").at("lag").as_object().erase("percentiles");
  const auto run = read_load_document(old);
  const auto again = result_document(run);
  const auto& p50 = again.at("operations").at("call").at("latency").at("percentiles").at("p50").as_object();
  EXPECT_FALSE(p50.contains("blocks"));
  EXPECT_EQ(p50.at("method"), "binomial");

  const auto merged = result_document(merge_load_runs(run, read_load_document(result_document(run_with_series(2)))));
  const auto& m50 = merged.at("operations").at("call").at("latency").at("percentiles").at("p50").as_object();
  EXPECT_FALSE(m50.contains("blocks"));
  EXPECT_NE(m50.at("note").as_string().find("holds 1,000 of the 2,000 samples"), std::string::npos) << m50;
  EXPECT_EQ(m50.at("n").to_number<int>(), 2'000);
}

// A long run keeps a coarser series: at most kMaxSeriesPoints points, each the
// exact merge of the seconds it spans; it reads back and merges as it was.
TEST(LoadReadback, ALongRunsSeriesIsCoarsenedExactly) {
  Stats fine;
  const std::size_t seconds = Stats::kMaxSeriesPoints * 3 + 7;  // needs a step of 4
  for (std::size_t t = 0; t < seconds; ++t)
    for (int i = 0; i < 3; ++i)
      fine.record_second(i == 2 ? OpKind::db_get : OpKind::get, static_cast<std::int64_t>(t) * 1'000'000'000 + i,
                         1000 + static_cast<std::int64_t>(t * 10 + i), i == 0);
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
    core::Histogram want_db_get;  // and each operation's series alike
    for (std::size_t t = j * 4; t < std::min(seconds, j * 4 + 4); ++t)
      want_db_get.merge(fine.ops[static_cast<std::size_t>(OpKind::db_get)].seconds[t].histogram());
    EXPECT_EQ(coarse.ops[static_cast<std::size_t>(OpKind::db_get)].seconds[j].histogram(), want_db_get) << j;
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
