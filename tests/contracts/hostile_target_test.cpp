// Whole runs against targets that misbehave on purpose: every run ends, in
// bounded time, with failing checks that say why (or exit 3 for silence),
// never a crash, a hang or a pass.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "contracts/runner.hpp"
#include "support/naming.hpp"
#include "support/scripted_server.hpp"

namespace crh::contracts::hostile_target_test {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using test::ScriptedServer;

constexpr const char* kKey = "hostile-key-0b5d";

// `timeout`: short, since most of these targets answer at once or never; a
// bulky answer gets longer, so its size, not a sanitized build's slowness on
// a loaded machine, ends the read.
RunReport run_against(const ScriptedServer& server, std::vector<std::string> suites = {},
                      std::vector<std::string> checks = {}, std::chrono::milliseconds timeout = 300ms) {
  RunOptions o;
  std::string why;
  o.target.base = *core::parse_base_url("http://127.0.0.1:" + std::to_string(server.port()), why);
  o.target.api_key = kKey;
  o.client.timeout = timeout;
  o.suites = std::move(suites);
  o.checks = std::move(checks);
  return run_contract(o);
}

std::string answer(std::string_view status, std::string_view content_type, std::string_view body) {
  return "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: " + std::string(content_type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + std::string(body);
}

const CheckResult& result(const RunReport& r, std::string_view id) {
  for (const auto& c : r.results)
    if (c.id == id) return c;
  throw std::runtime_error("no result for " + std::string(id));
}

struct Hostile {
  const char* name;
  ScriptedServer::Behaviour behaviour;
  const char* failing_check;  // a check that must fail
  const char* message_part;   // what its message must say
  bool bulky = false;         // megabytes per answer: run that one check only (sanitizers are slow)
};

const std::vector<Hostile> kHostile{
    {"garbage",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, "\x01\x02 not http at all\r\n\r\n"); },
     "endpoints.agents-list", "expected an HTTP/1.1 answer"},
    {"text-plain-200",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, answer("200 OK", "text/plain", "hello")); },
     "endpoints.agents-list", "expected a JSON body"},
    {"empty-200",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, answer("200 OK", "application/json", "")); },
     "endpoints.agents-list", "the body is empty"},
    {"invalid-json",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, answer("200 OK", "application/json", "{\"agents\": [")); },
     "endpoints.agents-list", "not JSON"},
    {"msg-a-number",
     [](int fd, const auto&) { ScriptedServer::write_all(fd, answer("400 Bad Request", "application/json", "{\"msg\": 42}")); },
     "auth.missing-key.agents-list", "msg to be a string"},
    {"server-errors",
     [](int fd, const auto&) {
       ScriptedServer::write_all(fd, answer("500 Internal Server Error", "application/json", "{\"msg\":\"boom\"}"));
     },
     "errors.every-error-answer", "a server error is never a contract answer"},
    {"two-megabyte-body",
     [](int fd, const auto&) {
       ScriptedServer::write_all(fd, answer("200 OK", "application/json", "{\"agents\": \"" + std::string(2u << 20, 'a') + "\"}"));
     },
     "endpoints.agents-list", "expected a list of agents", true},
    {"endless-chunked-body",
     [](int fd, const std::atomic<bool>& stopping) {
       ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
       const std::string chunk = "4000\r\n" + std::string(0x4000, ' ') + "\r\n";
       for (int i = 0; i < 2000 && !stopping; ++i)
         if (!ScriptedServer::write_all(fd, chunk)) break;
     },
     "endpoints.agents-list", "expected an HTTP/1.1 answer", true},
};

void PrintTo(const Hostile& h, std::ostream* os) { *os << h.name; }

class HostileTarget : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileTarget, RunEndsWithAFailureThatSaysWhy) {
  ScriptedServer server(GetParam().behaviour);
  const auto start = std::chrono::steady_clock::now();
  const auto& h = GetParam();
  auto report =
      h.bulky ? run_against(server, {}, {h.failing_check}, 10s) : run_against(server, {"endpoints", "auth", "errors"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
  EXPECT_EQ(report.exit_code, 1);
  const auto& c = result(report, GetParam().failing_check);
  EXPECT_EQ(c.outcome, Outcome::fail) << c.message;
  EXPECT_NE(c.message.find(GetParam().message_part), std::string::npos) << c.message;
  EXPECT_FALSE(c.evidence.empty());
  // Whatever came, the document serializes as valid UTF-8 JSON.
  RunOptions o;
  auto text = json::serialize(result_document(report, o, false));
  EXPECT_NO_THROW(json::parse(text));
}

INSTANTIATE_TEST_SUITE_P(Each, HostileTarget, ::testing::ValuesIn(kHostile),
                         [](const auto& info) { return test::camel_case(info.param.name); });

// C2 rests on spec 7.1 ("Success is HTTP status 200") and 7.2 (an error has
// a status that is not 200): a 2xx other than 200 breaks it; a 3xx error
// with a JSON msg does not (no sentence says errors are 4xx).
TEST(EveryAnswer, A2xxOtherThan200BreaksC2AndA3xxErrorWithAMsgDoesNot) {
  ScriptedServer no_content([](int fd, const auto&) {
    ScriptedServer::write_all(fd, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
  });
  const auto no_content_run = run_against(no_content, {"endpoints"});
  const auto& broken = result(no_content_run, "endpoints.every-answer");
  EXPECT_EQ(broken.outcome, Outcome::fail) << broken.message;
  EXPECT_NE(broken.message.find("HTTP 204"), std::string::npos) << broken.message;

  ScriptedServer see_other([](int fd, const auto&) {
    ScriptedServer::write_all(fd, answer("303 See Other", "application/json", "{\"msg\":\"not here\"}"));
  });
  const auto report = run_against(see_other, {"endpoints"});
  const auto& judged = result(report, "endpoints.every-answer");
  EXPECT_EQ(judged.outcome, Outcome::pass) << judged.message;
  EXPECT_EQ(report.exit_code, 1) << "the checks that expect a 200 still fail";
}

TEST(HostileTargetKey, AnEchoedKeyIsRedactedFromEveryMessageAndAnswer) {
  ScriptedServer server([](int fd, const auto&) {
    ScriptedServer::write_all(fd, answer("401 Unauthorized", "application/json",
                                         std::string("{\"msg\":\"bad key ") + kKey + "\"}"));
  });
  auto report = run_against(server, {"endpoints"});
  RunOptions o;
  o.target.api_key = kKey;
  auto text = json::serialize(result_document(report, o, false));
  EXPECT_EQ(text.find(kKey), std::string::npos);
  EXPECT_NE(text.find("bad key $CRH_API_KEY"), std::string::npos);
}

TEST(HostileTargetSilence, AStalledTargetIsExit3WithinFiveSeconds) {
  ScriptedServer server([](int, const std::atomic<bool>& stopping) {
    for (int i = 0; i < 300 && !stopping; ++i) std::this_thread::sleep_for(20ms);
  });
  RunOptions o;
  std::string why;
  o.target.base = *core::parse_base_url("http://127.0.0.1:" + std::to_string(server.port()), why);
  o.target.api_key = kKey;  // default 5 s exchange timeout: the first contact is capped at 3 s
  const auto start = std::chrono::steady_clock::now();
  auto report = run_contract(o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(report.exit_code, 3);
  ASSERT_TRUE(report.preflight_stop);
  EXPECT_NE(report.preflight_stop->line().find("timeout"), std::string::npos) << report.preflight_stop->line();
}

}  // namespace
}  // namespace crh::contracts::hostile_target_test
