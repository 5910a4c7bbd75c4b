// Verdict logic fed crafted answers, hostile ones included: the rule
// catalogue and the error-shape rule (X2).
#include "contracts/rules.hpp"
#include "contracts/shapes.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

namespace crh::contracts {
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

TEST(Excerpt, PrintableAndBounded) {
  EXPECT_EQ(excerpt(""), "an empty body");
  EXPECT_EQ(excerpt("a\nb\x01"), "body a\\nb?");
  EXPECT_EQ(excerpt(std::string(10, 'x'), 4), "body xxxx... (10 bytes)");
}

}  // namespace
}  // namespace crh::contracts
