// Putting back what a run changed, against an in-memory target that can
// break the ways a real one does: a PUT answer that is not the agent (R1), an
// agent no operation moves, a database that refuses or forgets a write.
#include "core/leave_as_found.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace crh::core {
namespace {

struct FakeTarget {
  std::map<std::string, std::string> states{{"101", "snoozed"}};
  std::map<std::string, std::string> values;
  bool puts_answer_garbage = false;  // snooze/wake answer a body that is not the agent (breaks R1)
  bool agents_stuck = false;         // snooze/wake answer 200 and change nothing
  bool refuses_writes = false;
  bool forgets_writes = false;
  std::vector<std::string> sent;  // "METHOD target", in order

  Exchange answer(unsigned status, std::string body, HttpRequest r) {
    Exchange x{std::move(r)};
    x.response = HttpResponse{status, {{"Content-Type", "application/json"}}, std::move(body)};
    return x;
  }

  Exchange operator()(HttpRequest r) {
    sent.push_back(r.method + " " + r.target);
    const std::string agents = "/api/v1/local-agents/";
    if (r.target.rfind(agents, 0) == 0) {
      std::string rest = r.target.substr(agents.size());
      const auto slash = rest.find('/');
      const std::string id = rest.substr(0, slash);
      if (slash != std::string::npos && !agents_stuck)
        states[id] = rest.substr(slash + 1) == "wake" ? "available" : "snoozed";
      if (slash != std::string::npos && puts_answer_garbage) return answer(200, "ok", std::move(r));
      return answer(200, R"({"id":")" + id + R"(","state":")" + states[id] + R"("})", std::move(r));
    }
    const std::string db = "/database/";  // spec 4: the database is outside /api/v1
    if (r.target.rfind(db, 0) == 0) {
      const std::string key = r.target.substr(db.size());
      if (r.method == "POST") {
        if (refuses_writes) return answer(400, R"({"msg":"no"})", std::move(r));
        const auto at = r.body.find("value=");
        if (!forgets_writes) values[key] = at == std::string::npos ? "" : r.body.substr(at + 6);
        return answer(200, R"({"value":")" + values[key] + R"("})", std::move(r));
      }
      return answer(200, R"({"value":")" + values[key] + R"("})", std::move(r));
    }
    return answer(404, R"({"msg":"no route"})", std::move(r));
  }
};

SendRequest through(FakeTarget& t) {
  return [&t](HttpRequest r) { return t(std::move(r)); };
}

TEST(PutAgentBack, WakesAndStopsOnceAReadShowsTheStart) {
  FakeTarget t;
  EXPECT_EQ(put_agent_back(through(t), Target{}, "101", R"("available")"), std::nullopt);
  EXPECT_EQ(t.states["101"], "available");
  EXPECT_EQ(t.sent, (std::vector<std::string>{"PUT /api/v1/local-agents/101/wake", "GET /api/v1/local-agents/101"}));
}

TEST(PutAgentBack, SnoozesWhenWakingIsNotIt) {
  FakeTarget t;
  t.states["101"] = "available";
  EXPECT_EQ(put_agent_back(through(t), Target{}, "101", R"("snoozed")"), std::nullopt);
  EXPECT_EQ(t.states["101"], "snoozed");
  EXPECT_EQ(t.sent.size(), 4u);
}

TEST(PutAgentBack, ReadsTheStateWithAGetSoATargetBreakingR1StillGetsItsAgentBack) {
  FakeTarget t;
  t.puts_answer_garbage = true;
  EXPECT_EQ(put_agent_back(through(t), Target{}, "101", R"("available")"), std::nullopt);
  EXPECT_EQ(t.states["101"], "available");
}

TEST(PutAgentBack, SaysWhatItSawWhenNothingMovesTheAgent) {
  FakeTarget t;
  t.agents_stuck = true;
  const auto problem = put_agent_back(through(t), Target{}, "101", R"("available")");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find(R"(was "available" at the start and is "snoozed")"), std::string::npos) << *problem;
}

TEST(PutDatabaseValueBack, WritesTheOldValueOrTheEmptyStringAndReadsItBack) {
  FakeTarget t;
  t.values["crh-probe-k"] = "changed";
  EXPECT_EQ(put_database_value_back(through(t), Target{}, "crh-probe-k", "before"), std::nullopt);
  EXPECT_EQ(t.values["crh-probe-k"], "before");
  EXPECT_EQ(put_database_value_back(through(t), Target{}, "crh-probe-k", std::nullopt), std::nullopt);
  EXPECT_EQ(t.values["crh-probe-k"], "") << "the spec has no DELETE: a key that had no value gets the empty string";
}

TEST(PutDatabaseValueBack, NamesARefusedWriteAndAForgottenOne) {
  FakeTarget t;
  t.refuses_writes = true;
  auto problem = put_database_value_back(through(t), Target{}, "crh-probe-k", "before");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("HTTP 400"), std::string::npos) << *problem;
  t.refuses_writes = false;
  t.forgets_writes = true;
  problem = put_database_value_back(through(t), Target{}, "crh-probe-k", "before");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("a read does not show the value"), std::string::npos) << *problem;
}

}  // namespace
}  // namespace crh::core
