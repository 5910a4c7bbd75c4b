// The run's terminal summary, read from the run document only.
#include "reports/run_terminal.hpp"

#include <boost/json.hpp>

#include "reports/load_terminal.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace {

std::string figure_line(const json::value& f) {
  const std::string unit = str(f, "unit");
  const auto& change = f.at("change_pct");
  const std::string change_text =
      change.is_number() ? (change.to_number<double>() >= 0 ? "+" : "") + fixed(change.to_number<double>(), 1) + "%" : "new";
  return str(f, "scenario") + " " + str(f, "operation") + " " + str(f, "figure") + ": " + format_figure(unit, num(f, "baseline")) +
         " → " + format_figure(unit, num(f, "current")) + " (" + change_text + ")";
}

}  // namespace

std::string comparison_summary(const json::object& c, const TerminalStyle& style) {
  const json::value doc(c);
  const double limit = num(doc, "max_regression_pct");
  const auto& base = doc.at("baseline");
  std::string out = "\ncomparison with the baseline " + str(base, "file") + " (" + str(base, "started_at") + "), limit " +
                    fixed(limit, 1) + "% worse:\n";
  std::size_t within = 0;
  for (const auto& f : doc.at("figures").as_array()) {
    if (f.at("regressed").as_bool())
      out += "  " + paint(style.color, "REGRESSED", "1;31") + " " + figure_line(f) + "\n";
    else if (style.verbose)
      out += "  ok        " + figure_line(f) + (str(f, "note").empty() ? "" : " [" + str(f, "note") + "]") + "\n";
    else
      ++within;
  }
  if (within) out += "  " + std::to_string(within) + " other figure(s) within the limit (--verbose lists them)\n";
  for (const auto& n : doc.at("notes").as_array()) out += "  note: " + clean(n.as_string()) + "\n";
  return out;
}

std::string run_summary(const json::object& doc, const TerminalStyle& style) {
  std::string out;
  if (const auto* c = doc.if_contains("contract"); c && c->is_object()) out += contract_summary(*c, style) + "\n";
  for (const auto& l : doc.at("loads").as_array()) out += load_summary(l, style) + "\n";
  if (const auto* c = doc.if_contains("comparison"); c && c->is_object()) out += comparison_summary(c->get_object(), style) + "\n";
  for (const auto& s : doc.at("skipped").as_array()) out += "left out: " + clean(s.as_string()) + "\n";
  for (const auto& p : doc.at("problems").as_array()) out += paint(style.color, "could not run", "1;31") + ": " + clean(p.as_string()) + "\n";
  const json::value verdict = doc.at("verdict");
  const std::string status = str(verdict, "status");
  const std::string label = status_label(status);
  out += "verdict of the run: " + paint(style.color, label, status == "passed" ? "1;32" : "1;31") + " (" + str(verdict, "reason") + ")\n";
  return out;
}

}  // namespace crh::reports
