// Exploration's judge on scripted answers of correct services that answer
// where the spec is silent otherwise than the reference does (issue 35): a
// trailing slash taken for a key of its own, a field written only once it has
// a value, a narrower range of minutes. None may be a MUST divergence; the
// same judge still fails what the spec rules out.
#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "contracts/explore/explore.hpp"

namespace crh::contracts {
namespace {
using explore::Answer;
using explore::Sequence;
using explore::Step;

// Answers each operation from `script` (status, body), on a clock that
// advances 1 ms per request.
class ScriptedWire : public explore::Wire {
 public:
  using Script = std::function<std::pair<unsigned, std::string>(const Step&, const oracle::Operation&)>;
  explicit ScriptedWire(Script script) : script_(std::move(script)) {}
  std::int64_t now_ms() override { return now_; }
  void sleep_until_ms(std::int64_t at) override { now_ = std::max(now_, at); }
  std::string_view api_key() const override { return "judge-test-key"; }
  std::vector<Answer> send(const Step& step, const std::vector<oracle::Operation>& ops) override {
    std::vector<Answer> out;
    for (const auto& op : ops) {
      auto [status, body] = script_(step, op);
      Answer a;
      a.observed = {true, status, body};
      a.content_type = "application/json";
      a.described = "HTTP " + std::to_string(status) + ": " + body;
      out.push_back(std::move(a));
    }
    ++now_;
    return out;
  }

 private:
  Script script_;
  std::int64_t now_ = 0;
};

oracle::Model live_model() {
  oracle::Claims claims;
  claims.channels = {"1"};
  claims.agents = {"101"};
  claims.key_prefixes = {"crh-probe-"};
  return oracle::Model::unknown({}, claims);
}

Step step_of(oracle::Operation op, bool trailing_slash = false) {
  static std::uint32_t serial = 0;
  Step s;
  s.serial = ++serial;
  s.op = std::move(op);
  s.trailing_slash = trailing_slash;
  return s;
}

std::string first_must(const explore::Replay& r) {
  return r.failure ? std::string(r.failure->rule()) + ": " + r.failure->divergences.front().text : "";
}

// A service that takes "crh-probe-x/" for a key of its own: the write with a
// trailing slash answers 200 and leaves crh-probe-x as it was.
TEST(ExploreJudge, ATrailingSlashWriteIsNoEvidenceOfWhichKeyItTouched) {
  std::map<std::string, std::string> db;
  ScriptedWire wire([&](const Step& s, const oracle::Operation& op) -> std::pair<unsigned, std::string> {
    const std::string key = op.id + (s.trailing_slash ? "/" : "");
    if (op.endpoint == core::api::Operation::db_set) db[key] = *op.value;
    if (!db.contains(key)) return {404, R"({"msg":"no such key"})"};
    return {200, R"({"name":")" + key + R"(","value":")" + db[key] + R"("})"};
  });
  const Sequence seq{step_of(oracle::ops::db_set("crh-probe-x", "old")),
                     step_of(oracle::ops::db_set("crh-probe-x", "new"), true),
                     step_of(oracle::ops::db_get("crh-probe-x")), step_of(oracle::ops::db_get("crh-probe-x"), true)};
  const auto r = explore::replay(seq, live_model(), core::Profile{}, wire);
  EXPECT_FALSE(r.failure) << first_must(r);
}

// The same judge still reads what a trailing slash cannot excuse: a 5xx.
TEST(ExploreJudge, AServerErrorOnATrailingSlashStillFails) {
  ScriptedWire wire([](const Step& s, const oracle::Operation&) -> std::pair<unsigned, std::string> {
    if (s.trailing_slash) return {500, R"({"msg":"boom"})"};
    return {200, R"({"key":"crh-probe-x","value":"v"})"};
  });
  const auto r = explore::replay({step_of(oracle::ops::db_get("crh-probe-x"), true)}, live_model(),
                                 core::Profile{}, wire);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->rule(), "X1");
}

// An agent whose lastChange is written only once it changed: absent from the
// GET before the snooze, present in the snooze's answer and every GET after.
// The fields come in another order in the snooze's answer (objects are unordered).
std::pair<unsigned, std::string> lazy_agent(const oracle::Operation& op, bool& changed, bool wrong_type) {
  using E = core::api::Operation;
  if (op.endpoint == E::snooze || op.endpoint == E::wake) {
    changed = true;
    const std::string id = wrong_type ? "101" : "\"101\"";
    return {200, R"({"lastChange":"2026-11-27T05:00:00Z","state":")" +
                     std::string(op.endpoint == E::snooze ? "snoozed" : "available") + R"(","id":)" + id + "}"};
  }
  if (op.endpoint == E::list_agents) return {200, R"([{"id":"101","state":"available"}])"};
  return {200, changed ? R"({"id":"101","state":"snoozed","lastChange":"2026-11-27T05:00:00Z"})"
                       : R"({"id":"101","state":"available"})"};
}

TEST(ExploreJudge, SnoozeIsComparedWithAGetInTheSameState) {
  bool changed = false;
  ScriptedWire wire([&](const Step&, const oracle::Operation& op) { return lazy_agent(op, changed, false); });
  const Sequence seq{step_of(oracle::ops::list_agents()), step_of(oracle::ops::get_agent("101")),
                     step_of(oracle::ops::snooze("101")), step_of(oracle::ops::get_agent("101"))};
  const auto r = explore::replay(seq, live_model(), core::Profile{}, wire);
  EXPECT_FALSE(r.failure) << first_must(r);
}

TEST(ExploreJudge, ASnoozeAnswerOfAnotherFormStillBreaksR1) {
  bool changed = false;
  ScriptedWire wire([&](const Step&, const oracle::Operation& op) { return lazy_agent(op, changed, true); });
  const Sequence seq{step_of(oracle::ops::list_agents()), step_of(oracle::ops::snooze("101")),
                     step_of(oracle::ops::get_agent("101"))};
  const auto r = explore::replay(seq, live_model(), core::Profile{}, wire);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->rule(), "R1");
  EXPECT_NE(r.failure->divergences.front().text.find("id (string, then number)"), std::string::npos)
      << r.failure->divergences.front().text;
}

// A service that takes minutes 1..60 only. Without a profile range, that it
// takes 1000 rests on DESIGN.md §3's default alone: a SHOULD naming the
// profile's field. With the profile's range, the refusal breaks the prediction.
TEST(ExploreJudge, AMinutesRefusalInTheDefaultRangeIsAShouldUnlessTheProfileGivesTheRange) {
  ScriptedWire wire([](const Step&, const oracle::Operation& op) -> std::pair<unsigned, std::string> {
    if (op.endpoint == core::api::Operation::list_aliases)
      return {200, R"({"aliases":[{"id":"1","tag":null},{"id":"2","tag":null}]})"};
    return {400, R"({"msg":"minutes must be 1..60"})"};
  });
  const Sequence seq{step_of(oracle::ops::list_aliases("1")), step_of(oracle::ops::tag("1", "crh-probe-a", 1000))};
  const auto silent = explore::replay(seq, live_model(), core::Profile{}, wire);
  EXPECT_FALSE(silent.failure) << first_must(silent);
  ASSERT_FALSE(silent.should.empty());
  EXPECT_NE(silent.should.front().second.text.find("\"minutes\""), std::string::npos)
      << silent.should.front().second.text;

  // A refusal as if the channel were full (409) is not the minutes' refusal:
  // with a free alias, it breaks E8 whatever the profile says of minutes.
  ScriptedWire full([](const Step&, const oracle::Operation& op) -> std::pair<unsigned, std::string> {
    if (op.endpoint == core::api::Operation::list_aliases)
      return {200, R"({"aliases":[{"id":"1","tag":null},{"id":"2","tag":null}]})"};
    return {409, R"({"msg":"every alias is tagged"})"};
  });
  const auto refused_as_full = explore::replay(seq, live_model(), core::Profile{}, full);
  ASSERT_TRUE(refused_as_full.failure);
  EXPECT_EQ(refused_as_full.failure->rule(), "E8") << first_must(refused_as_full);

  // Minutes the target took once it is then expected to take again.
  bool took = false;
  ScriptedWire learning([&](const Step&, const oracle::Operation& op) -> std::pair<unsigned, std::string> {
    if (op.endpoint == core::api::Operation::list_aliases)
      return {200, R"({"aliases":[{"id":"1","tag":null},{"id":"2","tag":null}]})"};
    if (op.endpoint == core::api::Operation::untag) return {200, R"({"id":"1","tag":null})"};
    if (std::exchange(took, true)) return {409, R"({"msg":"no free alias"})"};
    return {200, R"({"id":"1","tag":"crh-probe-a"})"};
  });
  const Sequence again{step_of(oracle::ops::list_aliases("1")), step_of(oracle::ops::tag("1", "crh-probe-a", 1000)),
                       step_of(oracle::ops::untag("1", "1")), step_of(oracle::ops::tag("1", "crh-probe-a", 1000))};
  const auto learned = explore::replay(again, live_model(), core::Profile{}, learning);
  ASSERT_TRUE(learned.failure);
  EXPECT_EQ(learned.failure->rule(), "E8") << first_must(learned);

  core::Profile given;
  given.dialect.minutes.given = true;  // 1..1440, said by the profile
  const auto r = explore::replay(seq, live_model(), given, wire);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->rule(), "E8");
}

}  // namespace
}  // namespace crh::contracts
