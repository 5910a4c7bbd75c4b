// Operations sent at one instant (a burst of callers): their answers must be
// those of some order of them, each judged by the model in turn
// (linearizability, Herlihy and Wing 1990). The search tries every order, so
// it is for the few operations of one burst (n! orders; a burst has at most 8).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "oracle/model.hpp"

namespace crh::oracle {

struct Linearized {
  // Every divergence along the order kept: the first order with no MUST
  // divergence, else the one that went furthest before its first (its MUST
  // texts then say that no order explains the answers).
  std::vector<Divergence> found;
  bool explained = false;  // some order accepts every answer
};

// `judge(model, i)` judges operation i on `model`, advances it and returns
// the divergences. `model` ends as the kept order leaves it.
using JudgeInOrder = std::function<std::vector<Divergence>(Model& model, std::size_t i)>;
Linearized linearize(Model& model, std::size_t operations, const JudgeInOrder& judge);

}  // namespace crh::oracle
