// The reference service's state model alone: LRU order, binding, expiry with
// an injected clock, delete, and the atomicity of the bind under 64 threads.
#include "reference/state.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <set>
#include <thread>

namespace crh::reference {
namespace {
using namespace std::chrono_literals;

class ManualClock final : public Clock {
 public:
  time_point now() const override { return now_.load(); }
  std::string rfc3339(time_point t) const override {
    return format_rfc3339(std::chrono::system_clock::time_point{} +
                          std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              t.time_since_epoch()));
  }
  void advance(std::chrono::milliseconds d) { now_.store(now_.load() + d); }

 private:
  std::atomic<time_point> now_{time_point{} + 1000h};
};

constexpr auto kMinute = 60'000ms;

State make_state(const Clock& clock, FaultSet faults = {}, int aliases = 4) {
  return State(default_fixtures(2, aliases), clock, kMinute, faults);
}

FaultSet with(Fault f) {
  FaultSet s;
  s.add(f);
  return s;
}

std::string tag_id(State& s, std::int64_t minutes = 5, std::string_view channel = "1") {
  auto r = s.tag(channel, "t", minutes);
  EXPECT_EQ(r.status, TagStatus::tagged);
  return r.alias.id;
}

TEST(StateLru, TagsNeverUsedAliasesInFixtureOrderThenRefuses) {
  ManualClock clock;
  auto s = make_state(clock);
  EXPECT_EQ(tag_id(s), "1");
  EXPECT_EQ(tag_id(s), "2");
  EXPECT_EQ(tag_id(s), "3");
  EXPECT_EQ(tag_id(s), "4");
  EXPECT_EQ(s.tag("1", "t", 5).status, TagStatus::all_tagged);
  // Channels are independent.
  EXPECT_EQ(tag_id(s, 5, "2"), "1");
}

TEST(StateLru, TagDeleteCyclesVisitEveryAliasOnceAndRepeat) {
  ManualClock clock;
  auto s = make_state(clock, {}, 5);
  std::vector<std::string> order;
  for (int i = 0; i < 10; ++i) {
    std::string id = tag_id(s);
    order.push_back(id);
    ASSERT_EQ(s.untag("1", id).status, UntagStatus::untagged);
  }
  EXPECT_EQ(std::set<std::string>(order.begin(), order.begin() + 5).size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(order[i], order[i + 5]);
}

TEST(StateLru, ACallIsAUse) {
  ManualClock clock;
  auto s = make_state(clock);
  // Use aliases 1 then 3 by calling them untagged: 2 and 4 are now the oldest.
  ASSERT_EQ(s.call("1", "1", "+1").status, CallStatus::connected);
  ASSERT_EQ(s.call("1", "3", "+1").status, CallStatus::connected);
  EXPECT_EQ(tag_id(s), "2");
  EXPECT_EQ(tag_id(s), "4");
  EXPECT_EQ(tag_id(s), "1");
  EXPECT_EQ(tag_id(s), "3");
}

TEST(StateLru, MruFaultPicksTheMostRecentlyUsed) {
  ManualClock clock;
  auto s = make_state(clock, with(Fault::lru_mru));
  std::string first = tag_id(s);
  s.untag("1", first);
  EXPECT_EQ(tag_id(s), first);
}

TEST(StateBinding, FirstCallerIsBoundOthersRefusedUntilDelete) {
  ManualClock clock;
  auto s = make_state(clock);
  std::string a = tag_id(s);
  auto first = s.call("1", a, "+100");
  EXPECT_EQ(first.status, CallStatus::connected);
  EXPECT_EQ(first.alias.bound_caller, "+100");
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::locked);
  EXPECT_EQ(s.call("1", a, "+100").status, CallStatus::connected);
  EXPECT_EQ(s.untag("1", a).status, UntagStatus::untagged);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::connected);
  EXPECT_EQ(s.call("1", a, "+300").status, CallStatus::connected);  // untagged: nobody is bound
}

TEST(StateBinding, TwoTaggedAliasesBindIndependently) {
  ManualClock clock;
  auto s = make_state(clock);
  std::string a = tag_id(s), b = tag_id(s);
  EXPECT_EQ(s.call("1", a, "+100").status, CallStatus::connected);
  EXPECT_EQ(s.call("1", b, "+200").status, CallStatus::connected);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::locked);
  EXPECT_EQ(s.call("1", b, "+100").status, CallStatus::locked);
}

TEST(StateBinding, RetaggingStartsANewEpoch) {
  ManualClock clock;
  auto s = make_state(clock, {}, 1);
  std::string a = tag_id(s);
  s.call("1", a, "+100");
  s.untag("1", a);
  ASSERT_EQ(tag_id(s), a);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::connected);
  EXPECT_EQ(s.call("1", a, "+100").status, CallStatus::locked);
}

TEST(StateBinding, LastCallerFaultLetsEachNewCallerTakeOver) {
  ManualClock clock;
  auto s = make_state(clock, with(Fault::binding_last_caller));
  std::string a = tag_id(s);
  s.call("1", a, "+100");
  auto r = s.call("1", a, "+200");
  EXPECT_EQ(r.status, CallStatus::connected);
  EXPECT_EQ(r.alias.bound_caller, "+200");
}

TEST(StateBinding, UnknownChannelOrAlias) {
  ManualClock clock;
  auto s = make_state(clock);
  EXPECT_EQ(s.call("9", "1", "+1").status, CallStatus::unknown_channel);
  EXPECT_EQ(s.call("1", "9", "+1").status, CallStatus::unknown_alias);
  EXPECT_EQ(s.untag("1", "9").status, UntagStatus::unknown_alias);
  EXPECT_EQ(s.untag("9", "1").status, UntagStatus::unknown_channel);
  EXPECT_EQ(s.untag("1", "1").status, UntagStatus::not_tagged);
  EXPECT_EQ(s.tag("9", "t", 1).status, TagStatus::unknown_channel);
}

TEST(StateExpiry, LockHoldsForTheLifetimeThenTheAliasIsFree) {
  ManualClock clock;
  auto s = make_state(clock);
  std::string a = tag_id(s, 2);
  s.call("1", a, "+100");
  clock.advance(2 * kMinute - 1ms);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::locked);
  clock.advance(1ms);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::connected);
  auto list = s.aliases("1");
  ASSERT_TRUE(list);
  EXPECT_FALSE((*list)[0].tag);
  EXPECT_FALSE((*list)[0].bound_caller);
  EXPECT_EQ(s.untag("1", a).status, UntagStatus::not_tagged);
}

TEST(StateExpiry, ExpiredAliasesCanBeTaggedAgain) {
  ManualClock clock;
  auto s = make_state(clock, {}, 1);
  tag_id(s, 1);
  EXPECT_EQ(s.tag("1", "t", 1).status, TagStatus::all_tagged);
  clock.advance(kMinute);
  EXPECT_EQ(s.tag("1", "t", 1).status, TagStatus::tagged);
}

TEST(StateExpiry, ExpiryNeverFaultKeepsTags) {
  ManualClock clock;
  auto s = make_state(clock, with(Fault::expiry_never));
  std::string a = tag_id(s, 1);
  s.call("1", a, "+100");
  clock.advance(10 * kMinute);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::locked);
}

TEST(StateDelete, NoopFaultAnswersUntaggedButKeepsTheTag) {
  ManualClock clock;
  auto s = make_state(clock, with(Fault::delete_tag_noop));
  std::string a = tag_id(s);
  s.call("1", a, "+100");
  auto r = s.untag("1", a);
  EXPECT_EQ(r.status, UntagStatus::untagged);
  EXPECT_FALSE(r.alias.tag);
  EXPECT_EQ(s.call("1", a, "+200").status, CallStatus::locked);
}

TEST(StateAgents, SnoozeAndWake) {
  ManualClock clock;
  auto s = make_state(clock);
  EXPECT_EQ(s.agents().size(), 3u);
  EXPECT_TRUE(s.set_snoozed("101", true)->snoozed);
  EXPECT_TRUE(s.agent("101")->snoozed);
  EXPECT_FALSE(s.set_snoozed("101", false)->snoozed);
  EXPECT_FALSE(s.set_snoozed("999", true));
}

TEST(StateDatabase, OverwriteAndLimit) {
  ManualClock clock;
  State s(default_fixtures(), clock, kMinute, {}, StateLimits{16});
  EXPECT_EQ(s.db_set("k", "v1"), DbWriteStatus::stored);
  EXPECT_EQ(s.db_set("k", "v2"), DbWriteStatus::stored);
  EXPECT_EQ(s.db_get("k"), "v2");
  EXPECT_EQ(s.db_set("k", std::string(20, 'x')), DbWriteStatus::full);
  EXPECT_EQ(s.db_get("k"), "v2");
  EXPECT_FALSE(s.db_get("missing"));
}

TEST(StateDatabase, FirstWriteWinsFault) {
  ManualClock clock;
  auto s = make_state(clock, with(Fault::db_first_write_wins));
  s.db_set("k", "v1");
  s.db_set("k", "v2");
  EXPECT_EQ(s.db_get("k"), "v1");
}

// 64 threads released together call one freshly tagged alias: exactly one
// connects, the others are refused, in every one of many rounds.
TEST(StateConcurrency, SixtyFourRacingCallersExactlyOneBound) {
  ManualClock clock;
  auto s = make_state(clock, {}, 1);
  constexpr int kThreads = 64, kRounds = 200;
  std::atomic<int> connected{0};
  std::string alias;
  std::barrier sync(kThreads, [&]() noexcept {});
  std::vector<int> winners_per_round;
  std::barrier round_end(kThreads, [&]() noexcept {
    winners_per_round.push_back(connected.exchange(0));
    s.untag("1", alias);
    alias = s.tag("1", "race", 5).alias.id;
  });
  alias = tag_id(s);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string caller = "+1555000" + std::to_string(t);
      for (int r = 0; r < kRounds; ++r) {
        sync.arrive_and_wait();
        if (s.call("1", alias, caller).status == CallStatus::connected) ++connected;
        round_end.arrive_and_wait();
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(winners_per_round.size(), static_cast<std::size_t>(kRounds));
  for (int r = 0; r < kRounds; ++r) EXPECT_EQ(winners_per_round[r], 1) << "round " << r;
}

}  // namespace
}  // namespace crh::reference
