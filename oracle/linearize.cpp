// The order search of a burst: the first order the model accepts whole.
#include "oracle/linearize.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

namespace crh::oracle {

Linearized linearize(Model& model, std::size_t operations, const JudgeInOrder& judge) {
  const auto breaks = [](const std::vector<Divergence>& d) {
    return std::any_of(d.begin(), d.end(), [](const Divergence& x) { return x.severity == Severity::must; });
  };
  std::vector<std::size_t> order(operations);
  std::iota(order.begin(), order.end(), 0);
  std::optional<Model> furthest_model;
  Linearized furthest;
  std::size_t furthest_accepted = 0;
  do {
    Model m = model;
    Linearized tried;
    std::size_t accepted = 0;
    bool broke = false;
    for (auto i : order) {
      auto found = judge(m, i);
      broke = breaks(found);
      tried.found.insert(tried.found.end(), found.begin(), found.end());
      if (broke) break;
      ++accepted;
    }
    if (!broke) {
      model = std::move(m);
      tried.explained = true;
      return tried;
    }
    if (!furthest_model || accepted > furthest_accepted) {
      furthest_model = std::move(m);
      furthest = std::move(tried);
      furthest_accepted = accepted;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  for (auto& d : furthest.found)
    if (d.severity == Severity::must)
      d.text = "no order of the " + std::to_string(operations) +
               " calls sent at one instant gives their answers; in the one that goes furthest, " + d.text;
  model = std::move(*furthest_model);
  return furthest;
}

}  // namespace crh::oracle
