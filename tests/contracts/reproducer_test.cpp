// The reproducer's text: POSIX sh, the key never written, the alias a tag
// picked read from its answer. Running scripts against services is the CLI
// test's (tests/cli/reproducer_cli_test.sh).
#include "contracts/reproducer.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace crh::contracts {
namespace {

constexpr const char* kKey = "reproducer-test-key-0123456789";

core::Target target() {
  core::Target t;
  std::string why;
  t.base = *core::parse_base_url("http://127.0.0.1:18080", why);
  t.api_key = kKey;
  t.minute = std::chrono::milliseconds(1000);
  return t;
}

Evidence exchange(std::string method, std::string path, std::string body, unsigned status, std::string answer,
                  std::chrono::milliseconds at) {
  ReplayStep step;
  step.request.method = std::move(method);
  step.request.target = std::move(path);
  step.request.headers.push_back({"Apikey", kKey});
  step.request.body = std::move(body);
  step.status = status;
  step.content_type = "application/json";
  step.body = std::move(answer);
  step.at = at;
  return {"curl ...", "HTTP " + std::to_string(status), {}, step};
}

CheckResult failed_binding() {
  CheckResult r;
  r.id = "binding.first-caller-wins";
  r.outcome = Outcome::fail;
  r.findings.push_back({Severity::must, "B2", "expected 403, got 200"});
  r.evidence.push_back(exchange("POST", "/channels/1/alias-numbers/tag", "tag=t&minutes=10", 200,
                                R"({"id":"3","number":"+15550103","tag":"t"})", std::chrono::milliseconds(0)));
  r.evidence.push_back(exchange("POST", "/channels/1/alias-numbers/3/calls", "caller=%2B1", 200,
                                R"({"alias":"3","caller":"+1","connected":true})", std::chrono::milliseconds(5)));
  r.evidence.push_back(exchange("POST", "/channels/1/alias-numbers/3/calls", "caller=%2B2", 200,
                                "{\"alias\":\"3\",\"caller\":\"+2\",\"note\":\"line\nbreak\"}",
                                std::chrono::milliseconds(400)));
  r.failing_step = 2;
  return r;
}

// sh -n: the script parses under the system's sh (dash on Debian).
bool parses_under_sh(const std::string& script) {
  const std::string path = testing::TempDir() + "/reproducer_test.sh";
  std::ofstream(path) << script;
  const int status = std::system(("sh -n " + path + " 2>/dev/null").c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(Reproducer, ReadsTheAliasATagPickedAndNeverWritesTheKey) {
  const std::string script = reproducer(failed_binding(), target());
  EXPECT_EQ(script.find(kKey), std::string::npos);
  EXPECT_EQ(script.find("$'"), std::string::npos) << "bash quoting, not sh";
  EXPECT_EQ(script.rfind("# crh reproducer of binding.first-caller-wins:", 0), 0u) << script;
  EXPECT_NE(script.find("v1=$(read_field 'id')"), std::string::npos) << script;
  EXPECT_NE(script.find("'/channels/1/alias-numbers/'\"$v1\"'/calls'"), std::string::npos) << script;
  EXPECT_EQ(script.find("/alias-numbers/3/calls'"), std::string::npos) << "this run's alias written in: " << script;
  EXPECT_NE(script.find("made=\"$made $v1\""), std::string::npos) << "the tag is untagged at the end";
  EXPECT_NE(script.find("sleep 0.395"), std::string::npos) << "the check's pause is kept: " << script;
  EXPECT_NE(script.find("printf '"), std::string::npos) << "a newline in the answer as printf octal: " << script;
  EXPECT_TRUE(parses_under_sh(script)) << script;
}

TEST(Reproducer, SaysWhenAShellCannotReproduceAndExitsTwo) {
  auto r = failed_binding();
  r.needs_one_instant = true;
  const std::string script = reproducer(r, target());
  EXPECT_NE(script.find("released at one instant"), std::string::npos) << script;
  EXPECT_NE(script.find("\nexit 2\n"), std::string::npos) << script;
  EXPECT_TRUE(parses_under_sh(script)) << script;

  r.needs_one_instant = false;
  r.evidence[1].replay.reset();  // a SIP call: no HTTP request to send
  EXPECT_NE(reproducer(r, target()).find("not self-contained: step 2"), std::string::npos);
}

TEST(Reproducer, NothingForACheckThatDidNotFail) {
  auto r = failed_binding();
  r.outcome = Outcome::warn;
  EXPECT_TRUE(reproducer(r, target()).empty());
}

TEST(Reproducer, AFailingStepNearATagsEndIsLeftToTheRerunLine) {
  auto r = failed_binding();
  r.evidence[0].replay->request.body = "tag=t&minutes=1";          // ends at 1000 ms
  r.evidence[2].replay->at = std::chrono::milliseconds(980);       // 20 ms before
  EXPECT_NE(reproducer(r, target()).find("within 20 ms of the end of the tag of step 1"), std::string::npos);
  r.evidence[2].replay->at = std::chrono::milliseconds(1600);      // well after
  EXPECT_EQ(reproducer(r, target()).find("within"), std::string::npos);
}

}  // namespace
}  // namespace crh::contracts
