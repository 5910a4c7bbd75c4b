// Verdict logic fed crafted answers, hostile ones included: the rule
// catalogue, the error-shape rule (X2) and the field types of one form (R1).
#include "oracle/rules.hpp"
#include "oracle/shapes.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

namespace crh::oracle {
namespace {
namespace json = boost::json;

TEST(RuleCatalogue, HasEveryRuleOfTheDesignOnceWithText) {
  std::set<std::string_view> ids;
  for (const auto& r : rule_catalogue()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id << " twice";
    EXPECT_FALSE(r.text.empty());
    EXPECT_FALSE(r.section.empty());
  }
  for (auto id : {"C1", "C2", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "R1",
                  "R2", "R3", "R4", "R5", "A2", "T1", "B1", "B2", "B3", "X1", "X2", "V1"})
    EXPECT_NE(find_rule(id), nullptr) << id;
  EXPECT_EQ(find_rule("Z9"), nullptr);
}

bool has(const std::vector<Finding>& f, Severity s, std::string_view rule, std::string_view words) {
  for (const auto& x : f)
    if (x.severity == s && x.rule == rule && x.text.find(words) != std::string::npos) return true;
  return false;
}

// One divergence, one rule: a failed check blames the rules its findings name.
TEST(RuleBlame, AFailureMarksOnlyTheRuleItsFindingNamesAndHoldsNoOther) {
  const std::vector<Finding> findings{{Severity::must, "E5", "expected value v, got w"},
                                      {Severity::should, "E6", "expected 404, got 400"}};
  EXPECT_EQ(outcome_for_rule("fail", findings, "E5"), "fail");
  EXPECT_EQ(outcome_for_rule("fail", findings, "E6"), "warn");
  // The check stopped where it failed: its other rules were not reached, so never shown as held.
  EXPECT_EQ(outcome_for_rule("fail", findings, "X0"), "skip");
  EXPECT_EQ(outcome_for_rule("fail", findings, "B3"), "skip");
}

TEST(RuleBlame, AWarningMarksOnlyItsRule) {
  const std::vector<Finding> findings{{Severity::should, "R3", "expected 400, got 422"}};
  EXPECT_EQ(outcome_for_rule("warn", findings, "R3"), "warn");
  EXPECT_EQ(outcome_for_rule("warn", findings, "E8"), "pass");
}

TEST(RuleBlame, AFailureWithNoMustFindingBlamesEveryRule) {
  EXPECT_EQ(outcome_for_rule("fail", {}, "E5"), "fail");
  EXPECT_EQ(outcome_for_rule("fail", {{Severity::should, "E6", "x"}}, "E5"), "fail");
}

TEST(RuleBlame, OtherOutcomesBearOnEveryRuleAlike) {
  const std::vector<Finding> findings{{Severity::must, "E5", "x"}};
  for (std::string_view o : {"pass", "skip", "indeterminate"}) EXPECT_EQ(outcome_for_rule(o, findings, "B1"), o);
}

TEST(ErrorShape, TheDocumentedShapePasses) {
  EXPECT_TRUE(error_shape_findings(404, "application/json", R"({"msg":"no such agent"})").empty());
  EXPECT_TRUE(error_shape_findings(401, "application/json; charset=utf-8", R"({"msg":"x","code":7})").empty());
  EXPECT_TRUE(error_shape_findings(400, "application/problem+json", R"({"msg":"x"})").empty());
}

TEST(ErrorShape, HostileAnswersAreFindingsNeverCrashes) {
  auto f = error_shape_findings(404, "application/json", R"({"msg":42})");
  EXPECT_TRUE(has(f, Severity::must, "X2", "msg to be a string")) << f.size();
  f = error_shape_findings(404, "application/json", R"({"error":"x"})");
  EXPECT_TRUE(has(f, Severity::must, "X2", "field msg"));
  f = error_shape_findings(404, "application/json", R"(["msg"])");
  EXPECT_TRUE(has(f, Severity::must, "X2", "JSON object"));
  f = error_shape_findings(404, "application/json", "");
  EXPECT_TRUE(has(f, Severity::must, "X2", "empty"));
  f = error_shape_findings(404, "application/json", "{\"msg\": \"unterminated");
  EXPECT_TRUE(has(f, Severity::must, "X2", "not JSON"));
  f = error_shape_findings(404, "application/json", "{\"msg\":\"\xFF\xFE\"}");
  EXPECT_TRUE(has(f, Severity::must, "X2", "not JSON"));
  f = error_shape_findings(404, "text/plain", "not found");
  EXPECT_TRUE(has(f, Severity::must, "X2", "not JSON"));
  EXPECT_TRUE(has(f, Severity::should, "C1", "text/plain"));
  f = error_shape_findings(404, "text/html", R"({"msg":"ok shape, wrong type"})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(has(f, Severity::should, "C1", "text/html"));
  f = error_shape_findings(400, "application/json", R"({"msg":""})");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(has(f, Severity::should, "X2", "non-empty"));
  f = error_shape_findings(500, "application/json", R"({"msg":"boom"})");
  EXPECT_TRUE(has(f, Severity::must, "X1", "HTTP 500"));
  std::string deep(100, '[');
  f = error_shape_findings(400, "application/json", deep + std::string(100, ']'));
  EXPECT_TRUE(has(f, Severity::must, "X2", "")) << "deep nesting must be a finding";
}

TEST(ErrorShape, LargeBodiesAreHandledAndQuotedShort) {
  std::string two_mb = R"({"msg":")" + std::string(2u << 20, 'm') + R"("})";
  EXPECT_TRUE(error_shape_findings(404, "application/json", two_mb).empty());
  auto f = error_shape_findings(404, "text/plain", std::string(2u << 20, 'x'));
  ASSERT_FALSE(f.empty());
  for (const auto& x : f) EXPECT_LT(x.text.size(), 400u) << "messages quote an excerpt, not the body";
}

TEST(FieldTypes, NamesTheJsonTypes) {
  EXPECT_EQ(json_type_name(json::value("101")), "string");
  EXPECT_EQ(json_type_name(json::value(101)), "number");
  EXPECT_EQ(json_type_name(json::value(101u)), "number");
  EXPECT_EQ(json_type_name(json::value(1.5)), "number");
  EXPECT_EQ(json_type_name(json::value(true)), "bool");
  EXPECT_EQ(json_type_name(json::parse("{}")), "object");
  EXPECT_EQ(json_type_name(json::parse("[]")), "array");
  EXPECT_EQ(json_type_name(json::value(nullptr)), "null");
}

std::vector<std::string> diffs(std::string_view a, std::string_view b) {
  return field_type_differences(json::parse(a).as_object(), json::parse(b).as_object());
}

TEST(FieldTypes, TheSameFormHasNoDifferences) {
  EXPECT_TRUE(
      diffs(R"({"id":"101","name":"A","state":"available"})", R"({"state":"snoozed","name":"B","id":"101"})").empty());
  EXPECT_TRUE(diffs(R"({"n":1,"b":true,"o":{"x":1},"a":[1]})", R"({"n":2.5,"b":false,"o":{},"a":[]})").empty())
      << "an integer and a double are both numbers; nested content is not compared";
  EXPECT_TRUE(diffs("{}", "{}").empty());
}

TEST(FieldTypes, NullMatchesEveryType) {
  EXPECT_TRUE(diffs(R"({"tag":null,"n":null})", R"({"tag":"x","n":{}})").empty());
  EXPECT_TRUE(diffs(R"({"tag":"x"})", R"({"tag":null})").empty());
}

TEST(FieldTypes, NamesEachFieldWhoseTypeDiffers) {
  EXPECT_EQ(diffs(R"({"id":"101","name":"A"})", R"({"id":101,"name":"A"})"),
            std::vector<std::string>{"id (string, then number)"});
  EXPECT_EQ(diffs(R"({"id":"1","b":true,"o":{}})", R"({"id":[],"b":"true","o":[]})"),
            (std::vector<std::string>{"id (string, then array)", "b (bool, then string)", "o (object, then array)"}));
}

TEST(FieldTypes, FieldsOnlyOneSideHasAreLeftToTheFieldNameComparison) {
  EXPECT_TRUE(diffs(R"({"id":"1","extra":1})", R"({"id":"1","other":"x"})").empty());
}

TEST(ProtocolRefusal, MalformedTargetsAreThoseAnHttpLayerMayRefuse) {
  EXPECT_TRUE(malformed_target("/database/%zz%"));
  EXPECT_TRUE(malformed_target("/database/a%2"));
  EXPECT_TRUE(malformed_target("/database/a b"));
  EXPECT_TRUE(malformed_target("/database/\xc3\xa9"));
  EXPECT_TRUE(malformed_target("/database/" + std::string(kLongTarget, 'k')));
  EXPECT_FALSE(malformed_target("/database/%41%c3%a9?x=1"));
  EXPECT_FALSE(malformed_target("/api/v1/local-agents/%00"));  // valid URI: the API must answer it
}

TEST(ProtocolRefusal, OnlyAFrameworkRefusalOfAMalformedRequestIsJudgedApart) {
  const std::string html = "<html><body>400 Bad Request</body></html>";
  EXPECT_TRUE(protocol_level_refusal("/database/%zz%", 400, "text/html", html));
  EXPECT_TRUE(protocol_level_refusal("/x/" + std::string(2000, 'k'), 414, "text/html", html));
  EXPECT_FALSE(protocol_level_refusal("/database/%zz%", 400, "application/json", R"({"msg":"bad"})"))
      << "the API's own answer is judged as any other";
  EXPECT_FALSE(protocol_level_refusal("/database/%zz%", 500, "text/html", html)) << "a 5xx is never excused";
  EXPECT_FALSE(protocol_level_refusal("/database/%zz%", 404, "text/html", html));
  EXPECT_FALSE(protocol_level_refusal("/database/k", 400, "text/html", html)) << "a well-formed request";
}

TEST(ProtocolRefusal, JudgedApartEveryFindingIsAShould) {
  auto findings = judged_apart(error_shape_findings(400, "text/html", "<html/>"));
  ASSERT_FALSE(findings.empty());
  for (const auto& f : findings) {
    EXPECT_EQ(f.severity, Severity::should) << f.text;
    EXPECT_NE(f.text.find("refused a malformed request"), std::string::npos) << f.text;
  }
}

TEST(Excerpt, PrintableAndBounded) {
  EXPECT_EQ(excerpt(""), "an empty body");
  EXPECT_EQ(excerpt("a\nb\x01"), "body a\\nb?");
  EXPECT_EQ(excerpt(std::string(10, 'x'), 4), "body xxxx... (10 bytes)");
}

}  // namespace
}  // namespace crh::oracle
