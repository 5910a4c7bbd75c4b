// Figures in their units.
#include "results/units.hpp"

#include <cstdio>

namespace crh::results {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string format_ns(double ns) {
  if (ns < 1e3) return fixed(ns, 0) + " ns";
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 2 : ns < 1e5 ? 1 : 0) + " µs";
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

std::string format_figure(std::string_view unit, double v) {
  if (unit == "ns") return format_ns(v);
  if (unit == "per_second") return fixed(v, v < 100 ? 1 : 0) + "/s";
  if (unit == "fraction") return fixed(v * 100, 3) + "%";
  if (unit == "ratio") return fixed(v, 3) + "×";
  return fixed(v, 3);
}

}  // namespace crh::results
