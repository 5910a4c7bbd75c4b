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

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // x, y; x in nines for a percentile axis
  bool dashed = false;
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

// The colour of the i-th series (also for tables that refer to a chart).
std::string series_color(std::size_t i);

// -log10(1 - q) for q in [0, 1); the x of a percentile axis.
double nines(double q);

}  // namespace crh::reports
