// The command that reruns one contract check under the conditions it ran in
// (issue 22 item 4): `crh contract <the options the producer recorded> --check
// ID`, shell-quoted so that it pastes; shared by every rendering of a failure.
#pragma once

#include <string>
#include <string_view>

#include "results/view.hpp"

namespace crh::reports {

// `word` as one POSIX shell word: as it is when only safe characters, else
// single-quoted ('\'' for a quote), or $'...' when it holds control bytes.
std::string shell_quote(std::string_view word);

// "crh contract ... --check ID" for a check of `contract` (a contract
// document). Its config's rerun options when recorded; a document written
// before they were (no such key) gets the old line: --base-url and --channel
// unless the target was the embedded service.
std::string rerun_command(const results::DocView& contract, std::string_view check_id);

// Whether the recorded options read the key from a file (--api-key-file):
// without, a rerun against a --base-url needs CRH_API_KEY exported.
bool rerun_reads_key_file(const results::DocView& contract);

// A failed check's reproducer as a whole POSIX sh script: "#!/bin/sh", its
// headline, the rerun line (the same check as it ran, a comment), the rest
// the contract document holds (checks[].reproducer). Empty when the check
// has none (it passed, or the document predates reproducers).
std::string reproducer_script(const results::DocView& contract, const results::DocView& check);

}  // namespace crh::reports
