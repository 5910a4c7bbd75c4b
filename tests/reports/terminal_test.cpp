// The terminal summary a person reads after `crh contract`: failures with
// their message and curl evidence, the suite table and rule coverage, the
// verdict line with the exit code, and the quiet/verbose/colour styles.
#include "reports/terminal.hpp"
#include "reports/rerun.hpp"

#include "crafted_contract.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstdio>
#include <sstream>
#include <unistd.h>
#include <string>
#include <vector>

namespace crh::reports {
namespace {

namespace json = boost::json;

// The shared crafted result (two suites, one check of each outcome, a failed,
// a passed and an uncovered rule) on channel 7, with a plain failure message:
// what a terminal reader sees in the common case.
json::value failed_result() {
  auto doc = test::crafted_contract_result();
  auto& o = doc.as_object();
  o["target"].as_object()["channel"] = "7";
  for (auto& c : o["checks"].as_array()) {
    auto& check = c.as_object();
    if (check["id"] == "endpoints.tag") {
      check["message"] = "tag answered 500 instead of 200";
      check["findings"].as_array()[0].as_object()["text"] = "tag answered 500 instead of 200";
    }
    for (auto& e : check["evidence"].as_array()) {
      std::string curl(e.as_object()["curl"].as_string());
      if (auto at = curl.find("/channels/1/"); at != std::string::npos) curl.replace(at, 12, "/channels/7/");
      e.as_object()["curl"] = curl;
    }
  }
  return doc;
}

// The same run with the failing check passing: verdict passed, exit 0.
json::value passed_result() {
  auto doc = failed_result();
  auto& tag = doc.at("checks").as_array()[2].as_object();
  tag["outcome"] = "pass";
  tag["message"] = "";
  tag["findings"] = json::array{};
  doc.at("rules").as_array()[0].as_object()["outcome"] = "pass";
  doc.at("suites").as_array()[0].at("counts").as_object()["pass"] = 2;
  doc.at("suites").as_array()[0].at("counts").as_object()["fail"] = 0;
  doc.at("counts").as_object()["pass"] = 2;
  doc.at("counts").as_object()["fail"] = 0;
  doc.as_object()["verdict"] =
      json::parse(R"j({"status": "passed", "exit_code": 0, "reason": "every MUST check held; 1 warning(s)"})j");
  return doc;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The line starting with `prefix` (after leading spaces), or empty.
std::string line_starting(const std::string& text, std::string_view prefix) {
  for (const auto& line : lines_of(text)) {
    const auto start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, prefix.size(), prefix) == 0) return line;
  }
  return {};
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(TerminalSummary, NamesTheTarget) {
  const auto out = contract_summary(failed_result(), {});
  EXPECT_EQ(lines_of(out).at(0), "crh contract: http://127.0.0.1:18080, channel 7") << out;
}

TEST(TerminalSummary, ShowsTheFailingCheckWithMessageFindingsAndCurlEvidence) {
  const auto out = contract_summary(failed_result(), {});
  const auto head = line_starting(out, "FAIL");
  EXPECT_TRUE(contains(head, "endpoints.tag")) << out;
  EXPECT_TRUE(contains(head, "MUST E8 C1 C2")) << out;
  EXPECT_TRUE(contains(out, "tag answered 500 instead of 200")) << out;
  EXPECT_TRUE(contains(out, "MUST C1: the body is not JSON")) << "the other finding is shown: " << out;
  // Each rule a finding names, in the rule's own words (from the document's rule table).
  EXPECT_TRUE(contains(out, "      rule E8: POST /channels/[id]/alias-numbers/tag tags an alias and returns it")) << out;
  const auto doc = failed_result();
  for (const auto& r : doc.at("rules").as_array())
    if (r.at("id") == "E8")
      EXPECT_TRUE(contains(out, "rule E8: " + std::string(r.at("text").as_string()))) << out;
  EXPECT_TRUE(contains(out,
                       "$ curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'tag=crh-1&minutes=5' "
                       "http://127.0.0.1:18080/channels/7/alias-numbers/tag"))
      << out;
  EXPECT_TRUE(contains(out, "-> HTTP 500 <b>boom</b>")) << out;
}

TEST(TerminalSummary, ShowsWarningsAndIndeterminateChecksButNotPassingOnes) {
  const auto out = contract_summary(failed_result(), {});
  EXPECT_TRUE(contains(line_starting(out, "WARN"), "endpoints.version-prefix-only")) << out;
  EXPECT_TRUE(contains(out, "GET /local-agents also answers 200")) << out;
  EXPECT_TRUE(contains(line_starting(out, "INDET"), "binding.bound-caller")) << out;
  EXPECT_TRUE(contains(out, "no answer: timeout")) << out;
  EXPECT_FALSE(contains(out, "endpoints.agents-list")) << out;
  EXPECT_FALSE(contains(out, "binding.race")) << out;
}

TEST(TerminalSummary, VerboseListsPassingAndSkippedChecksWithTheirEvidence) {
  const auto out = contract_summary(failed_result(), {.verbose = true});
  EXPECT_TRUE(contains(line_starting(out, "PASS"), "endpoints.agents-list")) << out;
  EXPECT_TRUE(contains(out, "http://127.0.0.1:18080/api/v1/local-agents")) << out;
  EXPECT_TRUE(contains(line_starting(out, "SKIP"), "binding.race")) << out;
  EXPECT_TRUE(contains(out, "the target has no call hook")) << out;
  EXPECT_TRUE(contains(line_starting(out, "FAIL"), "endpoints.tag")) << out;
}

TEST(TerminalSummary, ShowsTheSuiteTableWithCounts) {
  const auto out = contract_summary(failed_result(), {});
  EXPECT_EQ(words(line_starting(out, "suite ")),
            (std::vector<std::string>{"suite", "pass", "warn", "fail", "skip", "indet"}))
      << out;
  EXPECT_EQ(words(line_starting(out, "endpoints ")), (std::vector<std::string>{"endpoints", "1", "1", "1", "0", "0"}))
      << out;
  EXPECT_EQ(words(line_starting(out, "binding ")), (std::vector<std::string>{"binding", "0", "0", "0", "1", "1"}))
      << out;
}

TEST(TerminalSummary, ShowsRuleCoverageIncludingAnUncoveredRule) {
  const auto out = contract_summary(failed_result(), {});
  const auto e8 = line_starting(out, "E8 ");
  EXPECT_TRUE(contains(e8, "FAIL")) << out;
  EXPECT_TRUE(contains(e8, "1 checks")) << out;
  const auto b1 = line_starting(out, "B1 ");
  EXPECT_TRUE(contains(b1, "none")) << "an uncovered rule is shown as covered by none: " << out;
  EXPECT_TRUE(contains(b1, "0 checks")) << out;
  EXPECT_TRUE(contains(b1, "any caller may call a newly tagged alias")) << out;
  EXPECT_TRUE(contains(line_starting(out, "E1 "), "PASS")) << out;
}

TEST(TerminalSummary, ShowsNotes) {
  const auto out = contract_summary(failed_result(), {});
  EXPECT_TRUE(contains(out, "note: the profile expects form-encoded parameters")) << out;
}

TEST(TerminalSummary, QuietDropsTheTablesButKeepsFailuresAndTheVerdict) {
  const auto out = contract_summary(failed_result(), {.quiet = true});
  EXPECT_TRUE(line_starting(out, "suite ").empty()) << out;
  EXPECT_TRUE(line_starting(out, "endpoints ").empty()) << out;
  EXPECT_TRUE(line_starting(out, "B1 ").empty()) << out;
  EXPECT_FALSE(contains(out, "endpoints.version-prefix-only")) << "quiet hides warnings: " << out;
  EXPECT_TRUE(contains(line_starting(out, "FAIL"), "endpoints.tag")) << out;
  EXPECT_TRUE(contains(out, "tag answered 500 instead of 200")) << out;
  EXPECT_TRUE(contains(out, "alias-numbers/tag")) << "the failure's evidence stays: " << out;
  EXPECT_TRUE(contains(out, "FAILED (exit 1)")) << out;
}

TEST(TerminalSummary, VerdictLineOfAFailedRun) {
  const auto out = contract_summary(failed_result(), {});
  const auto verdict = line_starting(out, "FAILED (exit 1)");
  ASSERT_FALSE(verdict.empty()) << out;
  EXPECT_TRUE(contains(verdict, "5 checks in 2.50 s: 1 passed, 1 warned, 1 failed, 1 skipped, 1 indeterminate"))
      << verdict;
  EXPECT_TRUE(contains(out, "1 check(s) failed")) << out;
  EXPECT_TRUE(contains(out, "To reproduce")) << out;
  EXPECT_FALSE(contains(out, "PASSED")) << out;
}

TEST(TerminalSummary, FailuresSayHowToRerunJustThatCheck) {
  const auto out = contract_summary(failed_result(), {});
  EXPECT_TRUE(contains(out, "rerun: crh contract --base-url http://127.0.0.1:18080 --channel 7 --check ")) << out;
  auto doc = failed_result();
  doc.at("target").as_object()["embedded"] = true;  // its URL dies with the run: rerun without one
  const auto embedded = contract_summary(doc, {});
  EXPECT_TRUE(contains(embedded, "rerun: crh contract --check ")) << embedded;
  EXPECT_FALSE(contains(embedded, "--base-url")) << embedded;
}

// Issue 22 item 4: the rerun line carries every option the producer recorded
// (profile, slow, minute, strict, timeout, the key file's path), shell-quoted.
TEST(TerminalSummary, RerunLineCarriesTheRecordedOptionsQuotedForTheShell) {
  const auto out = contract_summary(test::crafted_contract_with_rerun(), {});
  EXPECT_TRUE(contains(out, std::string("\n      rerun: ") + test::kCraftedRerunPrefix + "endpoints.tag\n")) << out;
  EXPECT_TRUE(contains(out, std::string("\n      rerun: ") + test::kCraftedRerunPrefix +
                                "endpoints.version-prefix-only\n"))
      << "the warning's too: " << out;
  EXPECT_TRUE(contains(out, "they read the key from their --api-key-file")) << out;
  EXPECT_FALSE(contains(out, "missing from the document")) << out;
}

TEST(TerminalSummary, RerunLineWithTheKeyFromTheEnvironmentSaysToExportIt) {
  auto doc = test::crafted_contract_with_rerun();
  doc.at("config").at("rerun").as_object() =
      json::parse(R"j({"options": ["--base-url", "http://127.0.0.1:18080", "--channel", "1"],
                       "key_source": "environment"})j").as_object();
  const auto out = contract_summary(doc, {});
  EXPECT_TRUE(contains(out, "rerun: crh contract --base-url http://127.0.0.1:18080 --channel 1 --check endpoints.tag\n"))
      << out;
  EXPECT_TRUE(contains(out, "To reproduce: export CRH_API_KEY")) << out;
}

TEST(TerminalSummary, OlderDocumentWithoutRerunOptionsGetsTheOldLineAndNoMissingField) {
  const auto out = contract_summary(test::crafted_contract_result(), {});
  EXPECT_TRUE(contains(out, "rerun: crh contract --base-url http://127.0.0.1:18080 --channel 1 --check endpoints.tag\n"))
      << out;
  EXPECT_FALSE(contains(out, "missing from the document")) << out;
}

TEST(ShellQuote, EveryWordReadsBackWhole) {
  EXPECT_EQ(shell_quote("--base-url"), "--base-url");
  EXPECT_EQ(shell_quote("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080/x");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME `x` \\ \"q\""), "'$HOME `x` \\ \"q\"'");
  EXPECT_EQ(shell_quote("a\nb'c\\"), "$'a\\x0ab\\'c\\\\'");
  // As bash reads them back, where there is a bash.
  if (::access("/bin/bash", X_OK) != 0) GTEST_SKIP() << "no /bin/bash to read the words back";
  for (const std::string word : {"a b", "it's", "", "$HOME `x` \\ \"q\" *", "a\nb'c\\", "tab\there"}) {
    const std::string command = "/bin/bash -c " + shell_quote("printf %s " + shell_quote(word));
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_TRUE(pipe) << command;
    std::string read;
    char buf[256];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) read.append(buf, n);
    EXPECT_EQ(::pclose(pipe), 0) << command;
    EXPECT_EQ(read, word) << command;
  }
}

TEST(TerminalSummary, VerdictLineOfAPassingRun) {
  const auto out = contract_summary(passed_result(), {});
  const auto verdict = line_starting(out, "PASSED (exit 0)");
  ASSERT_FALSE(verdict.empty()) << out;
  EXPECT_TRUE(contains(verdict, "2 passed, 1 warned, 0 failed")) << verdict;
  EXPECT_FALSE(contains(out, "FAILED")) << out;
  EXPECT_FALSE(contains(out, "To reproduce")) << out;
  EXPECT_FALSE(contains(out, "FAIL ")) << out;
}

TEST(TerminalSummary, VerdictLineOfAnUnreachableTarget) {
  auto doc = passed_result();
  doc.as_object()["verdict"] =
      json::parse(R"j({"status": "unreachable", "exit_code": 3, "reason": "connection refused by 127.0.0.1:18080"})j");
  const auto out = contract_summary(doc, {});
  EXPECT_FALSE(line_starting(out, "UNREACHABLE (exit 3)").empty()) << out;
  EXPECT_TRUE(contains(out, "connection refused by 127.0.0.1:18080")) << out;
}

TEST(TerminalSummary, NoColourEmitsNoEscapeSequences) {
  for (const bool verbose : {false, true}) {
    const auto out = contract_summary(failed_result(), {.color = false, .verbose = verbose});
    EXPECT_FALSE(contains(out, "\x1b[")) << out;
    EXPECT_FALSE(contains(out, "\x1b")) << out;
  }
  EXPECT_FALSE(contains(contract_summary(passed_result(), {.color = false}), "\x1b"));
}

TEST(TerminalSummary, ColourPaintsFailuresAndTheVerdict) {
  const auto out = contract_summary(failed_result(), {.color = true});
  EXPECT_TRUE(contains(out, "\x1b[")) << out;
  EXPECT_TRUE(contains(out, "\x1b[1;31mFAILED\x1b[0m (exit 1)")) << out;
  EXPECT_TRUE(contains(out, "\x1b[1;31mFAIL ")) << out;
  const auto passed = contract_summary(passed_result(), {.color = true});
  EXPECT_TRUE(contains(passed, "\x1b[1;32mPASSED\x1b[0m (exit 0)")) << passed;
}

TEST(TerminalSummary, LongEvidenceIsCutUnlessVerbose) {
  auto doc = failed_result();
  auto& evidence = doc.at("checks").as_array()[2].at("evidence").as_array();
  evidence.clear();
  for (int i = 1; i <= 8; ++i)
    evidence.push_back(json::object{{"curl", "curl http://127.0.0.1:18080/exchange-" + std::to_string(i)},
                                    {"answer", "HTTP 500"},
                                    {"elapsed_ms", 1.0}});
  const auto out = contract_summary(doc, {});
  EXPECT_TRUE(contains(out, "/exchange-6")) << out;
  EXPECT_FALSE(contains(out, "/exchange-7")) << out;
  EXPECT_TRUE(contains(out, "(2 more exchanges")) << out;
  const auto verbose = contract_summary(doc, {.verbose = true});
  EXPECT_TRUE(contains(verbose, "/exchange-8")) << verbose;
  EXPECT_FALSE(contains(verbose, "more exchanges")) << verbose;
}

TEST(TerminalSummary, EmbeddedTargetIsSaidSo) {
  auto doc = failed_result();
  doc.at("target").as_object()["embedded"] = true;
  EXPECT_TRUE(contains(lines_of(contract_summary(doc, {})).at(0), "(the embedded reference service)"));
  EXPECT_FALSE(contains(contract_summary(failed_result(), {}), "embedded"));
}

// A document with fields removed (a truncated file, another version): the
// summary shows what is there, names what is not, and does not throw.
TEST(TerminalSummary, ADocumentWithFieldsRemovedNamesThemAndDoesNotThrow) {
  auto doc = failed_result();
  auto& o = doc.as_object();
  o.erase("counts");
  o["checks"].as_array()[2].as_object().erase("outcome");
  o["suites"].as_array()[0].as_object()["counts"].as_object().erase("fail");
  o["target"].as_object()["embedded"] = "no";
  std::string out;
  ASSERT_NO_THROW(out = contract_summary(doc, {}));
  EXPECT_TRUE(contains(out, "crh contract: http://127.0.0.1:18080, channel 7")) << "what is there is shown: " << out;
  EXPECT_TRUE(contains(out, "binding.bound-caller")) << out;
  const auto missing = line_starting(out, "missing from the document:");
  ASSERT_FALSE(missing.empty()) << out;
  for (const auto* path :
       {"counts", "checks[2].outcome", "suites[0].counts.fail", "target.embedded (not true or false)"})
    EXPECT_TRUE(contains(missing, path)) << path << " is not named: " << missing;
  EXPECT_EQ(lines_of(out).back(), missing) << "the list ends the summary";
}

TEST(TerminalSummary, ACompleteDocumentHasNoMissingLine) {
  EXPECT_FALSE(contains(contract_summary(failed_result(), {.verbose = true}), "missing from the document"));
}

TEST(TerminalSummary, EvenAnEmptyObjectRendersWithoutThrowing) {
  std::string out;
  ASSERT_NO_THROW(out = contract_summary(json::object{}, {.verbose = true}));
  EXPECT_TRUE(contains(out, "missing from the document: target, checks, suites, rules, notes")) << out;
}

}  // namespace
}  // namespace crh::reports
