// The load engine: one io_context per thread, a coroutine per connection (or
// per race slot), per-thread statistics merged at the end (DESIGN.md §6).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/profile.hpp"
#include "core/target.hpp"
#include "core/wire_records.hpp"
#include "oracle/checker.hpp"
#include "oracle/history.hpp"
#include "loadgen/outage.hpp"
#include "loadgen/shard.hpp"
#include "loadgen/stats.hpp"

namespace crh::loadgen {

enum class Scenario { race, mixed, get };
std::string_view to_string(Scenario s);

// The value the mixed scenario writes to its database key (restored
// afterwards). The key and the tag name are the shard's (shard.hpp).
inline constexpr std::string_view kLoadDatabaseValue = "crh load";

struct MixEntry {
  oracle::OpKind op;
  double weight;
};

struct LoadConfig {
  core::Target target;
  core::ExpectedStatuses statuses;  // the profile's: which refusals are a "no" by design, not an error
  Scenario scenario = Scenario::race;
  int connections = 0;  // closed loop: connections; race: rounds in flight; 0: the scenario's default
  double rate = 0;      // open loop: requests per second over all connections; 0: closed loop
  int threads = 1;      // generator threads, each with its own io_context
  std::chrono::milliseconds duration{10'000};  // measured time
  std::chrono::milliseconds warmup{0};         // run before measuring, not counted
  int callers = 8;                             // race: callers per round
  int tag_minutes = 60;                        // race: lifetime asked for each tag (deleted long before)
  // What a tag asks for: tag_minutes within the target's range (the profile's minutes).
  int effective_tag_minutes() const { return target.dialect.minutes.fit(tag_minutes); }
  std::string path = core::api::agents_path();  // get: the path (under the base URL)
  std::vector<MixEntry> mix;                    // mixed: weights; empty: every endpoint
  std::uint64_t seed = 1;                       // mixed: the operation sequence; race: caller numbers
  std::chrono::milliseconds timeout{5000};      // one request's deadline
  std::string history_file;                     // every operation as JSON lines (race and mixed)
  std::size_t max_violations_kept = 100;        // violations listed in full; all are counted
  // mixed: reads and writes kept in memory to judge after the run; past it,
  // reads sent later are not judged (memory stays bounded, no false alarm).
  std::size_t max_judged_ops = 2'000'000;
  // Keep a record of every request written on a socket (LoadResult::client_*),
  // so that a capture of the run can be paired with them (capture/wire_timing).
  bool keep_client_exchanges = false;
  // Scale-out: the part of the load this process runs. `connections` and
  // `rate` stay the whole load's; the engine takes the shard's share of them.
  Shard shard;
  std::string run_id;  // names the run the shards belong to (sharded runs)
  std::optional<std::chrono::system_clock::time_point> start_at;  // measuring starts at this instant
};

// What the engine learned before it started.
struct Discovery {
  std::vector<std::string> agents;   // ids, for get-agent, snooze and wake
  std::vector<std::string> aliases;  // ids of the channel, for calls in the mix
  // Why a tag refused as "every alias is tagged" cannot be judged against the
  // load's own tags (loadgen/tag_ledger.hpp: another shard or client may hold
  // the aliases the load freed); empty: the load is the only one that tags.
  std::string all_tagged_unjudged;
  // mixed: what the run's reads are judged against (register_checker.hpp):
  // the database key's value as read back after set-up wrote it, and each
  // agent's state field (JSON text) as listed; nothing: unknown.
  std::optional<std::string> database_value;
  std::vector<std::pair<std::string, std::optional<std::string>>> agent_states;
};

// mixed: how much of the history was judged (the violations are LoadResult's).
struct HistoryJudgement {
  bool judged = false;                // the mixed load judged its history
  std::uint64_t database_reads = 0;   // reads of the database key judged
  std::uint64_t agent_reads = 0;      // agent states read (GET or list) judged
  std::uint64_t tags = 0;             // tags judged against the load's other tags
  std::vector<std::string> unjudged;  // what was not judged, and why
};

struct LoadResult {
  Stats stats;
  OutageReport outages;  // when the target was seen up and down, and the back-off
  std::uint64_t violation_count = 0;
  std::vector<oracle::Violation> violations;  // the first max_violations_kept
  std::uint64_t history_ops = 0;      // operations written to --history
  HistoryJudgement judgement;         // mixed only
  int connections = 0;                // connections it ran (race: rounds in flight), defaults resolved; 0: not known
  std::uint64_t connections_opened = 0;  // connects that succeeded (reconnects too); not in the document
  // Sharded or --start-at: this run's record (one), or after a merge the
  // shards merged, and those left out as duplicates of an index.
  std::vector<ShardRecord> shards;
  std::vector<ShardRecord> shards_left_out;
  bool shards_merged = false;  // made by crh report from the shards' results: judged as the whole load
  double wall_s = 0;                  // measured time actually elapsed
  double intended_rate = 0;           // open loop: the asked rate; else 0
  double achieved_rate = 0;           // requests completed per second while measuring
  double generator_cpu = 0;           // CPU of the busiest generator thread, 0..1 of a core
  std::vector<std::string> invalid;   // why the figures measure the generator, not the target
  bool interrupted = false;           // stopped early (Ctrl-C)
  // keep_client_exchanges only; never written to the document.
  std::vector<core::ClientConnection> client_connections;
  std::vector<core::ClientExchange> client_exchanges;
  // A capture's wire timing (capture/wire_timing), joined in by the runner that made both;
  // the per-operation figures are in stats.ops[].wire.
  std::optional<core::WireSummary> wire;
};

// Counters the caller may read while the run goes on (for a progress line).
struct Progress {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> rounds{0};
  std::atomic<std::uint64_t> violations{0};
  std::atomic<bool> measuring{false};
  std::atomic<bool> stop{false};  // set to end the run early
};

// Runs the scenario. Throws std::runtime_error when the target cannot be
// reached at all (no connection could be opened) or the history cannot be written.
LoadResult run_load(const LoadConfig& config, const Discovery& discovery, Progress& progress);

}  // namespace crh::loadgen
