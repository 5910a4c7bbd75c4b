// The HTML report, read from the run document only.
#include "reports/html.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "reports/capture_section.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "reports/html_parts.hpp"
#include "reports/junit.hpp"
#include "reports/rerun.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace html {

std::string esc(std::string_view s) { return xml_escape(s); }

std::string whole(double v) { return fixed(v, 0); }

std::string badge(const std::string& outcome) {
  std::string label = outcome;
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return "<span class=\"badge o-" + class_name(outcome) + "\">" + esc(label) + "</span>";
}

std::string class_name(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '-');
  return out;
}

}  // namespace html

namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
using html::badge;
using html::esc;
using html::whole;
namespace {

std::string anchor_id(std::string_view prefix, std::string_view id) {
  std::string out(prefix);
  for (char c : id) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_');
  return out;
}

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;margin:0 auto;max-width:1100px;padding:0 20px 40px}
h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:2px solid #d0d7de;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}p.meta{color:#57606a;margin:0 0 12px}
.verdict{border-radius:6px;padding:12px 16px;margin:12px 0;border:2px solid}
.verdict.passed{background:#dafbe1;border-color:#1a7f37}.verdict.inconclusive,.verdict.unreliable{background:#fff8c5;border-color:#9a6700}.verdict.failed,.verdict.unreachable,.verdict.untested,.verdict.incomplete{background:#ffebe9;border-color:#cf222e}
.verdict strong{font-size:18px}.verdict ul{margin:6px 0 0 0;padding-left:20px}
nav{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;margin:10px 0}nav a{margin-right:14px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.wide{min-width:240px}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.regressed td{background:#ffebe9}tr.regressed td.mark,.bad{color:#cf222e;font-weight:bold}.good{color:#1a7f37}
.badge{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;font-weight:bold;color:#fff;background:#57606a;white-space:nowrap}
.o-pass,.o-passed,.o-held{background:#1a7f37}.o-fail,.o-failed,.o-breached,.o-unreachable,.o-incomplete{background:#cf222e}.o-warn{background:#9a6700}
.o-skip,.o-uncovered,.o-no-change,.o-too-noisy{background:#8c959f}.o-indeterminate{background:#8250df}
.o-regressed{background:#cf222e}.o-improved{background:#1a7f37}.o-inconclusive,.o-unreliable,.o-not-backed{background:#9a6700}
.ci{font-size:11px;color:#57606a}.nb-why{white-space:normal;display:inline-block;max-width:11em}.notbacked{font-size:11px;color:#9a6700;font-weight:bold}tr.inconclusive td{background:#fff8c5}
svg.strip{vertical-align:middle;max-width:none;width:120px;height:18px}td.why{min-width:220px;font-size:12px}
a.chip{display:inline-block;margin:1px 2px;padding:0 5px;border-radius:4px;font-size:11px;text-decoration:none;color:#fff}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:6px 8px;white-space:pre-wrap;word-break:break-all;font-size:12px;margin:4px 0}
.check{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;margin:6px 0}.check.o-fail-box{border-color:#cf222e;border-width:2px}
.check.o-warn-box{border-color:#9a6700}.check .sum{color:#57606a}details summary{cursor:pointer}
ul.compact{margin:2px 0;padding-left:20px}
figure.chart{margin:10px 0}svg{max-width:100%;height:auto;font-family:inherit}
svg .title{font-size:14px;font-weight:bold;fill:#1b1f24}svg .tick,svg .value{font-size:11px;fill:#57606a}
svg .axis-title,svg .legend{font-size:12px;fill:#1b1f24}svg .note{font-size:13px;fill:#57606a}
svg .axis{stroke:#57606a;stroke-width:1}svg .grid{stroke:#eaeef2;stroke-width:1}svg .line{fill:none;stroke-width:2}
svg .legend-box{paint-order:stroke}
.muted{color:#57606a}
@media print{nav{display:none}body{max-width:none}.check,figure.chart,table{break-inside:avoid}details{display:block}}
)";

}  // namespace

std::string html::page_start(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>" +
         esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
}

namespace {

// ---- sections

std::string verdict_section(const DocView& doc) {
  const auto v = doc[k::envelope::verdict];
  const std::string status = v[k::verdict::status].str();
  std::string out = "<div class=\"verdict " + esc(status) + "\"><strong>" + status_label(status) +
                    "</strong> (exit code " + whole(v[k::verdict::exit_code].num()) + ")";
  const auto reasons = v[k::verdict::reasons].items();
  if (reasons.empty()) out += "<p>" + esc(v[k::verdict::reason].str()) + "</p>";
  else {
    out += "<ul>";
    for (const auto& r : reasons) out += "<li>" + esc(r.str()) + "</li>";
    out += "</ul>";
  }
  for (const auto& s : doc[k::run::skipped].items()) out += "<p class=\"muted\">left out: " + esc(s.str()) + "</p>";
  return out + "</div>\n";
}

std::string coverage_section(const DocView& contract) {
  std::string out =
      "<h3 id=\"coverage\">Rule coverage</h3>\n<p class=\"muted\">Each rule of the spec, its outcome (the worst of "
      "its checks' outcomes on it: a check that failed on another rule covered this one without contradicting it), "
      "and the checks that cover it; a chip links to the check and its evidence.</p>\n"
      "<table><tr><th>rule</th><th>spec</th><th>what it says</th><th>outcome</th><th>checks</th></tr>\n";
  namespace rc = k::rule_check;
  for (const auto& rule : contract[k::contract::rules].items()) {
    std::string chips;
    for (const auto& c : rule[k::rule::checks].items()) {
      const std::string outcome = c[rc::outcome].str(), id = c[rc::id].str(), own = c.find(rc::check_outcome).str();
      chips += "<a class=\"chip o-" + esc(outcome) + "\" href=\"#" + anchor_id("check-", id) + "\" title=\"" +
               esc(outcome + " on this rule, " + c[rc::severity].str() +
                   (own.empty() ? "" : "; the check's own outcome: " + own)) +
               "\">" + esc(id) + "</a>";
    }
    out += "<tr><td>" + esc(rule[k::rule::id].str()) + "</td><td>" + esc(rule[k::rule::section].str()) +
           "</td><td class=\"wide\">" + esc(rule[k::rule::text].str()) + "</td><td>" +
           badge(rule[k::rule::outcome].str()) + "</td><td>" +
           (chips.empty() ? "<span class=\"muted\">none selected</span>" : chips) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// How to rerun a failed or warned check, as the producer recorded it.
std::string rerun_html(const DocView& contract, const DocView& c) {
  if (contract.find(k::envelope::kind).str() != k::kind_contract) return {};
  const bool needs_key =
      !contract[k::envelope::target][k::target::embedded].boolean() && !rerun_reads_key_file(contract);
  return "<p>rerun: <code>" + esc(rerun_command(contract, c[k::check::id].str())) + "</code>" +
         (needs_key ? " <span class=\"muted\">(export CRH_API_KEY first)</span>" : "") + "</p>";
}

std::string check_block(const DocView& contract, const DocView& c) {
  namespace ch = k::check;
  const std::string outcome = c[ch::outcome].str();
  const bool open = outcome == "fail" || outcome == "warn" || outcome == "indeterminate";
  std::string rules;
  for (const auto& r : c[ch::rules].items()) rules += (rules.empty() ? "" : " ") + r.str();
  const std::string id = c[ch::id].str(), message = c[ch::message].str();
  std::string out = "<div class=\"check o-" + esc(outcome) + "-box\" id=\"" + anchor_id("check-", id) + "\">" +
                    badge(outcome) + " <code>" + esc(id) + "</code> <span class=\"muted\">" +
                    esc(c[ch::severity].str()) + ", rules " + esc(rules) + ", " + fixed(c[ch::duration_ms].num(), 1) +
                    " ms</span><br/><span class=\"sum\">" + esc(c[ch::summary].str()) + "</span>";
  if (!message.empty()) out += "<p><strong>" + esc(message) + "</strong></p>";
  if (outcome == "fail" || outcome == "warn") out += rerun_html(contract, c);
  if (const std::string script = reproducer_script(contract, c); !script.empty())
    out += "<details><summary>reproducer: a sh script (curl) that exits 1 while the service still fails this way; "
           "--reproducers DIR writes it</summary><pre>" + esc(script) + "</pre></details>";
  const auto findings = c[ch::findings].items();
  if (!findings.empty()) {
    out += "<ul class=\"compact\">";
    for (const auto& f : findings)
      out += "<li>" + esc(f[k::finding::severity].str()) + " " + esc(f[k::finding::rule].str()) + ": " +
             esc(f[k::finding::text].str()) + "</li>";
    out += "</ul>";
  }
  const auto evidence = c[ch::evidence].items();
  if (!evidence.empty()) {
    std::string ev;
    for (const auto& e : evidence)
      ev += "<pre>$ " + esc(e[k::evidence::curl].str()) + "\n→ " + esc(e[k::evidence::answer].str()) + "</pre>";
    const std::string label =
        std::to_string(evidence.size()) + " exchange(s); rerun with <code>export CRH_API_KEY=…</code>";
    out += open ? "<p class=\"muted\">" + label + "</p>" + ev
                : "<details><summary>" + label + "</summary>" + ev + "</details>";
  }
  return out + "</div>\n";
}

std::string counts_row(const std::string& name, const DocView& c) {
  namespace n = k::counts;
  return "<tr><td>" + name + "</td><td class=\"n\">" + whole(c[n::total].num()) + "</td><td class=\"n\">" +
         whole(c[n::pass].num()) + "</td><td class=\"n\">" + whole(c[n::warn].num()) + "</td><td class=\"n" +
         (c[n::fail].num() > 0 ? " bad" : "") + "\">" + whole(c[n::fail].num()) + "</td><td class=\"n\">" +
         whole(c[n::indeterminate].num()) + "</td><td class=\"n\">" + whole(c[n::skip].num()) + "</td></tr>\n";
}

std::string contract_section(const DocView& contract) {
  const auto v = contract[k::envelope::verdict];
  std::string out = "<h2 id=\"contract\">Contract</h2>\n<p>" + badge(v[k::verdict::status].str()) + " " +
                    esc(v[k::verdict::reason].str()) + "</p>\n";
  if (contract.find(k::envelope::preflight).is_object())
    return out + "<p>Nothing else was run: the target cannot be tested as configured.</p>\n";
  for (const auto& n : contract[k::contract::notes].items()) out += "<p class=\"bad\">note: " + esc(n.str()) + "</p>\n";
  out += capture_html(contract.find(k::live_capture::section));
  out +=
      "<table><tr><th>suite</th><th class=\"n\">checks</th><th class=\"n\">pass</th><th class=\"n\">warn</th>"
      "<th class=\"n\">fail</th><th class=\"n\">indeterminate</th><th class=\"n\">skip</th></tr>\n";
  for (const auto& s : contract[k::contract::suites].items())
    out += counts_row(esc(s[k::suite::name].str()), s[k::suite::counts]);
  out += counts_row("<strong>all</strong>", contract[k::contract::counts]) + "</table>\n";
  out += coverage_section(contract);
  out +=
      "<h3 id=\"checks\">Checks</h3>\n<p class=\"muted\">Failures, warnings and undecided checks show their exchanges; "
      "the others keep theirs folded. Every exchange is a curl command with the key as "
      "<code>$CRH_API_KEY</code>.</p>\n";
  std::string suite;
  for (const auto& c : contract[k::contract::checks].items()) {
    if (const std::string mine = c[k::check::suite].str(); mine != suite)
      out += "<h3>suite " + esc(suite = mine) + "</h3>\n";
    out += check_block(contract, c);
  }
  return out;
}

std::string key_values(const DocView& o) {
  std::string out = "<table>";
  for (const auto& [key, v] : o.fields())
    out += "<tr><th>" + esc(key) + "</th><td><code>" + esc(v.is_string() ? v.str() : json::serialize(*v.value())) +
           "</code></td></tr>";
  return out + "</table>\n";
}

std::string configuration_section(const DocView& doc, const DocView& contract, const std::vector<DocView>& loads) {
  std::string out = "<h2 id=\"configuration\">Configuration and environment</h2>\n<h3>Run</h3>\n" +
                    key_values(doc[k::envelope::config]);
  if (contract.is_object()) {
    const auto config = contract[k::envelope::config];
    json::object shown = config.object() ? *config.object() : json::object{};
    shown.erase(k::contract_config::profile);
    const auto* profile = config[k::contract_config::profile].object();
    out += "<h3>Contract</h3>\n" + key_values(DocView(shown)) +
           "<p class=\"muted\">Profile (what was expected where the spec is silent):</p><pre>" +
           esc(json::serialize(profile ? *profile : json::object{})) + "</pre>\n";
  }
  for (const auto& l : loads) {
    const auto config = l[k::envelope::config];
    out += "<h3>Load: " + esc(config[k::load_config::scenario].str()) + "</h3>\n" + key_values(config);
  }
  return out + "<h3>Environment</h3>\n" + key_values(doc[k::run::environment]);
}

}  // namespace

std::string html_report(const json::object& run_document) {
  const DocView doc(run_document);
  const auto target = doc[k::envelope::target];
  const auto contract = doc[k::run::contract];
  const auto loads = doc[k::run::loads].items();
  const auto comparison = doc[k::run::comparison];
  const auto tool = doc[k::envelope::tool];
  const std::string base_url = target[k::target::base_url].str();

  std::string out =
      html::page_start("crh report: " + doc[k::envelope::verdict][k::verdict::status].str() + ", " + base_url);
  out += "<h1>crh report</h1>\n<p class=\"meta\">" + esc(base_url) + ", channel " +
         esc(target[k::target::channel].str()) +
         (target[k::target::embedded].boolean() ? " (the embedded reference service)" : "") + "; started " +
         esc(doc[k::envelope::started_at].str()) + ", " + fixed(doc[k::envelope::duration_ms].num() / 1000, 1) +
         " s; " + esc(tool[k::tool::name].str()) + " " + esc(tool[k::tool::version].str()) + "</p>\n";
  out += verdict_section(doc);
  out += "<nav>";
  if (comparison.is_object())
    out += std::string("<a href=\"#comparison\">") +
           (comparison.find("mode").str() == "nights" ? "nights" : "baseline") + "</a>";
  if (contract.is_object())
    out += "<a href=\"#contract\">contract</a><a href=\"#coverage\">rule coverage</a><a href=\"#checks\">checks</a>";
  for (const auto& l : loads) {
    const std::string s = l[k::envelope::config][k::load_config::scenario].str();
    out += "<a href=\"#load-" + esc(s) + "\">load: " + esc(s) + "</a>";
  }
  out += "<a href=\"#configuration\">configuration</a></nav>\n";
  for (const auto& p : doc[k::run::problems].items())
    out += "<p class=\"bad\">could not run: " + esc(p.str()) + "</p>\n";
  if (comparison.is_object()) out += html::comparison_section(comparison);
  if (contract.is_object()) out += contract_section(contract);
  for (const auto& l : loads) out += html::load_section(l);
  out += capture_html(doc.find(k::live_capture::section), true);  // crh run: one capture of the whole run
  out += configuration_section(doc, contract, loads);
  // Last, once every section has looked: what the document lacked.
  if (const std::string missing = doc.missing_footnote(); !missing.empty())
    out += "<p class=\"bad\" id=\"missing\">" + esc(missing) + "</p>\n";
  out += "<p class=\"muted\">Written by crh from the JSON result; every figure here is in it.</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace crh::reports
