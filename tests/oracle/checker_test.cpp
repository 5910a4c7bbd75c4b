// The first-caller-wins checker on synthetic histories: every kind of
// violation with its proof, and the cases it must not judge (indeterminate
// calls, throttled calls, calls outside the epoch's certain window).
#include "oracle/checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace crh::oracle {
namespace {

constexpr std::int64_t us = 1000;  // nanoseconds
constexpr std::int64_t s = 1'000'000'000;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

const std::string A = "+15550001";
const std::string B = "+15550002";
const std::string C = "+15550003";

Op op(OpKind kind, std::uint64_t round, const std::string& alias, const std::string& caller, std::int64_t invoke,
      std::int64_t complete, Outcome outcome, unsigned status, std::string error = {}) {
  Op o;
  o.round = round;
  o.kind = kind;
  o.alias = alias;
  o.caller = caller;
  o.invoke_ns = invoke;
  o.complete_ns = complete;
  o.outcome = outcome;
  o.status = status;
  o.error = std::move(error);
  return o;
}

// A call answered 200 / refused 403 / answered with another status.
Op ok(const std::string& caller, std::int64_t invoke, std::int64_t complete, OpKind kind = OpKind::call,
      std::uint64_t round = 1, const std::string& alias = "a1") {
  return op(kind, round, alias, caller, invoke, complete, Outcome::ok, 200);
}
Op refused(const std::string& caller, std::int64_t invoke, std::int64_t complete, OpKind kind = OpKind::call,
           unsigned status = 403, std::uint64_t round = 1, const std::string& alias = "a1") {
  return op(kind, round, alias, caller, invoke, complete, Outcome::fail, status);
}
Op unknown(const std::string& caller, std::int64_t invoke, std::int64_t complete, unsigned status,
           std::string error, std::uint64_t round = 1, const std::string& alias = "a1") {
  return op(OpKind::call, round, alias, caller, invoke, complete, Outcome::indeterminate, status, std::move(error));
}

// A round whose tag ran [tag_invoke, tag_complete] and returned `alias`;
// untag_invoke < 0: no untag.
Round round_of(std::uint64_t id, const std::string& alias, std::int64_t tag_invoke, std::int64_t tag_complete,
               std::int64_t untag_invoke, std::int64_t untag_complete, std::vector<Op> calls = {},
               std::int64_t lifetime_ns = 0, Outcome tag_outcome = Outcome::ok) {
  Round r;
  r.id = id;
  r.tag = op(OpKind::tag, id, alias, "", tag_invoke, tag_complete, tag_outcome,
             tag_outcome == Outcome::ok ? 201 : tag_outcome == Outcome::fail ? 400 : 0);
  for (auto& c : calls) {
    c.round = id;
    c.alias = alias;
  }
  r.calls = std::move(calls);
  if (untag_invoke >= 0)
    r.untag = op(OpKind::untag, id, alias, "", untag_invoke, untag_complete, Outcome::ok, 204);
  r.lifetime_ns = lifetime_ns;
  return r;
}

// An operation as one comparable line.
std::string key(const Op& o) {
  return std::string(to_string(o.kind)) + " r" + std::to_string(o.round) + " " + o.alias + " " + o.caller + " [" +
         std::to_string(o.invoke_ns) + "," + std::to_string(o.complete_ns) + "] " +
         std::string(to_string(o.outcome)) + " " + std::to_string(o.status);
}
std::vector<std::string> keys(const std::vector<Op>& ops) {
  std::vector<std::string> out;
  for (const auto& o : ops) out.push_back(key(o));
  return out;
}

std::vector<ViolationKind> kinds(const std::vector<Violation>& vs) {
  std::vector<ViolationKind> out;
  for (const auto& v : vs) out.push_back(v.kind);
  return out;
}

std::string dump(const std::vector<Violation>& vs) {
  std::string out;
  for (const auto& v : vs) out += std::string(to_string(v.kind)) + ": " + v.explanation + "\n";
  return out.empty() ? "<none>" : out;
}

bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// ---------------------------------------------------------------- correct rounds

TEST(BindingChecker, AcceptsACorrectRound) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {ok(A, 2000 * us, 3000 * us), refused(B, 2000 * us + 5, 3100 * us),
                     refused(C, 2000 * us + 9, 3050 * us), ok(A, 5000 * us, 5500 * us, OpKind::recall),
                     refused(B, 5000 * us, 5600 * us, OpKind::recall), refused(C, 5001 * us, 5700 * us, OpKind::recall)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
  EXPECT_EQ(checker.rounds(), 1u);
}

TEST(BindingChecker, AcceptsCallsInAnyOrderInTheRound) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {refused(B, 5000 * us, 5600 * us, OpKind::recall), ok(A, 5000 * us, 5500 * us, OpKind::recall),
                     refused(B, 2000 * us + 5, 3100 * us), ok(A, 2000 * us, 3000 * us)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, AcceptsARoundWithoutCalls) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 2000 * us, 2500 * us)).empty());
  EXPECT_TRUE(checker.add(round_of(2, "a2", 0, 1000 * us, -1, -1)).empty());
  EXPECT_EQ(checker.rounds(), 2u);
}

// ---------------------------------------------------------------- each violation

TEST(BindingChecker, FlagsTwoWinnersInOneEpoch) {
  Checker checker;
  const Op a = ok(A, 2000 * us, 3000 * us, OpKind::call, 7);
  const Op b = ok(B, 2001 * us, 3100 * us, OpKind::call, 7);  // invoked before a completed: racing
  auto found = checker.add(round_of(7, "a1", 0, 1000 * us, 9000 * us, 9500 * us, {b, a}));
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::two_winners}) << dump(found);
  const auto& v = found[0];
  EXPECT_EQ(v.round, 7u);
  EXPECT_EQ(v.alias, "a1");
  EXPECT_EQ(keys(v.proof), keys({a, b}));
  EXPECT_TRUE(mentions(v.explanation, A)) << v.explanation;
  EXPECT_TRUE(mentions(v.explanation, B)) << v.explanation;
  EXPECT_TRUE(mentions(v.explanation, "a1")) << v.explanation;
}

TEST(BindingChecker, FlagsEachExtraWinnerAgainstTheFirst) {
  Checker checker;
  const Op a = ok(A, 2000 * us, 3000 * us);
  const Op b = ok(B, 2001 * us, 3100 * us);
  const Op c = ok(C, 2002 * us, 3200 * us);
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us, {c, b, a}));
  ASSERT_EQ(kinds(found), (std::vector{ViolationKind::two_winners, ViolationKind::two_winners})) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({a, b}));
  EXPECT_EQ(keys(found[1].proof), keys({a, c}));
}

TEST(BindingChecker, FlagsCallerConnectedAfterAnotherWasBound) {
  Checker checker;
  const Op a = ok(A, 2000 * us, 3000 * us, OpKind::call, 3, "a9");
  const Op b = ok(B, 3500 * us, 4000 * us, OpKind::call, 3, "a9");  // invoked after a had connected
  auto found = checker.add(round_of(3, "a9", 0, 1000 * us, 9000 * us, 9500 * us, {a, b}));
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::connected_after_bound}) << dump(found);
  const auto& v = found[0];
  EXPECT_EQ(v.round, 3u);
  EXPECT_EQ(v.alias, "a9");
  EXPECT_EQ(keys(v.proof), keys({a, b}));
  EXPECT_TRUE(mentions(v.explanation, A)) << v.explanation;
  EXPECT_TRUE(mentions(v.explanation, B)) << v.explanation;
}

TEST(BindingChecker, FlagsRecallOfAnotherCallerAfterTheFirstWasBound) {
  Checker checker;
  // B was refused at first, then connected on its second call: A was bound.
  const Op a = ok(A, 2000 * us, 3000 * us);
  const Op b1 = refused(B, 2001 * us, 3100 * us);
  const Op b2 = ok(B, 5000 * us, 5500 * us, OpKind::recall);
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us, {a, b1, b2}));
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::connected_after_bound}) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({a, b2}));
}

TEST(BindingChecker, FlagsBoundCallerRejected) {
  Checker checker;
  const Op a1 = ok(A, 2000 * us, 3000 * us, OpKind::call, 4, "a4");
  const Op b1 = refused(B, 2001 * us, 3100 * us, OpKind::call, 403, 4, "a4");
  const Op a2 = refused(A, 5000 * us, 5500 * us, OpKind::recall, 403, 4, "a4");
  const Op b2 = refused(B, 5000 * us, 5600 * us, OpKind::recall, 403, 4, "a4");
  auto found = checker.add(round_of(4, "a4", 0, 1000 * us, 9000 * us, 9500 * us, {a1, b1, a2, b2}));
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::bound_caller_rejected}) << dump(found);
  const auto& v = found[0];
  EXPECT_EQ(v.round, 4u);
  EXPECT_EQ(v.alias, "a4");
  EXPECT_EQ(keys(v.proof), keys({a1, a2}));
  EXPECT_TRUE(mentions(v.explanation, A)) << v.explanation;
}

TEST(BindingChecker, FlagsRejectedWhileFreeWhenEveryCallIsRefused) {
  Checker checker;
  auto r = round_of(5, "a5", 0, 1000 * us, 9000 * us, 9500 * us,
                    {refused(A, 2000 * us, 3000 * us), refused(B, 2001 * us, 3100 * us)});
  auto found = checker.add(r);
  ASSERT_EQ(kinds(found), (std::vector{ViolationKind::rejected_while_free, ViolationKind::rejected_while_free}))
      << dump(found);
  for (const auto& v : found) {
    EXPECT_EQ(v.round, 5u);
    EXPECT_EQ(v.alias, "a5");
  }
  EXPECT_EQ(keys(found[0].proof), keys({r.tag, r.calls[0]}));
  EXPECT_EQ(keys(found[1].proof), keys({r.tag, r.calls[1]}));
  EXPECT_TRUE(mentions(found[0].explanation, A)) << found[0].explanation;
  EXPECT_TRUE(mentions(found[1].explanation, B)) << found[1].explanation;
}

TEST(BindingChecker, FlagsRefusalThatEndedBeforeAnyOtherCallStarted) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {refused(A, 2000 * us, 2500 * us), ok(B, 3000 * us, 3500 * us)});
  auto found = checker.add(r);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::rejected_while_free}) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({r.tag, r.calls[0]}));
  EXPECT_TRUE(mentions(found[0].explanation, A)) << found[0].explanation;
}

TEST(BindingChecker, FlagsAliasTaggedTwiceWhileTheFirstHeldIt) {
  Checker checker;
  auto r1 = round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us);
  auto r2 = round_of(2, "a1", 2000 * us, 3000 * us, -1, -1);  // inside round 1's certain window
  EXPECT_TRUE(checker.add(r1).empty());
  auto found = checker.add(r2);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::alias_tagged_twice}) << dump(found);
  const auto& v = found[0];
  EXPECT_EQ(v.round, 2u);
  EXPECT_EQ(v.alias, "a1");
  // Both tags and the untag showing round 1 still held the alias, by invoke.
  EXPECT_EQ(keys(v.proof), keys({r1.tag, r2.tag, *r1.untag}));
  EXPECT_TRUE(mentions(v.explanation, "round 1")) << v.explanation;
  EXPECT_TRUE(mentions(v.explanation, "round 2")) << v.explanation;
}

TEST(BindingChecker, FlagsOverlappingTagsOfConsecutiveRounds) {
  Checker checker;
  auto r1 = round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us);
  auto r2 = round_of(2, "a1", 2000 * us, 3000 * us, 4000 * us, 4500 * us);
  EXPECT_TRUE(checker.add(r1).empty());
  auto found = checker.add(r2);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::alias_tagged_twice}) << dump(found);
  EXPECT_EQ(found[0].round, 2u);
  const auto proof = keys(found[0].proof);
  for (const auto& needed : {r1.tag, r2.tag, *r1.untag})
    EXPECT_NE(std::find(proof.begin(), proof.end(), key(needed)), proof.end()) << key(needed);
  for (std::size_t i = 1; i < found[0].proof.size(); ++i)
    EXPECT_LE(found[0].proof[i - 1].invoke_ns, found[0].proof[i].invoke_ns);
}

TEST(BindingChecker, FlagsOverlappingTagsWhenTheLaterRoundEndsFirst) {
  Checker checker;
  auto r1 = round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us);
  auto r2 = round_of(2, "a1", 2000 * us, 3000 * us, 4000 * us, 4500 * us);
  EXPECT_TRUE(checker.add(r2).empty());
  auto found = checker.add(r1);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::alias_tagged_twice}) << dump(found);
  const auto proof = keys(found[0].proof);
  for (const auto& needed : {r1.tag, r2.tag, *r1.untag})
    EXPECT_NE(std::find(proof.begin(), proof.end(), key(needed)), proof.end()) << key(needed);
}

// DESIGN.md §6: "two concurrent tags that returned the same alias". Both tags
// completed before either untag started, so whichever took effect second
// returned an alias the other certainly still held.
TEST(BindingChecker, FlagsConcurrentTagsReturningTheSameAlias) {
  Checker checker;
  auto r1 = round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us);
  auto r2 = round_of(2, "a1", 500 * us, 1500 * us, 12000 * us, 12500 * us);
  EXPECT_TRUE(checker.add(r1).empty());
  auto found = checker.add(r2);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::alias_tagged_twice}) << dump(found);
  EXPECT_EQ(found[0].round, 2u);
  EXPECT_EQ(found[0].alias, "a1");
}

// ---------------------------------------------------------------- indeterminate calls

TEST(BindingChecker, IgnoresRefusalWhenTheOnlyOtherCallTimedOut) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 20000 * us, 20500 * us,
                    {unknown(A, 2000 * us, 7000 * us, 0, "timeout"), refused(B, 2001 * us, 3100 * us),
                     refused(B, 8000 * us, 8500 * us, OpKind::recall)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresRefusalWhenTheOtherCallGotA5xx) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {unknown(A, 2000 * us, 3000 * us, 503, ""), refused(B, 2001 * us, 3100 * us)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresAnIndeterminateRivalOfTheWinner) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {ok(A, 2000 * us, 3000 * us), unknown(B, 2001 * us, 2500 * us, 0, "reset"),
                     ok(A, 5000 * us, 5500 * us, OpKind::recall), refused(B, 5000 * us, 5600 * us, OpKind::recall)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresAWinnerAfterAnIndeterminateCall) {
  Checker checker;
  // A's call may or may not have bound A: B connecting later proves nothing.
  auto r = round_of(1, "a1", 0, 1000 * us, 20000 * us, 20500 * us,
                    {unknown(A, 2000 * us, 7000 * us, 0, "timeout"), ok(B, 3500 * us, 4000 * us)});
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresALoneIndeterminateCall) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                                    {unknown(A, 2000 * us, 3000 * us, 0, "reset")}));
  EXPECT_TRUE(found.empty()) << dump(found);
}

// ---------------------------------------------------------------- throttling

TEST(BindingChecker, ThrottledCallIsNotARefusal) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                                    {refused(A, 2000 * us, 3000 * us, OpKind::call, 429)}));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, ThrottledCallNeitherRefusesNorBinds) {
  Checker checker;
  // A was throttled, B refused: only B's refusal is a violation.
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {refused(A, 2000 * us, 3000 * us, OpKind::call, 429), refused(B, 2001 * us, 3100 * us)});
  auto found = checker.add(r);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::rejected_while_free}) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({r.tag, r.calls[1]}));
}

// ---------------------------------------------------------------- the certain window

TEST(BindingChecker, IgnoresSecondWinnerAfterTheUntagStarted) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 5000 * us, 5500 * us,
                                    {ok(A, 2000 * us, 3000 * us), ok(B, 5200 * us, 5400 * us),
                                     ok(C, 4900 * us, 5100 * us)}));  // C straddles the untag's start
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresRefusalsAfterTheUntagStarted) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 5000 * us, 5500 * us,
                                    {refused(A, 5600 * us, 6000 * us, OpKind::call, 404),
                                     refused(B, 5600 * us, 6000 * us)}));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresCallsBeforeTheTagCompleted) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                                    {refused(A, 500 * us, 800 * us, OpKind::call, 404),
                                     refused(C, 900 * us, 1200 * us), ok(B, 2000 * us, 3000 * us)}));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, IgnoresCallsAfterTheLifetimeExpired) {
  Checker checker;
  // An expired tag frees the alias: B may connect and A may be refused.
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 70 * s, 70 * s + 500 * us,
                                    {ok(A, 2000 * us, 3000 * us), ok(B, 60 * s + 1, 60 * s + 500 * us),
                                     refused(A, 61 * s, 61 * s + 500 * us, OpKind::recall, 404)},
                                    60 * s));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, JudgesCallsBeforeTheLifetimeExpired) {
  Checker checker;
  const Op a = ok(A, 2000 * us, 3000 * us);
  const Op b = ok(B, 59 * s, 59 * s + 500 * us);
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 70 * s, 70 * s + 500 * us, {a, b}, 60 * s));
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::connected_after_bound}) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({a, b}));
}

// ---------------------------------------------------------------- tags across rounds

TEST(BindingChecker, AcceptsConsecutiveTagsOfOneAlias) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 5000 * us, 5500 * us)).empty());
  // Invoked while the untag ran: the untag may already have freed the alias.
  EXPECT_TRUE(checker.add(round_of(2, "a1", 5200 * us, 6000 * us, 9000 * us, 9500 * us)).empty());
  EXPECT_TRUE(checker.add(round_of(3, "a1", 9600 * us, 10000 * us, 12000 * us, 12500 * us)).empty());
  EXPECT_EQ(checker.rounds(), 3u);
}

TEST(BindingChecker, AcceptsATagAfterTheFirstExpired) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, -1, -1, {}, 60 * s)).empty());
  auto found = checker.add(round_of(2, "a1", 60 * s + 1, 60 * s + 500 * us, -1, -1, {}, 60 * s));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, AcceptsOverlappingTagsOfDifferentAliases) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us)).empty());
  EXPECT_TRUE(checker.add(round_of(2, "a2", 2000 * us, 3000 * us, 4000 * us, 4500 * us)).empty());
}

TEST(BindingChecker, NeverJudgesAFailedTag) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us)).empty());
  // A failed tag inside round 1's window, with calls that would be violations.
  auto failed = round_of(2, "a1", 2000 * us, 3000 * us, -1, -1,
                         {ok(A, 4000 * us, 5000 * us), ok(B, 4001 * us, 5100 * us), refused(C, 4002 * us, 4500 * us)},
                         0, Outcome::fail);
  auto found = checker.add(failed);
  EXPECT_TRUE(found.empty()) << dump(found);
  // An indeterminate tag is not judged either.
  auto unsure = round_of(3, "a1", 2000 * us, 3000 * us, -1, -1, {}, 0, Outcome::indeterminate);
  found = checker.add(unsure);
  EXPECT_TRUE(found.empty()) << dump(found);
  EXPECT_EQ(checker.rounds(), 3u);
}

TEST(BindingChecker, FailedTagHoldsNothingForLaterRounds) {
  Checker checker;
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 10000 * us, 10500 * us, {}, 0, Outcome::fail)).empty());
  auto found = checker.add(round_of(2, "a1", 2000 * us, 3000 * us, 4000 * us, 4500 * us));
  EXPECT_TRUE(found.empty()) << dump(found);
}

TEST(BindingChecker, ForgetsEpochsBeyondItsMemory) {
  Checker checker(1);
  EXPECT_TRUE(checker.add(round_of(1, "a1", 0, 1000 * us, 100000 * us, 100500 * us)).empty());
  EXPECT_TRUE(checker.add(round_of(2, "a2", 0, 1000 * us, 2000 * us, 2500 * us)).empty());
  // Overlaps round 1, which is still the only epoch kept for a1.
  EXPECT_EQ(kinds(checker.add(round_of(3, "a1", 3000 * us, 4000 * us, 5000 * us, 5500 * us))),
            std::vector{ViolationKind::alias_tagged_twice});
  // Round 3 pushed round 1 out: an overlap with round 1 alone goes unseen.
  EXPECT_TRUE(checker.add(round_of(4, "a1", 6000 * us, 7000 * us, 8000 * us, 8500 * us)).empty());
}

// ---------------------------------------------------------------- certain_window

TEST(BindingChecker, CertainWindowValues) {
  using W = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(certain_window(round_of(1, "a1", 100, 200, -1, -1)), (W{200, kMax}));
  EXPECT_EQ(certain_window(round_of(1, "a1", 100, 200, 900, 950)), (W{200, 900}));
  EXPECT_EQ(certain_window(round_of(1, "a1", 100, 200, -1, -1, {}, 500)), (W{200, 600}));
  EXPECT_EQ(certain_window(round_of(1, "a1", 100, 200, 900, 950, {}, 500)), (W{200, 600}));
  EXPECT_EQ(certain_window(round_of(1, "a1", 100, 200, 400, 950, {}, 500)), (W{200, 400}));
}

TEST(BindingChecker, NamesViolationKinds) {
  EXPECT_EQ(to_string(ViolationKind::two_winners), "two-winners");
  EXPECT_EQ(to_string(ViolationKind::connected_after_bound), "connected-after-bound");
  EXPECT_EQ(to_string(ViolationKind::bound_caller_rejected), "bound-caller-rejected");
  EXPECT_EQ(to_string(ViolationKind::rejected_while_free), "rejected-while-free");
  EXPECT_EQ(to_string(ViolationKind::alias_tagged_twice), "alias-tagged-twice");
}

}  // namespace
}  // namespace crh::oracle
