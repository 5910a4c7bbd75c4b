// The one judge of the rules on every answer, fed crafted answers: each
// reading (oracle/answers.hpp) pinned, the status classes the load's error
// rate uses, and hidden keys kept out of the texts.
#include "oracle/answers.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace crh::oracle {
namespace {

const std::string kJson = "application/json";

std::set<Aspect> aspects(const AnswerJudgement& j) {
  std::set<Aspect> out;
  for (const auto& f : j.findings) out.insert(f.aspect);
  return out;
}

SeenAnswer answer(unsigned status, std::string_view body, std::string_view content_type = kJson) {
  return {.request_target = "/api/v1/local-agents", .status = status, .content_type = content_type, .body = body};
}

TEST(StatusClass, ReadsEveryRangeOneWay) {
  EXPECT_EQ(status_class(0), StatusClass::none);
  EXPECT_EQ(status_class(200), StatusClass::success);
  for (unsigned s : {201u, 204u, 206u, 299u}) EXPECT_EQ(status_class(s), StatusClass::other_2xx) << s;
  for (unsigned s : {100u, 301u, 303u, 304u, 400u, 401u, 404u, 429u, 499u})
    EXPECT_EQ(status_class(s), StatusClass::error) << s;
  for (unsigned s : {500u, 502u, 503u, 599u}) EXPECT_EQ(status_class(s), StatusClass::server_error) << s;
}

TEST(JudgeAnswer, RightAnswersBreakNothing) {
  EXPECT_TRUE(judge_answer(answer(200, R"({"agents":[]})")).findings.empty());
  EXPECT_TRUE(judge_answer(answer(404, R"({"msg":"no such agent"})")).findings.empty());
  EXPECT_TRUE(judge_answer(answer(303, R"({"msg":"see other"})", "application/json; charset=utf-8")).findings.empty())
      << "a 3xx is an error status (spec 7.2); no sentence says errors are 4xx";
  auto head = answer(200, "");
  head.head = true;
  EXPECT_TRUE(judge_answer(head).findings.empty()) << "a HEAD answer has no body to judge";
  EXPECT_TRUE(judge_answer(answer(200, R"({"agents":[]})")).body.has_value());
}

TEST(JudgeAnswer, AnotherSuccessBreaksC2EvenWithoutABody) {
  const auto a = answer(204, "", "");
  const auto j = judge_answer(a);
  ASSERT_EQ(j.findings.size(), 1u);
  EXPECT_EQ(j.findings[0].aspect, Aspect::success_status);
  EXPECT_EQ(j.findings[0].finding.rule, "C2");
  EXPECT_EQ(j.findings[0].finding.severity, Severity::must);
  EXPECT_NE(j.findings[0].finding.text.find("got HTTP 204"), std::string::npos) << j.findings[0].finding.text;
}

TEST(JudgeAnswer, AServerErrorBreaksX1AndNothingIsAskedOfItsBody) {
  const auto j = judge_answer(answer(502, "<html>bad gateway</html>", "text/html"));
  ASSERT_EQ(aspects(j), std::set{Aspect::server_error});
  EXPECT_EQ(j.findings[0].finding.rule, "X1");
  EXPECT_NE(j.findings[0].finding.text.find("HTTP 502"), std::string::npos);
}

TEST(JudgeAnswer, EveryBodyIsJsonWhateverTheStatus) {
  auto j = judge_answer(answer(200, "ok", "text/plain"));
  EXPECT_EQ(aspects(j), (std::set{Aspect::json_body, Aspect::content_type}));
  j = judge_answer(answer(404, "not found", kJson));
  EXPECT_EQ(aspects(j), (std::set{Aspect::json_body, Aspect::error_shape}))
      << "an error body that is not JSON breaks C1 and X2 alike";
  for (const auto& f : j.findings) EXPECT_EQ(f.finding.severity, Severity::must);
}

TEST(JudgeAnswer, ContentTypeIsAShouldOnEveryAnswerWithABody) {
  const auto j = judge_answer(answer(200, R"({"agents":[]})", "text/plain"));
  ASSERT_EQ(aspects(j), std::set{Aspect::content_type});
  EXPECT_EQ(j.findings[0].finding.rule, "C1");
  EXPECT_EQ(j.findings[0].finding.severity, Severity::should);
}

TEST(JudgeAnswer, ErrorShapeOnlyOnErrorAnswers) {
  EXPECT_TRUE(judge_answer(answer(200, R"({"id":"1"})")).findings.empty()) << "a success needs no msg";
  auto j = judge_answer(answer(400, R"({"error":"bad"})"));
  ASSERT_EQ(aspects(j), std::set{Aspect::error_shape});
  EXPECT_EQ(j.findings[0].finding.rule, "X2");
  EXPECT_EQ(j.findings[0].finding.severity, Severity::must);
  j = judge_answer(answer(400, R"({"msg":""})"));
  ASSERT_EQ(aspects(j), std::set{Aspect::error_shape});
  EXPECT_EQ(j.findings[0].finding.severity, Severity::should);
}

TEST(JudgeAnswer, ASuccessWithoutAKeyBreaksR5AndARefusalDoesNot) {
  auto a = answer(200, R"({"agents":[]})");
  a.keyed = false;
  auto j = judge_answer(a);
  ASSERT_EQ(aspects(j), std::set{Aspect::missing_key});
  EXPECT_EQ(j.findings[0].finding.rule, "R5");
  a = answer(401, R"({"msg":"no key"})");
  a.keyed = false;
  EXPECT_TRUE(judge_answer(a).findings.empty());
}

TEST(JudgeAnswer, AFrameworksRefusalOfAMalformedTargetIsJudgedApart) {
  auto a = answer(400, "<html><body>Bad Request</body></html>", "text/html");
  a.request_target = "/api/v1/database/%zz%";
  const auto j = judge_answer(a);
  EXPECT_TRUE(j.protocol_refusal);
  EXPECT_EQ(aspects(j), (std::set{Aspect::json_body, Aspect::content_type, Aspect::error_shape}));
  for (const auto& f : j.findings) {
    EXPECT_EQ(f.finding.severity, Severity::should);
    EXPECT_TRUE(f.finding.apart);
  }
  a.request_target = "/api/v1/database/k";  // well formed: no excuse
  for (const auto& f : judge_answer(a).findings) EXPECT_FALSE(f.finding.apart);
}

TEST(JudgeAnswer, TextsQuoteTheBodyAsShown) {
  const std::string body = "key secret-123 leaked";
  const std::string shown = "key [hidden] leaked";
  auto a = answer(404, body, "text/plain");
  a.shown_body = shown;
  const auto j = judge_answer(a);
  ASSERT_FALSE(j.findings.empty());
  for (const auto& f : j.findings) EXPECT_EQ(f.finding.text.find("secret-123"), std::string::npos) << f.finding.text;
  // The verdicts rest on the body itself: a shown body that happens to parse changes none.
  a = answer(404, "{\"msg\": \"secret-123", kJson);
  a.shown_body = R"({"msg": "x"})";
  const auto k = judge_answer(a);
  EXPECT_EQ(aspects(k), (std::set{Aspect::json_body, Aspect::error_shape}));
  for (const auto& f : k.findings) EXPECT_EQ(f.finding.text.find("secret-123"), std::string::npos) << f.finding.text;
}

}  // namespace
}  // namespace crh::oracle
