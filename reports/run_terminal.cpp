// The run's terminal summary, read from the run document only.
#include "reports/run_terminal.hpp"

#include <boost/json.hpp>

#include "reports/capture_section.hpp"
#include "reports/comparison_view.hpp"
#include "reports/load_terminal.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_run.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
namespace {

// "race call p99: 1.52 ms [1.47, 1.58] against 1.20 ms (nights [1.12, 1.29]), +26.7% [+22.1, +31.0%]; ..."
std::string figure_line(const ShownFigure& f, const ShownComparison& c) {
  std::string out = f.name() + ": ";
  if (c.against)
    out += "candidate " + f.shown_or_unmeasured(f.current) + " against baseline " + f.shown_or_unmeasured(f.reference) +
           ", " + f.paired_change_text() +
           " over " + std::to_string(f.pairs) + (c.design == "duet" ? " seconds" : " pairs");
  else if (!c.nights) out += f.format(f.reference) + " → " + f.current_text() + " (" + f.change_text() + ")";
  else {
    out += f.current_text() + (f.backed ? "" : " not backed") + " against " + f.format(f.reference);
    if (const auto band = f.band_text(); !band.empty()) out += " (nights " + band + ")";
    out += ", " + f.change_text();
  }
  if (f.min_detectable_pct) out += "; detectable from " + fixed(*f.min_detectable_pct, 0) + "%";
  return out;
}

// The label of a verdict: "REGRESSED" in red, "INCONCLUSIVE" in amber, the others plain.
std::string verdict_label(const std::string& verdict, const TerminalStyle& style) {
  const std::string label = status_label(verdict) + " ";
  if (verdict == "regressed") return paint(style.color, label, "1;31");
  return verdict == "inconclusive" ? paint(style.color, label, "1;33") : label;
}

std::string comparison_lines(const DocView& doc, const TerminalStyle& style) {
  const ShownComparison c = read_comparison(doc);
  std::string out = "\n" + comparison_heading(c) + ":\n";
  if (c.nights || c.against)
    out += "  " + std::to_string(c.regressions) + " regressed, " + std::to_string(c.inconclusive) +
           " inconclusive\n";
  for (const auto& why : c.unreliable) out += "  " + paint(style.color, "UNRELIABLE", "1;33") + " " + why + "\n";
  std::size_t within = 0;
  for (const auto& f : c.figures) {
    // Regressed and inconclusive figures always; the rest when verbose.
    if (verdict_rank(f.verdict) > 1 && !style.verbose) {
      ++within;
      continue;
    }
    out += "  " + verdict_label(f.verdict, style) + figure_line(f, c);
    if (verdict_rank(f.verdict) <= 1 && !f.reason.empty()) out += "\n    " + f.reason;
    else if (!f.note.empty()) out += " [" + f.note + "]";
    out += "\n";
  }
  for (const auto& p : c.change_points)
    out += "  " + paint(style.color, p.beyond_limit ? "CHANGE POINT" : "change point", p.beyond_limit ? "1;31" : "0") +
           "  " + p.scenario + " " + p.operation + " " + p.figure + " from night " + p.night +
           (p.started_at.empty() ? "" : " (" + p.started_at + ")") + ": " + format_figure(p.unit, p.before) +
           " → " + format_figure(p.unit, p.after) +
           (p.change_pct ? " (" + signed_percent(*p.change_pct) + ")" : "") +
           ", " + p.status() + "\n";
  for (const auto& ch : c.changes)
    out += "  " + ch.what + " changed on night " + ch.night + ": " + ch.from + " → " + ch.to + "\n";
  if (within)
    out += "  " + std::to_string(within) + " other figure(s) " +
           (c.nights || c.against ? "not regressed, not inconclusive" : "within the limit") + " (--verbose lists them)\n";
  for (const auto& n : c.notes) out += "  note: " + n + "\n";
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
  const auto verdict = doc[k::envelope::verdict];
  const std::string status = clean(verdict[k::verdict::status]);
  if (const auto c = doc[k::run::contract]; c.is_object() && c.find(k::envelope::preflight).is_object())
    return "verdict of the run: " + paint(style.color, status_label(status), status_color(status)) +
           " (the target could not be tested as configured: the line above says why; nothing else was run)\n";
  if (const auto c = doc[k::run::comparison]; c.is_object()) out += comparison_lines(c, style) + "\n";
  if (const auto cap = doc.find(k::live_capture::section)) out += capture_terminal(cap, style.color).substr(1) + "\n";
  for (const auto& s : doc[k::run::skipped].items()) out += "left out: " + clean(s) + "\n";
  for (const auto& p : doc[k::run::problems].items())
    out += paint(style.color, "could not run", "1;31") + ": " + clean(p) + "\n";
  out += "verdict of the run: " + paint(style.color, status_label(status), status_color(status)) +
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
