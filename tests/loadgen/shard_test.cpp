// The split of one load over N shards (issue 15): exact (the parts add up to
// the whole), disjoint (no alias, agent, caller number or probe key is used
// by two shards) and stable (the same flags give the same split); the start
// instant's formats; what a set of shards holds; and a merge of shard
// results that judges thresholds once, on the whole.
#include "loadgen/shard.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <numeric>
#include <set>

#include "load_fixture.hpp"
#include "loadgen/merge.hpp"
#include "loadgen/readback.hpp"

namespace crh::loadgen {
namespace {

using namespace std::chrono;

TEST(ShardSplit, PartsAddUpToTheWholeAndNeverOverlap) {
  for (int n = 1; n <= 16; ++n)
    for (int total : {0, 1, 2, 3, 7, 10, 16, 17, 31, 32, 33, 100, 999, 1000, 1001, 4097}) {
      int next = 0, sum = 0, smallest = total, largest = 0;
      for (int i = 0; i < n; ++i) {
        const auto s = share_of(total, {i, n});
        EXPECT_EQ(s.first, next) << total << " over " << n << ", shard " << i;  // contiguous, in order
        next = s.first + s.count;
        sum += s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
      }
      EXPECT_EQ(sum, total) << total << " over " << n;
      EXPECT_LE(largest - smallest, 1) << total << " over " << n << ": spread fairly";
    }
  // The example.
  EXPECT_EQ(share_of(10, {0, 3}).count, 4);
  EXPECT_EQ(share_of(10, {1, 3}).count, 3);
  EXPECT_EQ(share_of(10, {2, 3}).count, 3);
}

TEST(ShardSplit, RatesAddUpToTheWholeRate) {
  for (int n = 1; n <= 16; ++n)
    for (int connections : {n, n + 1, 3 * n - 1, 100}) {
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += rate_share(1234.5, connections, {i, n});
      EXPECT_NEAR(sum, 1234.5, 1e-9) << connections << " connections over " << n;
    }
  // Each connection keeps the unsharded interval: rate per connection is the same.
  EXPECT_DOUBLE_EQ(rate_share(1000, 10, {0, 3}) / 4, 1000.0 / 10);
}

TEST(ShardSplit, ListedItemsAreDealtDisjointlyWhateverTheOrderListed) {
  std::vector<std::string> items;
  for (int i = 0; i < 23; ++i) items.push_back("a" + std::to_string(i * 7 % 23));
  auto reversed = items;
  std::reverse(reversed.begin(), reversed.end());
  for (int n = 1; n <= 16; ++n) {
    std::multiset<std::string> dealt;
    for (int i = 0; i < n; ++i) {
      const auto mine = strided(items, {i, n});
      if (n > 1) {  // unsharded, the target's list is used as it comes
        EXPECT_EQ(mine, strided(reversed, {i, n})) << "shard " << i << "/" << n << ": the target's order must not matter";
      }
      dealt.insert(mine.begin(), mine.end());
    }
    EXPECT_EQ(dealt, std::multiset<std::string>(items.begin(), items.end())) << "over " << n;
  }
}

TEST(ShardSplit, RaceSlotsAndThusCallerNumbersAreDisjointAcrossShards) {
  // A slot's callers are numbered from its place in the whole load (race.cpp):
  // disjoint slot ranges give disjoint numbers.
  for (int n = 1; n <= 16; ++n) {
    std::set<int> slots;
    for (int i = 0; i < n; ++i) {
      const auto s = share_of(40, {i, n});
      for (int slot = s.first; slot < s.first + s.count; ++slot) EXPECT_TRUE(slots.insert(slot).second);
    }
    EXPECT_EQ(slots.size(), 40u);
  }
}

TEST(ShardSplit, NamesWrittenOnTheTargetAreTheShardsOwn) {
  EXPECT_EQ(load_tag_name({}), "crh-load");  // an unsharded load as before
  EXPECT_EQ(load_database_key({}), "crh-probe-load");
  for (int n = 2; n <= 16; ++n)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        // No shard's restore (which deletes tags by prefix) touches another's tags.
        EXPECT_FALSE(load_tag_name({j, n}).starts_with(load_tag_name({i, n}))) << i << " " << j << " of " << n;
        EXPECT_NE(load_database_key({i, n}), load_database_key({j, n}));
      }
  EXPECT_TRUE(load_database_key({3, 8}).starts_with("crh-probe-"));  // probes live under crh-probe- (DESIGN.md §5)
}

TEST(ShardSplit, ShardFlagIsReadStrictly) {
  EXPECT_EQ(parse_shard("0/1"), (Shard{0, 1}));
  EXPECT_EQ(parse_shard("2/3"), (Shard{2, 3}));
  for (const char* bad : {"", "3", "3/3", "-1/3", "1/0", "a/3", "1/b", "1/3x", "1 /3", "0/1025"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
  try {
    parse_shard("3/3");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0 to 2"), std::string::npos) << e.what();
  }
}

TEST(ShardStart, RFC3339AndUnixSecondsNameTheSameInstant) {
  const auto t = parse_start_at("2026-11-23T10:00:00Z");
  EXPECT_EQ(duration_cast<seconds>(t.time_since_epoch()).count(), 1795428000);
  EXPECT_EQ(parse_start_at("1795428000"), t);
  EXPECT_EQ(parse_start_at("2026-11-23T11:30:00+01:30"), t);
  EXPECT_EQ(parse_start_at("2026-11-23t09:00:00-01:00"), t);
  EXPECT_EQ(parse_start_at("2026-11-23T10:00:00.25Z") - t, milliseconds(250));
  EXPECT_EQ(parse_start_at("1795428000.5") - t, milliseconds(500));
  EXPECT_EQ(parse_start_at("2026-11-23T10:00:00.123456789Z") - t, nanoseconds(123456789));
  for (const char* bad : {"", "now", "2026-11-23T10:00:00", "2026-11-23 10:00", "2026-13-01T00:00:00Z",
                          "2026-11-23T10:00:00+0100", "1795428000.", "-5", "2026-11-23T10:00:00Zjunk"})
    EXPECT_THROW(parse_start_at(bad), std::invalid_argument) << bad;
}

TEST(ShardRunId, DerivedFromTheWholeLoadOnlyAndStable) {
  const std::vector<std::string> flags{"load", "http://t:8080", "mixed", "connections 10"};
  EXPECT_EQ(derived_run_id(flags), derived_run_id(flags));
  EXPECT_NE(derived_run_id(flags), derived_run_id({"load", "http://t:8080", "mixed", "connections 11"}));
  EXPECT_NE(derived_run_id({"ab", "c"}), derived_run_id({"a", "bc"}));  // texts are kept apart
  EXPECT_EQ(derived_run_id(flags).size(), 14u);
}

ShardRecord record(int index, int count, std::int64_t started, std::string run = "r-1") {
  ShardRecord r;
  r.shard = {index, count};
  r.run_id = std::move(run);
  r.started_unix_ns = started;
  return r;
}

TEST(ShardSet, NamesMissingAndDuplicatedIndicesAndTheSkew) {
  const auto set = shard_set_of({record(0, 4, 1'000'500), record(2, 4, 1'000'000), record(3, 4, 1'002'000)},
                                {record(2, 4, 1'000'100)});
  EXPECT_EQ(set.present, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(set.missing, (std::vector<int>{1}));
  EXPECT_EQ(set.duplicated, (std::vector<int>{2}));
  EXPECT_FALSE(set.complete());
  EXPECT_EQ(set.start_skew_ns, 2'000);  // of the shards merged
  EXPECT_EQ(set.first_start_unix_ns, 1'000'000);
  EXPECT_TRUE(shard_set_of({record(0, 2, 5), record(1, 2, 9)}, {}).complete());
}

// Shards' results merge into the whole: a threshold neither shard breaches
// alone but the whole does fails the merge, and a missing shard fails it.
TEST(ShardMerge, ThresholdsAreJudgedOnTheWholeAndAMissingShardFailsIt) {
  namespace json = boost::json;
  auto shard_run = [](int part, int index) {
    auto run = test::synthetic_load_run(Scenario::mixed, part);
    run.config.shard = {index, 3};
    run.result.shards = {record(index, 3, 1'000 + index)};
    run.thresholds = {parse_threshold("requests<3000")};  // each part holds it; the whole does not
    return read_load_document(result_document(run));
  };
  auto a = shard_run(1, 0), b = shard_run(2, 1);
  a.result.shards_merged = b.result.shards_merged = true;
  const auto two_of_three = result_document(merge_load_runs(a, b));
  EXPECT_EQ(two_of_three.at("verdict").at("status"), "incomplete") << json::serialize(two_of_three.at("verdict"));
  EXPECT_EQ(two_of_three.at("shard_set").at("missing"), json::array{2});
  bool breached = false;
  for (const auto& t : two_of_three.at("thresholds").as_array())
    if (t.at("expression") == "requests<3000") breached = !t.at("held").as_bool();
  EXPECT_TRUE(breached) << "the merged requests are above 3000: " << json::serialize(two_of_three.at("totals"));
}

}  // namespace
}  // namespace crh::loadgen
