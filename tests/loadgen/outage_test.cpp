// Outages (issue 35): the stretches in which requests were sent and none
// succeeded, from the answers of one thread, of several merged, and of
// shards; their thresholds and their place in the verdict.
#include "loadgen/outage.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "loadgen/outage_result.hpp"
#include "loadgen/readback.hpp"
#include "loadgen/result.hpp"

namespace crh::loadgen {
namespace {
using oracle::OpKind;
using oracle::Outcome;

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t s = 1000 * ms;

// Ups every `step` in [from, to).
void ups(Timeline& t, std::int64_t from, std::int64_t to, std::int64_t step = 10 * ms) {
  for (std::int64_t at = from; at < to; at += step) t.up(at);
}
void downs(Timeline& t, std::int64_t from, std::int64_t to, unsigned status = 0, std::int64_t step = 10 * ms) {
  for (std::int64_t at = from; at < to; at += step) t.down(at, status, Failure::connect);
}

std::vector<Outage> outages(Timeline t, std::int64_t measured = 6 * s) {
  t.normalize();
  return outages_of(t, measured);
}

TEST(Outage, OneThreadSeesTheStretchFromTheLastSuccessToTheFirstAfter) {
  Timeline t;
  ups(t, 0, 2 * s);  // last at 1.99 s
  downs(t, 2 * s, 3500 * ms);
  downs(t, 2005 * ms, 2105 * ms, 503, 50 * ms);
  ups(t, 3505 * ms, 6 * s);
  const auto o = outages(t);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].start_ns, 1990 * ms);
  EXPECT_EQ(o[0].end_ns, 3505 * ms);
  EXPECT_EQ(o[0].first_down_ns, 2 * s);
  EXPECT_EQ(o[0].last_down_ns, 3490 * ms);
  EXPECT_FALSE(o[0].from_start);
  EXPECT_FALSE(o[0].to_end);
  EXPECT_EQ(o[0].answers.failures[static_cast<std::size_t>(Failure::connect)], 150u);
  EXPECT_EQ(o[0].answers.text(), "connect×150, HTTP 503×2");
}

TEST(Outage, SuccessesCloserThanTheGapLeaveNoOutage) {
  Timeline t;
  ups(t, 0, 6 * s);
  t.down(3 * s + 5 * ms, 500, Failure::reset);  // between two successes 10 ms apart
  EXPECT_TRUE(outages(t).empty());
  // Out of order: the down is recorded before the successes around it.
  Timeline late;
  late.down(3 * s + 5 * ms, 0, Failure::timeout);
  ups(late, 0, 6 * s);
  EXPECT_TRUE(outages(late).empty());
}

TEST(Outage, AStretchAtTheStartAndOneAtTheEnd) {
  Timeline t;
  downs(t, 0, 1 * s);
  ups(t, 1 * s, 5 * s);
  downs(t, 5500 * ms, 7 * s);  // past the measured 6 s: clipped to it
  const auto o = outages(t);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_TRUE(o[0].from_start);
  EXPECT_EQ(o[0].start_ns, 0);
  EXPECT_EQ(o[0].end_ns, 1 * s);
  EXPECT_TRUE(o[1].to_end);
  EXPECT_EQ(o[1].start_ns, 4990 * ms);
  EXPECT_EQ(o[1].end_ns, 6 * s);
  EXPECT_EQ(o[1].last_down_ns, 6 * s);
}

TEST(Outage, BackToBackStretchesStayApartAcrossOneSuccess) {
  Timeline t;
  ups(t, 0, 1 * s);
  downs(t, 1 * s, 2 * s);
  t.up(2 * s);  // one success between them
  downs(t, 2 * s + 10 * ms, 3 * s);
  ups(t, 3 * s, 6 * s);
  const auto o = outages(t);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].end_ns, 2 * s);
  EXPECT_EQ(o[1].start_ns, 2 * s);
  EXPECT_EQ(o[1].end_ns, 3 * s);
}

TEST(Outage, ARunWithoutASuccessIsOneStretchOverTheWholeRun) {
  Timeline t;
  downs(t, 0, 6 * s);
  const auto o = outages(t);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_TRUE(o[0].from_start);
  EXPECT_TRUE(o[0].to_end);
  EXPECT_EQ(o[0].duration_ns(), 6 * s);
  OutageReport r{t};
  const auto summary = summarize(r, 6.0);
  EXPECT_DOUBLE_EQ(summary.unavailable, 1.0);
  // A warm-up's successes (before 0) make the start of the stretch the run's.
  ups(r.timeline, -1 * s, 0);
  r.timeline.normalize();
  EXPECT_TRUE(summarize(r, 6.0).stretches.at(0).from_start);
}

TEST(Outage, ThreadsMergeAsUpAnywhereIsUp) {
  Timeline a, b;
  ups(a, 0, 2 * s);
  downs(a, 2 * s, 3500 * ms);
  ups(a, 3500 * ms, 6 * s);
  // b succeeds throughout but for 2.5 s to 3 s, in which it sends nothing.
  ups(b, 5 * ms, 2500 * ms);
  ups(b, 3 * s + 5 * ms, 6 * s);
  Timeline merged = a;
  merged.merge(b);
  const auto o = outages(merged);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].start_ns, 2495 * ms) << "b's last success";
  EXPECT_EQ(o[0].end_ns, 3005 * ms) << "b's first success after";
  EXPECT_EQ(o[0].first_down_ns, 2500 * ms) << "a's down answers inside it";
  // A thread that succeeds throughout: no outage at all.
  Timeline c;
  ups(c, 0, 6 * s, 5 * ms);
  merged.merge(c);
  EXPECT_TRUE(outages(merged).empty());
}

TEST(Outage, SplitsOfTheSameAnswersMergeIntoTheSameTimeline) {
  Timeline whole, even, odd;
  for (int i = 0; i < 3000; ++i) {
    const std::int64_t at = i * 2 * ms;
    Timeline& part = i % 2 ? odd : even;
    for (Timeline* t : {&whole, &part}) {
      if (i >= 1000 && i < 1700) t->down(at, i % 3 ? 0 : 502, Failure::reset);
      else t->up(at);
    }
  }
  whole.normalize();
  even.merge(odd);
  ASSERT_EQ(even.lit().size(), whole.lit().size());
  ASSERT_EQ(even.downs().size(), whole.downs().size());
  for (std::size_t i = 0; i < whole.downs().size(); ++i) {
    EXPECT_EQ(even.downs()[i].from_ns, whole.downs()[i].from_ns);
    EXPECT_EQ(even.downs()[i].answers.text(), whole.downs()[i].answers.text());
  }
  EXPECT_EQ(outages_of(even, 6 * s).at(0).answers.total(), 700u);
}

TEST(Outage, ALaterRepetitionFollowsTheFirstInTime) {
  Timeline first, second;
  ups(first, 0, 6 * s);
  ups(second, 0, 2 * s);
  downs(second, 2 * s, 3500 * ms);
  ups(second, 3500 * ms, 6 * s);
  Timeline overlaid = first;
  overlaid.merge(second);
  EXPECT_TRUE(outages(overlaid, 12 * s).empty()) << "side by side (shards), the first's successes cover it";
  first.merge(second, 6 * s);
  const auto o = outages(first, 12 * s);
  ASSERT_EQ(o.size(), 1u) << "one after the other (repetitions), it is the second's";
  EXPECT_EQ(o[0].start_ns, 7990 * ms);
  EXPECT_EQ(o[0].end_ns, 9500 * ms);
}

TEST(Outage, BoundingKeepsEveryStretch) {
  Timeline t;
  for (int i = 0; i < 400; ++i) t.up(i * 200 * ms);  // a success every 200 ms: 400 lit spans
  t.down(40 * s + 100 * ms, 0, Failure::timeout);
  EXPECT_TRUE(t.bound(50));
  EXPECT_LE(t.lit().size(), 50u);
  const auto o = outages_of(t, 80 * s);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].start_ns, 40 * s);
  EXPECT_EQ(o[0].end_ns, 40 * s + 200 * ms);
}

TEST(OutageThresholds, ParseDefaultAndTurnOff) {
  const auto t = parse_threshold("outage.max<1.5s");
  EXPECT_TRUE(t.is_outage_max());
  EXPECT_EQ(t.quantity, Quantity::latency_ns);
  EXPECT_EQ(t.limit, 1.5e9);
  const auto u = parse_threshold("unavailable<0.5%");
  EXPECT_TRUE(u.is_unavailable());
  EXPECT_EQ(u.limit, 0.005);
  EXPECT_THROW(parse_threshold("outage.p99<1s"), std::invalid_argument);
  EXPECT_THROW(parse_threshold("unavailable<1s"), std::invalid_argument);
  EXPECT_THROW(parse_threshold("call.unavailable<1%"), std::invalid_argument);

  const auto defaults = parse_thresholds({});
  ASSERT_EQ(defaults.size(), 3u);
  EXPECT_EQ(defaults[1].text, kDefaultOutageLimit);
  EXPECT_EQ(defaults[2].text, kDefaultUnavailableLimit);
  EXPECT_TRUE(defaults[1].implicit && defaults[2].implicit);
  // Set or turned off as errors is: a limit of one's own replaces the default.
  const auto mine = parse_thresholds({"outage.max<=86400s", "unavailable<=100%"});
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_FALSE(mine[0].implicit || mine[1].implicit);
}

LoadResult run_with_outage(std::int64_t from, std::int64_t to, int wall_s = 6) {
  LoadResult r;
  r.wall_s = wall_s;
  auto& get = r.stats.ops[static_cast<std::size_t>(OpKind::get)];
  for (int i = 0; i < 1000; ++i) {
    get.latency[static_cast<std::size_t>(Outcome::ok)].record(100'000);
    ++get.statuses[200];
  }
  ups(r.outages.timeline, 0, from);
  downs(r.outages.timeline, from, to);
  ups(r.outages.timeline, to, wall_s * s);
  get.failures[static_cast<std::size_t>(Failure::connect)] += static_cast<std::uint64_t>((to - from) / (10 * ms));
  r.outages.timeline.normalize();
  return r;
}

TEST(OutageThresholds, ALongOutageFailsTheLoadNamingItsStartAndEnd) {
  const auto r = run_with_outage(2 * s, 3500 * ms);
  const auto verdicts = evaluate(parse_thresholds({}), r);
  EXPECT_TRUE(verdicts[0].held) << "few errors: the error rate hides it";
  EXPECT_FALSE(verdicts[1].held) << verdicts[1].threshold.text;
  EXPECT_EQ(verdicts[1].actual, 1510.0 * ms);
  EXPECT_FALSE(verdicts[2].held);
  EXPECT_EQ(exit_code_of(r, verdicts), 1);
  const auto doc = result_document(LoadConfig{}, r, verdicts, RunInfo{});
  const std::string reason(doc.at("verdict").at("reason").as_string());
  EXPECT_NE(reason.find("the longest from 1.990 s to 3.500 s (1.51 s): connect×150"), std::string::npos) << reason;
  const auto& stretch = doc.at("outages").at("stretches").at(0);
  EXPECT_EQ(stretch.at("start_s").as_double(), 1.99);
  EXPECT_EQ(stretch.at("end_s").as_double(), 3.5);
  EXPECT_EQ(stretch.at("answers").at("connect").to_number<std::int64_t>(), 150);
}

TEST(OutageThresholds, AShortOutageBelowBothLimitsPasses) {
  const auto r = run_with_outage(2 * s, 2300 * ms, 60);  // 0.31 s: under 1 s and under 1% of 60 s
  const auto verdicts = evaluate(parse_thresholds({}), r);
  EXPECT_EQ(exit_code_of(r, verdicts), 0);
  EXPECT_EQ(summarize(r.outages, r.wall_s).stretches.size(), 1u) << "still reported";
}

}  // namespace
}  // namespace crh::loadgen
