// The trend document's keys: the record of nights as the trend page draws it
// (`crh report --nights DIR --html`). nightly/trend.cpp writes it, with the
// gate's judgement of the last night in it; reports/trend_html.cpp only draws
// what it says. A night's figure is written as in the night files
// (nightly/figures.cpp, figure_json).
#pragma once

#include "results/keys_envelope.hpp"

namespace crh::results::keys {

inline constexpr Key schema_trend = "crh.trend";

namespace trend {
inline constexpr Key schema = "schema";              // schema_trend
inline constexpr Key dir = "dir";                    // the record's folder, as the page names it
inline constexpr Key nights = "nights";              // oldest first, each as trend_night
inline constexpr Key accepted = "accepted";          // the accepted nights' ids
inline constexpr Key comparison = "comparison";      // the last night against the record (the run's comparison section)
inline constexpr Key window_first = "window_first";  // the first night of the last night's comparison window, or null
}  // namespace trend

namespace trend_night {
inline constexpr Key night = "night";
inline constexpr Key started_at = "started_at";
inline constexpr Key status = "status";
inline constexpr Key exit_code = "exit_code";
inline constexpr Key reason = "reason";
inline constexpr Key comparable = "comparable";  // other nights may be judged against it
inline constexpr Key fingerprint = "fingerprint";
inline constexpr Key tool_version = "tool_version";
inline constexpr Key cpu = "cpu";
inline constexpr Key cores = "cores";
inline constexpr Key report = "report";  // its HTML report, "" when none
inline constexpr Key figures = "figures";
}  // namespace trend_night

namespace night_figure {
inline constexpr Key scenario = "scenario";
inline constexpr Key operation = "operation";
inline constexpr Key figure = "figure";
inline constexpr Key unit = "unit";
inline constexpr Key value = "value";
inline constexpr Key lower = "lower";  // the 95% interval, when known
inline constexpr Key upper = "upper";
inline constexpr Key backed = "backed";
}  // namespace night_figure

}  // namespace crh::results::keys
