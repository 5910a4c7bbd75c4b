// The vocabulary of the result documents (DESIGN.md §1): every key name,
// defined once, for the producers (contracts/runner.cpp, loadgen/result.cpp,
// reports/run_document.cpp, runners/) and every reader (the strict readbacks
// and the renderers' core::DocView). A key that several sections share is
// defined in the first and brought into the others with `using`, so that a
// renamed key cannot drift between the writer and a reader.
//
// The tests keep their literals on purpose: they pin the format.
#pragma once

#include <string_view>

namespace crh::core::keys {

using Key = std::string_view;

// ---- values of the envelope: the schema every crh document names, and its kinds
inline constexpr Key schema_name = "crh.result";
inline constexpr Key kind_contract = "contract";
inline constexpr Key kind_load = "load";
inline constexpr Key kind_run = "run";
inline constexpr Key kind_pcap = "pcap";  // crh pcap check: the contract judged on a capture

// ---- the envelope, every kind (core/result_envelope.cpp); config and verdict follow it in every kind
namespace envelope {
inline constexpr Key schema = "schema";
inline constexpr Key schema_version = "schema_version";
inline constexpr Key kind = "kind";
inline constexpr Key tool = "tool";
inline constexpr Key started_at = "started_at";
inline constexpr Key duration_ms = "duration_ms";
inline constexpr Key target = "target";
inline constexpr Key config = "config";
inline constexpr Key verdict = "verdict";
}  // namespace envelope

// envelope.tool
namespace tool {
inline constexpr Key name = "name";
inline constexpr Key version = "version";
}  // namespace tool

// envelope.target
namespace target {
inline constexpr Key base_url = "base_url";
inline constexpr Key channel = "channel";
inline constexpr Key embedded = "embedded";
}  // namespace target

// verdict: status, exit_code and reason in every kind; the load's and the run's add theirs
namespace verdict {
inline constexpr Key status = "status";
inline constexpr Key exit_code = "exit_code";
inline constexpr Key reason = "reason";
inline constexpr Key valid = "valid";                      // load
inline constexpr Key invalid_reasons = "invalid_reasons";  // load
inline constexpr Key interrupted = "interrupted";          // load
inline constexpr Key reasons = "reasons";                  // run
inline constexpr Key incomplete = "incomplete";            // run
}  // namespace verdict

// ---- contract: the body of a contract document (contracts/runner.cpp)
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
inline constexpr Key minute_ms = "minute_ms";
inline constexpr Key timeout_ms = "timeout_ms";
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
using check::outcome;
using check::severity;
}  // namespace rule_check

// ---- load: the body of a load document (loadgen/result.cpp)
namespace load {
inline constexpr Key totals = "totals";
inline constexpr Key operations = "operations";
inline constexpr Key series_step_s = "series_step_s";  // absent in older documents: 1
inline constexpr Key series = "series";
inline constexpr Key race = "race";  // the race scenario only
inline constexpr Key thresholds = "thresholds";
inline constexpr Key history = "history";
inline constexpr Key restore_problems = "restore_problems";
inline constexpr Key wire = "wire";  // a capture paired with the requests (absent without one)
// Scale-out (absent unless sharded or started with --start-at): the shards a
// result is made of, those left out as duplicates, and what the set holds.
inline constexpr Key shards = "shards";
inline constexpr Key shards_left_out = "shards_left_out";
inline constexpr Key shard_set = "shard_set";
}  // namespace load

// load config: what the run was asked to do (connections 0: the scenario's default)
namespace load_config {
inline constexpr Key scenario = "scenario";
inline constexpr Key connections = "connections";
inline constexpr Key rate = "rate";
inline constexpr Key threads = "threads";
inline constexpr Key duration_s = "duration_s";
inline constexpr Key warmup_s = "warmup_s";
inline constexpr Key callers = "callers";
inline constexpr Key tag_minutes = "tag_minutes";
using contract_config::minute_ms;
inline constexpr Key path = "path";
inline constexpr Key mix = "mix";
inline constexpr Key seed = "seed";
using contract_config::timeout_ms;
inline constexpr Key encoding = "encoding";
}  // namespace load_config

// config.mix[]
namespace mix {
inline constexpr Key op = "op";
inline constexpr Key weight = "weight";
}  // namespace mix

// totals: the whole run
namespace totals {
inline constexpr Key requests = "requests";
inline constexpr Key errors = "errors";
inline constexpr Key error_rate = "error_rate";
inline constexpr Key measured_s = "measured_s";
inline constexpr Key intended_rate = "intended_rate";
inline constexpr Key achieved_rate = "achieved_rate";
inline constexpr Key generator_cpu = "generator_cpu";
inline constexpr Key late = "late";
inline constexpr Key lag = "lag";
// What the generator ran with: connections (race: rounds in flight); absent
// when it was not told (older documents, or the scenario's default not reported).
using load_config::connections;
}  // namespace totals

// operations.<name>
namespace operation {
inline constexpr Key count = "count";
using load_config::rate;
using totals::errors;
inline constexpr Key refusals = "refusals";
inline constexpr Key throttled = "throttled";
inline constexpr Key statuses = "statuses";
inline constexpr Key failures = "failures";
inline constexpr Key latency = "latency";
inline constexpr Key latency_uncorrected = "latency_uncorrected";
inline constexpr Key by_outcome = "by_outcome";
using load::wire;  // absent without a capture paired with the run
// The latency of every outcome per series step, steps with samples only
// (absent in documents of schema_version 1)
using load::series;
}  // namespace operation

// a latency (operations.<name>.latency, totals.lag, race.skew): figures and the histogram they come from
namespace latency {
using operation::count;
inline constexpr Key p50_ns = "p50_ns";
inline constexpr Key p90_ns = "p90_ns";
inline constexpr Key p99_ns = "p99_ns";
inline constexpr Key p999_ns = "p999_ns";
inline constexpr Key max_ns = "max_ns";
inline constexpr Key mean_ns = "mean_ns";
inline constexpr Key histogram = "histogram";
// Each percentile with its 95% interval (absent in documents of
// schema_version 1: point values only)
inline constexpr Key percentiles = "percentiles";
}  // namespace latency

// a latency's percentiles: by name, each its value, the interval shown and
// both intervals it is the wider of (core/percentile_interval.hpp)
namespace percentile {
inline constexpr Key p50 = "p50";
inline constexpr Key p90 = "p90";
inline constexpr Key p99 = "p99";
inline constexpr Key p999 = "p99.9";
inline constexpr Key value = "value";
inline constexpr Key lower = "lower";
inline constexpr Key upper = "upper";
inline constexpr Key n = "n";
inline constexpr Key method = "method";      // the interval shown: "binomial" or "blocks"
inline constexpr Key binomial = "binomial";  // {lower, upper}; also a value of method
inline constexpr Key blocks = "blocks";      // {lower, upper, count}, absent under 10 blocks; also a value of method
using operation::count;                      // blocks.count
inline constexpr Key backed = "backed";      // at least 10 samples beyond the percentile
inline constexpr Key beyond = "beyond";      // samples beyond it
inline constexpr Key backing_s = "backing_s";  // not backed: the run length that would back it at this rate
inline constexpr Key note = "note";            // absent without one
}  // namespace percentile

// series[]: one point per series_step_s seconds since measuring began
namespace series {
inline constexpr Key t = "t";
using latency::histogram;
using latency::p50_ns;
using latency::p99_ns;
using totals::errors;
using totals::requests;
}  // namespace series

// operations.<name>.series[]: the steps of the load's series that hold samples of the operation
namespace operation_series {
using series::histogram;
using series::t;
}  // namespace operation_series

// race
namespace race {
inline constexpr Key rounds = "rounds";
inline constexpr Key rounds_without_winner = "rounds_without_winner";
inline constexpr Key winners = "winners";  // rounds by number of winners
using load_config::callers;
inline constexpr Key skew = "skew";
inline constexpr Key tag_busy = "tag_busy";
inline constexpr Key violation_count = "violation_count";
inline constexpr Key violations = "violations";
}  // namespace race

// race.violations[]
namespace violation {
using envelope::kind;
inline constexpr Key round = "round";
inline constexpr Key alias = "alias";
inline constexpr Key explanation = "explanation";
inline constexpr Key proof = "proof";
}  // namespace violation

// race.violations[].proof[]: the history's operation lines (loadgen/history.cpp writes them)
namespace proof {
using mix::op;
using violation::alias;
using violation::round;
inline constexpr Key caller = "caller";  // absent for the control connection's operations
inline constexpr Key invoke_ns = "invoke_ns";
inline constexpr Key complete_ns = "complete_ns";
using check::outcome;
using verdict::status;                 // the HTTP status; 0 without an answer
inline constexpr Key error = "error";  // absent without one
}  // namespace proof

// thresholds[]
namespace threshold {
inline constexpr Key expression = "expression";
inline constexpr Key held = "held";
inline constexpr Key actual = "actual";  // null when nothing was measured
inline constexpr Key limit = "limit";
inline constexpr Key unit = "unit";
inline constexpr Key description = "description";
inline constexpr Key implicit = "default";  // absent in older documents
inline constexpr Key deferred = "deferred";  // a shard's: judged on the merged shards (absent: false)
}  // namespace threshold

// shards[] and shards_left_out[]: one shard's provenance
namespace shard {
inline constexpr Key index = "index";
inline constexpr Key count = "count";
inline constexpr Key run_id = "run_id";
inline constexpr Key host = "host";
inline constexpr Key planned_unix_ns = "planned_unix_ns";  // --start-at; 0: none
inline constexpr Key planned_at = "planned_at";            // the same, RFC 3339 (absent without --start-at)
inline constexpr Key started_unix_ns = "started_unix_ns";  // when measuring began
inline constexpr Key started_at = "started_at";            // the same, RFC 3339 with nanoseconds
inline constexpr Key start_offset_ns = "start_offset_ns";  // after the earliest shard's start (a set's)
inline constexpr Key late = "late";                        // began after --start-at had passed
inline constexpr Key clock = "clock";
inline constexpr Key connections = "connections";
inline constexpr Key rate = "rate";
inline constexpr Key achieved_rate = "achieved_rate";
inline constexpr Key requests = "requests";
inline constexpr Key file = "file";  // set by crh report: the result it came from
}  // namespace shard

// shards[].clock: where the start instants come from
namespace clock_source {
inline constexpr Key source = "source";
inline constexpr Key synchronized = "synchronized";  // the kernel's NTP state
inline constexpr Key max_error_us = "max_error_us";  // -1: unknown
}  // namespace clock_source

// shard_set: the shards of one run
namespace shard_set {
using shard::run_id;
using shard::count;
inline constexpr Key present = "present";
inline constexpr Key missing = "missing";
inline constexpr Key duplicated = "duplicated";
inline constexpr Key complete = "complete";
inline constexpr Key start_skew_ns = "start_skew_ns";  // latest start minus earliest
inline constexpr Key first_start_unix_ns = "first_start_unix_ns";
using shard::late;  // the indices of late shards
}  // namespace shard_set

// history: the --history file and the operations written to it
namespace history {
inline constexpr Key file = "file";
using load::operations;
}  // namespace history

// operations.<name>.wire (measured requests) and the load's wire section (the
// whole run): a capture paired with the requests the engine wrote (capture/wire_timing)
namespace wire {
using operation::latency;                            // request last byte out -> response last byte in
inline constexpr Key overhead = "overhead";          // client latency - wire latency, when not negative
inline constexpr Key client = "client";              // the client's latency of the paired requests
inline constexpr Key paired = "paired";
inline constexpr Key unpaired = "unpaired";          // requests without an exchange
inline constexpr Key incomplete = "incomplete";      // exchanges not seen whole: not judged
inline constexpr Key negative_overhead = "negative_overhead";  // client below wire: counted apart
using history::file;                                 // the capture
inline constexpr Key exchanges = "exchanges";
inline constexpr Key unpaired_client = "unpaired_client";
inline constexpr Key unpaired_wire = "unpaired_wire";  // exchanges of other clients (the setup's)
inline constexpr Key unanswered = "unanswered";        // paired, but the client had no answer
}  // namespace wire

// ---- run: the body of a run document (reports/run_document.cpp)
namespace run {
inline constexpr Key environment = "environment";
inline constexpr Key skipped = "skipped";
inline constexpr Key problems = "problems";
inline constexpr Key contract = kind_contract;   // a contract document, or null
inline constexpr Key loads = "loads";            // load documents
inline constexpr Key comparison = "comparison";  // or null
}  // namespace run

// run config: what `crh run` was asked (runners/run_command.cpp), or what
// `crh report` was given (runners/report_command.cpp)
namespace run_config {
inline constexpr Key load_duration_s = "load_duration_s";
inline constexpr Key scenarios = "scenarios";
using contract::suites;
using contract_config::minute_ms;
using contract_config::profile;
using contract_config::slow;
using contract_config::strict;
using contract_config::timeout_ms;
using load::thresholds;
using load_config::callers;
using load_config::connections;
using load_config::rate;
inline constexpr Key baseline = "baseline";
inline constexpr Key max_regression_pct = "max_regression_pct";
inline constexpr Key report_inputs = "report_inputs";
}  // namespace run_config

// environment: where the run happened
namespace environment {
inline constexpr Key host = "host";
inline constexpr Key os = "os";
inline constexpr Key machine = "machine";
inline constexpr Key cpus = "cpus";
inline constexpr Key compiler = "compiler";
inline constexpr Key build = "build";
inline constexpr Key note = "note";  // when it is the renderer's, not the run's
}  // namespace environment

// ---- comparison: the figures of a run beside a baseline's (reports/run_document.cpp)
namespace comparison {
using run_config::baseline;
using run_config::max_regression_pct;
inline constexpr Key figures = "figures";
inline constexpr Key regressions = "regressions";
using contract::notes;
// An error rate regresses only when it also rose by this fraction (absent in older documents).
inline constexpr Key min_error_rate_rise = "min_error_rate_rise";
}  // namespace comparison

// comparison.baseline
namespace baseline {
using envelope::started_at;
using history::file;
using target::base_url;
}  // namespace baseline

// comparison.figures[]
namespace figure {
using load_config::scenario;
inline constexpr Key operation = "operation";
inline constexpr Key figure = "figure";
using threshold::unit;
inline constexpr Key better = "better";
using run_config::baseline;
inline constexpr Key current = "current";
inline constexpr Key change_pct = "change_pct";  // null when the baseline was 0
inline constexpr Key worse_pct = "worse_pct";    // null when the baseline was 0
inline constexpr Key limit_pct = "limit_pct";
inline constexpr Key regressed = "regressed";
using environment::note;  // absent without one
}  // namespace figure

// ---- pcap: a `crh pcap check` document (capture/pcap_check.cpp): the contract
// document's counts, notes, suites, rules and checks, and a "capture" section
namespace pcap {
inline constexpr Key suite_name = "capture";  // the one suite (a value, not a key)
inline constexpr Key capture = "capture";
using history::file;
inline constexpr Key base_path = "base_path";  // config
inline constexpr Key format = "format";
inline constexpr Key link_types = "link_types";
inline constexpr Key packets = "packets";
inline constexpr Key tcp_packets = "tcp_packets";
inline constexpr Key skipped_packets = "skipped_packets";
inline constexpr Key truncated_packets = "truncated_packets";
inline constexpr Key streams = "streams";
inline constexpr Key exchanges = "exchanges";
inline constexpr Key api_exchanges = "api_exchanges";
inline constexpr Key other_exchanges = "other_exchanges";
inline constexpr Key requests_without_key = "requests_without_key";
inline constexpr Key incomplete = "incomplete";
inline constexpr Key conflicting_overlaps = "conflicting_overlaps";
inline constexpr Key streams_cut = "streams_cut";
inline constexpr Key duration_s = "duration_s";
inline constexpr Key unparsed_count = "unparsed_count";
inline constexpr Key unparsed = "unparsed";  // the first 100
// capture.unparsed[]
inline constexpr Key stream = "stream";
inline constexpr Key client = "client";
inline constexpr Key server = "server";
inline constexpr Key first_frame = "first_frame";
inline constexpr Key why = "why";
// checks[]: counts; checks[].evidence[]: where in the capture
inline constexpr Key judged = "judged";
inline constexpr Key violations = "violations";
inline constexpr Key indeterminate = "indeterminate";
inline constexpr Key frames = "frames";  // request first, last, response first, last (0: none)
inline constexpr Key time_s = "time_s";  // the request's first byte, from the capture's first packet
}  // namespace pcap

// ---- live_capture: the "capture" section of a contract, load or run document
// made with --capture (runners/capture_session.cpp, capture/live.hpp's LiveSummary)
namespace live_capture {
inline constexpr Key section = "capture";
inline constexpr Key made = "made";
inline constexpr Key not_made = "not_made";  // why no capture was made
inline constexpr Key file = "file";
inline constexpr Key interface = "interface";
inline constexpr Key filter = "filter";
inline constexpr Key packets = "packets";  // written to the file
inline constexpr Key bytes = "bytes";
inline constexpr Key kernel_received = "kernel_received";
inline constexpr Key kernel_dropped = "kernel_dropped";
inline constexpr Key interface_dropped = "interface_dropped";
inline constexpr Key counted_twice = "counted_twice";  // the kernel counted each packet twice (loopback)
inline constexpr Key lost_packets = "lost_packets";
inline constexpr Key limit_bytes = "limit_bytes";  // 0: none
inline constexpr Key limit_reached = "limit_reached";
inline constexpr Key redactions = "redactions";
inline constexpr Key checksums_recomputed = "checksums_recomputed";
inline constexpr Key warnings = "warnings";
}  // namespace live_capture

// ---- the record of nights (nightly/, `--nights DIR`) and what a run adds for it

// run config: repetitions of each load (absent: 1), the profile's content hash
namespace run_config {
inline constexpr Key repeat = "repeat";
inline constexpr Key profile_hash = "profile_hash";
inline constexpr Key nights = "nights";
}  // namespace run_config

// a load document of `crh run --repeat K`: each repetition's own figures
// (the document's histograms are the repetitions' merged)
namespace repetition {
inline constexpr Key repetitions = "repetitions";  // in the load document
inline constexpr Key index = "index";
using load::operations;
using load::totals;
}  // namespace repetition

// environment.cpu_model: what the record marks when it changes
namespace environment {
inline constexpr Key cpu_model = "cpu_model";
}  // namespace environment

// comparison against a record of nights: what it adds to the baseline comparison
namespace comparison {
inline constexpr Key mode = "mode";  // "nights" or "baseline" (absent in older documents: baseline)
inline constexpr Key nights = "nights";
inline constexpr Key inconclusive = "inconclusive";
inline constexpr Key change_points = "change_points";
inline constexpr Key changes = "changes";  // machine or version changes within the window
inline constexpr Key unreliable = "unreliable";  // why tonight's figures cannot be trusted, if so
}  // namespace comparison

// comparison.nights
namespace nights_window {
inline constexpr Key dir = "dir";
inline constexpr Key recorded = "recorded";
inline constexpr Key window = "window";
inline constexpr Key fingerprint = "fingerprint";
inline constexpr Key accepted_from = "accepted_from";
}  // namespace nights_window

// comparison.figures[] judged against nights
namespace figure {
inline constexpr Key verdict = "verdict";
inline constexpr Key current_lower = "current_lower";
inline constexpr Key current_upper = "current_upper";
inline constexpr Key n = "n";
inline constexpr Key backed = "backed";
using repetition::repetitions;
inline constexpr Key band_lower = "band_lower";
inline constexpr Key band_upper = "band_upper";
inline constexpr Key change_lower_pct = "change_lower_pct";
inline constexpr Key change_upper_pct = "change_upper_pct";
inline constexpr Key min_detectable_pct = "min_detectable_pct";
inline constexpr Key nights_used = "nights_used";
inline constexpr Key rule = "rule";
inline constexpr Key reason = "reason";
}  // namespace figure

// comparison.change_points[]
namespace change_point {
using figure::scenario;
using figure::operation;
using figure::figure;
inline constexpr Key night = "night";
using envelope::started_at;
inline constexpr Key before = "before";
inline constexpr Key after = "after";
using figure::change_pct;
inline constexpr Key beyond_limit = "beyond_limit";
}  // namespace change_point

// comparison.changes[]
namespace change {
using change_point::night;
inline constexpr Key what = "what";
inline constexpr Key from = "from";
inline constexpr Key to = "to";
}  // namespace change

}  // namespace crh::core::keys
