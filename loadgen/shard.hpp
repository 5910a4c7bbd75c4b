// Scale-out (DESIGN.md §6, issue 15): shard I of N runs exactly its part of
// the one load the flags describe. Pure arithmetic, so that the split is
// tested for every N: parts add up to the whole, never overlap, and the same
// flags always give the same split.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crh::loadgen {

struct Shard {
  int index = 0;  // 0 .. count - 1
  int count = 1;  // 1: not sharded
  bool sharded() const { return count > 1; }
  bool operator==(const Shard&) const = default;
};

inline constexpr int kMaxShards = 1024;

// "I/N" with 0 <= I < N <= kMaxShards. Throws std::invalid_argument naming --shard.
Shard parse_shard(std::string_view text);

// A contiguous part [first, first + count) of `total` units (connections,
// race rounds in flight): the first total % N shards get one more, so 10
// over 3 is 4/3/3 and the parts are disjoint and cover the whole.
struct Share {
  int first = 0;
  int count = 0;
};
Share share_of(int total, Shard shard);

// The open-loop rate of a shard: the whole rate in proportion to its
// connections, so each connection keeps the unsharded run's interval.
double rate_share(double rate, int total_connections, Shard shard);

// Every N-th item from I on, of the items in sorted order (the target may
// list them in any order): disjoint across shards, all of them together.
std::vector<std::string> strided(std::vector<std::string> items, Shard shard);

// The names a shard's load writes on the target, distinct per shard so that
// no shard reads, restores or deletes what another one is using (and none is
// a prefix of another's). Unsharded: the names a load always used.
std::string load_tag_name(Shard shard);
std::string load_database_key(Shard shard);

// --start-at: RFC 3339 ("2026-11-23T10:00:00Z", "...T10:00:00.250+01:00")
// or Unix seconds ("1795000000", "1795000000.5"). Throws std::invalid_argument.
std::chrono::system_clock::time_point parse_start_at(std::string_view text);

// The clock the start instants are read from, and what the kernel says of
// its synchronisation (adjtimex): skew across hosts is only as good as this.
struct ClockSource {
  std::string name = "CLOCK_REALTIME";
  bool synchronized = false;      // the kernel's NTP state says synchronised
  std::int64_t max_error_us = -1;  // the kernel's maximum error estimate; -1: unknown
};
ClockSource read_clock_source();

// One shard's provenance, in its result and kept through a merge.
struct ShardRecord {
  Shard shard;
  std::string run_id;
  std::string host;
  std::int64_t planned_unix_ns = 0;  // --start-at; 0: none given
  std::int64_t started_unix_ns = 0;  // the wall clock when measuring began
  bool late = false;                 // it reached the start after the instant had passed
  ClockSource clock;
  int connections = 0;   // its share (race: rounds in flight)
  double rate = 0;       // its share of the open-loop rate; 0: closed loop
  double achieved_rate = 0;
  std::uint64_t requests = 0;
  std::string file;  // the result it was read from (crh report)
};

// What a set of shards of one run holds: which indices are there, missing or
// given twice (a duplicate is left out of the merge), and how far apart the
// shards began measuring.
struct ShardSet {
  std::string run_id;
  int count = 0;
  std::vector<int> present, missing, duplicated;
  std::int64_t start_skew_ns = 0;  // latest start minus earliest
  std::int64_t first_start_unix_ns = 0;
  std::vector<int> late;  // shards that began after --start-at had passed
  bool complete() const { return missing.empty() && duplicated.empty(); }
};
ShardSet shard_set_of(const std::vector<ShardRecord>& kept, const std::vector<ShardRecord>& left_out);

// A run id from the texts that describe the whole load (the same on every
// shard): "r-" and 12 hex digits.
std::string derived_run_id(const std::vector<std::string>& describing);

}  // namespace crh::loadgen
