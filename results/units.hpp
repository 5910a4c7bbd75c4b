// A figure's value in its unit for people, the one way every report, the
// nightly gate and `crh load --against` print it.
#pragma once

#include <string>
#include <string_view>

namespace crh::results {

// `v` with that many decimals.
std::string fixed(double v, int decimals);

// "812 µs", "1.23 ms", "2.50 s": a duration in nanoseconds for people.
std::string format_ns(double ns);

// A figure in its unit ("ns", "per_second", "fraction", "ratio"): 1.23 ms,
// 2884/s, 0.125%, 1.042×.
std::string format_figure(std::string_view unit, double v);

}  // namespace crh::results
