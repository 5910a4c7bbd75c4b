// The keys of a contract document (DESIGN.md §1): its body, config, suites, checks, findings, evidence and rules.
#pragma once

#include "results/keys_envelope.hpp"

namespace crh::results::keys {

// ---- contract: the body of a contract document (contracts/result_document.cpp)
namespace contract {
inline constexpr Key counts = "counts";
inline constexpr Key notes = "notes";
inline constexpr Key suites = "suites";
inline constexpr Key rules = "rules";
inline constexpr Key checks = "checks";
}  // namespace contract

// contract config
namespace contract_config {
using contract::checks;  // the check patterns asked for
using contract::suites;
inline constexpr Key slow = "slow";
inline constexpr Key strict = "strict";
// The explore suite's count of operations and seed (issue 25); absent in
// documents written before it
inline constexpr Key explore = "explore";
inline constexpr Key explore_seed = "explore_seed";
inline constexpr Key minute_ms = "minute_ms";
inline constexpr Key timeout_ms = "timeout_ms";
// How calls were placed: "http" (the call hook) or "sip", and where the SIP
// calls went; absent in documents written before issue 26 (then "http")
inline constexpr Key call_driver = "call_driver";
inline constexpr Key sip_target = "sip_target";
inline constexpr Key profile = "profile";
// How to rerun one check as it ran (runners/ write it, every rendering of a
// failure shows it); absent in documents written before issue 22
inline constexpr Key rerun = "rerun";
}  // namespace contract_config

// contract config.rerun: the options of `crh contract` that shaped the checks
// (never the key), and where a rerun gets its key
namespace rerun {
inline constexpr Key options = "options";
inline constexpr Key key_source = "key_source";
// values of key_source
inline constexpr Key key_from_environment = "environment";  // CRH_API_KEY must be exported
inline constexpr Key key_from_file = "file";                // the options name --api-key-file
inline constexpr Key key_embedded = "embedded";             // the embedded service makes its own
}  // namespace rerun

// counts (of the whole run and of each suite): the total and one per outcome,
// named as contracts::to_string(Outcome) names them
namespace counts {
inline constexpr Key total = "total";
inline constexpr Key pass = "pass";
inline constexpr Key warn = "warn";
inline constexpr Key fail = "fail";
inline constexpr Key skip = "skip";
inline constexpr Key indeterminate = "indeterminate";
}  // namespace counts

// suites[]
namespace suite {
using contract::counts;
using tool::name;
}  // namespace suite

// checks[]
namespace check {
inline constexpr Key id = "id";
inline constexpr Key suite = "suite";
inline constexpr Key summary = "summary";
using contract::rules;  // the rule ids it covers
inline constexpr Key severity = "severity";
inline constexpr Key outcome = "outcome";
inline constexpr Key message = "message";
using envelope::duration_ms;
inline constexpr Key findings = "findings";
inline constexpr Key evidence = "evidence";
// true when the check's own body skipped it on what the target answered (a
// rule the target could have had tested was not); absent otherwise
inline constexpr Key skipped_by_target = "skipped_by_target";
// a failed check's POSIX sh script without its first two lines (the
// interpreter, the rerun line): reports put them before it; absent otherwise
inline constexpr Key reproducer = "reproducer";
}  // namespace check

// checks[].findings[]
namespace finding {
using check::severity;
inline constexpr Key rule = "rule";
inline constexpr Key text = "text";
// true for a framework's refusal of a malformed request, judged apart (a
// warning also under --strict); absent otherwise
inline constexpr Key judged_apart = "judged_apart";
}  // namespace finding

// checks[].evidence[]
namespace evidence {
inline constexpr Key curl = "curl";
inline constexpr Key answer = "answer";
inline constexpr Key elapsed_ms = "elapsed_ms";
}  // namespace evidence

// rules[]: a rule of the catalogue, its outcome and the checks covering it (id, outcome, severity)
namespace rule {
using check::id;
inline constexpr Key section = "section";
using check::outcome;
using contract::checks;
using finding::text;
}  // namespace rule

// rules[].checks[]
namespace rule_check {
using check::id;
using check::outcome;  // the check's outcome on this rule (oracle::outcome_for_rule)
using check::severity;
inline constexpr Key check_outcome = "check_outcome";  // the check's own, where a finding on another rule made it differ
}  // namespace rule_check

}  // namespace crh::results::keys
