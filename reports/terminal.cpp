// The terminal summary.
#include "reports/terminal.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>

#include "reports/capture_section.hpp"
#include "reports/rerun.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
namespace {

long count(const DocView& counts, std::string_view key) { return static_cast<long>(counts[key].count()); }

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

struct Painter {
  bool on;
  std::string operator()(const std::string& text, const char* code) const {
    return on ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
  }
  std::string outcome(const std::string& o) const {
    const std::string label = pad(o == "indeterminate" ? "INDET"
                                  : o == "pass"        ? "PASS"
                                  : o == "warn"        ? "WARN"
                                  : o == "fail"        ? "FAIL"
                                  : o == "skip"        ? "SKIP"
                                                       : o,
                                  5);
    if (o == "fail") return (*this)(label, "1;31");
    if (o == "warn" || o == "indeterminate") return (*this)(label, "33");
    if (o == "pass") return (*this)(label, "32");
    return (*this)(label, "2");
  }
};

std::string rules_of(const DocView& c) {
  std::string out;
  for (const auto& r : c[k::check::rules].items()) out += " " + r.str();
  return out;
}

// A check's findings besides its message, and its exchanges (six unless verbose).
std::string check_detail(const DocView& c, const TerminalStyle& style) {
  std::string out;
  const std::string message = clean(c[k::check::message]);
  for (const auto& f : c[k::check::findings].items())
    if (clean(f[k::finding::text]) != message)
      out += "      also " + clean(f[k::finding::severity]) + " " + clean(f[k::finding::rule]) + ": " +
             clean(f[k::finding::text]) + "\n";
  const auto evidence = c[k::check::evidence].items();
  const std::size_t shown = style.verbose ? evidence.size() : std::min<std::size_t>(evidence.size(), 6);
  for (std::size_t i = 0; i < shown; ++i)
    out += "      $ " + clean(evidence[i][k::evidence::curl]) + "\n        -> " +
           clean(evidence[i][k::evidence::answer]) + "\n";
  if (shown < evidence.size())
    out += "      (" + std::to_string(evidence.size() - shown) + " more exchanges: --verbose or the --json file)\n";
  return out;
}

// The rules a failed or warned check's findings name, each in the rule's own
// words: "      rule R5: every endpoint requires the Apikey header".
std::string broken_rules_lines(const DocView& result, const DocView& check) {
  std::vector<std::string> named;
  for (const auto& f : check[k::check::findings].items()) {
    const std::string rule = clean(f[k::finding::rule]);
    if (!rule.empty() && std::find(named.begin(), named.end(), rule) == named.end()) named.push_back(rule);
  }
  std::string out;
  for (const auto& rule : named)
    for (const auto& r : result.find(k::contract::rules).items())
      if (clean(r[k::rule::id]) == rule) out += "      rule " + rule + ": " + clean(r[k::rule::text]) + "\n";
  return out;
}

// Failures, warnings and undecided checks (every check when verbose), with how to rerun them.
std::string checks_listing(const DocView& result, const TerminalStyle& style, const Painter& paint) {
  std::string out;
  for (const auto& c : result[k::contract::checks].items()) {
    const std::string o = clean(c[k::check::outcome]);
    const bool detailed = o == "fail" || o == "indeterminate" || (o == "warn" && !style.quiet);
    if (!detailed && !style.verbose) continue;
    const std::string id = clean(c[k::check::id]);
    out += paint.outcome(o) + " " + id + "  [" + clean(c[k::check::severity]) + rules_of(c) + "]\n";
    if (const auto message = clean(c[k::check::message]); !message.empty()) out += "      " + message + "\n";
    if (o == "fail" || o == "warn") out += broken_rules_lines(result, c);
    if (o == "fail" || o == "warn") out += "      rerun: " + clean(rerun_command(result, c[k::check::id].str())) + "\n";
    out += check_detail(c, style);
  }
  return out.empty() ? out : out + "\n";
}

// The suite table and the rule coverage.
std::string tables(const DocView& result, const Painter& paint) {
  namespace n = k::counts;
  std::string out = "suite       pass  warn  fail  skip  indet\n";
  for (const auto& s : result[k::contract::suites].items()) {
    const auto counts = s[k::suite::counts];
    char line[96];
    std::snprintf(line, sizeof line, "%-10s %5ld %5ld %5ld %5ld %6ld\n", clean(s[k::suite::name]).c_str(),
                  count(counts, n::pass), count(counts, n::warn), count(counts, n::fail), count(counts, n::skip),
                  count(counts, n::indeterminate));
    out += line;
  }
  out += "\nrules\n";
  for (const auto& r : result[k::contract::rules].items()) {
    const std::string o = clean(r[k::rule::outcome]);
    out += "  " + pad(clean(r[k::rule::id]), 3) + " " +
           (o == "uncovered" ? paint(pad("none", 5), "33") : paint.outcome(o)) + " " +
           pad(std::to_string(r[k::rule::checks].items().size()) + " checks", 10) + " " + clean(r[k::rule::text]) +
           "\n";
  }
  return out + "\n";
}

std::string verdict_lines(const DocView& result, const Painter& paint) {
  namespace n = k::counts;
  const auto counts = result[k::contract::counts];
  const auto verdict = result[k::envelope::verdict];
  const std::string status = clean(verdict[k::verdict::status]);
  char tail[160];
  std::snprintf(
      tail, sizeof tail,
      " (exit %ld): %ld checks in %.2f s: %ld passed, %ld warned, %ld failed, %ld skipped, %ld indeterminate\n",
      static_cast<long>(verdict[k::verdict::exit_code].num()), count(counts, n::total),
      result[k::envelope::duration_ms].num() / 1000.0, count(counts, n::pass), count(counts, n::warn),
      count(counts, n::fail), count(counts, n::skip), count(counts, n::indeterminate));
  const std::string head = paint(status_label(status), status == "passed" ? "1;32" : "1;31");
  std::string out = head + tail + "  " + clean(verdict[k::verdict::reason]) + "\n";
  if (status != "failed") return out;
  if (result[k::envelope::target][k::target::embedded].boolean())
    out += "  To reproduce: use the rerun lines (each starts the embedded reference service again).\n";
  else if (rerun_reads_key_file(result))
    out +=
        "  To reproduce: use the rerun lines (they read the key from their --api-key-file), or export CRH_API_KEY "
        "(the target's key) and paste the curl commands above; --reproducers DIR writes each failure as a script.\n";
  else
    out +=
        "  To reproduce: export CRH_API_KEY (the target's key) and paste the curl commands above, or use the rerun "
        "lines; --reproducers DIR writes each failure as a script.\n";
  return out;
}

}  // namespace

std::string contract_summary(const DocView& result, const TerminalStyle& style) {
  if (auto line = preflight_line(result, "crh contract"); !line.empty()) return line;
  const Painter paint{style.color};
  const auto target = result[k::envelope::target];
  std::string out = "crh contract: " + clean(target[k::target::base_url]) + ", channel " +
                    clean(target[k::target::channel]) +
                    (target[k::target::embedded].boolean() ? " (the embedded reference service)" : "") + "\n\n";
  out += checks_listing(result, style, paint);
  if (!style.quiet) out += tables(result, paint);
  for (const auto& n : result[k::contract::notes].items()) out += paint("note: ", "33") + clean(n) + "\n";
  out += capture_terminal(result.find(k::live_capture::section), style.color);
  return out + verdict_lines(result, paint);
}

std::string contract_summary(const json::value& result, const TerminalStyle& style) {
  const DocView doc(result);
  std::string out = contract_summary(doc, style);
  return out + missing_line(doc);
}

}  // namespace crh::reports
