// The trend page: the record of nights drawn from the trend document, with the
// judgement of the last night that the nightly gate wrote into it, rendered by
// the run report's comparison section.
#include "reports/trend_html.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <optional>

#include "results/keys_trend.hpp"
#include "results/view.hpp"
#include "reports/comparison_view.hpp"
#include "reports/html_parts.hpp"
#include "reports/svg.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
using html::badge;
using html::esc;
using html::whole;
namespace {

// A night as the trend document gives it.
struct DrawnFigure {
  std::string key;  // "scenario operation figure"
  std::string unit;
  double value = 0;
  std::optional<double> lower, upper;  // its 95% interval, when known
  bool backed = true;
};

struct DrawnNight {
  std::string id, started_at, status, reason, fingerprint, tool_version, cpu, report;
  int exit_code = 0, cores = 0;
  bool comparable = false;
  std::vector<DrawnFigure> figures;

  const DrawnFigure* find(const std::string& key) const {
    const auto it = std::find_if(figures.begin(), figures.end(), [&](const DrawnFigure& f) { return f.key == key; });
    return it == figures.end() ? nullptr : &*it;
  }
};

DrawnNight drawn_night(const DocView& n) {
  namespace t = k::trend_night;
  namespace f = k::night_figure;
  DrawnNight out{n.find(t::night).str(),    n.find(t::started_at).str(),   n.find(t::status).str(),
                 n.find(t::reason).str(),   n.find(t::fingerprint).str(),  n.find(t::tool_version).str(),
                 n.find(t::cpu).str(),      n.find(t::report).str(),
                 static_cast<int>(n.find(t::exit_code).maybe_num().value_or(0)),
                 static_cast<int>(n.find(t::cores).maybe_num().value_or(0)),
                 n.find(t::comparable).is_bool() && n.find(t::comparable).boolean(),
                 {}};
  for (const auto& x : n.find(t::figures).items())
    out.figures.push_back({x.find(f::scenario).str() + " " + x.find(f::operation).str() + " " + x.find(f::figure).str(),
                           x.find(f::unit).str(), x.find(f::value).num(), x.find(f::lower).maybe_num(),
                           x.find(f::upper).maybe_num(), !x.find(f::backed).is_bool() || x.find(f::backed).boolean()});
  return out;
}

using Nights = std::vector<const DrawnNight*>;

// "11-25 22:45" of an ISO time: a tick label that fits.
std::string short_time(const std::string& iso) { return iso.size() >= 16 ? iso.substr(5, 5) + " " + iso.substr(11, 5) : iso; }

std::string night_link(const DrawnNight& n, const std::string& text) {
  return n.report.empty() ? esc(text) : "<a href=\"" + esc(n.report) + "\">" + esc(text) + "</a>";
}

std::string verdict_box(const DrawnNight& last) {
  return "<div class=\"verdict " + esc(html::class_name(last.status)) + "\"><strong>" + status_label(last.status) +
         "</strong> (exit code " + std::to_string(last.exit_code) + ") — the last night, " +
         night_link(last, last.id) + ", " + esc(last.started_at) + "<p>" + esc(last.reason) + "</p></div>\n";
}

// Machine and version changes between consecutive nights, and accepted levels, as markers.
std::vector<Marker> record_markers(const Nights& nights, const std::vector<std::string>& accepted) {
  std::vector<Marker> out;
  for (std::size_t i = 0; i < nights.size(); ++i) {
    const auto& n = *nights[i];
    const auto x = static_cast<double>(i);
    if (std::find(accepted.begin(), accepted.end(), n.id) != accepted.end()) out.push_back({x, "accepted", "accepted"});
    if (i == 0) continue;
    const auto& before = *nights[i - 1];
    if (!before.cpu.empty() && !n.cpu.empty() && before.cpu != n.cpu) out.push_back({x, "machine", "machine"});
    if (!before.tool_version.empty() && !n.tool_version.empty() && before.tool_version != n.tool_version)
      out.push_back({x, "version " + n.tool_version, "version"});
  }
  return out;
}

// One figure over the nights: compared nights on a line, the others hollow and
// apart, each with its interval; the band of the nights the last one was
// judged against; accepted levels, machine and version changes and this
// figure's change points marked.
std::string figure_chart(const Nights& nights, const std::string& key, const ShownFigure* judged,
                         double window_from, std::vector<Marker> markers, const ShownComparison& c) {
  std::string unit;
  ChartSeries compared{"compared", {}, false}, apart{"not compared", {}, false};
  apart.line = false;
  for (std::size_t i = 0; i < nights.size(); ++i) {
    const auto& n = *nights[i];
    const auto* f = n.find(key);
    if (!f) continue;
    unit = f->unit;
    const auto x = static_cast<double>(i);
    auto& s = n.comparable ? compared : apart;
    s.points.emplace_back(x, f->value);
    std::string title = n.id + " (" + n.status + "): " + format_figure(f->unit, f->value);
    if (f->lower && f->upper) {
      s.whiskers.push_back({x, *f->lower, *f->upper, !n.comparable || !f->backed});
      title += " [" + format_figure(f->unit, *f->lower) + ", " + format_figure(f->unit, *f->upper) + "]";
    }
    if (!f->backed) title += ", not backed";
    s.marks.push_back({n.report, title, !n.comparable});
  }
  const auto last_x = static_cast<double>(nights.size() - 1);
  LineChart chart{key, "night (each point links to its report)", key.substr(key.rfind(' ') + 1),
                  XScale::linear,
                  [unit](double y) { return format_figure(unit, y); },
                  [&nights](double x) {
                    const auto i = static_cast<std::size_t>(x + 0.5);
                    return i < nights.size() ? short_time(nights[i]->started_at) : std::string();
                  },
                  std::pair{-0.5, last_x + 0.5}, 1.0, {compared, apart}, {}, {}};
  if (judged && judged->band_lower && judged->band_upper)
    chart.bands.push_back({window_from, last_x, *judged->band_lower, *judged->band_upper,
                           "band, " + std::to_string(judged->nights_used) + " nights"});
  if (unit == "ratio" && c.against)  // an A/B night's ratio: no change within the limit either way (not a control arm's)
    chart.bands.push_back({0, last_x, 1 - c.limit_pct / 100, 1 + c.limit_pct / 100,
                           "within the " + fixed(c.limit_pct, 0) + "% limit", false, "#2ca02c"});
  for (const auto& p : c.change_points) {
    if (p.scenario + " " + p.operation + " " + p.figure != key) continue;
    for (std::size_t i = 0; i < nights.size(); ++i)
      if (nights[i]->id == p.night || (p.night == "tonight" && i + 1 == nights.size()))
        markers.push_back({static_cast<double>(i), "change point", "change-point"});
  }
  chart.markers = std::move(markers);
  std::string heading = "<h3 id=\"" + esc(html::class_name(key)) + "\">" + esc(key);
  if (judged)
    heading += " " + badge(judged->verdict) + " <span class=\"muted\">last night " +
               esc(c.against ? judged->paired_change_text() + " against the baseline" : judged->current_text()) +
               (judged->band_text().empty() ? "" : ", the nights " + esc(judged->band_text())) +
               (judged->min_detectable_pct ? ", detectable from " + fixed(*judged->min_detectable_pct, 0) + "%" : "") +
               "</span>";
  return heading + "</h3>\n" + line_chart(chart);
}

std::string nights_table(const Nights& nights, const std::string& title) {
  std::string out = "<h2>" + esc(title) + "</h2>\n<table><tr><th>night</th><th>started</th><th>verdict</th>"
                    "<th>compared</th><th>crh</th><th>machine</th><th>why</th></tr>\n";
  for (auto it = nights.rbegin(); it != nights.rend(); ++it) {
    const auto& n = **it;
    out += "<tr><td>" + night_link(n, n.id) + "</td><td>" + esc(n.started_at) + "</td><td>" + badge(n.status) +
           "</td><td>" + (n.comparable ? "yes" : "no") + "</td><td>" + esc(n.tool_version) + "</td><td>" +
           esc(n.cpu) + (n.cores ? ", " + std::to_string(n.cores) + " cores" : "") + "</td><td>" + esc(n.reason) +
           "</td></tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string trend_html(const json::object& trend) {
  const DocView d(trend);
  const std::string dir = d.find(k::trend::dir).str();
  std::vector<DrawnNight> record;
  for (const auto& n : d.find(k::trend::nights).items()) record.push_back(drawn_night(n));
  std::vector<std::string> accepted;
  for (const auto& a : d.find(k::trend::accepted).items()) accepted.push_back(a.str());
  std::string out = html::page_start("crh nights: " + dir) + "<h1>crh nights</h1>\n<p class=\"meta\">Record <code>" +
                    esc(dir) + "</code>: " + std::to_string(record.size()) + " night(s).</p>\n";
  if (record.empty()) return out + "<p>No night recorded yet.</p>\n</body>\n</html>\n";
  const auto& last = record.back();
  Nights mine, others;
  for (const auto& n : record) (n.fingerprint == last.fingerprint ? mine : others).push_back(&n);

  // The last night as the nightly gate judged it against the record (nightly/trend.cpp).
  const auto doc = d.find(k::trend::comparison);
  const ShownComparison c = read_comparison(doc);
  double window_from = static_cast<double>(mine.size() - 1);
  const auto window_first = d.find(k::trend::window_first);  // null: no night to compare with
  const std::string first_used = window_first.is_string() ? window_first.str() : "";
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (!first_used.empty() && mine[i]->id == first_used) window_from = static_cast<double>(i);
  out += verdict_box(last);
  out += std::string("<nav><a href=\"#comparison\">") +
         (c.against ? "the last night side by side" : "the last night against the record") +
         "</a><a href=\"#figures\">figures over the nights</a><a href=\"#nights\">nights</a></nav>\n";
  out += html::comparison_section(doc);
  out += "<h2 id=\"figures\">Figures over the nights</h2>\n<p class=\"muted\">" +
         std::to_string(mine.size()) + " night(s) of the last night's settings (<code>" + esc(last.fingerprint) +
         "</code>). " +
         (c.against
              ? "Each night a ratio candidate ÷ baseline deployment, measured side by side; whiskers: the interval it "
                "was judged on (" + fixed(c.confidence * 100, 0) + "%). Shaded: no change beyond the limit either way. "
                "Hollow points: nights that failed, were unreliable or interrupted. Dashed lines mark machine or "
                "version changes.</p>\n"
              : (c.control_url.empty()
                     ? std::string("Whiskers: each night's 95% interval. ")
                     : "Each night a ratio target ÷ control <code>" + esc(c.control_url) +
                           "</code>, measured in interleaved trials; whiskers: the interval of its trial pairs (" +
                           fixed(c.confidence * 100, 0) + "%). ") +
                    "Shaded: the band of the nights the last one was judged against. Hollow points: nights not "
                    "compared with (failed, unreliable, inconclusive, interrupted); they are never in the band. "
                    "Dashed lines mark accepted levels, change points, and machine or version changes (which do "
                    "not split the record).</p>\n");
  const auto markers = record_markers(mine, accepted);
  std::vector<std::string> keys;
  for (const auto& f : c.figures) keys.push_back(f.name());  // the worst first, as judged
  for (const auto* n : mine)
    for (const auto& f : n->figures)
      if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) keys.push_back(f.key);
  for (const auto& key : keys) {
    const auto judged = std::find_if(c.figures.begin(), c.figures.end(), [&](const ShownFigure& f) { return f.name() == key; });
    out += figure_chart(mine, key, judged == c.figures.end() ? nullptr : &*judged, window_from, markers, c);
  }
  out += "<div id=\"nights\">" + nights_table(mine, "Nights of these settings") + "</div>\n";
  if (!others.empty()) out += nights_table(others, "Nights of other settings (not compared with these)");
  if (const std::string missing = doc.missing_footnote(); !missing.empty())
    out += "<p class=\"bad\">" + esc(missing) + "</p>\n";
  return out + "<p class=\"muted\">Written by crh from the night files; every figure here is in them.</p>\n</body>\n</html>\n";
}

}  // namespace crh::reports
