// The terminal summary.
#include "reports/terminal.hpp"

#include <boost/json.hpp>
#include <cstdio>

#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace {

long count(const json::value& counts, std::string_view key) { return counts.at(key).to_number<long>(); }

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
    const std::string label = pad(o == "indeterminate" ? "INDET" : o == "pass" ? "PASS" : o == "warn" ? "WARN"
                                                                  : o == "fail" ? "FAIL" : o == "skip" ? "SKIP" : o, 5);
    if (o == "fail") return (*this)(label, "1;31");
    if (o == "warn" || o == "indeterminate") return (*this)(label, "33");
    if (o == "pass") return (*this)(label, "32");
    return (*this)(label, "2");
  }
};

std::string rules_of(const json::value& c) {
  std::string out;
  for (const auto& r : c.at("rules").as_array()) out += " " + std::string(r.as_string());
  return out;
}

}  // namespace

std::string contract_summary(const json::value& result, const TerminalStyle& style) {
  const Painter paint{style.color};
  std::string out;
  const auto& target = result.at("target");
  out += "crh contract: " + str(target, "base_url") + ", channel " + str(target, "channel") +
         (target.at("embedded").as_bool() ? " (the embedded reference service)" : "") + "\n\n";

  bool any_listed = false;
  for (const auto& c : result.at("checks").as_array()) {
    const std::string o = str(c, "outcome");
    const bool detailed = o == "fail" || o == "indeterminate" || (o == "warn" && !style.quiet);
    if (!detailed && !style.verbose) continue;
    any_listed = true;
    out += paint.outcome(o) + " " + str(c, "id") + "  [" + str(c, "severity") + rules_of(c) + "]\n";
    if (!str(c, "message").empty()) out += "      " + str(c, "message") + "\n";
    if (o == "fail" || o == "warn")
      out += "      rerun: crh contract" +
             (target.at("embedded").as_bool() ? std::string() : " --base-url " + str(target, "base_url") + " --channel " + str(target, "channel")) +
             " --check " + str(c, "id") + "\n";
    if (detailed || style.verbose) {
      for (const auto& f : c.at("findings").as_array())
        if (str(f, "text") != str(c, "message"))
          out += "      also " + str(f, "severity") + " " + str(f, "rule") + ": " + str(f, "text") + "\n";
      const auto& evidence = c.at("evidence").as_array();
      const std::size_t shown = style.verbose ? evidence.size() : std::min<std::size_t>(evidence.size(), 6);
      for (std::size_t i = 0; i < shown; ++i)
        out += "      $ " + str(evidence[i], "curl") + "\n        -> " + str(evidence[i], "answer") + "\n";
      if (shown < evidence.size())
        out += "      (" + std::to_string(evidence.size() - shown) + " more exchanges: --verbose or the --json file)\n";
    }
  }
  if (any_listed) out += "\n";

  if (!style.quiet) {
    out += "suite       pass  warn  fail  skip  indet\n";
    for (const auto& s : result.at("suites").as_array()) {
      const auto& n = s.at("counts");
      char line[96];
      std::snprintf(line, sizeof line, "%-10s %5ld %5ld %5ld %5ld %6ld\n", str(s, "name").c_str(), count(n, "pass"),
                    count(n, "warn"), count(n, "fail"), count(n, "skip"), count(n, "indeterminate"));
      out += line;
    }
    out += "\nrules\n";
    for (const auto& r : result.at("rules").as_array()) {
      const std::string o = str(r, "outcome");
      out += "  " + pad(str(r, "id"), 3) + " " +
             (o == "uncovered" ? paint(pad("none", 5), "33") : paint.outcome(o)) + " " +
             pad(std::to_string(r.at("checks").as_array().size()) + " checks", 10) + " " + str(r, "text") + "\n";
    }
    out += "\n";
  }
  for (const auto& n : result.at("notes").as_array()) out += paint("note: ", "33") + clean(n.as_string()) + "\n";

  const auto& counts = result.at("counts");
  const auto& verdict = result.at("verdict");
  const std::string status = str(verdict, "status");
  char tail[160];
  std::snprintf(tail, sizeof tail, " (exit %ld): %ld checks in %.2f s: %ld passed, %ld warned, %ld failed, %ld skipped, %ld indeterminate\n",
                verdict.at("exit_code").to_number<long>(), count(counts, "total"),
                result.at("duration_ms").to_number<double>() / 1000.0, count(counts, "pass"), count(counts, "warn"),
                count(counts, "fail"), count(counts, "skip"), count(counts, "indeterminate"));
  const std::string head = paint(status_label(status), status == "passed" ? "1;32" : "1;31");
  out += head + tail + "  " + str(verdict, "reason") + "\n";
  if (status == "failed")
    out += "  To reproduce: export CRH_API_KEY (the target's key) and paste the curl commands above, or use the rerun lines.\n";
  return out;
}

}  // namespace crh::reports
