#pragma once
// The median of a few numbers (nights, repetitions), shared by nightly's files.

#include <algorithm>
#include <vector>

namespace crh::nightly {

// 0 for no numbers: callers treat an empty window as "no level" before asking.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace crh::nightly
