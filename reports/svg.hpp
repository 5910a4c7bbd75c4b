// Charts as inline SVG, drawn by the project (no script, no fetched asset):
// line charts with a linear or percentile ("nines") x axis, and bar charts,
// each with axis titles, units on the ticks and a legend.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace crh::reports {

// An interval at x (a percentile's 95% interval, a night's), drawn as a
// vertical whisker with caps in the series' colour.
struct Whisker {
  double x = 0, lower = 0, upper = 0;
  bool faint = false;  // not backed, or a night not compared: dashed
};

// How one point of a series is drawn when the points are marked one by one.
struct PointMark {
  std::string href;   // the point links there ("" none)
  std::string title;  // shown on hover, and read by screen readers
  bool hollow = false;  // a night not compared (failed, unreliable, inconclusive)
};

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // x, y; x in nines for a percentile axis
  bool dashed = false;
  std::vector<Whisker> whiskers;
  std::vector<PointMark> marks;  // empty, or one per point: every point circled, linked and titled
  bool line = true;              // false: the points alone
};

// A shaded range of y over a range of x (the nights' band of the comparison window).
struct Band {
  double x0 = 0, x1 = 0, lower = 0, upper = 0;
  std::string label;
  bool full_height = false;       // the whole plot's height, whatever lower and upper say (a span of time)
  std::string fill = "#1f77b4";  // bands of one label share one legend entry
};

// A vertical mark at x with a short label: kind "change-point", "accepted",
// "machine" or "version" (a CSS class, and its colour).
struct Marker {
  double x = 0;
  std::string label;
  std::string kind;
};

enum class XScale {
  linear,
  percentile,  // x is -log10(1 - q): 0 is 0%, 1 is 90%, 2 is 99%, 3 is 99.9% (as HdrHistogram plots)
};

struct LineChart {
  std::string title;
  std::string x_title;
  std::string y_title;
  XScale x_scale = XScale::linear;
  std::function<std::string(double)> y_format;  // tick labels, with the unit
  std::function<std::string(double)> x_format;  // linear axis tick labels
  std::optional<std::pair<double, double>> x_range;  // linear axis: fixed ends (else the data's)
  double x_min_step = 0;                             // linear axis: no finer ticks than this
  std::vector<ChartSeries> series;
  std::vector<Band> bands;
  std::vector<Marker> markers;
};

std::string line_chart(const LineChart& chart);

struct BarChart {
  std::string title;
  std::string x_title;
  std::string y_title;
  std::vector<std::pair<std::string, double>> bars;  // label, value
  std::vector<bool> highlight;                        // drawn red (e.g. rounds with two winners)
};

std::string bar_chart(const BarChart& chart);

// A small strip for a table row: the nights' band shaded, the reference as a
// tick and tonight's value with its interval as a whisker, on one scale.
struct Strip {
  double value = 0;
  std::optional<double> lower, upper, band_lower, band_upper, reference;
  bool bad = false;  // regressed: drawn red
  std::string title;
};
std::string interval_strip(const Strip& strip);

// The colour of the i-th series (also for tables that refer to a chart).
std::string series_color(std::size_t i);

// -log10(1 - q) for q in [0, 1); the x of a percentile axis.
double nines(double q);

}  // namespace crh::reports
