// The first-caller-wins checker on synthetic histories: every kind of
// violation with its proof, and the cases it must not judge (indeterminate
// calls, throttled calls, calls outside the epoch's certain window).
// The mixed load's register checker: each rule, and brute force over random
// histories of a correct register (never flagged) and of broken ones (flagged).
#include "oracle/checker.hpp"
#include "oracle/register_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
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
// An HTTP "not now" as the load and capture record one (Op::not_now): a 429.
Op not_now(const std::string& caller, std::int64_t invoke, std::int64_t complete) {
  Op o = op(OpKind::call, 1, "a1", caller, invoke, complete, Outcome::fail, 429);
  o.not_now = true;
  return o;
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

// A's call was answered before the tag's answer came, but after the tag was
// sent: the target may have handled it after the tag took effect, binding A
// in this epoch, so B's refusal may be right (tests/oracle/binding_readings_test
// found this against the model).
TEST(BindingChecker, IgnoresRefusalWhenAnotherCallerMayHaveBoundWhileTheTagWasOnItsWay) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {ok(A, 200 * us, 800 * us), refused(B, 2000 * us, 2500 * us)});
  EXPECT_TRUE(checker.add(r).empty());
  // A call answered before the tag was sent bound nobody in this epoch.
  auto before = round_of(2, "a2", 1000 * us, 2000 * us, 9000 * us, 9500 * us,
                         {ok(A, 200 * us, 800 * us, OpKind::call, 2, "a2"), refused(B, 3000 * us, 3500 * us)});
  const auto found = checker.add(before);
  ASSERT_EQ(found.size(), 1u) << dump(found);
  EXPECT_EQ(found[0].kind, ViolationKind::rejected_while_free);
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
                                    {not_now(A, 2000 * us, 3000 * us)}));
  EXPECT_TRUE(found.empty()) << dump(found);
}

// A 429 the profile names a refusal (core::throttled says no) is recorded
// without the mark, and judged as the refusal it is.
TEST(BindingChecker, A429WithoutTheMarkIsARefusal) {
  Checker checker;
  auto found = checker.add(round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                                    {refused(A, 2000 * us, 3000 * us, OpKind::call, 429)}));
  EXPECT_EQ(kinds(found), std::vector{ViolationKind::rejected_while_free}) << dump(found);
}

TEST(BindingChecker, ThrottledCallNeitherRefusesNorBinds) {
  Checker checker;
  // A was throttled, B refused: only B's refusal is a violation.
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {not_now(A, 2000 * us, 3000 * us), refused(B, 2001 * us, 3100 * us)});
  auto found = checker.add(r);
  ASSERT_EQ(kinds(found), std::vector{ViolationKind::rejected_while_free}) << dump(found);
  EXPECT_EQ(keys(found[0].proof), keys({r.tag, r.calls[1]}));
}

// A SIP 503 with Retry-After is recorded indeterminate, unmarked
// (loadgen/race.cpp): an element on the call's path may have bound A before
// another said "not now", so B's refusal may be right.
TEST(BindingChecker, ASipNotNowMayHaveBound) {
  Checker checker;
  auto r = round_of(1, "a1", 0, 1000 * us, 9000 * us, 9500 * us,
                    {unknown(A, 2000 * us, 3000 * us, 503, ""), refused(B, 2001 * us, 3100 * us)});
  r.calls[0].kind = r.calls[1].kind = OpKind::sip_call;
  auto found = checker.add(r);
  EXPECT_TRUE(found.empty()) << dump(found);
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
  EXPECT_EQ(to_string(ViolationKind::database_stale_read), "database-stale-read");
  EXPECT_EQ(to_string(ViolationKind::agent_unexplained_state), "agent-unexplained-state");
}

// ---------------------------------------------------------------- registers (the mixed load's reads)

Op write_of(OpKind kind, const std::string& value, std::int64_t invoke, std::int64_t complete,
            Outcome outcome = Outcome::ok) {
  Op o = op(kind, 0, "", "", invoke, complete, outcome,
            outcome == Outcome::ok ? 200 : outcome == Outcome::fail ? 400 : 0, outcome == Outcome::indeterminate ? "timeout" : "");
  o.id = "k";
  o.value = value;
  return o;
}
Op db_set(const std::string& value, std::int64_t invoke, std::int64_t complete, Outcome outcome = Outcome::ok) {
  return write_of(OpKind::db_set, value, invoke, complete, outcome);
}
Op db_get(const std::string& value, std::int64_t invoke, std::int64_t complete) {
  Op o = op(OpKind::db_get, 0, "", "", invoke, complete, Outcome::ok, 200);
  o.id = "k";
  o.value = value;
  return o;
}

RegisterHistory db(std::vector<Op> writes, std::vector<Op> reads, std::optional<std::string> initial = "init") {
  RegisterHistory h;
  h.id = "k";
  h.initial = std::move(initial);
  h.writes = std::move(writes);
  h.reads = std::move(reads);
  return h;
}

std::string dump(const RegisterVerdict& v) { return dump(v.violations); }

TEST(RegisterChecker, AcceptsTheLastCompletedWriteAndOverlappingOnes) {
  // v1 done before the read; v2 and v3 overlap it: any of the three.
  auto writes = std::vector<Op>{db_set("v1", 0, 10), db_set("v2", 15, 40), db_set("v3", 25, 50)};
  for (const char* seen : {"v1", "v2", "v3"}) {
    auto v = check_register(db(writes, {db_get(seen, 20, 30)}));
    EXPECT_EQ(v.violation_count, 0u) << seen << ": " << dump(v);
    EXPECT_EQ(v.judged, 1u);
  }
}

TEST(RegisterChecker, AcceptsTheInitialValueUntilAWriteCompleted) {
  auto v = check_register(db({db_set("v1", 5, 50)}, {db_get("init", 0, 10), db_get("init", 20, 30)}));
  EXPECT_EQ(v.violation_count, 0u) << dump(v);
}

TEST(RegisterChecker, FlagsAStaleReadWithItsProof) {
  // db-first-write-wins: v2 was answered before the read was sent; the read shows v1.
  const Op w1 = db_set("v1", 0, 10), w2 = db_set("v2", 20, 30), r = db_get("v1", 40, 50);
  auto v = check_register(db({w1, w2}, {r}));
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  const auto& found = v.violations[0];
  EXPECT_EQ(found.kind, ViolationKind::database_stale_read);
  EXPECT_EQ(found.id, "k");
  EXPECT_EQ(found.actual, "v1");
  EXPECT_EQ(found.expected, "\"v2\"");
  EXPECT_EQ(keys(found.proof), keys({w1, w2, r}));
  EXPECT_TRUE(mentions(found.explanation, "database key k")) << found.explanation;
}

TEST(RegisterChecker, FlagsTheInitialValueAfterAWriteCompleted) {
  auto v = check_register(db({db_set("v1", 0, 10)}, {db_get("init", 20, 30)}));
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  EXPECT_EQ(v.violations[0].kind, ViolationKind::database_stale_read);
}

TEST(RegisterChecker, FlagsAValueNoWriteLeft) {
  auto v = check_register(db({db_set("v1", 0, 10), db_set("v2", 15, 40)}, {db_get("bogus", 20, 30)}));
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  const auto& found = v.violations[0];
  EXPECT_EQ(found.kind, ViolationKind::database_unwritten_read);
  EXPECT_EQ(found.expected, "one of \"v1\", \"v2\"");
  EXPECT_EQ(found.proof.size(), 3u);
}

TEST(RegisterChecker, FlagsAValueWrittenOnlyAfterTheReadEnded) {
  auto v = check_register(db({db_set("v1", 40, 50)}, {db_get("v1", 20, 30)}));
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  EXPECT_EQ(v.violations[0].kind, ViolationKind::database_unwritten_read);
}

TEST(RegisterChecker, AnUnansweredWriteOverlapsEverythingAfterIt) {
  // v1 timed out at 10: it may take effect at any time after 0, even after v2.
  auto writes = std::vector<Op>{db_set("v1", 0, 10, Outcome::indeterminate), db_set("v2", 20, 30)};
  auto v = check_register(db(writes, {db_get("v1", 1000, 1010), db_get("v2", 1020, 1030), db_get("init", 5, 8)}));
  EXPECT_EQ(v.violation_count, 0u) << dump(v);
  // Nor does it replace anything for certain: the initial value may still be read.
  v = check_register(db({db_set("v1", 0, 10, Outcome::indeterminate)}, {db_get("init", 1000, 1010)}));
  EXPECT_EQ(v.violation_count, 0u) << dump(v);
}

TEST(RegisterChecker, ARefusedWriteNeverApplies) {
  auto v = check_register(db({db_set("v1", 0, 10, Outcome::fail)}, {db_get("v1", 20, 30), db_get("init", 40, 50)}));
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  EXPECT_EQ(v.violations[0].kind, ViolationKind::database_unwritten_read);
  EXPECT_EQ(v.violations[0].actual, "v1");
}

TEST(RegisterChecker, JudgesNothingItCannotKnow) {
  // Unknown initial value: reads before any write completed are not judged.
  auto v = check_register(db({db_set("v1", 20, 30)}, {db_get("other", 0, 10)}, std::nullopt));
  EXPECT_EQ(v.judged, 0u);
  EXPECT_EQ(v.violation_count, 0u);
  // A write of unknown value that may precede the read.
  Op blind = db_set("", 0, 10);
  blind.value.reset();
  v = check_register(db({blind}, {db_get("other", 20, 30)}));
  EXPECT_EQ(v.judged, 0u);
  // A read that ended after the recording stopped.
  auto h = db({db_set("v1", 0, 10), db_set("v2", 20, 30)}, {db_get("v1", 40, 50)});
  h.judge_until = 45;
  EXPECT_EQ(check_register(h).judged, 0u);
}

TEST(RegisterChecker, AgentStatesUseTheirOwnKinds) {
  RegisterHistory h;
  h.what = Register::agent;
  h.id = "a7";
  h.initial = "\"available\"";
  h.writes = {write_of(OpKind::snooze, "\"snoozed\"", 0, 10)};
  Op read = db_get("\"available\"", 20, 30);
  read.kind = OpKind::get_agent;
  h.reads = {read};
  auto v = check_register(h);
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  EXPECT_EQ(v.violations[0].kind, ViolationKind::agent_stale_state);
  EXPECT_TRUE(mentions(v.violations[0].explanation, "agent a7")) << v.violations[0].explanation;
  h.reads[0].value = "\"busy\"";
  v = check_register(h);
  ASSERT_EQ(v.violation_count, 1u) << dump(v);
  EXPECT_EQ(v.violations[0].kind, ViolationKind::agent_unexplained_state);
}

// ---------------------------------------------------------------- registers by brute force

// A small random concurrent history of a register: every operation takes
// effect at one instant inside its interval (a linearization point), in the
// order of those instants; reads return what the register held then. An
// unanswered write may take effect or not, at any time after it was sent
// (even after the client gave up); a refused one never does.
struct Simulated {
  RegisterHistory history;
  std::vector<std::int64_t> read_points;  // the reads' linearization points
};

Simulated simulate(std::mt19937_64& rng, bool two_values, bool first_write_wins = false) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  struct Event {
    std::int64_t at;
    bool write;
    std::size_t index;
  };
  Simulated s;
  auto& h = s.history;
  h.what = two_values ? Register::agent : Register::database;
  h.id = "k";
  h.initial = pick(0, 4) == 0 && two_values ? std::optional<std::string>("busy") : std::optional<std::string>("init");
  std::vector<Event> events;
  const int n = static_cast<int>(pick(2, 14));
  for (int i = 0; i < n; ++i) {
    const std::int64_t at = pick(0, 1000), invoke = at - pick(0, 150), complete = at + pick(0, 150);
    if (pick(0, 1) == 0) {
      const std::string value = two_values ? (pick(0, 1) ? "snoozed" : "awake") : "v" + std::to_string(i);
      const auto roll = pick(0, 9);
      const Outcome outcome = roll < 7 ? Outcome::ok : roll < 8 ? Outcome::fail : Outcome::indeterminate;
      // An unanswered write's client gave up at any time after sending it.
      const std::int64_t ended = outcome == Outcome::indeterminate ? invoke + pick(0, 300) : complete;
      h.writes.push_back(write_of(two_values ? (value == "snoozed" ? OpKind::snooze : OpKind::wake) : OpKind::db_set,
                                  value, invoke, ended, outcome));
      const bool applies = outcome == Outcome::ok || (outcome == Outcome::indeterminate && pick(0, 1));
      if (applies) events.push_back({at, true, h.writes.size() - 1});
    } else {
      h.reads.push_back(db_get("", invoke, complete));
      s.read_points.push_back(at);
      events.push_back({at, false, h.reads.size() - 1});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  std::optional<std::string> value = h.initial;
  bool written = false;
  for (const auto& e : events) {
    if (e.write) {
      if (!(first_write_wins && (written || value))) value = h.writes[e.index].value;
      written = true;
    } else {
      h.reads[e.index].value = value;
    }
  }
  return s;
}

TEST(RegisterCheckerBruteForce, ACorrectRegisterIsNeverFlagged) {
  std::mt19937_64 rng(20261126);
  std::uint64_t judged = 0;
  for (int i = 0; i < 20000; ++i) {
    const bool two_values = i % 2 == 1;
    auto s = simulate(rng, two_values);
    auto v = check_register(s.history);
    ASSERT_EQ(v.violation_count, 0u) << "history " << i << ": " << dump(v);
    judged += v.judged;
  }
  EXPECT_GT(judged, 50'000u);  // the histories are judged, not skipped
}

TEST(RegisterCheckerBruteForce, FlagsAValueNeverWritten) {
  std::mt19937_64 rng(7);
  int flagged = 0, tried = 0;
  for (int i = 0; i < 5000; ++i) {
    auto s = simulate(rng, i % 2 == 1);
    if (s.history.reads.empty()) continue;
    ++tried;
    s.history.reads[static_cast<std::size_t>(i) % s.history.reads.size()].value = "never";
    auto v = check_register(s.history);
    flagged += v.violation_count == 1;
    ASSERT_LE(v.violation_count, 1u) << dump(v);
  }
  EXPECT_EQ(flagged, tried);
}

TEST(RegisterCheckerBruteForce, FlagsFirstWriteWinsExactlyWhenALaterWriteWasAnswered) {
  // The initial value stays; a read is provably stale when a write of another
  // value was answered 200 before it was sent, and only then.
  std::mt19937_64 rng(11);
  int flagged = 0;
  for (int i = 0; i < 5000; ++i) {
    auto s = simulate(rng, false, true);
    const auto& h = s.history;
    bool provable = false;
    for (const auto& r : h.reads)
      for (const auto& w : h.writes) provable |= w.outcome == Outcome::ok && w.complete_ns < r.invoke_ns;
    auto v = check_register(h);
    ASSERT_EQ(v.violation_count > 0, provable) << "history " << i << ": " << dump(v);
    flagged += provable;
  }
  EXPECT_GT(flagged, 1000);
}

TEST(RegisterCheckerBruteForce, FlagsAStaleValueAfterALaterAnsweredWrite) {
  // A correct history, then one read moved to return the value of a write
  // that a later answered write certainly replaced before the read was sent.
  std::mt19937_64 rng(13);
  int flagged = 0;
  for (int i = 0; i < 5000; ++i) {
    auto s = simulate(rng, false);
    auto& h = s.history;
    for (auto& r : h.reads)
      for (const auto& old : h.writes)
        for (const auto& later : h.writes)
          if (old.outcome == Outcome::ok && later.outcome == Outcome::ok && old.complete_ns < later.invoke_ns &&
              later.complete_ns < r.invoke_ns && !h.reads.empty()) {
            r.value = old.value;
            auto v = check_register(h);
            ASSERT_GE(v.violation_count, 1u) << "history " << i << ": " << dump(v);
            ++flagged;
            goto next;
          }
  next:;
  }
  EXPECT_GT(flagged, 500);
}

}  // namespace
}  // namespace crh::oracle
