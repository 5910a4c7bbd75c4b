// The order search of a burst on synthetic judges: each operation is
// accepted only at one place in the order, counted on the model's clock
// (a field the search copies with the model, as it does the real facts).
#include "oracle/linearize.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace crh::oracle {
namespace {

// Operation i is accepted only as the place[i]-th of the order.
JudgeInOrder accepted_at(std::vector<std::int64_t> place) {
  return [place](Model& m, std::size_t i) {
    std::vector<Divergence> found;
    if (place[i] != m.clock.margin_ms)
      found.push_back({Severity::must, "B1", std::to_string(place[i]), std::to_string(m.clock.margin_ms),
                       "call " + std::to_string(i) + " out of place"});
    else
      found.push_back({Severity::should, "T1", "", "", "a SHOULD along the way"});
    ++m.clock.margin_ms;
    return found;
  };
}

TEST(Linearize, FindsTheOneOrderThatExplainsTheAnswers) {
  Model m;
  const auto judged = linearize(m, 4, accepted_at({2, 0, 3, 1}));
  EXPECT_TRUE(judged.explained);
  EXPECT_EQ(m.clock.margin_ms, 4) << "the model is the one the explaining order left";
  ASSERT_EQ(judged.found.size(), 4u) << "its SHOULD findings are kept";
  for (const auto& d : judged.found) EXPECT_EQ(d.severity, Severity::should);
}

TEST(Linearize, SaysNoOrderExplainsThemAndKeepsTheFurthest) {
  Model m;
  const auto judged = linearize(m, 3, accepted_at({0, 1, 1}));  // two calls both want the second place
  EXPECT_FALSE(judged.explained);
  EXPECT_EQ(m.clock.margin_ms, 3) << "the furthest order accepted two calls, then broke on the third";
  ASSERT_FALSE(judged.found.empty());
  const auto& last = judged.found.back();
  EXPECT_EQ(last.severity, Severity::must);
  EXPECT_EQ(last.text.rfind("no order of the 3 calls sent at one instant gives their answers", 0), 0u) << last.text;
}

TEST(Linearize, ASingleOperationIsJudgedOnce) {
  Model m;
  int judged = 0;
  const auto out = linearize(m, 1, [&](Model&, std::size_t) {
    ++judged;
    return std::vector<Divergence>{};
  });
  EXPECT_TRUE(out.explained);
  EXPECT_EQ(judged, 1);
}

}  // namespace
}  // namespace crh::oracle
