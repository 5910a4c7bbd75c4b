// A tag refused as "every alias is tagged" judged against the load's own tags
// (issue 22, item 10): a violation only when the history makes an untagged
// alias certain; never when a tag in flight or of unknown outcome may hold it.
#include "loadgen/tag_ledger.hpp"

#include <gtest/gtest.h>

namespace crh::loadgen {
namespace {

Op tag_op(std::string alias, Outcome outcome, unsigned status, std::int64_t at) {
  Op op;
  op.kind = OpKind::tag;
  op.alias = std::move(alias);
  op.outcome = outcome;
  op.status = status;
  op.invoke_ns = at;
  op.complete_ns = at + 1000;
  return op;
}
Op ok_tag(std::string alias, std::int64_t at) { return tag_op(std::move(alias), Outcome::ok, 200, at); }
Op refused(std::int64_t at) { return tag_op("", Outcome::fail, 409, at); }
Op untag_op(std::string alias, Outcome outcome, unsigned status, std::int64_t at) {
  Op op = tag_op(std::move(alias), outcome, status, at);
  op.kind = OpKind::untag;
  return op;
}

// Tags alias `a` and deletes the tag with a 200: the load has freed it.
void tag_and_free(TagLedger& l, const std::string& a, std::int64_t at) {
  auto t = l.tag_sent();
  EXPECT_TRUE(l.tag_done(t, ok_tag(a, at), false).empty());
  l.untag_done(untag_op(a, Outcome::ok, 200, at + 2000));
}

TEST(TagLedger, ARefusalAfterTheLoadFreedAnAliasIsAViolationWithItsProof) {
  TagLedger l;
  tag_and_free(l, "3", 0);
  auto r = l.tag_sent();
  auto found = l.tag_done(r, refused(10'000), true);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, ViolationKind::tag_refused_while_free);
  EXPECT_EQ(found[0].alias, "3");
  ASSERT_EQ(found[0].proof.size(), 3u);
  EXPECT_EQ(found[0].proof[0].kind, OpKind::tag);
  EXPECT_EQ(found[0].proof[1].kind, OpKind::untag);
  EXPECT_EQ(found[0].proof[2].status, 409u);
  EXPECT_NE(found[0].explanation.find("alias 3 was untagged"), std::string::npos) << found[0].explanation;
  EXPECT_EQ(to_string(ViolationKind::tag_refused_while_free), "tag-refused-while-free");
}

TEST(TagLedger, ARefusalWhileEveryAliasOfTheLoadIsHeldIsExpected) {
  TagLedger l;
  tag_and_free(l, "1", 0);
  auto t = l.tag_sent();
  l.tag_done(t, ok_tag("1", 5000), false);  // held again
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty());
}

TEST(TagLedger, AnAliasNeverTaggedByTheLoadProvesNothing) {
  TagLedger l;  // a refusal at the start: the load knows no alias of its own
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(0), true).empty());
}

TEST(TagLedger, AnUntagWithoutSuccessLeavesTheAliasPossiblyTagged) {
  for (auto [outcome, status] : {std::pair{Outcome::indeterminate, 0u}, std::pair{Outcome::fail, 404u},
                                 std::pair{Outcome::indeterminate, 503u}}) {
    TagLedger l;
    auto t = l.tag_sent();
    l.tag_done(t, ok_tag("2", 0), false);
    l.untag_done(untag_op("2", outcome, status, 2000));
    auto r = l.tag_sent();
    EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty()) << status;
  }
}

TEST(TagLedger, AnUntagAnsweredAfterTheRefusedTagWasSentProvesNothing) {
  TagLedger l;
  auto t = l.tag_sent();
  l.tag_done(t, ok_tag("1", 0), false);
  auto r = l.tag_sent();  // the refused tag goes out before the untag's success is known
  l.untag_done(untag_op("1", Outcome::ok, 200, 2000));
  EXPECT_TRUE(l.tag_done(r, refused(3000), true).empty());
}

TEST(TagLedger, ATagInFlightMayHaveTakenTheAliasSoTheRefusalWaitsForIt) {
  TagLedger l;
  tag_and_free(l, "1", 0);
  auto other = l.tag_sent();  // in flight when the refusal comes back
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty()) << "undecided while the other tag is in flight";
  EXPECT_TRUE(l.tag_done(other, ok_tag("1", 9000), false).empty()) << "it took the alias: the refusal was right";

  TagLedger m;
  tag_and_free(m, "1", 0);
  tag_and_free(m, "2", 0);
  auto other2 = m.tag_sent();
  auto r2 = m.tag_sent();
  EXPECT_TRUE(m.tag_done(r2, refused(10'000), true).empty());
  auto found = m.tag_done(other2, ok_tag("1", 9000), false);
  ASSERT_EQ(found.size(), 1u) << "alias 2 stayed untagged throughout";
  EXPECT_EQ(found[0].alias, "2");
}

TEST(TagLedger, ATagOfUnknownOutcomeMayHoldAnyAlias) {
  for (auto unknown : {tag_op("", Outcome::indeterminate, 0, 5000), tag_op("", Outcome::indeterminate, 502, 5000),
                       tag_op("", Outcome::ok, 200, 5000)}) {
    TagLedger l;
    tag_and_free(l, "1", 0);
    auto t = l.tag_sent();
    l.tag_done(t, unknown, false);
    auto r = l.tag_sent();
    EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty()) << unknown.status;
  }
  TagLedger l;  // the same, still in flight when the refusal comes
  tag_and_free(l, "1", 0);
  auto t = l.tag_sent();
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty());
  EXPECT_TRUE(l.tag_done(t, tag_op("", Outcome::indeterminate, 0, 5000), false).empty());
}

TEST(TagLedger, AnOtherRefusalOfATagChangesNothing) {
  TagLedger l;
  tag_and_free(l, "1", 0);
  auto t = l.tag_sent();
  EXPECT_TRUE(l.tag_done(t, tag_op("", Outcome::fail, 429, 5000), false).empty());
  auto r = l.tag_sent();
  EXPECT_EQ(l.tag_done(r, refused(10'000), true).size(), 1u);
}

}  // namespace
}  // namespace crh::loadgen
