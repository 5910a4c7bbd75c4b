// A tag refused as "every alias is tagged" judged against the load's own tags
// (issue 22, item 10): a violation only when the history makes an untagged
// alias certain; never when a tag in flight or of unknown outcome may hold it.
#include "loadgen/tag_ledger.hpp"

#include <gtest/gtest.h>

#include <map>
#include <queue>
#include <random>

namespace crh::loadgen {
namespace {
using oracle::Op;
using oracle::OpKind;
using oracle::Outcome;
using oracle::ViolationKind;

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

TEST(TagLedger, ATagOfUnknownOutcomeMayRunAfterTheLoadGaveUpOnIt) {
  // The tag timed out before alias 1 was freed; the target ran it later and
  // gave it alias 1: the refusal is right.
  TagLedger l;
  auto t = l.tag_sent();
  l.tag_done(t, tag_op("", Outcome::indeterminate, 0, 0), false);
  tag_and_free(l, "1", 5000);
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty());
  // Two aliases freed: that one tag could have taken only one of them.
  tag_and_free(l, "2", 20'000);
  tag_and_free(l, "3", 30'000);
  r = l.tag_sent();
  auto found = l.tag_done(r, refused(40'000), true);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, ViolationKind::tag_refused_while_free);
}

TEST(TagLedger, AnOtherRefusalOfATagChangesNothing) {
  TagLedger l;
  tag_and_free(l, "1", 0);
  auto t = l.tag_sent();
  EXPECT_TRUE(l.tag_done(t, tag_op("", Outcome::fail, 429, 5000), false).empty());
  auto r = l.tag_sent();
  EXPECT_EQ(l.tag_done(r, refused(10'000), true).size(), 1u);
}

TEST(TagLedger, AnUntagAnsweredAfterALaterTagTookItsAliasFreesNothing) {
  // The target ran: tag T1 -> alias 1, untag U of alias 1, tag T2 -> alias 1
  // (again), and then refused R as every alias (just one) is tagged. T2's
  // answer reached the ledger before U's: U must not free alias 1.
  TagLedger l;
  auto t1 = l.tag_sent();
  l.tag_done(t1, ok_tag("1", 0), false);                       // [0, 1000]
  auto t2 = l.tag_sent();
  l.tag_done(t2, ok_tag("1", 3000), false);                    // [3000, 4000]: ran after U
  l.untag_done(untag_op("1", Outcome::ok, 200, 2000));         // [2000, 3000+]: answered last
  auto r = l.tag_sent();
  EXPECT_TRUE(l.tag_done(r, refused(10'000), true).empty());
}

// A correct target simulated against the ledger: connections tag and untag
// at once (as the mix and the race do), the target runs each request
// atomically at a random instant between its send and its answer, and the
// answers reach the ledger in whatever order the connections see them. A
// correct target never makes a violation, whatever the interleaving; one
// that never tags a deleted tag's alias again always does.
struct Simulation {
  enum class Step { send, run, answer, late_run };
  struct Event {
    double at;
    int conn;
    Step step;
    bool operator>(const Event& o) const { return at > o.at; }
  };
  struct Conn {
    bool tagging = true;  // the next request is a tag (else the untag of `alias`)
    std::string alias;
    std::uint64_t ticket = 0;
    Op op;
    bool refused = false;
    bool timed_out = false;  // the load gave up on the tag under way; the target runs it later
  };

  int aliases;
  bool never_retag;
  std::mt19937_64 rng;
  std::map<std::string, std::uint64_t> last_use;  // the target: alias -> last use
  std::map<std::string, bool> tagged, used_once;
  TagLedger ledger;
  std::size_t violations = 0, refusals = 0;

  double timeouts = 0;  // the share of tags the load gives up on before the target runs them

  Simulation(int n, bool broken, std::uint64_t seed) : aliases(n), never_retag(broken), rng(seed) {
    for (int i = 1; i <= n; ++i) last_use[std::to_string(i)] = 0;
  }

  // The target's tag: the least recently used untagged alias, or nothing.
  std::optional<std::string> run_tag(std::uint64_t now) {
    std::optional<std::string> pick;
    for (const auto& [a, used] : last_use)
      if (!tagged[a] && !(never_retag && used_once[a]) && (!pick || used < last_use[*pick])) pick = a;
    if (pick) {
      tagged[*pick] = used_once[*pick] = true;
      last_use[*pick] = now;
    }
    return pick;
  }

  void run(int connections, int steps) {
    std::exponential_distribution<double> delay(1.0);
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
    std::vector<Conn> conns(static_cast<std::size_t>(connections));
    for (int c = 0; c < connections; ++c) q.push({delay(rng), c, Step::send});
    for (std::uint64_t n = 1; n <= static_cast<std::uint64_t>(steps) && !q.empty(); ++n) {
      const Event e = q.top();
      q.pop();
      Conn& c = conns[static_cast<std::size_t>(e.conn)];
      const auto ns = static_cast<std::int64_t>(e.at * 1e6);
      if (e.step == Step::send) {
        c.op = {};
        c.op.kind = c.tagging ? OpKind::tag : OpKind::untag;
        c.op.invoke_ns = ns;
        if (c.tagging) c.ticket = ledger.tag_sent();
        c.timed_out = c.tagging && std::uniform_real_distribution<double>(0, 1)(rng) < timeouts;
        if (c.timed_out) {
          // Its alias is never known, so never deleted: it stays tagged.
          q.push({e.at + delay(rng) * 0.5, e.conn, Step::answer});
          q.push({e.at + delay(rng) * 20, e.conn, Step::late_run});
        } else {
          q.push({e.at + delay(rng), e.conn, Step::run});
        }
      } else if (e.step == Step::late_run) {
        run_tag(n);
      } else if (e.step == Step::run) {
        if (c.tagging) {
          auto got = run_tag(n);
          c.refused = !got;
          c.alias = got.value_or("");
        } else {
          tagged[c.alias] = false;
        }
        q.push({e.at + delay(rng), e.conn, Step::answer});
      } else {
        c.op.complete_ns = ns;
        c.op.alias = c.alias;
        c.op.status = c.refused && c.tagging ? 409 : 200;
        c.op.outcome = c.op.status == 200 ? Outcome::ok : Outcome::fail;
        if (c.timed_out) {
          c.op.alias.clear(), c.op.status = 0, c.op.outcome = Outcome::indeterminate;
          violations += ledger.tag_done(c.ticket, c.op, false).size();
          q.push({e.at + delay(rng) * 0.1, e.conn, Step::send});
          continue;
        }
        if (c.tagging) {
          refusals += c.refused;
          violations += ledger.tag_done(c.ticket, c.op, c.refused).size();
          c.tagging = c.refused;  // a tag that took an alias is undone next
        } else {
          ledger.untag_done(c.op);
          c.tagging = true;
        }
        q.push({e.at + delay(rng) * 0.1, e.conn, Step::send});
      }
    }
  }
};

TEST(TagLedger, ACorrectTargetNeverMakesAViolationWhateverTheInterleaving) {
  std::size_t refusals = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Simulation sim(2 + static_cast<int>(seed % 4), false, seed);
    sim.run(2 + static_cast<int>(seed % 15), 6000);
    EXPECT_EQ(sim.violations, 0u) << "seed " << seed;
    refusals += sim.refusals;
  }
  EXPECT_GT(refusals, 10'000u) << "the simulation must refuse tags often, or it tests nothing";
}

TEST(TagLedger, TagsTheTargetRunsAfterTheLoadGaveUpOnThemMakeNoViolation) {
  std::size_t refusals = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Simulation sim(2 + static_cast<int>(seed % 6), false, seed);
    sim.timeouts = 0.02 + 0.1 * static_cast<double>(seed % 3);
    sim.run(2 + static_cast<int>(seed % 15), 6000);
    EXPECT_EQ(sim.violations, 0u) << "seed " << seed;
    refusals += sim.refusals;
  }
  EXPECT_GT(refusals, 10'000u);
}

TEST(TagLedger, ATargetThatNeverTagsAnAliasAgainIsCaughtEveryTime) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    Simulation sim(2 + static_cast<int>(seed % 4), true, seed);
    sim.run(2 + static_cast<int>(seed % 15), 6000);
    EXPECT_GT(sim.violations, 0u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace crh::loadgen
