// When a reproducer script sends the step that failed.
#include "contracts/reproducer_timing.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/api.hpp"

namespace crh::contracts {

using core::api::Operation;

FailingTime failing_time(const CheckResult& r, std::size_t first, std::size_t last, const core::Target& target) {
  using us = std::chrono::microseconds;
  const auto& failing = *r.evidence[last].replay;
  const us margin = std::max<us>(std::chrono::milliseconds(100), std::chrono::milliseconds(20) * static_cast<int>(last - first));
  std::vector<std::pair<std::size_t, us>> ends;  // each tag's step and end
  for (std::size_t i = first; i < last; ++i) {
    const auto& step = *r.evidence[i].replay;
    const auto seen = core::api::recognize(target.dialect.call_hook, step.request.method, step.request.target);
    if (!seen || seen->op != Operation::tag || step.status != 200) continue;
    const auto minutes = core::api::request_parameter(step.request, "minutes");
    if (!minutes) continue;
    char* end = nullptr;
    const double m = std::strtod(minutes->c_str(), &end);
    if (end == minutes->c_str() || m <= 0) continue;
    ends.push_back({i, step.at + std::chrono::duration_cast<us>(target.minute * m)});
  }
  FailingTime out{failing.at};
  const auto near = std::find_if(ends.begin(), ends.end(), [&](const auto& e) {
    return (failing.at > e.second ? failing.at - e.second : e.second - failing.at) < margin;
  });
  if (near == ends.end()) return out;
  const bool after = failing.at >= near->second;
  const us off = after ? failing.at - near->second : near->second - failing.at;
  const std::string was = std::to_string(off.count() / 1000) + " ms " + (after ? "after" : "before") +
                          " the end of the tag of step " + std::to_string(near->first + 1);
  out.at = after ? near->second + 3 * margin : near->second - 3 * margin;
  const us earlier = last > first ? r.evidence[last - 1].replay->at : us(0);
  const bool kept = std::all_of(ends.begin(), ends.end(), [&](const auto& e) {
    return (failing.at >= e.second) == (out.at >= e.second) &&
           (out.at > e.second ? out.at - e.second : e.second - out.at) >= margin;
  });
  if (out.at <= earlier || !kept) {
    out.cannot = "its failing step came " + was + ", closer than a shell's sleeps keep to, and cannot be moved "
                 "further from it";
    return out;
  }
  out.moved = "Step " + std::to_string(last + 1) + " is sent " + std::to_string(3 * margin.count() / 1000) + " ms " +
              (after ? "after" : "before") + " the end of the tag of step " + std::to_string(near->first + 1) +
              " (the failing run: " + was + "): a shell's sleeps keep to that side of it.";
  return out;
}

}  // namespace crh::contracts
