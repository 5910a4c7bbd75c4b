// The verdict's one reading (results/verdict.hpp): each status's exit code as
// DESIGN.md §2 gives it, the names a document carries, and the precedence
// 2, 3, 1, 4, 0 checked against the order written out, for every pair.
#include "results/verdict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace crh::results {
namespace {

constexpr std::array kStatuses{Status::passed,       Status::failed,       Status::incomplete, Status::unreachable,
                               Status::untested,     Status::inconclusive, Status::unreliable};

TEST(Verdict, EachStatusMeansTheExitCodeTheDesignGivesIt) {
  EXPECT_EQ(exit_code_of(Status::passed), 0);
  EXPECT_EQ(exit_code_of(Status::failed), 1);
  EXPECT_EQ(exit_code_of(Status::incomplete), 1);  // interrupted: never a pass
  EXPECT_EQ(exit_code_of(Status::unreachable), 3);
  EXPECT_EQ(exit_code_of(Status::untested), 3);  // proved nothing: never a pass
  EXPECT_EQ(exit_code_of(Status::inconclusive), 4);
  EXPECT_EQ(exit_code_of(Status::unreliable), 4);
  EXPECT_EQ((Verdict{Status::untested, "why"}.exit_code()), 3);
}

TEST(Verdict, EveryStatusReadsBackFromItsNameAndNoOtherWordDoes) {
  std::vector<std::string_view> names;
  for (auto s : kStatuses) {
    names.push_back(to_string(s));
    EXPECT_EQ(status_from(to_string(s)), s) << to_string(s);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "two statuses share a name";
  for (const char* word : {"", "PASSED", "pass", "usage", "regressed", "passed "})
    EXPECT_FALSE(status_from(word).has_value()) << '"' << word << '"';
}

// worse_exit against the precedence written out as a list, over every pair
// of the five codes and two codes no subcommand uses (ranked between 4 and 0).
TEST(Verdict, TheWorseExitFollowsThePrecedenceForEveryPair) {
  const std::vector<int> order{kExitUsage, kExitUnreachable, kExitFailed, kExitCouldNotTell, -1, kExitOk};
  auto place = [&](int c) {
    const auto it = std::find(order.begin(), order.end(), c);
    return it == order.end() ? std::find(order.begin(), order.end(), -1) - order.begin() : it - order.begin();
  };
  const std::vector<int> codes{0, 1, 2, 3, 4, -1, 7};
  for (int a : codes)
    for (int b : codes) {
      const int expected = place(a) <= place(b) ? a : b;
      EXPECT_EQ(worse_exit(a, b), expected) << a << " and " << b;
      EXPECT_EQ(place(worse_exit(a, b)), place(worse_exit(b, a))) << a << " and " << b;
      for (int c : codes)
        EXPECT_EQ(place(worse_exit(worse_exit(a, b), c)), place(worse_exit(a, worse_exit(b, c))));
    }
  // Folding the exit codes of every status gives the worst status's code.
  int folded = kExitOk;
  for (auto s : kStatuses) folded = worse_exit(folded, exit_code_of(s));
  EXPECT_EQ(folded, kExitUnreachable);
}

}  // namespace
}  // namespace crh::results
