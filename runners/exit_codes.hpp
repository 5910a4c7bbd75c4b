// Exit codes of every crh subcommand (DESIGN.md §2). When several apply the
// first of 2, 3, 1, 4, 0 wins.
#pragma once

namespace crh::runners {

enum ExitCode : int {
  kExitOk = 0,           // everything held
  kExitFailed = 1,       // a check failed, an invariant broke, a limit was crossed
  kExitUsage = 2,        // usage or configuration error
  kExitUnreachable = 3,  // the target could not be reached or set up
  kExitCouldNotTell = 4,  // nothing failed, but a comparison was inconclusive or a load unreliable
};

// The code that wins when both apply: 2, 3, 1, 4, 0 in that order.
constexpr int worse_exit(int a, int b) {
  auto rank = [](int c) { return c == kExitUsage ? 5 : c == kExitUnreachable ? 4 : c == kExitFailed ? 3 : c == kExitCouldNotTell ? 2 : c == kExitOk ? 0 : 1; };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace crh::runners
