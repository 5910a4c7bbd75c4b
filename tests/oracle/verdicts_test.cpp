// The multi-answer reasoning fed crafted sequences: the LRU cycle (R2) and
// the race of callers (B1, B2), including outcomes that prove nothing.
#include "oracle/verdicts.hpp"

#include <gtest/gtest.h>

namespace crh::oracle {
namespace {

using V = std::vector<std::string>;

TEST(LruCycle, HoldsWhenEachFreeAliasIsVisitedOnceThenInTheSameOrder) {
  EXPECT_EQ(lru_cycle_problem({"3", "1", "4", "2", "3", "1", "4", "2"}, {"1", "2", "3", "4"}), std::nullopt);
  EXPECT_EQ(lru_cycle_problem({"7", "7"}, {"7"}), std::nullopt);
}

TEST(LruCycle, FlagsAnAliasPickedTwiceInTheFirstRound) {
  // A most-recently-used pick returns the alias it just freed.
  auto problem = lru_cycle_problem({"1", "1", "1", "1", "1", "1", "1", "1"}, {"1", "2", "3", "4"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("alias 1 came back at cycle 2"), std::string::npos) << *problem;
}

TEST(LruCycle, FlagsASecondRoundInAnotherOrder) {
  auto problem = lru_cycle_problem({"1", "2", "3", "2", "1", "3"}, {"1", "2", "3"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("repeat the first round's order [1, 2, 3]"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("[2, 1, 3]"), std::string::npos) << *problem;
}

TEST(LruCycle, FlagsAPickOutsideTheFreeAliases) {
  auto problem = lru_cycle_problem({"9", "1", "9", "1"}, {"1", "2"});
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("alias 9, which was not among the untagged aliases"), std::string::npos) << *problem;
}

TEST(LruCycle, FlagsAShortSequenceAndAnEmptyChannel) {
  EXPECT_TRUE(lru_cycle_problem({"1", "2"}, {"1", "2"}));
  EXPECT_TRUE(lru_cycle_problem({}, {}));
}

using O = CallOutcome;

TEST(RaceVerdict, HoldsWithExactlyOneWinner) {
  auto v = race_verdict({O::refused, O::connected, O::refused, O::refused});
  EXPECT_EQ(v.kind, RaceVerdict::held);
  EXPECT_NE(v.text.find("1 of 4 callers connected"), std::string::npos) << v.text;
}

TEST(RaceVerdict, IsBrokenWithTwoWinnersEvenWhenOthersAreUnknown) {
  auto v = race_verdict({O::connected, O::unknown, O::connected, O::refused});
  EXPECT_EQ(v.kind, RaceVerdict::broken);
  EXPECT_NE(v.text.find("exactly one"), std::string::npos) << v.text;
}

TEST(RaceVerdict, IsBrokenWhenEveryoneIsRefused) {
  EXPECT_EQ(race_verdict({O::refused, O::refused, O::refused}).kind, RaceVerdict::broken);
}

TEST(RaceVerdict, AnUnknownCallMayHaveWonSoNoWinnerIsUndecided) {
  // The unknown call may have bound its caller: no violation rests on it.
  EXPECT_EQ(race_verdict({O::refused, O::unknown, O::refused}).kind, RaceVerdict::undecided);
  EXPECT_EQ(race_verdict({O::unknown, O::unknown}).kind, RaceVerdict::undecided);
}

TEST(RaceVerdict, AThrottledCallTookNoEffectAsEverywhere) {
  // A "not now" neither bound its caller nor was a refusal (Op::not_now, as
  // the load, the model and capture read it): with no winner and nothing
  // unanswered, the refusals met a free alias.
  auto v = race_verdict({O::throttled, O::refused, O::refused});
  EXPECT_EQ(v.kind, RaceVerdict::broken);
  EXPECT_NE(v.text.find("1 throttled"), std::string::npos) << v.text;
  EXPECT_EQ(race_verdict({O::throttled, O::connected, O::refused}).kind, RaceVerdict::held);
  EXPECT_EQ(race_verdict({O::connected, O::throttled, O::connected}).kind, RaceVerdict::broken);
  // Nothing decided: only "not now"s, or an unanswered call that may have won.
  EXPECT_EQ(race_verdict({O::throttled, O::throttled}).kind, RaceVerdict::undecided);
  EXPECT_EQ(race_verdict({O::throttled, O::unknown, O::refused}).kind, RaceVerdict::undecided);
}

TEST(RaceVerdict, OneWinnerWithUnknownOthersHolds) {
  EXPECT_EQ(race_verdict({O::connected, O::unknown, O::refused}).kind, RaceVerdict::held);
}

}  // namespace
}  // namespace crh::oracle
