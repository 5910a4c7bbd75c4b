// The HTML report, read from the run document only.
#include "reports/html.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>

#include "core/histogram.hpp"
#include "reports/junit.hpp"
#include "reports/load_terminal.hpp"
#include "reports/svg.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace {

// ---- reading the document leniently: a report renders what is there

const json::object& empty_object() {
  static const json::object empty;
  return empty;
}
const json::array& empty_array() {
  static const json::array empty;
  return empty;
}
const json::object& obj(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_object() ? p->get_object() : empty_object();
}
const json::object& obj(const json::value& v) { return v.is_object() ? v.get_object() : empty_object(); }
const json::array& arr(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_array() ? p->get_array() : empty_array();
}
std::string text(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_string() ? std::string(p->get_string()) : std::string{};
}
double number(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_number() ? p->to_number<double>() : 0.0;
}
bool flag(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_bool() && p->get_bool();
}

std::string esc(std::string_view s) { return xml_escape(s); }

std::string whole(double v) { return fixed(v, 0); }

std::string percent(double fraction) { return fixed(fraction * 100, fraction < 0.001 && fraction > 0 ? 3 : 2) + "%"; }

std::string badge(const std::string& outcome) {
  std::string label = outcome;
  std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return "<span class=\"badge o-" + esc(outcome) + "\">" + esc(label) + "</span>";
}

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
.verdict.passed{background:#dafbe1;border-color:#1a7f37}.verdict.failed,.verdict.unreachable,.verdict.untested,.verdict.incomplete{background:#ffebe9;border-color:#cf222e}
.verdict strong{font-size:18px}.verdict ul{margin:6px 0 0 0;padding-left:20px}
nav{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;margin:10px 0}nav a{margin-right:14px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.wide{min-width:240px}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.regressed td{background:#ffebe9}tr.regressed td.mark,.bad{color:#cf222e;font-weight:bold}.good{color:#1a7f37}
.badge{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;font-weight:bold;color:#fff;background:#57606a;white-space:nowrap}
.o-pass,.o-passed,.o-held{background:#1a7f37}.o-fail,.o-failed,.o-breached,.o-unreachable,.o-incomplete{background:#cf222e}.o-warn{background:#9a6700}
.o-skip,.o-uncovered{background:#8c959f}.o-indeterminate{background:#8250df}
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

// ---- sections

std::string verdict_section(const json::object& doc) {
  const auto& v = obj(doc, "verdict");
  const std::string status = text(v, "status");
  std::string out = "<div class=\"verdict " + esc(status) + "\"><strong>" +
                    status_label(status) +
                    "</strong> (exit code " + whole(number(v, "exit_code")) + ")";
  const auto& reasons = arr(v, "reasons");
  if (reasons.empty()) out += "<p>" + esc(text(v, "reason")) + "</p>";
  else {
    out += "<ul>";
    for (const auto& r : reasons) out += "<li>" + esc(r.is_string() ? std::string(r.get_string()) : "") + "</li>";
    out += "</ul>";
  }
  for (const auto& s : arr(doc, "skipped")) out += "<p class=\"muted\">left out: " + esc(s.is_string() ? std::string(s.get_string()) : "") + "</p>";
  return out + "</div>\n";
}

std::string comparison_section(const json::object& c) {
  const auto& base = obj(c, "baseline");
  const double limit = number(c, "max_regression_pct");
  std::string out = "<h2 id=\"comparison\">Comparison with the baseline</h2>\n<p>Baseline: <code>" + esc(text(base, "file")) +
                    "</code>, run " + esc(text(base, "started_at")) + " against " + esc(text(base, "base_url")) +
                    ". Limit: a figure may worsen by at most " + fixed(limit, 1) + "% (latency up, throughput down; an error rate also by at least 0.1 percentage point). " +
                    "<strong class=\"" + std::string(number(c, "regressions") > 0 ? "bad" : "good") + "\">" +
                    whole(number(c, "regressions")) + " figure(s) regressed.</strong></p>\n";
  for (const auto& n : arr(c, "notes")) out += "<p class=\"muted\">note: " + esc(n.is_string() ? std::string(n.get_string()) : "") + "</p>\n";
  out += "<table><tr><th>scenario</th><th>operation</th><th>figure</th><th class=\"n\">baseline</th><th class=\"n\">now</th>"
         "<th class=\"n\">change</th><th>status</th></tr>\n";
  // Regressions first, then the rest in document order.
  std::vector<const json::object*> rows;
  for (const auto& f : arr(c, "figures"))
    if (flag(obj(f), "regressed")) rows.push_back(&obj(f));
  for (const auto& f : arr(c, "figures"))
    if (!flag(obj(f), "regressed")) rows.push_back(&obj(f));
  for (const auto* f : rows) {
    const bool regressed = flag(*f, "regressed");
    const auto* change = f->if_contains("change_pct");
    const std::string change_text =
        change && change->is_number() ? (change->to_number<double>() >= 0 ? "+" : "") + fixed(change->to_number<double>(), 1) + "%"
                                      : std::string("new");
    const auto* worse = f->if_contains("worse_pct");
    const bool better = worse && worse->is_number() && worse->to_number<double>() < 0;
    out += std::string("<tr") + (regressed ? " class=\"regressed\"" : "") + "><td>" + esc(text(*f, "scenario")) + "</td><td>" +
           esc(text(*f, "operation")) + "</td><td>" + esc(text(*f, "figure")) + "</td><td class=\"n\">" +
           esc(format_figure(text(*f, "unit"), number(*f, "baseline"))) + "</td><td class=\"n\">" +
           esc(format_figure(text(*f, "unit"), number(*f, "current"))) + "</td><td class=\"n" +
           (regressed ? " bad" : better ? " good" : "") + "\">" + esc(change_text) + "</td><td class=\"mark\">" +
           (regressed ? "REGRESSED (worse than the " + fixed(limit, 1) + "% limit)" : text(*f, "note").empty() ? "within the limit" : esc(text(*f, "note"))) +
           "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string coverage_section(const json::object& contract) {
  std::string out = "<h3 id=\"coverage\">Rule coverage</h3>\n<p class=\"muted\">Each rule of the spec, its outcome (the worst of "
                    "its checks), and the checks that cover it; a chip links to the check and its evidence.</p>\n"
                    "<table><tr><th>rule</th><th>spec</th><th>what it says</th><th>outcome</th><th>checks</th></tr>\n";
  for (const auto& r : arr(contract, "rules")) {
    const auto& rule = obj(r);
    std::string chips;
    for (const auto& c : arr(rule, "checks"))
      chips += "<a class=\"chip o-" + esc(text(obj(c), "outcome")) + "\" href=\"#" + anchor_id("check-", text(obj(c), "id")) +
               "\" title=\"" + esc(text(obj(c), "outcome") + ", " + text(obj(c), "severity")) + "\">" + esc(text(obj(c), "id")) + "</a>";
    out += "<tr><td>" + esc(text(rule, "id")) + "</td><td>" + esc(text(rule, "section")) + "</td><td class=\"wide\">" + esc(text(rule, "text")) +
           "</td><td>" + badge(text(rule, "outcome")) + "</td><td>" + (chips.empty() ? "<span class=\"muted\">none selected</span>" : chips) +
           "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string check_block(const json::object& c) {
  const std::string outcome = text(c, "outcome");
  const bool open = outcome == "fail" || outcome == "warn" || outcome == "indeterminate";
  std::string rules;
  for (const auto& r : arr(c, "rules")) rules += (rules.empty() ? "" : " ") + std::string(r.is_string() ? r.get_string() : "");
  std::string out = "<div class=\"check o-" + esc(outcome) + "-box\" id=\"" + anchor_id("check-", text(c, "id")) + "\">" +
                    badge(outcome) + " <code>" + esc(text(c, "id")) + "</code> <span class=\"muted\">" + esc(text(c, "severity")) +
                    ", rules " + esc(rules) + ", " + fixed(number(c, "duration_ms"), 1) + " ms</span><br/><span class=\"sum\">" +
                    esc(text(c, "summary")) + "</span>";
  if (!text(c, "message").empty()) out += "<p><strong>" + esc(text(c, "message")) + "</strong></p>";
  const auto& findings = arr(c, "findings");
  if (!findings.empty()) {
    out += "<ul class=\"compact\">";
    for (const auto& f : findings)
      out += "<li>" + esc(text(obj(f), "severity")) + " " + esc(text(obj(f), "rule")) + ": " + esc(text(obj(f), "text")) + "</li>";
    out += "</ul>";
  }
  const auto& evidence = arr(c, "evidence");
  if (!evidence.empty()) {
    std::string ev;
    for (const auto& e : evidence)
      ev += "<pre>$ " + esc(text(obj(e), "curl")) + "\n→ " + esc(text(obj(e), "answer")) + "</pre>";
    const std::string label = std::to_string(evidence.size()) + " exchange(s); rerun with <code>export CRH_API_KEY=…</code>";
    out += open ? "<p class=\"muted\">" + label + "</p>" + ev : "<details><summary>" + label + "</summary>" + ev + "</details>";
  }
  return out + "</div>\n";
}

std::string contract_section(const json::object& contract) {
  const auto& v = obj(contract, "verdict");
  const auto& counts = obj(contract, "counts");
  std::string out = "<h2 id=\"contract\">Contract</h2>\n<p>" + badge(text(v, "status")) + " " + esc(text(v, "reason")) + "</p>\n";
  for (const auto& n : arr(contract, "notes")) out += "<p class=\"bad\">note: " + esc(n.is_string() ? std::string(n.get_string()) : "") + "</p>\n";
  out += "<table><tr><th>suite</th><th class=\"n\">checks</th><th class=\"n\">pass</th><th class=\"n\">warn</th><th class=\"n\">fail</th>"
         "<th class=\"n\">indeterminate</th><th class=\"n\">skip</th></tr>\n";
  auto row = [](const std::string& name, const json::object& c) {
    return "<tr><td>" + name + "</td><td class=\"n\">" + whole(number(c, "total")) + "</td><td class=\"n\">" + whole(number(c, "pass")) +
           "</td><td class=\"n\">" + whole(number(c, "warn")) + "</td><td class=\"n" + (number(c, "fail") > 0 ? " bad" : "") + "\">" +
           whole(number(c, "fail")) + "</td><td class=\"n\">" + whole(number(c, "indeterminate")) + "</td><td class=\"n\">" +
           whole(number(c, "skip")) + "</td></tr>\n";
  };
  for (const auto& s : arr(contract, "suites")) out += row(esc(text(obj(s), "name")), obj(obj(s), "counts"));
  out += row("<strong>all</strong>", counts) + "</table>\n";
  out += coverage_section(contract);
  out += "<h3 id=\"checks\">Checks</h3>\n<p class=\"muted\">Failures, warnings and undecided checks show their exchanges; "
         "the others keep theirs folded. Every exchange is a curl command with the key as <code>$CRH_API_KEY</code>.</p>\n";
  std::string suite;
  for (const auto& c : arr(contract, "checks")) {
    if (text(obj(c), "suite") != suite) out += "<h3>suite " + esc(suite = text(obj(c), "suite")) + "</h3>\n";
    out += check_block(obj(c));
  }
  return out;
}

// Points of a percentile curve (x in nines) from a histogram in the document.
std::vector<std::pair<double, double>> percentile_curve(const json::object& latency) {
  std::vector<std::pair<double, double>> points;
  const auto* h = latency.if_contains("histogram");
  if (!h) return points;
  core::Histogram hist;
  try {
    hist = core::Histogram::from_json(*h);
  } catch (const std::exception&) {
    return points;
  }
  if (hist.count() == 0) return points;
  const double top = std::min(6.0, std::max(1.0, std::log10(static_cast<double>(hist.count()))));
  for (double x = 0; x < top - 1e-9; x += 0.05) points.emplace_back(x, static_cast<double>(hist.quantile(1 - std::pow(10.0, -x))) / 1e6);
  points.emplace_back(top, static_cast<double>(hist.max()) / 1e6);
  return points;
}

std::string ms_label(double ms) { return format_ns(ms * 1e6); }

std::string load_section(const json::object& load) {
  const auto& config = obj(load, "config");
  const auto& totals = obj(load, "totals");
  const auto& v = obj(load, "verdict");
  const std::string scenario = text(config, "scenario");
  const bool open_loop = number(totals, "intended_rate") > 0;
  std::string out = "<h2 id=\"load-" + esc(scenario) + "\">Load: " + esc(scenario) + "</h2>\n<p>" + badge(text(v, "status")) + " " +
                    esc(text(v, "reason")) + "</p>\n<p class=\"muted\">" + fixed(number(totals, "measured_s"), 1) + " s measured";
  if (scenario == "race")
    out += ", " + whole(number(config, "callers")) + " callers per round, " +
           (number(config, "connections") > 0 ? whole(number(config, "connections")) : std::string("8")) + " rounds in flight";
  else if (open_loop)
    out += ", open loop at " + whole(number(totals, "intended_rate")) + " requests/s (latency from when each request was due)";
  else
    out += ", closed loop";
  out += "; " + whole(number(totals, "requests")) + " requests, " + fixed(number(totals, "achieved_rate"), 0) + "/s achieved, " +
         whole(number(totals, "errors")) + " errors (" + percent(number(totals, "error_rate")) + "); busiest generator thread " +
         whole(number(totals, "generator_cpu") * 100) + "% of a core.</p>\n";
  for (const auto& why : arr(v, "invalid_reasons"))
    out += "<p class=\"bad\">INVALID: " + esc(why.is_string() ? std::string(why.get_string()) : "") + "</p>\n";
  if (flag(v, "interrupted")) out += "<p class=\"bad\">Interrupted: the figures cover the time until Ctrl-C.</p>\n";
  for (const auto& p : arr(load, "restore_problems"))
    out += "<p class=\"bad\">not restored: " + esc(p.is_string() ? std::string(p.get_string()) : "") + "</p>\n";

  // Per operation.
  out += "<table><tr><th>operation</th><th class=\"n\">count</th><th class=\"n\">rate</th><th class=\"n\">errors</th>"
         "<th class=\"n\">refused</th><th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th><th class=\"n\">p99.9</th>"
         "<th class=\"n\">max</th><th class=\"n\">mean</th>" +
         std::string(open_loop ? "<th class=\"n\">p99 from send</th>" : "") + "<th>answers besides 200</th></tr>\n";
  LineChart curves{"Latency by percentile, " + scenario, "percentile (log scale: each step is one more nine)", "latency",
                   XScale::percentile, ms_label, nullptr, std::nullopt, 0, {}};
  for (const auto& [name, value] : obj(load, "operations")) {
    const auto& op = obj(value);
    const auto& l = obj(op, "latency");
    std::string detail;
    for (const auto& [code, n] : obj(op, "statuses"))
      if (code != "200") detail += "HTTP " + esc(code) + " × " + whole(n.is_number() ? n.to_number<double>() : 0) + " ";
    for (const auto& [why, n] : obj(op, "failures")) detail += esc(why) + " × " + whole(n.is_number() ? n.to_number<double>() : 0) + " ";
    out += "<tr><td>" + esc(name) + "</td><td class=\"n\">" + whole(number(op, "count")) + "</td><td class=\"n\">" +
           fixed(number(op, "rate"), 0) + "/s</td><td class=\"n" + (number(op, "errors") > 0 ? " bad" : "") + "\">" +
           whole(number(op, "errors")) + "</td><td class=\"n\">" + whole(number(op, "refusals")) + "</td>";
    for (auto key : {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns"})
      out += "<td class=\"n\">" + esc(format_ns(number(l, key))) + "</td>";
    if (open_loop) out += "<td class=\"n\">" + esc(format_ns(number(obj(op, "latency_uncorrected"), "p99_ns"))) + "</td>";
    out += "<td>" + detail + "</td></tr>\n";
    curves.series.push_back({std::string(name), percentile_curve(l), false});
  }
  out += "</table>\n" + line_chart(curves);

  // Over time: latency of all operations per point (a second, or more in a
  // long run: series_step_s), and throughput per second.
  const double step = std::max(1.0, number(load, "series_step_s"));
  const auto seconds = step * static_cast<double>(std::max<std::size_t>(1, arr(load, "series").size()));
  auto second_label = [](double s) { return fixed(s, 0) + " s"; };
  LineChart latency_time{"Latency over time, all operations, " + scenario, "seconds since measuring began", "latency",
                         XScale::linear, ms_label, second_label, std::pair{0.0, seconds}, 1.0, {}};
  LineChart rate_time{"Throughput over time, " + scenario, "seconds since measuring began", "requests per second",
                      XScale::linear, [](double r) { return fixed(r, 0) + "/s"; }, second_label, std::pair{0.0, seconds}, 1.0, {}};
  ChartSeries p50{"p50", {}, false}, p99{"p99", {}, true}, requests{"requests/s", {}, false}, errors{"errors/s", {}, false};
  for (const auto& s : arr(load, "series")) {
    const auto& second = obj(s);
    const double t = number(second, "t") + step / 2;  // the middle of its span
    requests.points.emplace_back(t, number(second, "requests") / step);
    errors.points.emplace_back(t, number(second, "errors") / step);
    if (number(second, "requests") > 0) {
      p50.points.emplace_back(t, number(second, "p50_ns") / 1e6);
      p99.points.emplace_back(t, number(second, "p99_ns") / 1e6);
    }
  }
  latency_time.series = {p50, p99};
  rate_time.series = {requests, errors};
  out += line_chart(latency_time) + line_chart(rate_time);

  if (const auto* race_value = load.if_contains("race"); race_value && race_value->is_object()) {
    const auto& race = race_value->get_object();
    const auto& skew = obj(race, "skew");
    out += "<h3 id=\"race\">Race: first caller wins</h3>\n<p>" + whole(number(race, "rounds")) + " rounds of " +
           whole(number(race, "callers")) + " callers racing for a freshly tagged alias. Exactly one caller must connect per round; "
           "the others must be refused until the tag ends. Release skew (first to last caller's last byte): p50 " +
           esc(format_ns(number(skew, "p50_ns"))) + ", p99 " + esc(format_ns(number(skew, "p99_ns"))) + ", max " +
           esc(format_ns(number(skew, "max_ns"))) + ". Tags answered 409 (every alias tagged): " + whole(number(race, "tag_busy")) +
           ".</p>\n";
    BarChart winners{"Winners per round, " + whole(number(race, "rounds")) + " rounds", "callers that connected in the round",
                     "rounds", {}, {}};
    for (const auto& [n, rounds] : obj(race, "winners")) {
      winners.bars.emplace_back(std::string(n), rounds.is_number() ? rounds.to_number<double>() : 0);
      winners.highlight.push_back(n != "1");
    }
    out += bar_chart(winners);
    out += line_chart({"Release skew by percentile", "percentile (log scale)", "skew", XScale::percentile, ms_label, nullptr,
                       std::nullopt, 0, {{"skew", percentile_curve(skew), false}}});
    constexpr std::size_t kShown = 20;
    const double count = number(race, "violation_count");
    const std::size_t kept = arr(race, "violations").size();
    out += "<p><strong class=\"" + std::string(count > 0 ? "bad" : "good") + "\">" + whole(count) + " violation(s)</strong>" +
           (count > static_cast<double>(std::min(kept, kShown))
                ? " (the first " + std::to_string(std::min(kept, kShown)) + " are shown with the operations that prove them; the JSON result keeps the first " +
                      std::to_string(kept) + ")"
                : "") +
           "</p>\n";
    std::size_t shown = 0;
    for (const auto& vv : arr(race, "violations")) {
      if (++shown > kShown) break;
      const auto& violation = obj(vv);
      out += "<div class=\"check o-fail-box\"><span class=\"badge o-fail\">VIOLATION</span> <code>" + esc(text(violation, "kind")) +
             "</code> round " + whole(number(violation, "round")) + ", alias " + esc(text(violation, "alias")) + "<p>" +
             esc(text(violation, "explanation")) + "</p><table><tr><th>op</th><th>caller</th><th class=\"n\">sent (ms)</th>"
             "<th class=\"n\">answered (ms)</th><th>outcome</th><th class=\"n\">status</th></tr>";
      for (const auto& p : arr(violation, "proof")) {
        const auto& op = obj(p);
        out += "<tr><td>" + esc(text(op, "op")) + "</td><td>" + esc(text(op, "caller")) + "</td><td class=\"n\">" +
               fixed(number(op, "invoke_ns") / 1e6, 3) + "</td><td class=\"n\">" + fixed(number(op, "complete_ns") / 1e6, 3) +
               "</td><td>" + esc(text(op, "outcome")) + (text(op, "error").empty() ? "" : " (" + esc(text(op, "error")) + ")") +
               "</td><td class=\"n\">" + whole(number(op, "status")) + "</td></tr>";
      }
      out += "</table></div>\n";
    }
  }

  const auto& thresholds = arr(load, "thresholds");
  if (!thresholds.empty()) {
    out += "<h3>Thresholds, " + esc(scenario) + "</h3>\n<table><tr><th>threshold</th><th>outcome</th><th>measured</th></tr>\n";
    for (const auto& t : thresholds) {
      const bool held = flag(obj(t), "held");
      out += "<tr" + std::string(held ? "" : " class=\"regressed\"") + "><td><code>" + esc(text(obj(t), "expression")) + "</code></td><td>" +
             badge(held ? "held" : "breached") + "</td><td>" + esc(text(obj(t), "description")) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

std::string key_values(const json::object& o) {
  std::string out = "<table>";
  for (const auto& [k, v] : o)
    out += "<tr><th>" + esc(k) + "</th><td><code>" + esc(v.is_string() ? std::string(v.get_string()) : json::serialize(v)) +
           "</code></td></tr>";
  return out + "</table>\n";
}

}  // namespace

std::string html_report(const json::object& doc) {
  const auto& target = obj(doc, "target");
  const auto* contract = doc.if_contains("contract");
  const bool has_contract = contract && contract->is_object();
  const auto& loads = arr(doc, "loads");
  const auto* comparison = doc.if_contains("comparison");
  const bool has_comparison = comparison && comparison->is_object();

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>crh report: " +
                    esc(text(obj(doc, "verdict"), "status")) + ", " + esc(text(target, "base_url")) + "</title>\n<style>" + kStyle +
                    "</style>\n</head>\n<body>\n";
  out += "<h1>crh report</h1>\n<p class=\"meta\">" + esc(text(target, "base_url")) + ", channel " + esc(text(target, "channel")) +
         (flag(target, "embedded") ? " (the embedded reference service)" : "") + "; started " + esc(text(doc, "started_at")) + ", " +
         fixed(number(doc, "duration_ms") / 1000, 1) + " s; " + esc(text(obj(doc, "tool"), "name")) + " " +
         esc(text(obj(doc, "tool"), "version")) + "</p>\n";
  out += verdict_section(doc);
  out += "<nav>";
  if (has_comparison) out += "<a href=\"#comparison\">baseline</a>";
  if (has_contract) out += "<a href=\"#contract\">contract</a><a href=\"#coverage\">rule coverage</a><a href=\"#checks\">checks</a>";
  for (const auto& l : loads) {
    const std::string s = text(obj(obj(l), "config"), "scenario");
    out += "<a href=\"#load-" + esc(s) + "\">load: " + esc(s) + "</a>";
  }
  out += "<a href=\"#configuration\">configuration</a></nav>\n";
  for (const auto& p : arr(doc, "problems"))
    out += "<p class=\"bad\">could not run: " + esc(p.is_string() ? std::string(p.get_string()) : "") + "</p>\n";
  if (has_comparison) out += comparison_section(comparison->get_object());
  if (has_contract) out += contract_section(contract->get_object());
  for (const auto& l : loads) out += load_section(obj(l));

  out += "<h2 id=\"configuration\">Configuration and environment</h2>\n<h3>Run</h3>\n" + key_values(obj(doc, "config"));
  if (has_contract) {
    auto config = obj(contract->get_object(), "config");
    config.erase("profile");
    out += "<h3>Contract</h3>\n" + key_values(config) + "<p class=\"muted\">Profile (what was expected where the spec is silent):</p><pre>" +
           esc(json::serialize(obj(obj(contract->get_object(), "config"), "profile"))) + "</pre>\n";
  }
  for (const auto& l : loads) out += "<h3>Load: " + esc(text(obj(obj(l), "config"), "scenario")) + "</h3>\n" + key_values(obj(obj(l), "config"));
  out += "<h3>Environment</h3>\n" + key_values(obj(doc, "environment"));
  out += "<p class=\"muted\">Written by crh from the JSON result; every figure here is in it.</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace crh::reports
