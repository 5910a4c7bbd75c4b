// The HTML report's comparison: with one baseline (each figure's change, red
// where it worsened beyond the limit), or with the record of nights (per
// figure tonight's value and interval, the nights' band, the verdict and the
// smallest change the gate could have seen), the change points and the
// machine or version changes.
#include "reports/comparison_view.hpp"
#include "reports/html_parts.hpp"
#include "reports/svg.hpp"
#include "reports/text.hpp"

namespace crh::reports::html {
using results::DocView;
namespace {

std::string row_class(const ShownFigure& f) {
  return f.verdict == "regressed" ? " class=\"regressed\"" : f.verdict == "inconclusive" ? " class=\"inconclusive\"" : "";
}

std::string baseline_row(const ShownFigure& f, double limit) {
  const bool regressed = f.verdict == "regressed";
  const bool better = f.worse_pct && *f.worse_pct < 0;
  return "<tr" + row_class(f) + "><td>" + esc(f.scenario) + "</td><td>" + esc(f.operation) + "</td><td>" +
         esc(f.figure) + "</td><td class=\"n\">" + esc(f.format(f.reference)) + "</td><td class=\"n\">" +
         esc(f.current_text()) + "</td><td class=\"n" + (regressed ? " bad" : better ? " good" : "") + "\">" +
         esc(f.change_text()) + "</td><td class=\"mark\">" +
         (regressed      ? "REGRESSED (worse than the " + fixed(limit, 1) + "% limit)"
          : f.note.empty() ? "within the limit"
                           : esc(f.note)) +
         "</td></tr>\n";
}

// Tonight (value, interval, samples, repetitions), the reference and the
// nights' band, a strip drawing both, the change with its interval, the
// verdict and the minimum detectable change; the reason last, in the widest
// cell (it carries the numbers).
std::string nights_row(const ShownFigure& f) {
  std::string tonight = esc(f.current_text());
  if (!f.backed) tonight += "<br/><span class=\"notbacked\">not backed</span>";
  if (f.n) tonight += "<br/><span class=\"ci\">" + whole(static_cast<double>(f.n)) + " samples</span>";
  if (!f.repetitions.empty()) {
    std::string reps;
    for (double r : f.repetitions) reps += (reps.empty() ? "" : ", ") + f.format(r);
    tonight += "<br/><span class=\"ci\">repetitions: " + esc(reps) + "</span>";
  }
  Strip strip{f.current, f.current_lower, f.current_upper, f.band_lower, f.band_upper, f.reference,
              f.verdict == "regressed",
              f.name() + ": tonight " + f.current_text() + ", the nights " + f.band_text()};
  const std::string why = f.reason.empty() ? f.note : f.reason;
  return "<tr" + row_class(f) + "><td>" + esc(f.name()) + "</td><td class=\"n\">" + tonight + "</td><td class=\"n\">" +
         esc(f.format(f.reference)) + "<br/><span class=\"ci\">" +
         (f.band_text().empty() ? std::string("no band") : "band " + esc(f.band_text())) + ", " +
         (f.nights_used ? whole(static_cast<double>(f.nights_used)) + " nights" : std::string("the last night")) +
         "</span></td><td>" + interval_strip(strip) + "</td><td class=\"n\">" + esc(f.change_text()) + "</td><td>" +
         badge(f.verdict) + "</td><td class=\"n\">" +
         (f.min_detectable_pct ? fixed(*f.min_detectable_pct, 0) + "%" : std::string("—")) +
         "</td><td class=\"why\">" + (f.verdict == "regressed" ? "<strong class=\"bad\">REGRESSED</strong>: " : "") + esc(why) +
         (f.rule.empty() ? "" : "<br/><span class=\"ci\">rule: " + esc(f.rule) + "</span>") + "</td></tr>\n";
}

// Against a baseline deployment: both medians, the change with its
// interval, the verdict, the smallest change the pairs could see, why.
std::string against_row(const ShownFigure& f) {
  return "<tr" + row_class(f) + "><td>" + esc(f.name()) + "</td><td class=\"n\">" + esc(f.shown_or_unmeasured(f.current)) +
         "</td><td class=\"n\">" + esc(f.shown_or_unmeasured(f.reference)) + "</td><td class=\"n\">" +
         esc(f.paired_change_text()) +
         "<br/><span class=\"ci\">" + whole(static_cast<double>(f.pairs)) + " pairs</span></td><td>" +
         badge(f.verdict) + "</td><td class=\"n\">" +
         (f.min_detectable_pct ? fixed(*f.min_detectable_pct, 1) + "%" : std::string("—")) + "</td><td class=\"why\">" +
         (f.verdict == "regressed" ? "<strong class=\"bad\">REGRESSED</strong>: " : "") + esc(f.reason) +
         (f.rule.empty() ? "" : "<br/><span class=\"ci\">rule: " + esc(f.rule) + "</span>") + "</td></tr>\n";
}

std::string change_points_table(const ShownComparison& c) {
  if (c.change_points.empty() && c.changes.empty()) return {};
  std::string out;
  if (!c.change_points.empty()) {
    out += "<h3 id=\"change-points\">Change points</h3>\n<p class=\"muted\">A lasting shift over the record, "
           "named by the night it began; one beyond the limit fails the night.</p>\n<table><tr><th>scenario</th>"
           "<th>operation</th><th>figure</th><th>began</th><th class=\"n\">before</th><th class=\"n\">after</th>"
           "<th class=\"n\">change</th><th>status</th></tr>\n";
    for (const auto& p : c.change_points)
      out += std::string("<tr") + (p.beyond_limit ? " class=\"regressed\"" : "") + "><td>" + esc(p.scenario) +
             "</td><td>" + esc(p.operation) + "</td><td>" + esc(p.figure) + "</td><td>" + esc(p.night) +
             (p.started_at.empty() ? "" : "<br/><span class=\"ci\">" + esc(p.started_at) + "</span>") +
             "</td><td class=\"n\">" + esc(format_figure(p.unit, p.before)) + "</td><td class=\"n\">" +
             esc(format_figure(p.unit, p.after)) + "</td><td class=\"n\">" +
             (p.change_pct ? esc(signed_percent(*p.change_pct)) : "") + "</td><td class=\"mark\">" +
             (p.beyond_limit ? "REGRESSED (a new level beyond the limit)" : esc(p.status())) + "</td></tr>\n";
    out += "</table>\n";
  }
  for (const auto& ch : c.changes)
    out += "<p class=\"muted\">" + esc(ch.what) + " changed on night " + esc(ch.night) + ": " + esc(ch.from) + " → " +
           esc(ch.to) + " (the record is not split: figures before and after are still compared)</p>\n";
  return out;
}

}  // namespace

std::string comparison_section(const DocView& doc) {
  const ShownComparison c = read_comparison(doc);
  std::string out;
  if (c.against) {
    out = "<h2 id=\"comparison\">Comparison with the baseline deployment</h2>\n<p>Candidate against <code>" +
          esc(c.baseline_url) + "</code>, " + esc(side_by_side_design(c.design, c.pairs, c.duration_s)) +
          ". Every ratio is candidate ÷ baseline, judged on the pairs (Hodges–Lehmann, exact signed-rank " +
          fixed(c.confidence * 100, 0) + "% interval): a figure regresses when it is worse than the " +
          fixed(c.limit_pct, 1) + "% limit and its whole interval is worse than no change. <strong class=\"" +
          (c.regressions ? "bad" : "good") + "\">" + whole(static_cast<double>(c.regressions)) +
          " regressed</strong>, " + whole(static_cast<double>(c.inconclusive)) + " inconclusive.</p>\n";
  } else if (c.nights) {
    out = "<h2 id=\"comparison\">Comparison with the record of nights</h2>\n<p>Record <code>" + esc(c.dir) +
          "</code>: " + whole(static_cast<double>(c.recorded)) + " nights recorded, " +
          whole(static_cast<double>(c.window)) + " comparable passed nights in the window" +
          (c.accepted_from.empty() ? "" : " (a new level accepted from " + esc(c.accepted_from) + ")") +
          "; settings <code>" + esc(c.fingerprint) + "</code>. A figure regresses only when it is beyond the "
          "nights' own spread and worse than the " + fixed(c.limit_pct, 1) + "% limit. <strong class=\"" +
          (c.regressions ? "bad" : "good") + "\">" + whole(static_cast<double>(c.regressions)) +
          " regressed</strong>, " + whole(static_cast<double>(c.inconclusive)) + " inconclusive.</p>\n";
  } else {
    out = "<h2 id=\"comparison\">Comparison with the baseline</h2>\n<p>Baseline: <code>" + esc(c.baseline_file) +
          "</code>, run " + esc(c.baseline_started_at) + " against " + esc(c.baseline_url) +
          ". Limit: a figure may worsen by at most " + fixed(c.limit_pct, 1) + "% (latency up, throughput down" +
          (c.min_error_rate_rise
               ? "; an error rate also by at least " + fixed(*c.min_error_rate_rise * 100, 1) + " percentage point"
               : "") +
          "). <strong class=\"" + std::string(c.regressions ? "bad" : "good") + "\">" +
          whole(static_cast<double>(c.regressions)) + " figure(s) regressed.</strong></p>\n";
  }
  for (const auto& why : c.unreliable)
    out += "<p class=\"unreliable\">" + badge("unreliable") + " " + esc(why) + "</p>\n";
  for (const auto& n : c.notes) out += "<p class=\"muted\">note: " + esc(n) + "</p>\n";
  if (c.against) {
    out += "<table><tr><th>figure</th><th class=\"n\">candidate</th><th class=\"n\">baseline</th>"
           "<th class=\"n\">change [" + fixed(c.confidence * 100, 0) + "%]</th><th>verdict</th>"
           "<th class=\"n\">detectable</th><th>why</th></tr>\n";
    for (const auto& f : c.figures) out += against_row(f);
    return out + "</table>\n";
  }
  if (c.nights) {
    const std::string header =
        "<table><tr><th>figure</th><th class=\"n\">tonight [95%]</th><th class=\"n\">reference<br/>(band)</th>"
        "<th>against the band</th><th class=\"n\">change [95%]</th><th>verdict</th>"
        "<th class=\"n\">detectable</th><th>why</th></tr>\n";
    // Figures without change, and those too noisy to judge the limit, fold
    // away (a <details> opens without script): the rest is what a reader came for.
    std::string changed, unchanged, noisy;
    std::size_t n_unchanged = 0, n_noisy = 0;
    for (const auto& f : c.figures) {
      const bool quiet = f.verdict == "no change", too_noisy = f.verdict == "too noisy";
      (quiet ? unchanged : too_noisy ? noisy : changed) += nights_row(f);
      n_unchanged += quiet;
      n_noisy += too_noisy;
    }
    if (!changed.empty()) out += header + changed + "</table>\n";
    if (n_noisy)
      out += "<details><summary>" + std::to_string(n_noisy) +
             " figure(s) too noisy to judge at this limit (a band wider than a worsening of 1.5 × the "
             "limit)</summary>\n" + header + noisy + "</table>\n</details>\n";
    if (n_unchanged)
      out += "<details><summary>" + std::to_string(n_unchanged) + " figure(s) with no change</summary>\n" + header +
             unchanged + "</table>\n</details>\n";
    return out + change_points_table(c);
  } else {
    out += "<table><tr><th>scenario</th><th>operation</th><th>figure</th><th class=\"n\">baseline</th>"
           "<th class=\"n\">now</th><th class=\"n\">change</th><th>status</th></tr>\n";
    for (const auto& f : c.figures) out += baseline_row(f, c.limit_pct);
  }
  return out + "</table>\n" + change_points_table(c);
}

}  // namespace crh::reports::html
