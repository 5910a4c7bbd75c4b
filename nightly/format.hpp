#pragma once
// How nightly writes a number into its reasons and tables.

#include <cstdio>
#include <string>

namespace crh::nightly {

// `x` through one printf conversion: formatted("%.3f", r.ratio).
inline std::string formatted(const char* format, double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace crh::nightly
