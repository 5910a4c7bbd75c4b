// The run's terminal summary, read from the run document only.
#include "reports/run_terminal.hpp"

#include <boost/json.hpp>

#include "reports/capture_section.hpp"
#include "reports/load_terminal.hpp"
#include "core/result_keys.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = core::keys;
using core::DocView;
namespace {

std::string figure_line(const DocView& f) {
  namespace g = k::figure;
  const std::string unit = clean(f[g::unit]);
  const auto change = f[g::change_pct].maybe_num();  // null: the baseline was 0
  const std::string change_text = change ? (*change >= 0 ? "+" : "") + fixed(*change, 1) + "%" : "new";
  return clean(f[g::scenario]) + " " + clean(f[g::operation]) + " " + clean(f[g::figure]) + ": " +
         format_figure(unit, f[g::baseline].num()) + " → " + format_figure(unit, f[g::current].num()) + " (" +
         change_text + ")";
}

std::string comparison_lines(const DocView& c, const TerminalStyle& style) {
  namespace g = k::figure;
  const double limit = c[k::comparison::max_regression_pct].num();
  const auto base = c[k::comparison::baseline];
  std::string out = "\ncomparison with the baseline " + clean(base[k::baseline::file]) + " (" +
                    clean(base[k::baseline::started_at]) + "), limit " + fixed(limit, 1) + "% worse:\n";
  std::size_t within = 0;
  for (const auto& f : c[k::comparison::figures].items()) {
    if (f[g::regressed].boolean()) {
      out += "  " + paint(style.color, "REGRESSED", "1;31") + " " + figure_line(f) + "\n";
    } else if (style.verbose) {
      const std::string note = clean(f.find(g::note));
      out += "  ok        " + figure_line(f) + (note.empty() ? "" : " [" + note + "]") + "\n";
    } else {
      ++within;
    }
  }
  if (within) out += "  " + std::to_string(within) + " other figure(s) within the limit (--verbose lists them)\n";
  for (const auto& n : c[k::comparison::notes].items()) out += "  note: " + clean(n) + "\n";
  return out;
}

}  // namespace

std::string comparison_summary(const json::object& c, const TerminalStyle& style) {
  const DocView doc(c);
  std::string out = comparison_lines(doc, style);
  return out + missing_line(doc);
}

namespace {

// What follows the parts: the comparison, the capture, what was left out or
// could not run, and the verdict of the run.
std::string closing_lines(const DocView& doc, const TerminalStyle& style) {
  std::string out;
  if (const auto c = doc[k::run::comparison]; c.is_object()) out += comparison_lines(c, style) + "\n";
  if (const auto cap = doc.find(k::live_capture::section)) out += capture_terminal(cap, style.color).substr(1) + "\n";
  for (const auto& s : doc[k::run::skipped].items()) out += "left out: " + clean(s) + "\n";
  for (const auto& p : doc[k::run::problems].items())
    out += paint(style.color, "could not run", "1;31") + ": " + clean(p) + "\n";
  const auto verdict = doc[k::envelope::verdict];
  const std::string status = clean(verdict[k::verdict::status]);
  out += "verdict of the run: " + paint(style.color, status_label(status), status == "passed" ? "1;32" : "1;31") +
         " (" + clean(verdict[k::verdict::reason]) + ")\n";
  return out;
}

std::string part_lines(const DocView& part, bool load, const TerminalStyle& style) {
  return (load ? load_summary(part, style) : contract_summary(part, style)) + "\n";
}

}  // namespace

std::string run_summary(const json::object& run_document, const TerminalStyle& style) {
  const DocView doc(run_document);
  std::string out;
  if (const auto c = doc[k::run::contract]; c.is_object()) out += part_lines(c, false, style);
  for (const auto& l : doc[k::run::loads].items()) out += part_lines(l, true, style);
  out += closing_lines(doc, style);  // before the list of what was missing: reading it adds to the list
  return out + missing_line(doc);
}

std::string run_part_summary(const json::object& part, const TerminalStyle& style) {
  const DocView doc(part);
  const bool load = doc[k::envelope::kind].str() == k::kind_load;
  const std::string out = load ? load_summary(doc, style) : contract_summary(doc, style);
  return out + missing_line(doc) + "\n";
}

std::string run_closing(const json::object& run_document, const TerminalStyle& style) {
  const DocView doc(run_document);
  const std::string out = closing_lines(doc, style);
  return out + missing_line(doc);
}

}  // namespace crh::reports
