// The load run's terminal summary, read from the result document only.
#include "reports/load_terminal.hpp"

#include <boost/json.hpp>
#include <cstdio>

#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace {

std::string right(std::string s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string left(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string load_summary(const json::value& doc, const TerminalStyle& style) {
  std::string out;
  const auto& config = doc.at("config");
  const auto& target = doc.at("target");
  const std::string scenario = str(config, "scenario");
  const auto& totals = doc.at("totals");
  const bool open_loop = num(totals, "intended_rate") > 0;
  out += "crh load: " + scenario + " on " + str(target, "base_url") + ", channel " + str(target, "channel") +
         (target.at("embedded").as_bool() ? " (the embedded reference service)" : "") + "; " +
         fixed(num(totals, "measured_s"), 1) + " s measured\n\n";

  if (!style.quiet) {
    out += left("operation", 13) + right("count", 9) + right("rate/s", 10) + right("errors", 8) + right("refused", 9) +
           right("p50", 10) + right("p90", 10) + right("p99", 10) + right("p99.9", 10) + right("max", 10) +
           right("mean", 10) + (open_loop ? right("p99 sent", 11) : "") + "\n";
    for (const auto& [name, op] : doc.at("operations").as_object()) {
      const auto& l = op.at("latency");
      out += left(clean(name), 13) + right(fixed(num(op, "count"), 0), 9) + right(fixed(num(op, "rate"), 0), 10) +
             right(fixed(num(op, "errors"), 0), 8) + right(fixed(num(op, "refusals"), 0), 9) +
             right(format_ns(num(l, "p50_ns")), 10) + right(format_ns(num(l, "p90_ns")), 10) +
             right(format_ns(num(l, "p99_ns")), 10) + right(format_ns(num(l, "p999_ns")), 10) +
             right(format_ns(num(l, "max_ns")), 10) + right(format_ns(num(l, "mean_ns")), 10) +
             (open_loop ? right(format_ns(num(op.at("latency_uncorrected"), "p99_ns")), 11) : "") + "\n";
      std::string detail;
      for (const auto& [code, n] : op.at("statuses").as_object())
        if (code != "200") detail += " HTTP " + clean(code) + "×" + fixed(n.to_number<double>(), 0);
      for (const auto& [why, n] : op.at("failures").as_object())
        detail += " " + clean(why) + "×" + fixed(n.to_number<double>(), 0);
      if (!detail.empty()) out += left("", 13) + "  answers besides 200:" + detail + "\n";
    }
    if (open_loop)
      out += "Latency is measured from when each request was due (no coordinated omission); "
             "\"p99 sent\" is the uncorrected figure, from when it was sent.\n";
  }

  if (const auto* race = doc.as_object().if_contains("race")) {
    const auto& skew = race->at("skew");
    std::string winners;
    for (const auto& [n, rounds] : race->at("winners").as_object())
      winners += " " + clean(n) + " winner(s)×" + fixed(rounds.to_number<double>(), 0);
    out += "\nrace: " + fixed(num(*race, "rounds"), 0) + " rounds of " + fixed(num(*race, "callers"), 0) +
           " callers;" + (winners.empty() ? " no round measured" : winners) + "\n";
    out += "  release skew (first to last caller's send): p50 " + format_ns(num(skew, "p50_ns")) + ", p99 " +
           format_ns(num(skew, "p99_ns")) + ", max " + format_ns(num(skew, "max_ns")) + "\n";
    if (num(*race, "tag_busy") > 0)
      out += "  tags answered 409 (every alias tagged): " + fixed(num(*race, "tag_busy"), 0) + "\n";
    const double violations = num(*race, "violation_count");
    out += "  violations: " + (violations > 0 ? paint(style.color, fixed(violations, 0), "1;31") : std::string("0")) +
           "\n";
    std::size_t shown = 0;
    for (const auto& v : race->at("violations").as_array()) {
      if (!style.verbose && ++shown > 5) {
        out += "  … " + fixed(violations - 5, 0) + " more in the --json document (or run with --verbose)\n";
        break;
      }
      out += "  " + paint(style.color, "VIOLATION", "1;31") + " " + str(v, "kind") + " (round " +
             fixed(num(v, "round"), 0) + "): " + str(v, "explanation") + "\n";
    }
  }

  const auto& thresholds = doc.at("thresholds").as_array();
  if (!thresholds.empty()) {
    out += "\nthresholds:\n";
    for (const auto& t : thresholds)
      out += "  " + paint(style.color, str(t, "description"), t.at("held").as_bool() ? "32" : "1;31") + "\n";
  }

  out += "\ngenerator: " + fixed(num(totals, "achieved_rate"), 0) + " req/s achieved" +
         (open_loop ? " of " + fixed(num(totals, "intended_rate"), 0) + " intended" : std::string()) +
         "; busiest thread " + fixed(num(totals, "generator_cpu") * 100, 0) + "% of a core\n";
  const auto& verdict = doc.at("verdict");
  for (const auto& why : verdict.at("invalid_reasons").as_array())
    out += paint(style.color, "INVALID", "1;33") + ": " + clean(why.as_string()) + "\n";
  for (const auto& p : doc.at("restore_problems").as_array())
    out += "not restored: " + clean(p.as_string()) + "\n";
  if (verdict.at("interrupted").as_bool()) out += "interrupted: the figures cover the time until Ctrl-C\n";
  const bool passed = str(verdict, "status") == "passed";
  out += "verdict: " + (passed ? paint(style.color, "PASSED", "1;32") : paint(style.color, "FAILED", "1;31")) + " (" +
         str(verdict, "reason") + ")\n";
  return out;
}

}  // namespace crh::reports
