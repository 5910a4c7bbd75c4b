// A failed check's reproducer: a POSIX sh script (curl, sed, tr, dd) that
// sends the check's requests again, up to the one whose answer broke the
// rule, and tells by its exit code whether the service still answers as in
// the failing run: 1 reproduced; 0 not reproduced, saying where it went
// otherwise (a step before the failing one answering otherwise means the
// state the failure needs did not hold there); 2 it could not run (no key).
//
// What the service chose in the run (the alias a tag picked) is read from its
// answers, not repeated: later requests and the compared answer name that
// alias by a variable. What the run shows the check had found (database
// entries, aliases bound before, a full channel) is set up first. Each tag
// it made is deleted when it ends, however it ends. Instants in answers are
// not compared; pauses between steps are kept.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "contracts/check.hpp"
#include "core/target.hpp"

namespace crh::contracts {

// The script without its "#!/bin/sh" line and its rerun line, which the
// reports put before it (reports/rerun.hpp): its first line is the headline
// (a comment saying what it does, or why it cannot). Empty unless `r` failed.
// `before`: the run's exchanges before the check's, which tell what state
// the check found: the script sets it up again before its requests.
std::string reproducer(const CheckResult& r, const core::Target& target, const std::vector<ReplayStep>& before = {});

// The evidence the script starts with: the failing step when a run-wide
// check cites it (sent alone), else the first. Nothing when it did not fail
// on an exchange.
std::optional<std::size_t> first_step(const CheckResult& r);

}  // namespace crh::contracts
