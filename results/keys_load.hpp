// The keys of a load document (DESIGN.md §1): body, config, latencies, race, thresholds, shards, wire, repetitions.
#pragma once

#include "core/history_line_keys.hpp"

#include "results/keys_contract.hpp"

namespace crh::results::keys {

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
// mixed: how much of its history was judged (absent for the other scenarios);
// its violations sit beside it under the race's names
inline constexpr Key history_check = "history_check";
// Scale-out (absent unless sharded or started with --start-at): the shards a
// result is made of, those left out as duplicates, and what the set holds.
inline constexpr Key shards = "shards";
inline constexpr Key shards_left_out = "shards_left_out";
inline constexpr Key shard_set = "shard_set";
// The stretches in which requests were sent and none succeeded, and the
// closed loop's back-off (absent in older documents)
inline constexpr Key outages = "outages";
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
using contract_config::call_driver;
using contract_config::sip_target;
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
inline constexpr Key skew = "skew";  // the span of each round's release, first send to last
// How the callers were released: "io_uring" (one submission), "send loop
// (why)", or the SIP driver's "sendmmsg" / "one write". Absent in older documents.
inline constexpr Key release_path = "release_path";
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
// The mixed load's reads (absent for the race's kinds): the database key or
// agent, what a linearizable service could have answered, what came back,
// and the command that runs the same load again.
inline constexpr Key id = "id";
inline constexpr Key expected = "expected";
inline constexpr Key actual = "actual";
inline constexpr Key reproduce = "reproduce";
}  // namespace violation

// race.violations[].proof[]: the history's operation lines, whose keys the
// oracle writes them under (core/history_line_keys.hpp)
namespace proof = core::history_line;

// history_check: reads judged by kind, tags judged, and what was not judged and why
namespace history_check {
inline constexpr Key database_reads = "database_reads";
inline constexpr Key agent_reads = "agent_reads";
inline constexpr Key tags = "tags";
inline constexpr Key unjudged = "unjudged";
}  // namespace history_check

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

// outages: the stretches in which requests were sent and none succeeded
// (loadgen/outage.hpp), their totals, the back-off, and the timeline they
// come from (what merges shards exactly)
namespace outages {
using operation::count;
inline constexpr Key down_s = "down_s";            // the stretches' total, within the measured time
inline constexpr Key longest_s = "longest_s";      // 0: none
inline constexpr Key unavailable = "unavailable";  // down_s over the measured time
inline constexpr Key gap_ms = "gap_ms";            // successes closer than this leave no gap
inline constexpr Key stretches = "stretches";      // the first max_stretches, in time order
inline constexpr Key back_off = "back_off";
inline constexpr Key timeline = "timeline";
}  // namespace outages

// outages.stretches[]: times in seconds since measuring began
namespace outage {
inline constexpr Key start_s = "start_s";            // the last success before (0: none since the start)
inline constexpr Key end_s = "end_s";                // the first success after (the end: none)
inline constexpr Key duration_s = "duration_s";
inline constexpr Key first_down_s = "first_down_s";  // the first down answer in it
inline constexpr Key last_down_s = "last_down_s";
inline constexpr Key from_start = "from_start";
inline constexpr Key to_end = "to_end";
inline constexpr Key answers = "answers";  // the down answers: failures by kind, 5xx by status
}  // namespace outage

// outages.back_off: the pauses after a failed connect
namespace back_off {
using operation::count;
inline constexpr Key seconds = "seconds";  // connection-seconds while measuring
inline constexpr Key attempts_lost = "attempts_lost";  // estimated: at the rate per connection of the rest
}  // namespace back_off

// outages.timeline: lit spans [from_ns, to_ns] and down runs
namespace outage_timeline {
inline constexpr Key lit = "lit";
inline constexpr Key down = "down";          // [{from_ns, to_ns, answers}]
inline constexpr Key from_ns = "from_ns";
inline constexpr Key to_ns = "to_ns";
using outage::answers;
inline constexpr Key complete = "complete";  // false: bounded for the document, a merge is approximate
}  // namespace outage_timeline

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

// a load document of `crh run --repeat K`: each repetition's own figures
// (the document's histograms are the repetitions' merged)
namespace repetition {
inline constexpr Key repetitions = "repetitions";  // in the load document
inline constexpr Key index = "index";
using load::operations;
using load::totals;
}  // namespace repetition

}  // namespace crh::results::keys
