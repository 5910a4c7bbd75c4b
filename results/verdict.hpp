// The verdict every result document carries (DESIGN.md §2, §6): a status, the
// exit code it means and a reason. The one place that says which statuses
// exist, which exit code each one means, and which code wins when several
// apply; contracts, loadgen, capture, reports, nightly and runners all use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crh::results {

// Exit codes of every crh subcommand (DESIGN.md §2).
enum ExitCode : int {
  kExitOk = 0,            // everything held
  kExitFailed = 1,        // a check failed, an invariant broke, a limit was crossed, or the run was cut short
  kExitUsage = 2,         // usage or configuration error
  kExitUnreachable = 3,   // the target could not be reached, set up or tested
  kExitCouldNotTell = 4,  // nothing failed, but a comparison was inconclusive or a load unreliable
};

// The code that wins when both apply: 2, 3, 1, 4, 0 in that order (an
// unknown code ranks between 4 and 0, so it is never lost to a pass).
constexpr int worse_exit(int a, int b) {
  auto rank = [](int c) {
    switch (c) {
      case kExitUsage: return 5;
      case kExitUnreachable: return 4;
      case kExitFailed: return 3;
      case kExitCouldNotTell: return 2;
      case kExitOk: return 0;
      default: return 1;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

// A document's verdict status, with the exit code each one means.
enum class Status {
  passed,        // 0
  failed,        // 1: something the spec or a threshold requires did not hold
  incomplete,    // 1: interrupted (Ctrl-C, SIGTERM) or shards missing: never a pass
  unreachable,   // 3: nothing could be asked
  untested,      // 3: the target answered, but the run proved nothing
  inconclusive,  // 4: a comparison could not tell
  unreliable,    // 4: the figures cannot be trusted (the generator limited them, or the machine's noise)
};

ExitCode exit_code_of(Status s);
std::string_view to_string(Status s);
// The status a document names; nothing for a word that is not one.
std::optional<Status> status_from(std::string_view word);

struct Verdict {
  Status status = Status::passed;
  std::string reason;
  int exit_code() const { return exit_code_of(status); }
};

}  // namespace crh::results
