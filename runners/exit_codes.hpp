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

}  // namespace crh::runners
