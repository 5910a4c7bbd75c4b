// Inline SVG charts.
#include "reports/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "reports/junit.hpp"

namespace crh::reports {
namespace {

constexpr double kWidth = 900, kHeight = 300;
constexpr double kLeft = 78, kRight = 170, kTop = 34, kBottom = 50;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// 1, 2 or 5 times a power of ten, so that about `ticks` steps cover `span`.
double nice_step(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

std::string percentile_label(double x) {
  // 0 → "0%", 0.301 → "50%", 1 → "90%", 2 → "99%", 3 → "99.9%"
  const double q = (1 - std::pow(10.0, -x)) * 100;
  char buf[32];
  const int decimals = x < 2.5 ? 0 : static_cast<int>(std::round(x)) - 2;
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, q);
  return buf;
}

std::string frame(const std::string& title, const std::string& body, double height) {
  return "<figure class=\"chart\"><svg viewBox=\"0 0 " + num(kWidth) + " " + num(height) + "\" width=\"" + num(kWidth) +
         "\" height=\"" + num(height) + "\" role=\"img\" aria-label=\"" + xml_escape(title) + "\">" +
         "<text class=\"title\" x=\"" + num(kLeft) + "\" y=\"20\">" + xml_escape(title) + "</text>" + body +
         "</svg></figure>\n";
}

std::string axes(const std::string& x_title, const std::string& y_title) {
  return "<line class=\"axis\" x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + kPlotH) + "\" x2=\"" + num(kLeft + kPlotW) +
         "\" y2=\"" + num(kTop + kPlotH) + "\"/><line class=\"axis\" x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop) +
         "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(kTop + kPlotH) + "\"/>" + "<text class=\"axis-title\" x=\"" +
         num(kLeft + kPlotW / 2) + "\" y=\"" + num(kHeight - 8) + "\" text-anchor=\"middle\">" + xml_escape(x_title) +
         "</text><text class=\"axis-title\" transform=\"translate(14," + num(kTop + kPlotH / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(y_title) + "</text>";
}

}  // namespace

std::string series_color(std::size_t i) {
  static const char* const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                        "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728"};
  return palette[i % std::size(palette)];
}

double nines(double q) { return q >= 1 ? 6 : -std::log10(1 - q); }

namespace {

// The colour of a marker's kind.
const char* marker_color(const std::string& kind) {
  return kind == "change-point" ? "#cf222e" : kind == "accepted" ? "#1a7f37" : kind == "version" ? "#8250df" : "#9a6700";
}

std::string whisker(double x, double y0, double y1, const std::string& color, bool faint) {
  const std::string attrs = "\" stroke=\"" + color + "\" stroke-width=\"1.5\"" +
                            (faint ? " stroke-dasharray=\"3 2\"" : "") + "/>";
  return "<g class=\"whisker\"><line x1=\"" + num(x) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x) + "\" y2=\"" +
         num(y1) + attrs + "<line x1=\"" + num(x - 4) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x + 4) + "\" y2=\"" +
         num(y0) + attrs + "<line x1=\"" + num(x - 4) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x + 4) + "\" y2=\"" +
         num(y1) + attrs + "</g>";
}

std::string circle(double x, double y, const std::string& color, const PointMark* mark) {
  const bool hollow = mark && mark->hollow;
  std::string out = "<circle class=\"point" + std::string(hollow ? " hollow" : "") + "\" cx=\"" + num(x) + "\" cy=\"" +
                    num(y) + "\" r=\"" + (mark ? "4" : "3") + "\" fill=\"" + (hollow ? "#fff" : color) + "\"" +
                    (hollow ? " stroke=\"" + color + "\" stroke-width=\"2\"" : "") + ">" +
                    (mark && !mark->title.empty() ? "<title>" + xml_escape(mark->title) + "</title>" : "") + "</circle>";
  if (mark && !mark->href.empty()) out = "<a href=\"" + xml_escape(mark->href) + "\">" + out + "</a>";
  return out;
}

}  // namespace

std::string line_chart(const LineChart& c) {
  double x_min = INFINITY, x_max = -INFINITY, y_max = 0;
  for (const auto& s : c.series) {
    for (auto [x, y] : s.points) {
      x_min = std::min(x_min, x);
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
    for (const auto& w : s.whiskers) y_max = std::max(y_max, w.upper);
  }
  for (const auto& b : c.bands)
    if (!b.full_height) y_max = std::max(y_max, b.upper);
  if (!std::isfinite(x_min)) {
    return frame(c.title, "<text class=\"note\" x=\"" + num(kLeft) + "\" y=\"" + num(kTop + 30) + "\">nothing measured</text>",
                 kTop + 50);
  }
  if (c.x_scale == XScale::percentile) {
    x_min = 0;
    x_max = std::max(1.0, std::ceil(x_max));
  } else if (c.x_range) {
    std::tie(x_min, x_max) = *c.x_range;
  }
  if (x_max <= x_min) x_max = x_min + 1;
  const double y_step = nice_step(y_max > 0 ? y_max : 1, 5);
  const double y_top = std::max(y_step, std::ceil(y_max / y_step) * y_step);
  auto px = [&](double x) { return kLeft + (x - x_min) / (x_max - x_min) * kPlotW; };
  auto py = [&](double y) { return kTop + kPlotH - y / y_top * kPlotH; };

  std::string body;
  for (double y = 0; y <= y_top * 1.0001; y += y_step)
    body += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(kLeft + kPlotW) +
            "\" y2=\"" + num(py(y)) + "\"/><text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) +
            "\" text-anchor=\"end\">" + xml_escape(c.y_format ? c.y_format(y) : num(y)) + "</text>";
  std::vector<double> x_ticks;
  if (c.x_scale == XScale::percentile) {
    for (double x = 0; x <= x_max + 1e-9; x += 1) x_ticks.push_back(x);
    x_ticks.push_back(std::log10(2.0));  // 50%
  } else {
    const double step = std::max(nice_step(x_max - x_min, 8), c.x_min_step);
    for (double x = std::ceil(x_min / step) * step; x <= x_max + 1e-9; x += step) x_ticks.push_back(x);
  }
  for (double x : x_ticks) {
    const std::string label = c.x_scale == XScale::percentile ? percentile_label(x) : c.x_format ? c.x_format(x) : num(x);
    body += "<line class=\"grid\" x1=\"" + num(px(x)) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(px(x)) + "\" y2=\"" +
            num(kTop + kPlotH) + "\"/><text class=\"tick\" x=\"" + num(px(x)) + "\" y=\"" + num(kTop + kPlotH + 16) +
            "\" text-anchor=\"middle\">" + xml_escape(label) + "</text>";
  }
  // Bands under the lines, markers over the grid.
  for (const auto& b : c.bands) {
    const double top = b.full_height ? kTop : py(b.upper), bottom = b.full_height ? kTop + kPlotH : py(b.lower);
    body += "<rect class=\"band\" x=\"" + num(px(b.x0)) + "\" y=\"" + num(top) + "\" width=\"" +
            num(std::max(2.0, px(b.x1) - px(b.x0))) + "\" height=\"" + num(std::max(1.0, bottom - top)) +
            "\" fill=\"" + xml_escape(b.fill) + "\" fill-opacity=\"0.15\"><title>" + xml_escape(b.label) +
            "</title></rect>";
  }
  for (const auto& m : c.markers)
    body += "<g class=\"marker marker-" + xml_escape(m.kind) + "\"><line x1=\"" + num(px(m.x)) + "\" y1=\"" + num(kTop) +
            "\" x2=\"" + num(px(m.x)) + "\" y2=\"" + num(kTop + kPlotH) + "\" stroke=\"" + marker_color(m.kind) +
            "\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text class=\"tick\" transform=\"translate(" +
            num(px(m.x) + 3) + "," + num(kTop + 4) + ") rotate(90)\" fill=\"" + marker_color(m.kind) + "\">" +
            xml_escape(m.label) + "</text></g>";
  body += axes(c.x_title, c.y_title);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const std::string color = series_color(i);
    for (const auto& w : s.whiskers) body += whisker(px(w.x), py(w.lower), py(w.upper), color, w.faint);
    if (s.points.empty()) continue;
    if (s.line) {
      std::string path;
      for (auto [x, y] : s.points) path += (path.empty() ? "M" : " L") + num(px(x)) + " " + num(py(y));
      body += "<path class=\"line\" d=\"" + path + "\" stroke=\"" + color + "\"" +
              (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
    }
    // Marked points each; else few points (a short run's seconds), so a lone one is seen.
    const bool marked = s.marks.size() == s.points.size();
    if (marked || s.points.size() <= 30 || !s.line)
      for (std::size_t j = 0; j < s.points.size(); ++j)
        body += circle(px(s.points[j].first), py(s.points[j].second), color, marked ? &s.marks[j] : nullptr);
  }
  // The legend, right of the plot, so it never hides a line.
  std::string legend;
  const double lx = kLeft + kPlotW + 14;
  double ly = kTop + 8;
  for (std::size_t i = 0; i < c.series.size(); ++i, ly += 16)
    legend += "<line x1=\"" + num(lx) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(lx + 22) + "\" y2=\"" + num(ly) +
              "\" stroke=\"" + series_color(i) + "\" stroke-width=\"3\"" +
              (c.series[i].dashed ? " stroke-dasharray=\"6 4\"" : c.series[i].line ? "" : " stroke-dasharray=\"2 6\"") +
              "/><text class=\"legend\" x=\"" + num(lx + 28) + "\" y=\"" + num(ly + 4) + "\">" +
              xml_escape(c.series[i].label) + "</text>";
  std::vector<std::string> shown;
  for (const auto& b : c.bands) {
    const std::string label = b.full_height ? b.label.substr(0, b.label.find(':')) : b.label;  // "outage: 2.0 s to ..."
    if (std::find(shown.begin(), shown.end(), label) != shown.end()) continue;
    shown.push_back(label);
    legend += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 6) + "\" width=\"22\" height=\"12\" fill=\"" +
              xml_escape(b.fill) + "\" fill-opacity=\"0.15\"/><text class=\"legend\" x=\"" + num(lx + 28) +
              "\" y=\"" + num(ly + 4) + "\">" + xml_escape(label) + "</text>";
    ly += 16;
  }
  return frame(c.title, body + "<g class=\"legend-box\">" + legend + "</g>", kHeight);
}

std::string interval_strip(const Strip& s) {
  constexpr double w = 120, h = 18, pad = 6;
  double lo = s.value, hi = s.value;
  for (const auto& v : {s.lower, s.upper, s.band_lower, s.band_upper, s.reference})
    if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  const double span = hi > lo ? hi - lo : std::max(1e-9, std::abs(hi) * 0.1);
  lo -= span * 0.1;
  hi += span * 0.1;
  auto px = [&](double v) { return pad + (v - lo) / (hi - lo) * (w - 2 * pad); };
  const std::string color = s.bad ? "#cf222e" : "#1b1f24";
  std::string body;
  if (s.band_lower && s.band_upper)
    body += "<rect class=\"band\" x=\"" + num(px(*s.band_lower)) + "\" y=\"2\" width=\"" +
            num(std::max(1.0, px(*s.band_upper) - px(*s.band_lower))) + "\" height=\"" + num(h - 4) +
            "\" fill=\"#1f77b4\" fill-opacity=\"0.25\"/>";
  if (s.reference)
    body += "<line x1=\"" + num(px(*s.reference)) + "\" y1=\"1\" x2=\"" + num(px(*s.reference)) + "\" y2=\"" +
            num(h - 1) + "\" stroke=\"#1f77b4\" stroke-width=\"2\"/>";
  if (s.lower && s.upper)
    body += "<g class=\"whisker\"><line x1=\"" + num(px(*s.lower)) + "\" y1=\"9\" x2=\"" + num(px(*s.upper)) +
            "\" y2=\"9\" stroke=\"" + color + "\" stroke-width=\"1.5\"/><line x1=\"" + num(px(*s.lower)) +
            "\" y1=\"5\" x2=\"" + num(px(*s.lower)) + "\" y2=\"13\" stroke=\"" + color + "\"/><line x1=\"" +
            num(px(*s.upper)) + "\" y1=\"5\" x2=\"" + num(px(*s.upper)) + "\" y2=\"13\" stroke=\"" + color + "\"/></g>";
  body += "<circle cx=\"" + num(px(s.value)) + "\" cy=\"9\" r=\"3\" fill=\"" + color + "\"/>";
  return "<svg class=\"strip\" viewBox=\"0 0 " + num(w) + " " + num(h) + "\" width=\"" + num(w) + "\" height=\"" +
         num(h) + "\" role=\"img\" aria-label=\"" + xml_escape(s.title) + "\"><title>" + xml_escape(s.title) +
         "</title>" + body + "</svg>";
}

std::string bar_chart(const BarChart& c) {
  double y_max = 0;
  for (const auto& [label, v] : c.bars) y_max = std::max(y_max, v);
  if (c.bars.empty())
    return frame(c.title, "<text class=\"note\" x=\"" + num(kLeft) + "\" y=\"" + num(kTop + 30) + "\">nothing measured</text>",
                 kTop + 50);
  const double y_step = nice_step(y_max > 0 ? y_max : 1, 5);
  const double y_top = std::max(y_step, std::ceil(y_max / y_step) * y_step);
  auto py = [&](double y) { return kTop + kPlotH - y / y_top * kPlotH; };
  std::string body;
  for (double y = 0; y <= y_top * 1.0001; y += y_step)
    body += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(kLeft + kPlotW) +
            "\" y2=\"" + num(py(y)) + "\"/><text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) +
            "\" text-anchor=\"end\">" + num(y).substr(0, num(y).size() - 2) + "</text>";
  const double slot = kPlotW / static_cast<double>(c.bars.size());
  const double width = std::min(60.0, slot * 0.7);
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const auto& [label, v] = c.bars[i];
    const double x = kLeft + slot * (static_cast<double>(i) + 0.5);
    const bool red = i < c.highlight.size() && c.highlight[i];
    body += "<rect x=\"" + num(x - width / 2) + "\" y=\"" + num(py(v)) + "\" width=\"" + num(width) + "\" height=\"" +
            num(kTop + kPlotH - py(v)) + "\" fill=\"" + (red ? "#d62728" : series_color(0)) + "\"/>" +
            "<text class=\"tick\" x=\"" + num(x) + "\" y=\"" + num(kTop + kPlotH + 16) + "\" text-anchor=\"middle\">" +
            xml_escape(label) + "</text><text class=\"value\" x=\"" + num(x) + "\" y=\"" + num(py(v) - 4) +
            "\" text-anchor=\"middle\">" + num(v).substr(0, num(v).size() - 2) + "</text>";
  }
  return frame(c.title, body + axes(c.x_title, c.y_title), kHeight);
}

}  // namespace crh::reports
