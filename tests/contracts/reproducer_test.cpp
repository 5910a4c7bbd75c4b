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
  // A file of its own: ctest runs each test of this file beside the others.
  const std::string path = testing::TempDir() + "/reproducer_test_" +
                           testing::UnitTest::GetInstance()->current_test_info()->name() + ".sh";
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
  EXPECT_NE(script.find("echo \"$v1\" >> \"$d/made\""), std::string::npos) << "the tag is untagged at the end";
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

// A failing step close to a tag's end is sent further from it, on the side
// it was on; before an end with an earlier step in the way, it cannot be.
TEST(Reproducer, AFailingStepNearATagsEndIsMovedToItsSideOfIt) {
  auto r = failed_binding();
  r.evidence[0].replay->request.body = "tag=t&minutes=1";     // ends at 1000 ms
  r.evidence[2].replay->at = std::chrono::milliseconds(980);  // 20 ms before
  std::string script = reproducer(r, target());
  EXPECT_NE(script.find("# Step 3 is sent 300 ms before the end of the tag of step 1 (the failing run: 20 ms before"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("sleep 0.695"), std::string::npos) << "sent at 700 ms, the step before at 5 ms: " << script;
  EXPECT_TRUE(parses_under_sh(script)) << script;

  r.evidence[2].replay->at = std::chrono::milliseconds(1030);  // 30 ms after
  script = reproducer(r, target());
  EXPECT_NE(script.find("sleep 1.295"), std::string::npos) << "sent at 1300 ms: " << script;

  r.evidence[1].replay->at = std::chrono::milliseconds(900);
  r.evidence[2].replay->at = std::chrono::milliseconds(980);
  script = reproducer(r, target());
  EXPECT_NE(script.find("cannot be moved further from it"), std::string::npos) << "step 2 at 900 ms is in the way";
  EXPECT_NE(script.find("\nexit 2\n"), std::string::npos) << script;

  r.evidence[1].replay->at = std::chrono::milliseconds(5);
  r.evidence[2].replay->at = std::chrono::milliseconds(1600);  // well after
  EXPECT_EQ(reproducer(r, target()).find("# Step 3 is sent"), std::string::npos);
}

// The state the run had left, written again before the check's requests:
// the last write of each spelling of each key the check reads, nothing of
// another key.
TEST(Reproducer, SetsUpTheDatabaseEntriesTheRunHadWritten) {
  CheckResult r;
  r.id = "database.round-trip";
  r.outcome = Outcome::fail;
  r.findings.push_back({Severity::must, "E5", "expected the value written"});
  r.evidence.push_back(exchange("POST", "/database/crh-probe-k", "value=new", 200, R"({"key":"crh-probe-k"})",
                                std::chrono::milliseconds(0)));
  r.evidence.push_back(exchange("GET", "/database/crh-probe-k", "", 200, R"({"key":"crh-probe-k","value":"old"})",
                                std::chrono::milliseconds(1)));
  r.failing_step = 1;
  std::vector<ReplayStep> before;
  for (const auto& [path, body] : {std::pair{"/database/crh-probe-k", "value=first"},
                                   {"/database/crh-probe-other", "value=elsewhere"},
                                   {"/database/crh%2Dprobe-k", "value=old"}})
    before.push_back(*exchange("POST", path, body, 200, "{}", std::chrono::milliseconds(0)).replay);
  const std::string script = reproducer(r, target(), before);
  const auto setup = script.find("value=first"), spelled = script.find("value=old'"), steps = script.find("step 1");
  EXPECT_NE(setup, std::string::npos) << script;
  EXPECT_NE(spelled, std::string::npos) << "another spelling of the key: " << script;
  EXPECT_LT(setup, spelled) << "in the run's order";
  EXPECT_LT(spelled, steps) << "before the check's requests";
  EXPECT_EQ(script.find("value=elsewhere"), std::string::npos) << "a key the check does not read: " << script;
  EXPECT_EQ(reproducer(r, target()).find("echo 'set-up:"), std::string::npos) << "nothing to set up with no history";
  EXPECT_TRUE(parses_under_sh(script)) << script;
}

// Callers bound before: every alias once tagged, called by a caller the run
// used that the check does not, and untagged; the channel filled when the
// failing step is a tag the run saw refused.
TEST(Reproducer, SetsUpTheAliasesAsTheRunHadUsedThem) {
  std::vector<ReplayStep> before;
  before.push_back(*exchange("POST", "/channels/1/alias-numbers/2/calls", "caller=%2B1", 200, "{}",
                             std::chrono::milliseconds(0)).replay);
  before.push_back(*exchange("POST", "/channels/1/alias-numbers/2/calls", "caller=%2B9", 200, "{}",
                             std::chrono::milliseconds(0)).replay);
  std::string script = reproducer(failed_binding(), target(), before);
  EXPECT_NE(script.find("called by +9"), std::string::npos) << "not +1, which the check calls with: " << script;
  EXPECT_NE(script.find("'/channels/1/alias-numbers/'\"$a\"'/calls'"), std::string::npos) << script;
  EXPECT_NE(script.find("echo \"$a\" >> \"$d/made\""), std::string::npos) << "untagged at the end too";
  EXPECT_TRUE(parses_under_sh(script)) << script;

  CheckResult full;
  full.id = "errors.every-error-answer";
  full.outcome = Outcome::fail;
  full.findings.push_back({Severity::must, "X2", "expected a msg"});
  full.evidence.push_back(exchange("POST", "/channels/1/alias-numbers/tag", "tag=t&minutes=10", 409,
                                   R"({"error":"full"})", std::chrono::milliseconds(0)));
  full.failing_step = 0;
  script = reproducer(full, target());
  EXPECT_NE(script.find("every alias of the channel tagged, as when"), std::string::npos) << script;
  EXPECT_NE(script.find("while [ \"$i\" -le \"$n\" ]"), std::string::npos) << script;
  EXPECT_TRUE(parses_under_sh(script)) << script;
}

// The failing answer's values are compared only where they tell a failure
// from a correct answer: a success to a request without the right key fails
// on its status; a tag not judged on its pick is compared on the alias it
// picks this time.
TEST(Reproducer, ComparesTheValuesTheFailureRestsOn) {
  CheckResult r;
  r.id = "auth.missing-key.aliases-list";
  r.outcome = Outcome::fail;
  r.findings.push_back({Severity::must, "R5", "expected a refusal"});
  r.evidence.push_back(exchange("GET", "/channels/1/alias-numbers", "", 200, R"({"aliases":[{"id":"1","tag":null}]})",
                                std::chrono::milliseconds(0)));
  r.evidence[0].replay->request.headers.clear();
  r.failing_step = 0;
  std::string script = reproducer(r, target());
  EXPECT_EQ(script.find("expected="), std::string::npos) << script;
  EXPECT_NE(script.find("[ \"$status\" = 200 ]"), std::string::npos) << script;

  r.id = "explore.sequences";
  r.findings = {{Severity::must, "E8", "expected the tag it carries"}};
  r.evidence = {exchange("POST", "/channels/1/alias-numbers/tag", "tag=long&minutes=1", 200,
                         R"({"id":"4","number":"+15550104","tag":"lo"})", std::chrono::milliseconds(0))};
  script = reproducer(r, target());
  EXPECT_NE(script.find("expected='{\"id\":\"'\"$v1\"'\",\"number\":\"'\"$v1_2\"'\",\"tag\":\"lo\"}'"),
            std::string::npos)
      << script;
  r.findings = {{Severity::must, "R2", "expected the least recently used alias"}};
  script = reproducer(r, target());
  EXPECT_NE(script.find("expected='{\"id\":\"4\",\"number\":\"+15550104\",\"tag\":\"lo\"}'"), std::string::npos)
      << "judged on the alias it picked: " << script;
  EXPECT_TRUE(parses_under_sh(script)) << script;
}

}  // namespace
}  // namespace crh::contracts
