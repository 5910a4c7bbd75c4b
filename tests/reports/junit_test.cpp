// The JUnit XML a CI server reads: a testsuite per suite plus "rules",
// failures with their evidence, skips with reasons, indeterminate checks as
// errors, warnings only in system-out, counts that agree with the content,
// and XML that stays well-formed whatever text a target sent back.
#include "reports/junit.hpp"
#include "crafted_contract.hpp"
#include "xml_reader.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crh::reports {
namespace {

namespace json = boost::json;

using test::Element;
using test::XmlReader;

// The parsed report; fails the test when the XML is not well-formed.
Element parse_report(const std::string& xml) {
  XmlReader reader(xml);
  auto root = reader.parse();
  EXPECT_TRUE(root) << reader.error() << "\n" << xml;
  return root ? *root : Element{};
}

const Element* suite_named(const Element& root, std::string_view name) {
  for (const auto* s : root.all("testsuite"))
    if (s->attr("name") == name) return s;
  return nullptr;
}

const Element* case_named(const Element& suite, std::string_view name) {
  for (const auto* c : suite.all("testcase"))
    if (c->attr("name") == name) return c;
  return nullptr;
}

// --- the checker itself rejects what it must --------------------------------

TEST(JunitXmlChecker, RejectsMalformedXml) {
  for (std::string_view bad :
       {"<a>x < y</a>", "<a>fish & chips</a>", "<a b=\"1\">&foo;</a>", "<a><b></a></b>", "<a>\x01</a>", "<a b='1'/>",
        "<a b=\"x<y\"/>", "<a>", "<a/><b/>", "<a b=\"1\"c=\"2\"/>"}) {
    XmlReader reader(bad);
    EXPECT_FALSE(reader.parse()) << "accepted: " << bad;
  }
  XmlReader good("<?xml version=\"1.0\"?>\n<a x=\"&lt;&amp;&quot;\"><b/>t &gt; u</a>\n");
  auto root = good.parse();
  ASSERT_TRUE(root) << good.error();
  EXPECT_EQ(root->attr("x"), "<&\"");
  EXPECT_EQ(root->text, "t > u");
}

// --- the report ---------------------------------------------------------------

TEST(JunitReport, IsWellFormedXmlWithAnXmlDeclaration) {
  const auto xml = junit_xml(test::crafted_contract_result());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u) << xml;
  const auto root = parse_report(xml);
  EXPECT_EQ(root.name, "testsuites");
}

TEST(JunitReport, HasATestsuitePerSuiteAndARulesTestsuite) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  std::vector<std::string> names;
  for (const auto* s : root.all("testsuite")) names.push_back(s->attr("name").value_or("?"));
  EXPECT_EQ(names, (std::vector<std::string>{"endpoints", "binding", "rules"}));
  EXPECT_EQ(root.children.size(), 3u);
}

TEST(JunitReport, HasATestcasePerCheckNamedByCheckId) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* endpoints = suite_named(root, "endpoints");
  const auto* binding = suite_named(root, "binding");
  ASSERT_TRUE(endpoints && binding);
  std::vector<std::string> ids;
  for (const auto* s : {endpoints, binding})
    for (const auto* c : s->all("testcase")) {
      ids.push_back(c->attr("name").value_or("?"));
      EXPECT_EQ(c->attr("classname"), "crh.contract." + s->attr("name").value_or(""));
    }
  EXPECT_EQ(ids, (std::vector<std::string>{"endpoints.agents-list", "endpoints.version-prefix-only", "endpoints.tag",
                                           "binding.race", "binding.bound-caller"}));
  EXPECT_EQ(case_named(*endpoints, "endpoints.tag")->attr("time"), "0.250");
}

TEST(JunitReport, FailureCarriesTheMessageAndTheEvidence) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  const auto* tag = case_named(*endpoints, "endpoints.tag");
  ASSERT_TRUE(tag);
  const auto* failure = tag->child("failure");
  ASSERT_TRUE(failure) << "the failing check has no <failure>";
  EXPECT_EQ(failure->attr("type"), "MUST");
  // The control byte cannot be written in XML 1.0; everything else survives the round trip.
  EXPECT_EQ(failure->attr("message"), "tag answered <html> & \"oops\" ? end");
  const auto& text = failure->text;
  EXPECT_NE(text.find("MUST E8: tag answered <html>"), std::string::npos) << text;
  EXPECT_NE(text.find("MUST C1: the body is not JSON"), std::string::npos) << text;
  EXPECT_NE(text.find("curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'tag=crh-1&minutes=5' "
                      "http://127.0.0.1:18080/channels/1/alias-numbers/tag"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("HTTP 500 <b>boom</b>"), std::string::npos) << text;
  EXPECT_NE(text.find("E8 C1 C2"), std::string::npos) << "the rules the check covers: " << text;
}

// Issue 22 item 4: a failure and a warning say how to rerun just that check,
// with every option the producer recorded; an older document, the old line.
TEST(JunitReport, FailureAndWarningCarryTheRecordedRerunCommand) {
  const auto root = parse_report(junit_xml(test::crafted_contract_with_rerun()));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  const auto* tag = case_named(*endpoints, "endpoints.tag");
  ASSERT_TRUE(tag && tag->child("failure"));
  const auto& failure = tag->child("failure")->text;
  EXPECT_NE(failure.find(std::string("Rerun: ") + test::kCraftedRerunPrefix + "endpoints.tag\n"), std::string::npos)
      << failure;
  EXPECT_EQ(failure.find("export CRH_API_KEY, the target's key, first"), std::string::npos)
      << "the key comes from --api-key-file: " << failure;
  const auto* warned = case_named(*endpoints, "endpoints.version-prefix-only");
  ASSERT_TRUE(warned && warned->child("system-out"));
  EXPECT_NE(warned->child("system-out")->text.find(std::string("Rerun: ") + test::kCraftedRerunPrefix +
                                                   "endpoints.version-prefix-only\n"),
            std::string::npos)
      << warned->child("system-out")->text;

  const auto old = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* old_tag = case_named(*suite_named(old, "endpoints"), "endpoints.tag");
  ASSERT_TRUE(old_tag && old_tag->child("failure"));
  const auto& old_text = old_tag->child("failure")->text;
  EXPECT_NE(old_text.find("Rerun: crh contract --base-url http://127.0.0.1:18080 --channel 1 --check endpoints.tag\n"
                          "(export CRH_API_KEY, the target's key, first)"),
            std::string::npos)
      << old_text;
  EXPECT_EQ(suite_named(old, "document"), nullptr) << "an older document lacks nothing the report needs";
}

TEST(JunitReport, SkippedCheckCarriesItsReason) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* binding = suite_named(root, "binding");
  ASSERT_TRUE(binding);
  const auto* race = case_named(*binding, "binding.race");
  ASSERT_TRUE(race);
  const auto* skipped = race->child("skipped");
  ASSERT_TRUE(skipped);
  EXPECT_EQ(skipped->attr("message"), "the target has no call hook");
  EXPECT_FALSE(race->child("failure"));
  EXPECT_FALSE(race->child("error"));
}

TEST(JunitReport, IndeterminateCheckIsAnErrorNotAFailure) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* binding = suite_named(root, "binding");
  ASSERT_TRUE(binding);
  const auto* c = case_named(*binding, "binding.bound-caller");
  ASSERT_TRUE(c);
  const auto* error = c->child("error");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->attr("message"), "no answer within 5000 ms");
  EXPECT_NE(error->text.find("no answer: timeout"), std::string::npos) << error->text;
  EXPECT_FALSE(c->child("failure"));
  EXPECT_FALSE(c->child("skipped"));
}

TEST(JunitReport, WarningIsInSystemOutAndIsNotAFailure) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  const auto* c = case_named(*endpoints, "endpoints.version-prefix-only");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->child("failure"));
  EXPECT_FALSE(c->child("error"));
  EXPECT_FALSE(c->child("skipped"));
  const auto* out = c->child("system-out");
  ASSERT_TRUE(out);
  EXPECT_NE(out->text.find("WARNING"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find("GET /local-agents also answers 200"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find("http://127.0.0.1:18080/local-agents"), std::string::npos) << out->text;
}

TEST(JunitReport, PassingCheckHasNoFailureErrorOrSkip) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  const auto* c = case_named(*endpoints, "endpoints.agents-list");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->child("failure"));
  EXPECT_FALSE(c->child("error"));
  EXPECT_FALSE(c->child("skipped"));
}

TEST(JunitReport, RulesTestsuiteHasATestcasePerRuleWithItsOutcome) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  const auto* rules = suite_named(root, "rules");
  ASSERT_TRUE(rules);
  const auto cases = rules->all("testcase");
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0]->attr("name"), "E8 POST /channels/[id]/alias-numbers/tag tags an alias and returns it");
  EXPECT_EQ(cases[1]->attr("name"), "E1 GET /api/v1/local-agents lists the local agents");
  EXPECT_EQ(cases[2]->attr("name"), "B1 any caller may call a newly tagged alias");
  for (const auto* c : cases) EXPECT_EQ(c->attr("classname"), "crh.contract.rules");

  const auto* failed = cases[0]->child("failure");
  ASSERT_TRUE(failed) << "a rule whose check failed must fail";
  EXPECT_NE(failed->text.find("endpoints.tag"), std::string::npos) << failed->text;
  EXPECT_FALSE(cases[1]->child("failure"));
  EXPECT_FALSE(cases[1]->child("skipped"));
  const auto* uncovered = cases[2]->child("skipped");
  ASSERT_TRUE(uncovered) << "an uncovered rule is reported as skipped";
  EXPECT_FALSE(cases[2]->child("failure"));
  EXPECT_NE(uncovered->attr("message").value_or("").find("no selected check"), std::string::npos);
}

TEST(JunitReport, CountAttributesAgreeWithTheContent) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  long all_tests = 0, all_failures = 0, all_errors = 0, all_skipped = 0;
  for (const auto* suite : root.all("testsuite")) {
    long tests = 0, failures = 0, errors = 0, skipped = 0;
    for (const auto* c : suite->all("testcase")) {
      ++tests;
      failures += c->child("failure") != nullptr;
      errors += c->child("error") != nullptr;
      skipped += c->child("skipped") != nullptr;
    }
    const auto name = suite->attr("name").value_or("?");
    EXPECT_EQ(suite->attr("tests"), std::to_string(tests)) << name;
    EXPECT_EQ(suite->attr("failures"), std::to_string(failures)) << name;
    EXPECT_EQ(suite->attr("errors"), std::to_string(errors)) << name;
    EXPECT_EQ(suite->attr("skipped"), std::to_string(skipped)) << name;
    all_tests += tests;
    all_failures += failures;
    all_errors += errors;
    all_skipped += skipped;
  }
  EXPECT_EQ(root.attr("tests"), std::to_string(all_tests));
  EXPECT_EQ(root.attr("failures"), std::to_string(all_failures));
  EXPECT_EQ(root.attr("errors"), std::to_string(all_errors));
  EXPECT_EQ(root.attr("skipped"), std::to_string(all_skipped));
  // And the content is what the document says: 5 checks + 3 rules.
  EXPECT_EQ(all_tests, 8);
  EXPECT_EQ(all_failures, 2);
  EXPECT_EQ(all_errors, 1);
  EXPECT_EQ(all_skipped, 2);
}

TEST(JunitReport, TimesAndTimestampComeFromTheDocument) {
  const auto root = parse_report(junit_xml(test::crafted_contract_result()));
  EXPECT_EQ(root.attr("time"), "2.500");
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  EXPECT_EQ(endpoints->attr("time"), "0.292");  // 12 + 30 + 250 ms
  for (const auto* s : root.all("testsuite")) EXPECT_EQ(s->attr("timestamp"), "2024-05-01T12:34:56");
}

TEST(JunitReport, HostileTextIsEscapedInTheRawXml) {
  const auto xml = junit_xml(test::crafted_contract_result());
  EXPECT_EQ(xml.find('\x01'), std::string::npos) << "a control byte reached the XML";
  EXPECT_EQ(xml.find("<html>"), std::string::npos);
  EXPECT_EQ(xml.find("<b>boom"), std::string::npos);
  EXPECT_EQ(xml.find("& \""), std::string::npos);
  EXPECT_NE(xml.find("tag answered &lt;html&gt; &amp; &quot;oops&quot; ? end"), std::string::npos) << xml;
  EXPECT_NE(xml.find("HTTP 500 &lt;b&gt;boom&lt;/b&gt;"), std::string::npos) << xml;
  EXPECT_NE(xml.find("tag=crh-1&amp;minutes=5"), std::string::npos) << xml;
}

TEST(JunitReport, HostileSuiteAndCheckNamesStayWellFormed) {
  auto doc = test::crafted_contract_result();
  auto& check = doc.at("checks").as_array()[2].as_object();
  check["id"] = "evil\"<id>&\x02";
  check["suite"] = "endpoints";
  doc.at("rules").as_array()[0].as_object()["text"] = "rule \"with\" <markup> & \x7f";
  doc.as_object()["started_at"] = "<now>&\"";
  const auto root = parse_report(junit_xml(doc));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  EXPECT_TRUE(case_named(*endpoints, "evil\"<id>&?"));
  const auto* rules = suite_named(root, "rules");
  ASSERT_TRUE(rules);
  EXPECT_TRUE(case_named(*rules, "E8 rule \"with\" <markup> & ?"));
}

TEST(JunitReport, PassingRunHasNoFailuresOrErrors) {
  auto doc = test::crafted_contract_result();
  for (auto& c : doc.at("checks").as_array()) c.as_object()["outcome"] = "pass";
  for (auto& r : doc.at("rules").as_array())
    if (r.at("outcome") != "uncovered") r.as_object()["outcome"] = "pass";
  const auto root = parse_report(junit_xml(doc));
  EXPECT_EQ(root.attr("failures"), "0");
  EXPECT_EQ(root.attr("errors"), "0");
  EXPECT_EQ(root.attr("skipped"), "1");  // the uncovered rule
  EXPECT_EQ(root.attr("tests"), "8");
}

// A document with fields removed: the testcases show what is there, and one
// more testsuite names what is not, as an error a CI server shows.
TEST(JunitReport, ADocumentWithFieldsRemovedNamesThemAndDoesNotThrow) {
  auto doc = test::crafted_contract_result();
  auto& o = doc.as_object();
  o["checks"].as_array()[2].as_object().erase("evidence");
  o["checks"].as_array()[3].as_object()["duration_ms"] = "slow";
  o["rules"].as_array()[0].as_object().erase("checks");
  std::string xml;
  ASSERT_NO_THROW(xml = junit_xml(doc));
  const auto root = parse_report(xml);
  const auto* suite = suite_named(root, "document");
  ASSERT_TRUE(suite) << xml;
  EXPECT_EQ(suite->attr("tests"), "1");
  EXPECT_EQ(suite->attr("errors"), "1");
  const auto* c = case_named(*suite, "every field the report reads is present");
  ASSERT_TRUE(c && c->child("error")) << xml;
  const auto message = c->child("error")->attr("message").value_or("");
  EXPECT_EQ(message.rfind("missing from the document: ", 0), 0u) << message;
  for (const auto* path : {"checks[2].evidence", "checks[3].duration_ms (not a number)", "rules[0].checks"})
    EXPECT_NE(message.find(path), std::string::npos) << path << ": " << message;
  EXPECT_TRUE(case_named(*suite_named(root, "endpoints"), "endpoints.tag")) << "the rest is still there";
  EXPECT_EQ(root.attr("errors"), "2") << "the indeterminate check and the missing fields";
  EXPECT_FALSE(suite_named(parse_report(junit_xml(test::crafted_contract_result())), "document"))
      << "a complete document has no such testsuite";
}

TEST(JunitXmlEscape, EscapesMarkupAndReplacesControlBytes) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\x1f\x7fz\0", 7)), "x?y??z?");
  EXPECT_EQ(xml_escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(xml_escape("caf\xC3\xA9"), "caf\xC3\xA9");
}

}  // namespace
}  // namespace crh::reports
