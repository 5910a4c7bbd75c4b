// The JUnit XML a CI server reads: a testsuite per suite plus "rules",
// failures with their evidence, skips with reasons, indeterminate checks as
// errors, warnings only in system-out, counts that agree with the content,
// and XML that stays well-formed whatever text a target sent back.
#include "reports/junit.hpp"

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

// A result document as contracts::result_document writes it: two suites, one
// check of each outcome, a rule of each kind and hostile text in the failure.
json::value crafted_result() {
  return json::parse(R"json({
    "schema": "crh.result", "schema_version": 1, "kind": "contract",
    "tool": {"name": "crh", "version": "0.1.0"},
    "started_at": "2024-05-01T12:34:56Z",
    "duration_ms": 2500.0,
    "target": {"base_url": "http://127.0.0.1:18080", "channel": "1", "embedded": false},
    "config": {"suites": [], "checks": [], "slow": false, "strict": false, "minute_ms": 60000,
               "timeout_ms": 5000, "profile": {}},
    "verdict": {"status": "failed", "exit_code": 1, "reason": "1 check(s) failed"},
    "counts": {"total": 5, "pass": 1, "warn": 1, "fail": 1, "skip": 1, "indeterminate": 1},
    "notes": ["the profile expects form-encoded parameters"],
    "suites": [
      {"name": "endpoints", "counts": {"total": 3, "pass": 1, "warn": 1, "fail": 1, "skip": 0, "indeterminate": 0}},
      {"name": "binding", "counts": {"total": 2, "pass": 0, "warn": 0, "fail": 0, "skip": 1, "indeterminate": 1}}
    ],
    "rules": [
      {"id": "E8", "section": "4", "text": "POST /channels/[id]/alias-numbers/tag tags an alias and returns it",
       "outcome": "fail", "checks": [{"id": "endpoints.tag", "outcome": "fail", "severity": "MUST"}]},
      {"id": "E1", "section": "4", "text": "GET /api/v1/local-agents lists the local agents",
       "outcome": "pass", "checks": [{"id": "endpoints.agents-list", "outcome": "pass", "severity": "MUST"}]},
      {"id": "B1", "section": "1", "text": "any caller may call a newly tagged alias",
       "outcome": "uncovered", "checks": []}
    ],
    "checks": [
      {"id": "endpoints.agents-list", "suite": "endpoints",
       "summary": "GET /api/v1/local-agents answers 200 with a JSON list of agents",
       "rules": ["E1", "C1"], "severity": "MUST", "outcome": "pass", "message": "", "duration_ms": 12.0,
       "findings": [],
       "evidence": [{"curl": "curl -sS -H 'Apikey: $CRH_API_KEY' http://127.0.0.1:18080/api/v1/local-agents",
                     "answer": "HTTP 200 [{\"id\":1}]", "elapsed_ms": 1.5}]},
      {"id": "endpoints.version-prefix-only", "suite": "endpoints",
       "summary": "the agent list is not also served without /api/v1",
       "rules": ["V1"], "severity": "SHOULD", "outcome": "warn", "message": "GET /local-agents also answers 200",
       "duration_ms": 30.0,
       "findings": [{"severity": "SHOULD", "rule": "V1", "text": "GET /local-agents also answers 200"}],
       "evidence": [{"curl": "curl -sS -H 'Apikey: $CRH_API_KEY' http://127.0.0.1:18080/local-agents",
                     "answer": "HTTP 200 []", "elapsed_ms": 1.0}]},
      {"id": "endpoints.tag", "suite": "endpoints",
       "summary": "POST /channels/[id]/alias-numbers/tag answers 200 with the tagged alias",
       "rules": ["E8", "C1", "C2"], "severity": "MUST", "outcome": "fail",
       "message": "tag answered <html> & \"oops\" \u0001 end", "duration_ms": 250.0,
       "findings": [{"severity": "MUST", "rule": "E8", "text": "tag answered <html> & \"oops\" \u0001 end"},
                    {"severity": "MUST", "rule": "C1", "text": "the body is not JSON"}],
       "evidence": [{"curl": "curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'tag=crh-1&minutes=5' http://127.0.0.1:18080/channels/1/alias-numbers/tag",
                     "answer": "HTTP 500 <b>boom</b>", "elapsed_ms": 2.0}]},
      {"id": "binding.race", "suite": "binding", "summary": "two callers race for a tagged alias",
       "rules": ["B2"], "severity": "MUST", "outcome": "skip", "message": "the target has no call hook",
       "duration_ms": 0.0, "findings": [], "evidence": []},
      {"id": "binding.bound-caller", "suite": "binding", "summary": "only the bound caller may call",
       "rules": ["B3"], "severity": "MUST", "outcome": "indeterminate",
       "message": "no answer within 5000 ms", "duration_ms": 5001.0, "findings": [],
       "evidence": [{"curl": "curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'caller=c1' http://127.0.0.1:18080/channels/1/alias-numbers/3/calls",
                     "answer": "no answer: timeout", "elapsed_ms": 5000.0}]}
    ]
  })json");
}

// --- a small XML reader: enough of XML 1.0 to prove the report well-formed --

struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // values with entities decoded
  std::vector<Element> children;
  std::string text;  // character data directly inside, entities decoded

  std::optional<std::string> attr(std::string_view key) const {
    for (const auto& [k, v] : attrs)
      if (k == key) return v;
    return std::nullopt;
  }
  std::vector<const Element*> all(std::string_view tag) const {
    std::vector<const Element*> out;
    for (const auto& c : children)
      if (c.name == tag) out.push_back(&c);
    return out;
  }
  const Element* child(std::string_view tag) const {
    auto v = all(tag);
    return v.empty() ? nullptr : v.front();
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : s_(text) {}

  // The root element, or nullopt with error() saying where and why.
  std::optional<Element> parse() {
    Element root;
    if (s_.substr(0, 5) == "<?xml") {
      auto end = s_.find("?>");
      if (end == std::string_view::npos) return fail("unterminated XML declaration");
      i_ = end + 2;
    }
    skip_space();
    if (!element(root)) return std::nullopt;
    skip_space();
    if (i_ != s_.size()) return fail("content after the root element");
    return root;
  }
  const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at offset " + std::to_string(i_);
    return std::nullopt;
  }
  bool failed(const std::string& why) {
    fail(why);
    return false;
  }
  bool at_end() const { return i_ >= s_.size(); }
  void skip_space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  static bool name_char(char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) || c == '_' || c == ':' || (!first && (std::isdigit(u) || c == '-' || c == '.'));
  }
  bool name(std::string& out) {
    const auto start = i_;
    while (!at_end() && name_char(s_[i_], i_ == start)) ++i_;
    out = std::string(s_.substr(start, i_ - start));
    return !out.empty() || failed("expected a name");
  }
  // One character of character data or an attribute value, entities decoded.
  bool char_data(std::string& out) {
    const auto c = static_cast<unsigned char>(s_[i_]);
    if (c == '<') return failed("raw '<' in text");
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return failed("control byte in text");
    if (c == 0x7f) return failed("DEL byte in text");
    if (c != '&') {
      out.push_back(static_cast<char>(c));
      ++i_;
      return true;
    }
    const auto semi = s_.find(';', i_);
    if (semi == std::string_view::npos || semi - i_ > 10) return failed("raw '&' in text");
    const auto entity = s_.substr(i_ + 1, semi - i_ - 1);
    if (entity == "amp") out += '&';
    else if (entity == "lt") out += '<';
    else if (entity == "gt") out += '>';
    else if (entity == "quot") out += '"';
    else if (entity == "apos") out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      const long cp = std::stol(std::string(entity.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10);
      if (cp < 0x20 && cp != 9 && cp != 10 && cp != 13) return failed("character reference to a control byte");
      out += cp < 0x80 ? std::string(1, static_cast<char>(cp)) : "?";
    } else {
      return failed("unknown entity &" + std::string(entity) + ";");
    }
    i_ = semi + 1;
    return true;
  }
  bool element(Element& e) {
    if (at_end() || s_[i_] != '<') return failed("expected '<'");
    ++i_;
    if (!name(e.name)) return false;
    std::set<std::string> seen;
    for (;;) {
      const auto before = i_;
      skip_space();
      if (at_end()) return failed("unterminated start tag <" + e.name);
      if (s_.substr(i_, 2) == "/>") {
        i_ += 2;
        return true;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (i_ == before) return failed("no space before an attribute of <" + e.name);
      std::string key, value;
      if (!name(key)) return false;
      if (!seen.insert(key).second) return failed("duplicate attribute " + key);
      if (at_end() || s_[i_] != '=') return failed("expected '=' after " + key);
      ++i_;
      if (at_end() || s_[i_] != '"') return failed("attribute " + key + " is not in double quotes");
      ++i_;
      while (!at_end() && s_[i_] != '"')
        if (!char_data(value)) return false;
      if (at_end()) return failed("unterminated attribute " + key);
      ++i_;
      e.attrs.emplace_back(key, value);
    }
    for (;;) {
      if (at_end()) return failed("unterminated element <" + e.name + ">");
      if (s_.substr(i_, 2) == "</") {
        i_ += 2;
        std::string closing;
        if (!name(closing)) return false;
        if (closing != e.name) return failed("</" + closing + "> closes <" + e.name + ">");
        skip_space();
        if (at_end() || s_[i_] != '>') return failed("unterminated end tag");
        ++i_;
        return true;
      }
      if (s_[i_] == '<') {
        if (s_.substr(i_, 2) == "<!" || s_.substr(i_, 2) == "<?") return failed("unexpected markup declaration");
        e.children.emplace_back();
        if (!element(e.children.back())) return false;
      } else if (!char_data(e.text)) {
        return false;
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string error_;
};

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
  for (std::string_view bad : {"<a>x < y</a>", "<a>fish & chips</a>", "<a b=\"1\">&foo;</a>", "<a><b></a></b>",
                               "<a>\x01</a>", "<a b='1'/>", "<a b=\"x<y\"/>", "<a>", "<a/><b/>", "<a b=\"1\"c=\"2\"/>"}) {
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
  const auto xml = junit_xml(crafted_result());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u) << xml;
  const auto root = parse_report(xml);
  EXPECT_EQ(root.name, "testsuites");
}

TEST(JunitReport, HasATestsuitePerSuiteAndARulesTestsuite) {
  const auto root = parse_report(junit_xml(crafted_result()));
  std::vector<std::string> names;
  for (const auto* s : root.all("testsuite")) names.push_back(s->attr("name").value_or("?"));
  EXPECT_EQ(names, (std::vector<std::string>{"endpoints", "binding", "rules"}));
  EXPECT_EQ(root.children.size(), 3u);
}

TEST(JunitReport, HasATestcasePerCheckNamedByCheckId) {
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
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

TEST(JunitReport, SkippedCheckCarriesItsReason) {
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  const auto* c = case_named(*endpoints, "endpoints.agents-list");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->child("failure"));
  EXPECT_FALSE(c->child("error"));
  EXPECT_FALSE(c->child("skipped"));
}

TEST(JunitReport, RulesTestsuiteHasATestcasePerRuleWithItsOutcome) {
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
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
  const auto root = parse_report(junit_xml(crafted_result()));
  EXPECT_EQ(root.attr("time"), "2.500");
  const auto* endpoints = suite_named(root, "endpoints");
  ASSERT_TRUE(endpoints);
  EXPECT_EQ(endpoints->attr("time"), "0.292");  // 12 + 30 + 250 ms
  for (const auto* s : root.all("testsuite")) EXPECT_EQ(s->attr("timestamp"), "2024-05-01T12:34:56");
}

TEST(JunitReport, HostileTextIsEscapedInTheRawXml) {
  const auto xml = junit_xml(crafted_result());
  EXPECT_EQ(xml.find('\x01'), std::string::npos) << "a control byte reached the XML";
  EXPECT_EQ(xml.find("<html>"), std::string::npos);
  EXPECT_EQ(xml.find("<b>boom"), std::string::npos);
  EXPECT_EQ(xml.find("& \""), std::string::npos);
  EXPECT_NE(xml.find("tag answered &lt;html&gt; &amp; &quot;oops&quot; ? end"), std::string::npos) << xml;
  EXPECT_NE(xml.find("HTTP 500 &lt;b&gt;boom&lt;/b&gt;"), std::string::npos) << xml;
  EXPECT_NE(xml.find("tag=crh-1&amp;minutes=5"), std::string::npos) << xml;
}

TEST(JunitReport, HostileSuiteAndCheckNamesStayWellFormed) {
  auto doc = crafted_result();
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
  auto doc = crafted_result();
  for (auto& c : doc.at("checks").as_array()) c.as_object()["outcome"] = "pass";
  for (auto& r : doc.at("rules").as_array())
    if (r.at("outcome") != "uncovered") r.as_object()["outcome"] = "pass";
  const auto root = parse_report(junit_xml(doc));
  EXPECT_EQ(root.attr("failures"), "0");
  EXPECT_EQ(root.attr("errors"), "0");
  EXPECT_EQ(root.attr("skipped"), "1");  // the uncovered rule
  EXPECT_EQ(root.attr("tests"), "8");
}

TEST(JunitXmlEscape, EscapesMarkupAndReplacesControlBytes) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\x1f\x7fz\0", 7)), "x?y??z?");
  EXPECT_EQ(xml_escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(xml_escape("caf\xC3\xA9"), "caf\xC3\xA9");
}

}  // namespace
}  // namespace crh::reports
