// The model of the spec fed operations and crafted answers: every endpoint's
// predicted answer and refusals through the profile, the tag, LRU, expiry and
// binding rules at their exact boundaries, learning from an unknown start,
// snapshots, and each rule's divergence on a deliberately wrong answer.
#include "oracle/model.hpp"
#include "oracle/rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace crh::oracle {
namespace {

Start fixtures() {
  Start s;
  s.agents = {{"101", "\"available\""}, {"102", "\"available\""}, {"103", "\"snoozed\""}};
  s.database = {{"greeting", "hello"}};
  s.channels = {{"1", {"1", "2", "3", "4"}}, {"2", {"1", "2", "3", "4"}}, {"7", {"a", "b"}}};
  s.awake_state = "\"available\"";
  s.snoozed_state = "\"snoozed\"";
  return s;
}

ObservedAnswer ok(std::string body) { return {true, 200, std::move(body)}; }
ObservedAnswer refused(unsigned status) { return {true, status, R"({"msg":"no"})"}; }

std::string agent(const std::string& id, const std::string& state) {
  return R"({"id":")" + id + R"(","name":"A","state":")" + state + R"("})";
}
std::string alias(const std::string& id, const std::string& tag = "", const std::string& bound = "") {
  auto text = [](const std::string& v) { return v.empty() ? std::string("null") : "\"" + v + "\""; };
  return R"({"id":")" + id + R"(","number":"+1555","tag":)" + text(tag) + R"(,"expires_at":null,"bound_caller":)" +
         text(bound) + "}";
}
std::string aliases(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return R"({"channel":"1","aliases":[)" + out + "]}";
}
const std::string kConnected = R"({"connected":true})";

std::string texts(const std::vector<Divergence>& d) {
  std::string out;
  for (const auto& x : d) out += x.text + "\n";
  return out;
}

bool has(const std::vector<Divergence>& d, Severity s, std::string_view rule) {
  return std::any_of(d.begin(), d.end(), [&](const Divergence& x) { return x.severity == s && x.rule == rule; });
}

// Predicts, judges and observes one operation, as a driver of the model does.
struct Session {
  Model model;
  core::Profile profile;
  std::set<std::string> rules_seen;  // of the divergences found

  std::vector<Divergence> send(const Operation& op, const ObservedAnswer& a) {
    auto d = check(predict(model, op, profile), a);
    for (const auto& x : d) {
      EXPECT_NE(find_rule(x.rule), nullptr) << "not a catalogue rule: " << x.rule;
      rules_seen.insert(std::string(x.rule));
    }
    observe(model, op, a, profile);
    return d;
  }
  // The answer is right: no divergence.
  void fine(const Operation& op, const ObservedAnswer& a) {
    auto d = send(op, a);
    EXPECT_TRUE(d.empty()) << texts(d);
  }
  std::vector<std::string> picks(const std::string& channel, std::int64_t at = 0) const {
    for (const auto& f : predict(model, ops::tag(channel, "t", 5, at), profile).fields)
      if (f.field == Field::alias_id) return f.values;
    return {};
  }
  // Judges an answer without advancing the model.
  std::vector<Divergence> judge(const Operation& op, const ObservedAnswer& a) const {
    return check(predict(model, op, profile), a);
  }
};

Session fresh(ModelClock clock = {}) { return {Model::known(fixtures(), clock), {}, {}}; }

using V = std::vector<std::string>;

// ---- agents ----

TEST(ModelAgents, ListAndGetArePredictedExactly) {
  auto s = fresh();
  auto p = predict(s.model, ops::list_agents(), s.profile);
  EXPECT_TRUE(p.status.ok);
  EXPECT_FALSE(p.status.refusal);
  s.fine(ops::list_agents(), ok(R"({"agents":[)" + agent("101", "available") + "," + agent("102", "available") + "," +
                                agent("103", "snoozed") + "]}"));
  auto d = s.judge(ops::list_agents(), ok(R"({"agents":[)" + agent("101", "available") + "]}"));
  EXPECT_TRUE(has(d, Severity::must, "E1")) << texts(d);
  s.fine(ops::get_agent("101"), ok(agent("101", "available")));
  d = s.judge(ops::get_agent("101"), ok(agent("102", "available")));
  EXPECT_TRUE(has(d, Severity::must, "E2")) << texts(d);
  d = s.judge(ops::get_agent("103"), ok(agent("103", "available")));
  EXPECT_TRUE(has(d, Severity::should, "E2")) << texts(d);
  EXPECT_FALSE(has(d, Severity::must, "E2")) << texts(d);
}

TEST(ModelAgents, AnUnknownAgentIsRefusedThroughTheProfileStatuses) {
  auto s = fresh();
  auto p = predict(s.model, ops::get_agent("999"), s.profile);
  EXPECT_FALSE(p.status.ok);
  EXPECT_EQ(p.status.statuses, std::vector<unsigned>{404});
  EXPECT_TRUE(s.judge(ops::get_agent("999"), refused(404)).empty());
  auto d = s.judge(ops::get_agent("999"), ok(agent("999", "available")));
  EXPECT_TRUE(has(d, Severity::must, "E2")) << texts(d);
  EXPECT_TRUE(has(s.judge(ops::snooze("999"), ok(agent("999", "snoozed"))), Severity::must, "E3"));
  EXPECT_TRUE(has(s.judge(ops::wake("999"), ok(agent("999", "available"))), Severity::must, "E4"));
  d = s.judge(ops::get_agent("999"), refused(400));
  EXPECT_TRUE(has(d, Severity::should, "E2")) << texts(d);
  s.profile.statuses.not_found = {410};  // another implementation's choice
  EXPECT_TRUE(s.judge(ops::get_agent("999"), refused(410)).empty());
  EXPECT_TRUE(has(s.judge(ops::get_agent("999"), refused(404)), Severity::should, "E2"));
}

TEST(ModelAgents, SnoozeAndWakeAnswerTheAgentAndShowInALaterGet) {
  auto s = fresh();
  s.fine(ops::snooze("101"), ok(agent("101", "snoozed")));
  s.fine(ops::get_agent("101"), ok(agent("101", "snoozed")));
  auto d = s.judge(ops::get_agent("101"), ok(agent("101", "available")));
  EXPECT_TRUE(has(d, Severity::should, "E2")) << texts(d);
  d = s.judge(ops::wake("101"), ok(agent("102", "available")));
  EXPECT_TRUE(has(d, Severity::must, "R1")) << texts(d);
  s.fine(ops::wake("101"), ok(agent("101", "available")));
  s.fine(ops::get_agent("101"), ok(agent("101", "available")));
  // An awake agent must be snoozable; snoozing a snoozed one may be refused.
  EXPECT_TRUE(has(s.judge(ops::snooze("101"), refused(409)), Severity::must, "E3"));
  d = s.judge(ops::snooze("103"), refused(409));
  EXPECT_TRUE(has(d, Severity::should, "E3")) << texts(d);
  EXPECT_FALSE(has(d, Severity::must, "E3")) << texts(d);
}

TEST(ModelAgents, TheStateWordsAreLearnedFromTheFirstAnswers) {
  auto start = fixtures();
  start.awake_state.reset();
  start.snoozed_state.reset();
  Session s{Model::known(start), {}, {}};
  auto p = predict(s.model, ops::snooze("101"), s.profile);
  EXPECT_FALSE(std::any_of(p.fields.begin(), p.fields.end(), [](auto& f) { return f.field == Field::agent_state; }));
  s.fine(ops::snooze("101"), ok(agent("101", "zzz")));
  EXPECT_EQ(s.model.snoozed_state, "\"zzz\"");
  s.fine(ops::snooze("102"), ok(agent("102", "zzz")));
  EXPECT_TRUE(has(s.judge(ops::snooze("102"), ok(agent("102", "asleep"))), Severity::should, "E3"));
  s.fine(ops::get_agent("102"), ok(agent("102", "zzz")));
}

// ---- authentication ----

TEST(ModelAuth, AMissingOrWrongKeyIsRefusedAndARefusedWriteChangesNothing) {
  auto s = fresh();
  auto op = ops::db_set("greeting", "bye");
  op.auth = Auth::missing;
  auto p = predict(s.model, op, s.profile);
  EXPECT_FALSE(p.status.ok);
  EXPECT_EQ(p.status.statuses, (std::vector<unsigned>{401, 403}));
  EXPECT_TRUE(has(s.judge(op, ok(R"({"key":"greeting","value":"bye"})")), Severity::must, "R5"));
  EXPECT_TRUE(has(s.judge(op, refused(400)), Severity::should, "R5"));
  op.auth = Auth::wrong;
  EXPECT_TRUE(has(s.judge(op, ok("{}")), Severity::must, "A2"));
  s.fine(op, refused(401));
  s.fine(ops::db_get("greeting"), ok(R"({"key":"greeting","value":"hello"})"));
  auto call = ops::call("1", "1", "+1");
  call.auth = Auth::wrong;
  EXPECT_TRUE(has(s.judge(call, ok(kConnected)), Severity::must, "A2"));
}

// ---- the database ----

TEST(ModelDatabase, ValuesReadBackExactlyAndAKeyNeverWrittenIsRefused) {
  auto s = fresh();
  s.fine(ops::db_get("greeting"), ok(R"({"key":"greeting","value":"hello"})"));
  EXPECT_TRUE(has(s.judge(ops::db_get("greeting"), ok(R"({"value":"hell"})")), Severity::must, "E5"));
  EXPECT_TRUE(has(s.judge(ops::db_get("greeting"), ok(R"({"data":"hello"})")), Severity::should, "E5"));
  EXPECT_TRUE(has(s.judge(ops::db_get("never"), ok(R"({"value":""})")), Severity::must, "E5"));
  s.fine(ops::db_get("never"), refused(404));
  const std::string odd = "a b+c&d=e%f \"q\" \xC3\xA9";
  s.fine(ops::db_set("never", odd), ok(R"({"key":"never","value":"a b+c&d=e%f \"q\" \u00e9"})"));
  s.fine(ops::db_get("never"), ok(R"({"value":"a b+c&d=e%f \"q\" \u00e9"})"));
  s.fine(ops::db_set("never", ""), ok(R"({"key":"never","value":""})"));
  s.fine(ops::db_get("never"), ok(R"({"value":""})"));
  EXPECT_TRUE(has(s.judge(ops::db_get("never"), ok(R"({"value":"a b"})")), Severity::must, "E5"));
}

TEST(ModelDatabase, APostWithoutValueShouldBeRefused) {
  auto s = fresh();
  auto op = ops::db_set("k", "");
  op.value.reset();
  auto p = predict(s.model, op, s.profile);
  EXPECT_TRUE(p.status.ok);  // the MUST rules accept it; the profile expects 400
  EXPECT_FALSE(p.status.ok_expected);
  EXPECT_TRUE(s.judge(op, refused(400)).empty());
  EXPECT_TRUE(has(s.judge(op, ok(R"({"key":"k","value":""})")), Severity::should, "E6"));
}

// ---- aliases: list, tag, delete ----

TEST(ModelAliases, TheListShowsEveryAliasAndItsTag) {
  auto s = fresh();
  s.fine(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2"), alias("3"), alias("4")})));
  EXPECT_TRUE(has(s.judge(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2")}))), Severity::must, "E7"));
  EXPECT_TRUE(
      has(s.judge(ops::list_aliases("1"), ok(aliases({alias("1", "ghost"), alias("2"), alias("3"), alias("4")}))),
          Severity::must, "T1"));
  EXPECT_TRUE(has(s.judge(ops::list_aliases("9"), ok(aliases({}))), Severity::must, "E7"));
  EXPECT_TRUE(has(s.judge(ops::tag("9", "x", 5), ok(alias("1", "x"))), Severity::must, "E8"));
  s.fine(ops::list_aliases("9"), refused(404));
}

TEST(ModelAliases, ATagPicksAnyNeverUsedAliasThenTheLeastRecentlyUsed) {
  auto s = fresh();
  EXPECT_EQ(s.picks("1"), (V{"1", "2", "3", "4"}));  // never used: their order is not known
  // The target's order, whatever it is, fixes the model's: 3, 1, 4, then 2 is determined.
  for (const std::string id : {"3", "1", "4"}) {
    s.fine(ops::tag("1", "t", 5), ok(alias(id, "t")));
    s.fine(ops::untag("1", id), ok(alias(id)));
  }
  EXPECT_EQ(s.picks("1"), V{"2"});
  s.fine(ops::tag("1", "t", 5), ok(alias("2", "t")));
  s.fine(ops::untag("1", "2"), ok(alias("2")));
  for (const std::string id : {"3", "1", "4", "2"}) {
    EXPECT_EQ(s.picks("1"), V{id});
    s.fine(ops::tag("1", "t", 5), ok(alias(id, "t")));
    s.fine(ops::untag("1", id), ok(alias(id)));
  }
  auto d = s.judge(ops::tag("1", "t", 5), ok(alias("1", "t")));  // 3 is the oldest
  EXPECT_TRUE(has(d, Severity::must, "R2")) << texts(d);
  // A connected call may be a use or not (the spec does not say): 3 may
  // still be the oldest, or no longer.
  s.fine(ops::call("1", "3", "+1"), ok(kConnected));
  EXPECT_EQ(s.picks("1"), (V{"1", "3"}));
}

TEST(ModelAliases, ARefusedCallMayOrMayNotBeAUseAndThePickTells) {
  for (const std::string first : {"a", "b"}) {
    auto s = fresh();
    s.fine(ops::tag("7", "t", 5), ok(alias("a", "t")));
    s.fine(ops::call("7", "a", "+1"), ok(kConnected));
    EXPECT_EQ(s.picks("7"), V{"b"});
    s.fine(ops::tag("7", "t", 5), ok(alias("b", "t")));
    s.fine(ops::call("7", "a", "+2"), refused(403));  // a use of a, or not
    s.fine(ops::untag("7", "a"), ok(alias("a")));
    s.fine(ops::untag("7", "b"), ok(alias("b")));
    EXPECT_EQ(s.picks("7"), (V{"a", "b"}));
    s.fine(ops::tag("7", "t", 5), ok(alias(first, "t")));
    s.fine(ops::untag("7", first), ok(alias(first)));
    const std::string other = first == "a" ? "b" : "a";
    EXPECT_EQ(s.picks("7"), V{other}) << "after " << first;
  }
}

TEST(ModelAliases, EveryAliasTaggedRefusesTheNextTagAndNeverReplacesALiveOne) {
  auto s = fresh();
  for (const std::string id : {"2", "4", "1", "3"}) s.fine(ops::tag("1", "t", 5), ok(alias(id, "t")));
  auto p = predict(s.model, ops::tag("1", "t", 5), s.profile);
  EXPECT_FALSE(p.status.ok);
  EXPECT_EQ(p.status.statuses, std::vector<unsigned>{409});
  s.fine(ops::tag("1", "t", 5), refused(409));
  EXPECT_TRUE(has(s.judge(ops::tag("1", "t", 5), ok(alias("3", "t"))), Severity::must, "T1"));
  EXPECT_TRUE(has(s.judge(ops::tag("1", "t", 5), refused(400)), Severity::should, "T1"));
  s.fine(ops::untag("1", "4"), ok(alias("4")));
  EXPECT_EQ(s.picks("1"), V{"4"});
  auto d = s.judge(ops::tag("1", "t", 5), ok(alias("2", "t")));
  EXPECT_TRUE(has(d, Severity::must, "T1")) << texts(d);
  d = s.judge(ops::tag("1", "t", 5), ok(alias("9", "t")));
  EXPECT_TRUE(has(d, Severity::must, "E8")) << texts(d);
}

TEST(ModelAliases, TheTagAnswerCarriesTheTagJustSet) {
  auto s = fresh();
  EXPECT_TRUE(has(s.judge(ops::tag("1", "mine", 5), ok(alias("1", "other"))), Severity::must, "E8"));
  auto d = s.judge(ops::tag("1", "mine", 5), ok(R"({"id":"1"})"));
  EXPECT_TRUE(has(d, Severity::should, "E8")) << texts(d);
  EXPECT_FALSE(has(d, Severity::must, "E8")) << texts(d);
  EXPECT_TRUE(has(s.judge(ops::tag("1", "mine", 5), ok("not json")), Severity::must, "C1"));
}

TEST(ModelAliases, TagParametersAreRequiredAndWithinTheProfileRange) {
  auto s = fresh();
  auto op = ops::tag("1", "x", 5);
  op.minutes.reset();
  EXPECT_TRUE(has(s.judge(op, ok(alias("1", "x"))), Severity::must, "R3"));
  s.fine(op, refused(400));
  op = ops::tag("1", "x", 5);
  op.tag.reset();
  EXPECT_TRUE(has(s.judge(op, ok(alias("1", ""))), Severity::must, "R3"));
  for (const std::string bad : {"abc", "1.5", "", "5m"}) {
    op = ops::tag("1", "x", 5);
    op.minutes = bad;
    EXPECT_TRUE(has(s.judge(op, ok(alias("1", "x"))), Severity::must, "R3")) << bad;
  }
  for (const std::int64_t outside : {0, -1, 1441}) {
    auto d = s.judge(ops::tag("1", "x", outside), ok(alias("1", "x")));
    EXPECT_TRUE(has(d, Severity::should, "R3")) << outside << texts(d);
    EXPECT_FALSE(has(d, Severity::must, "R3")) << outside << texts(d);
    EXPECT_TRUE(s.judge(ops::tag("1", "x", outside), refused(400)).empty()) << outside;
  }
  s.profile.dialect.minutes.max = 2000;
  EXPECT_TRUE(s.judge(ops::tag("1", "x", 1441), ok(alias("1", "x"))).empty());
  EXPECT_TRUE(has(s.judge(ops::tag("1", "", 5), ok(alias("1", ""))), Severity::should, "R3"));
}

TEST(ModelAliases, DeletingATagAddressesThatAliasAndEndsTheTag) {
  auto s = fresh();
  s.fine(ops::tag("1", "x", 5), ok(alias("2", "x")));
  s.fine(ops::tag("1", "y", 5), ok(alias("3", "y")));
  EXPECT_TRUE(has(s.judge(ops::untag("1", "2"), ok(alias("3"))), Severity::must, "R4"));
  EXPECT_TRUE(has(s.judge(ops::untag("1", "2"), refused(404)), Severity::must, "E9"));
  s.fine(ops::untag("1", "2"), ok(alias("2")));
  s.fine(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2"), alias("3", "y"), alias("4")})));
  auto d = s.judge(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2", "x"), alias("3", "y"), alias("4")})));
  EXPECT_TRUE(has(d, Severity::must, "R4")) << texts(d);
  d = s.judge(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2"), alias("3"), alias("4")})));
  EXPECT_TRUE(has(d, Severity::must, "T1")) << texts(d);
  // Deleting no tag: the profile expects not-found; a 200 is a SHOULD.
  s.fine(ops::untag("1", "2"), refused(404));
  EXPECT_TRUE(has(s.judge(ops::untag("1", "2"), ok(alias("2"))), Severity::should, "R4"));
  EXPECT_TRUE(has(s.judge(ops::untag("1", "99"), ok(alias("99"))), Severity::must, "R4"));
}

TEST(ModelAliases, FieldsAreReadUnderTheProfilesNames) {
  auto s = fresh();
  s.profile.dialect.fields.aliases_list = "items";
  s.profile.dialect.fields.alias_id = {"alias_id"};
  s.profile.dialect.fields.alias_tag = "label";
  s.profile.statuses.all_tagged = {429};
  s.fine(ops::list_aliases("7"), ok(R"({"items":[{"alias_id":"a","label":""},{"alias_id":"b"}]})"));
  s.fine(ops::tag("7", "x", 5), ok(R"({"alias_id":"b","label":"x"})"));
  EXPECT_EQ(s.picks("7"), V{"a"});
  auto d =
      s.judge(ops::tag("7", "y", 5), ok(R"({"alias_id":"a","tag":"y"})"));  // the default name is not this target's
  EXPECT_TRUE(has(d, Severity::should, "E8")) << texts(d);
  d = s.judge(ops::tag("7", "y", 5), ok(R"({"alias_id":"a","label":"z"})"));
  EXPECT_TRUE(has(d, Severity::must, "E8")) << texts(d);
  s.fine(ops::tag("7", "y", 5), ok(R"({"alias_id":"a","label":"y"})"));
  s.fine(ops::tag("7", "z", 5), refused(429));
  EXPECT_TRUE(has(s.judge(ops::tag("7", "z", 5), refused(409)), Severity::should, "T1"));
}

// ---- expiry: exact boundaries and the margin ----

TEST(ModelExpiry, ATagLivesItsMinutesToTheMillisecond) {
  auto s = fresh({.minute_ms = 1000, .margin_ms = 0});
  s.fine(ops::tag("1", "x", 2, 500), ok(alias("1", "x")));  // lives [500, 2500)
  s.fine(ops::call("1", "1", "+1", 600), ok(kConnected));
  const auto before = ops::list_aliases("1", 2499), at = ops::list_aliases("1", 2500);
  const auto listed = aliases({alias("1", "x", "+1"), alias("2"), alias("3"), alias("4")});
  const auto unlisted = aliases({alias("1"), alias("2"), alias("3"), alias("4")});
  EXPECT_TRUE(s.judge(before, ok(listed)).empty());
  EXPECT_TRUE(has(s.judge(before, ok(unlisted)), Severity::must, "T1"));
  EXPECT_TRUE(s.judge(at, ok(unlisted)).empty());
  EXPECT_TRUE(has(s.judge(at, ok(listed)), Severity::must, "T1"));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2", 2499), ok(kConnected)), Severity::must, "B3"));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2", 2500), refused(403)), Severity::must, "T1"));
  s.fine(ops::call("1", "1", "+1", 2000), ok(kConnected));  // the bound caller's call does not extend the tag
  s.fine(ops::call("1", "1", "+2", 2499), refused(403));
  s.fine(ops::call("1", "1", "+2", 2500), ok(kConnected));
  s.fine(ops::call("1", "1", "+3", 2501), ok(kConnected));  // expired: any caller, nobody bound
}

TEST(ModelExpiry, WithinTheMarginEitherAnswerIsAcceptedAndTheAnswerTeaches) {
  const ModelClock clock{.minute_ms = 1000, .margin_ms = 100};
  auto s = fresh(clock);
  s.fine(ops::tag("1", "x", 2, 500), ok(alias("1", "x")));  // expires at 2500 ± 100
  s.fine(ops::call("1", "1", "+1", 600), ok(kConnected));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2", 2399), ok(kConnected)), Severity::must, "B3"));
  for (std::int64_t t : {2400, 2500, 2599}) {
    EXPECT_TRUE(s.judge(ops::call("1", "1", "+2", t), ok(kConnected)).empty()) << t;
    EXPECT_TRUE(s.judge(ops::call("1", "1", "+2", t), refused(403)).empty()) << t;
    EXPECT_TRUE(s.judge(ops::call("1", "1", "+1", t), ok(kConnected)).empty()) << t;
    EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+1", t), refused(403)), Severity::must, "B3")) << t;
  }
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2", 2600), refused(403)), Severity::must, "T1"));
  auto ended = s;  // another caller got through within the margin: the tag has ended
  ended.fine(ops::call("1", "1", "+2", 2450), ok(kConnected));
  EXPECT_TRUE(has(ended.judge(ops::call("1", "1", "+3", 2460), refused(403)), Severity::must, "T1"));
  auto held = s;  // refused within the margin: the lock still holds
  held.fine(ops::call("1", "1", "+2", 2450), refused(403));
  EXPECT_TRUE(held.judge(ops::call("1", "1", "+3", 2460), refused(403)).empty());
  EXPECT_TRUE(has(held.judge(ops::call("1", "1", "+1", 2460), refused(403)), Severity::must, "B3"));
}

TEST(ModelExpiry, AnExpiredTagFreesItsAliasForTheNextTag) {
  auto s = fresh({.minute_ms = 1000, .margin_ms = 0});
  s.fine(ops::tag("1", "short", 1, 0), ok(alias("1", "short")));  // ends at 1000
  for (const std::string id : {"2", "3", "4"}) s.fine(ops::tag("1", "long", 5, 10), ok(alias(id, "long")));
  EXPECT_FALSE(predict(s.model, ops::tag("1", "t", 5, 999), s.profile).status.ok);
  EXPECT_EQ(s.picks("1", 1000), V{"1"});
  s.fine(ops::tag("1", "again", 5, 1000), ok(alias("1", "again")));
}

// ---- binding ----

TEST(ModelBinding, TheFirstCallerIsBoundUntilTheTagEnds) {
  auto s = fresh();
  s.fine(ops::tag("1", "x", 5), ok(alias("1", "x")));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+1"), refused(403)), Severity::must, "B1"));
  s.fine(ops::call("1", "1", "+1"), ok(kConnected));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2"), ok(kConnected)), Severity::must, "B3"));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2"), refused(404)), Severity::should, "B3"));
  s.fine(ops::call("1", "1", "+2"), refused(403));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+1"), refused(403)), Severity::must, "B3"));
  s.fine(ops::call("1", "1", "+1"), ok(kConnected));
  s.fine(ops::list_aliases("1"), ok(aliases({alias("1", "x", "+1"), alias("2"), alias("3"), alias("4")})));
  auto d = s.judge(ops::list_aliases("1"), ok(aliases({alias("1", "x", "+2"), alias("2"), alias("3"), alias("4")})));
  EXPECT_TRUE(has(d, Severity::should, "B2")) << texts(d);
  // Deleting the tag ends the lock (DESIGN.md §3, a SHOULD); a new tag takes a new first caller.
  s.fine(ops::untag("1", "1"), ok(alias("1")));
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+2"), refused(403)), Severity::should, "T1"));
  s.fine(ops::call("1", "1", "+2"), ok(kConnected));
  s.fine(ops::tag("1", "y", 5), ok(alias("2", "y")));
  s.profile.statuses.call_refused = {423};
  s.fine(ops::call("1", "2", "+2"), ok(kConnected));
  s.fine(ops::call("1", "2", "+1"), refused(423));
}

TEST(ModelBinding, AliasesBindIndependentlyAndUnknownAliasesAreRefused) {
  auto s = fresh();
  s.fine(ops::tag("1", "same", 5), ok(alias("1", "same")));
  s.fine(ops::tag("1", "same", 5), ok(alias("2", "same")));
  s.fine(ops::call("1", "1", "+1"), ok(kConnected));
  s.fine(ops::call("1", "2", "+2"), ok(kConnected));
  s.fine(ops::call("1", "1", "+2"), refused(403));
  s.fine(ops::call("1", "2", "+1"), refused(403));
  EXPECT_TRUE(has(s.judge(ops::call("1", "99", "+1"), ok(kConnected)), Severity::must, "X1"));
  s.fine(ops::call("1", "99", "+1"), refused(404));
  // An alias never tagged takes anyone's call (DESIGN.md §3, a SHOULD).
  EXPECT_TRUE(has(s.judge(ops::call("1", "3", "+1"), refused(403)), Severity::should, "B1"));
  s.profile.dialect.call_hook.enabled = false;  // the target has none: nothing predicted
  EXPECT_TRUE(s.judge(ops::call("1", "1", "+2"), ok(kConnected)).empty());
  EXPECT_TRUE(s.judge(ops::call("1", "1", "+2"), refused(404)).empty());
}

// ---- a live target: starting from unknown ----

Session live() {
  Claims claims;
  claims.channels = {"1"};
  claims.agents = {"101"};
  claims.key_prefixes = {"crh-probe-"};
  return {Model::unknown({}, claims), {}, {}};
}

TEST(ModelUnknownStart, PredictsOnlyWhatIsDeterminedAndLearnsByReading) {
  auto s = live();
  EXPECT_TRUE(s.judge(ops::get_agent("999"), ok(agent("999", "x"))).empty());
  EXPECT_TRUE(s.judge(ops::get_agent("999"), refused(404)).empty());
  s.fine(ops::list_agents(), ok(R"({"agents":[)" + agent("101", "available") + "," + agent("102", "snoozed") + "]}"));
  EXPECT_TRUE(has(s.judge(ops::get_agent("999"), ok(agent("999", "x"))), Severity::must, "E2"));
  s.fine(ops::get_agent("101"), ok(agent("101", "available")));
  EXPECT_TRUE(has(s.judge(ops::get_agent("101"), ok(agent("101", "snoozed"))), Severity::should, "E2"));
  EXPECT_TRUE(s.judge(ops::get_agent("102"), ok(agent("102", "available"))).empty());  // not the run's agent
  // Keys: the run's are learned; others may change under it.
  EXPECT_TRUE(s.judge(ops::db_get("crh-probe-a"), refused(404)).empty());
  s.fine(ops::db_get("crh-probe-a"), refused(404));
  EXPECT_TRUE(has(s.judge(ops::db_get("crh-probe-a"), ok(R"({"value":"v"})")), Severity::must, "E5"));
  s.fine(ops::db_get("shared"), ok(R"({"value":"v"})"));
  EXPECT_TRUE(s.judge(ops::db_get("shared"), ok(R"({"value":"w"})")).empty());
  EXPECT_TRUE(s.judge(ops::db_get("shared"), refused(404)).empty());
}

TEST(ModelUnknownStart, TheAliasListTeachesTagsAndBindingsAndOwnUsesFixTheOrder) {
  auto s = live();
  EXPECT_TRUE(s.judge(ops::tag("1", "t", 5), refused(409)).empty());  // nothing known of the channel
  s.fine(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2", "theirs", "+9"), alias("3")})));
  // Alias 2's tag came from elsewhere: its expiry is unknown, so it may be free.
  EXPECT_EQ(s.picks("1"), (V{"1", "2", "3"}));
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+9"), ok(kConnected)).empty());
  EXPECT_TRUE(has(s.judge(ops::call("1", "2", "+9"), refused(403)), Severity::must, "B3"));
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+1"), refused(403)).empty());
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+1"), ok(kConnected)).empty());
  s.fine(ops::untag("1", "2"), ok(alias("2")));
  s.fine(ops::tag("1", "t", 5), ok(alias("3", "t")));
  s.fine(ops::untag("1", "3"), ok(alias("3")));
  EXPECT_EQ(s.picks("1"), (V{"1", "2"}));
  auto d = s.judge(ops::tag("1", "t", 5), ok(alias("3", "t")));
  EXPECT_TRUE(has(d, Severity::must, "R2")) << texts(d);
  s.fine(ops::tag("1", "t", 5), ok(alias("1", "t")));
  s.fine(ops::untag("1", "1"), ok(alias("1")));
  EXPECT_EQ(s.picks("1"), V{"2"});
}

// Uses made before the list is read (its GET was throttled, say) still date
// the aliases it then shows: a call to an alias not yet seen may be a use,
// and a tag whose pick is unknown may have used any alias not yet seen. (Found by
// exploration behind `crh serve --throttle-every 4`: it failed R2 on a
// correct service that took alias 1, used before alias 2's unseen call.)
TEST(ModelUnknownStart, UsesBeforeTheListIsReadDateTheAliasesItShows) {
  auto s = live();
  s.fine(ops::tag("1", "t", 5), ok(alias("1", "t")));
  s.fine(ops::untag("1", "1"), ok(alias("1")));
  s.fine(ops::call("1", "2", "+1"), ok(kConnected));  // alias 2: not yet seen
  s.fine(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2"), alias("3")})));
  EXPECT_EQ(s.picks("1"), (V{"2", "3"}));  // 3 never used by the model, 2 only called: maybe never used
  s.fine(ops::tag("1", "t", 5), ok(alias("3", "t")));
  s.fine(ops::untag("1", "3"), ok(alias("3")));
  EXPECT_EQ(s.picks("1"), (V{"1", "2"}));  // 1 (use #1) or 2 (its call #2, or never); not 3 (#3)
  auto d = s.judge(ops::tag("1", "t", 5), ok(alias("3", "t")));
  EXPECT_TRUE(has(d, Severity::must, "R2")) << texts(d);

  auto u = live();
  u.fine(ops::call("1", "1", "+1"), ok(kConnected));                 // #1
  EXPECT_TRUE(u.send(ops::tag("1", "t", 5), ObservedAnswer::none()).empty());  // #2: 1, or an alias not seen
  u.fine(ops::list_aliases("1"), ok(aliases({alias("1"), alias("2")})));
  EXPECT_EQ(u.picks("1"), (V{"1", "2"}));  // 2 may have been used at #2, after 1's call
  // A call that cannot have been a use (the alias is not there) adds nothing.
  auto w = live();
  w.fine(ops::call("1", "9", "+1"), refused(404));
  w.fine(ops::list_aliases("1"), ok(aliases({alias("1")})));
  EXPECT_EQ(w.picks("1"), V{"1"});
}

TEST(ModelUnknownStart, AChannelNotTheRunsIsReadButNeverPredicted) {
  auto s = live();
  s.fine(ops::list_aliases("2"), ok(aliases({alias("1"), alias("2")})));
  EXPECT_TRUE(s.judge(ops::tag("2", "t", 5), refused(409)).empty());
  s.fine(ops::tag("2", "t", 5), ok(alias("1", "t")));
  EXPECT_TRUE(s.judge(ops::tag("2", "t", 5), ok(alias("1", "t"))).empty());
  EXPECT_TRUE(s.judge(ops::call("2", "1", "+1"), refused(403)).empty());
  EXPECT_TRUE(has(s.judge(ops::call("2", "9", "+1"), ok(kConnected)), Severity::must, "X1"));  // not listed
}

// ---- unknown outcomes, server errors, snapshots ----

TEST(ModelOutcomes, NoAnswerOrA5xxLeavesTheEffectUnknown) {
  auto s = fresh();
  EXPECT_TRUE(s.send(ops::tag("7", "t", 5), ObservedAnswer::none()).empty());
  EXPECT_TRUE(s.judge(ops::tag("7", "t", 5), refused(409)).empty());  // a and b may both be tagged now
  EXPECT_TRUE(s.judge(ops::call("7", "a", "+1"), refused(403)).empty());
  s.fine(ops::list_aliases("7"), ok(aliases({alias("a", "t"), alias("b")})));
  EXPECT_EQ(s.picks("7"), (V{"a", "b"}));  // a's tag may have ended: it was never seen begin
  auto d = s.send(ops::db_set("greeting", "new"), refused(503));
  EXPECT_TRUE(has(d, Severity::must, "X1")) << texts(d);
  EXPECT_TRUE(s.judge(ops::db_get("greeting"), ok(R"({"value":"hello"})")).empty());
  EXPECT_TRUE(s.judge(ops::db_get("greeting"), ok(R"({"value":"new"})")).empty());
}

// A call without an answer may have bound its caller: the lock is then free
// or that caller's, so the same caller must still get through, another may
// be refused, and a refusal of another proves who holds it.
TEST(ModelOutcomes, AnUnansweredCallLeavesTheLockFreeOrItsCallers) {
  auto s = fresh();
  s.fine(ops::tag("1", "x", 5), ok(alias("1", "x")));
  EXPECT_TRUE(s.send(ops::call("1", "1", "+1"), ObservedAnswer::none()).empty());
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+1"), refused(403)), Severity::must, "B3"));
  EXPECT_TRUE(s.judge(ops::call("1", "1", "+2"), refused(403)).empty());
  EXPECT_TRUE(s.judge(ops::call("1", "1", "+2"), ok(kConnected)).empty());
  s.fine(ops::call("1", "1", "+2"), refused(403));  // so +1 holds it
  EXPECT_TRUE(has(s.judge(ops::call("1", "1", "+3"), ok(kConnected)), Severity::must, "B3"));
  s.fine(ops::call("1", "1", "+1"), ok(kConnected));
  // Two unanswered callers: either may hold it, so neither is sure to get through.
  s.fine(ops::tag("1", "y", 5), ok(alias("2", "y")));
  EXPECT_TRUE(s.send(ops::call("1", "2", "+1"), ObservedAnswer::none()).empty());
  EXPECT_TRUE(s.send(ops::call("1", "2", "+2"), ObservedAnswer::none()).empty());
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+1"), refused(403)).empty());
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+2"), refused(403)).empty());
}

// A 429 is "not now" (spec 8: rate limits, not shown): judged by no rule, no
// effect; a profile that names 429 for an answer keeps its meaning.
TEST(ModelOutcomes, A429IsNotNowUnlessTheProfileNamesIt) {
  auto s = fresh();
  const ObservedAnswer not_now{true, 429, R"({"msg":"slow down"})"};
  s.fine(ops::tag("1", "x", 5), ok(alias("1", "x")));
  s.fine(ops::call("1", "1", "+1"), not_now);  // the lock is free: a refusal would break B1
  s.fine(ops::call("1", "1", "+2"), ok(kConnected));  // so +1 did not bind
  s.fine(ops::db_get("greeting"), not_now);
  s.fine(ops::db_set("greeting", "new"), not_now);
  s.fine(ops::db_get("greeting"), ok(R"({"value":"hello"})"));  // the write took no effect
  s.profile.statuses.all_tagged = {429};  // now a refusal: of a free lock, it breaks B1
  s.fine(ops::tag("1", "y", 5), ok(alias("2", "y")));
  EXPECT_TRUE(has(s.judge(ops::call("1", "2", "+1"), not_now), Severity::must, "B1"));
}

TEST(ModelSnapshot, ACopyIsIndependentAndReplaysTheSame) {
  auto s = fresh();
  const Model snapshot = s.model;
  const std::vector<std::pair<Operation, ObservedAnswer>> steps{
      {ops::tag("1", "t", 5), ok(alias("2", "t"))},
      {ops::call("1", "2", "+1"), ok(kConnected)},
      {ops::snooze("101"), ok(agent("101", "snoozed"))},
      {ops::db_set("k", "v"), ok(R"({"key":"k","value":"v"})")},
  };
  for (const auto& [op, a] : steps) s.fine(op, a);
  Session copy{snapshot, {}, {}};
  EXPECT_EQ(copy.picks("1"), (V{"1", "2", "3", "4"}));  // untouched by the original's steps
  EXPECT_TRUE(copy.judge(ops::db_get("k"), refused(404)).empty());
  // In the copy alias 2 was never tagged: refusing a caller is a SHOULD; in the original it is bound to +1.
  EXPECT_TRUE(has(copy.judge(ops::call("1", "2", "+2"), refused(403)), Severity::should, "B1"));
  EXPECT_TRUE(s.judge(ops::call("1", "2", "+2"), refused(403)).empty());
  for (const auto& [op, a] : steps) copy.fine(op, a);
  EXPECT_EQ(copy.picks("1"), s.picks("1"));
  for (const auto& op : {ops::call("1", "2", "+2"), ops::get_agent("101"), ops::db_get("k"), ops::list_aliases("1")}) {
    const auto a = predict(s.model, op, s.profile), b = predict(copy.model, op, copy.profile);
    EXPECT_EQ(a.status.ok, b.status.ok);
    EXPECT_EQ(a.status.statuses, b.status.statuses);
    ASSERT_EQ(a.fields.size(), b.fields.size());
    for (std::size_t i = 0; i < a.fields.size(); ++i) EXPECT_EQ(a.fields[i].values, b.fields[i].values);
  }
}

// The spec shows no type or size of a value (spec 2, 8): refusing an empty,
// a long or a control-character value is a SHOULD; a plain one must be taken.
TEST(ModelSilence, AWriteOfAnEdgeValueMayBeRefused) {
  auto s = fresh();
  for (std::string v : {std::string(), std::string(256, 'x'), std::string("line\nbreak")}) {
    auto d = s.judge(ops::db_set("k", v), refused(413));
    EXPECT_FALSE(has(d, Severity::must, "E6")) << texts(d);
    EXPECT_TRUE(has(d, Severity::should, "E6")) << texts(d);
  }
  EXPECT_TRUE(has(s.judge(ops::db_set("k", std::string(255, 'x')), refused(413)), Severity::must, "E6"));
}

// ---- every rule the model judges breaks on a wrong answer ----

TEST(ModelDivergences, EachRuleTheModelJudgesIsBrokenByAWrongAnswer) {
  auto s = fresh({.minute_ms = 1000, .margin_ms = 0});
  auto wrong = [&](const Operation& op, const ObservedAnswer& a, std::string_view rule) {
    auto d = s.judge(op, a);
    EXPECT_TRUE(has(d, Severity::must, rule)) << describe(op) << " should break " << rule << ":\n" << texts(d);
    for (const auto& x : d) {
      EXPECT_FALSE(x.expected.empty());
      EXPECT_FALSE(x.got.empty());
      if (x.rule == rule) {
        EXPECT_NE(x.text.find("(" + std::string(rule)), std::string::npos) << x.text;
      }
    }
  };
  s.fine(ops::tag("1", "x", 2, 0), ok(alias("1", "x")));
  s.fine(ops::call("1", "1", "+1", 10), ok(kConnected));
  auto no_key = ops::get_agent("101");
  no_key.auth = Auth::missing;
  auto bad_key = ops::get_agent("101");
  bad_key.auth = Auth::wrong;
  wrong(ops::get_agent("101"), ok("<html>"), "C1");
  wrong(ops::list_agents(), ok(R"({"agents":[]})"), "E1");
  wrong(ops::get_agent("nope"), ok(agent("nope", "available")), "E2");
  wrong(ops::snooze("nope"), ok(agent("nope", "snoozed")), "E3");
  wrong(ops::wake("103"), refused(409), "E4");
  wrong(ops::db_get("greeting"), ok(R"({"value":"bye"})"), "E5");
  wrong(ops::db_set("k", "v"), refused(409), "E6");
  wrong(ops::list_aliases("1"), ok(aliases({alias("1", "x", "+1")})), "E7");
  wrong(ops::tag("1", "y", 5), ok(alias("2", "z")), "E8");
  wrong(ops::untag("1", "1"), refused(404), "E9");
  wrong(ops::snooze("101"), ok(agent("102", "snoozed")), "R1");
  wrong(ops::tag("1", "y", 5), ok(alias("1", "y")), "T1");
  wrong(ops::untag("1", "1"), ok(alias("2")), "R4");
  wrong(no_key, ok(agent("101", "available")), "R5");
  wrong(bad_key, ok(agent("101", "available")), "A2");
  wrong(ops::call("1", "1", "+2", 1999), ok(kConnected), "B3");
  wrong(ops::call("1", "1", "+2", 2000), refused(403), "T1");
  wrong(ops::db_get("greeting"), refused(500), "X1");
  auto r3 = ops::tag("1", "y", 5);
  r3.minutes.reset();
  wrong(r3, ok(alias("2", "y")), "R3");
  s.fine(ops::tag("1", "y", 5, 30), ok(alias("2", "y")));
  wrong(ops::call("1", "2", "+1", 40), refused(403), "B1");
  wrong(ops::tag("1", "z", 5, 50), ok(alias("2", "z")), "T1");
  s.fine(ops::untag("1", "2", 60), ok(alias("2")));
  wrong(ops::tag("1", "z", 5, 70), ok(alias("2", "z")), "R2");
}

TEST(ModelDescribe, NamesTheRequestAndItsTime) {
  EXPECT_EQ(describe(ops::get_agent("101", 1500)), "GET /api/v1/local-agents/101 at 1500 ms");
  auto op = ops::tag("1", "x", 5, 0);
  op.auth = Auth::missing;
  EXPECT_EQ(describe(op),
            "POST /channels/1/alias-numbers/tag with tag=\"x\", minutes=\"5\" without the Apikey header at 0 ms");
}

}  // namespace
}  // namespace crh::oracle
