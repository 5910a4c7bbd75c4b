// What one generator thread measures, merged across threads at the end: no
// locks on the hot path, histograms instead of samples.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "core/histogram.hpp"
#include "core/wire_records.hpp"
#include "oracle/history.hpp"

namespace crh::loadgen {

// Why an attempt got no usable answer.
// Why an attempt got no answer. `unsolicited`: bytes came on the connection
// while no request was waiting (or after its whole answer), so which answer
// belongs to which request is unknown; the connection was closed.
enum class Failure : std::uint8_t { connect, timeout, reset, malformed, unsolicited, count_ };
inline constexpr std::size_t kFailures = static_cast<std::size_t>(Failure::count_);
std::string_view to_string(Failure f);

struct OpStats {
  std::array<core::Histogram, oracle::kOutcomes> latency;  // from when the request was due
  core::Histogram uncorrected;                      // from when it was sent (open loop differs)
  std::vector<std::uint64_t> statuses = std::vector<std::uint64_t>(600);  // answers by HTTP status
  std::array<std::uint64_t, kFailures> failures{};  // attempts without an answer, by why
  std::uint64_t errors = 0;     // failures, 5xx and unexpected 4xx
  std::uint64_t refusals = 0;   // expected no's: a loser's 403, a 409 when every alias is tagged
  std::uint64_t throttled = 0;  // 429
  core::WireOpStats wire;       // empty unless a capture was paired with the run
  // The latency of every outcome per step of the load's series (Stats::seconds,
  // same index and step), for the percentiles' block intervals; a step without
  // a sample of this operation is empty. Packed as Stats::seconds are.
  std::vector<core::PackedHistogram> seconds;

  std::uint64_t count() const;
  // Seconds merge index by index: Stats::merge brings both to one step first.
  void merge(const OpStats& other);
};

// One second of the run, for the time series. Its latency is packed once the
// second is closed: a long run keeps thousands of these.
struct Second {
  std::uint64_t requests = 0;
  std::uint64_t errors = 0;
  core::PackedHistogram latency;
};

struct RaceStats {
  std::uint64_t rounds = 0;            // tag epochs raced
  std::uint64_t rounds_without_winner = 0;
  std::vector<std::uint64_t> winners;  // rounds by number of first calls that connected
  core::Histogram skew;                // span of the release of one round's first calls
  std::string release_path;            // how the calls were released (BatchSend::path; SIP: the driver's)
  std::uint64_t tag_busy = 0;          // tags answered 409: every alias was tagged

  void merge(const RaceStats& other);
};

struct Stats {
  std::array<OpStats, oracle::kOpKinds> ops;
  std::vector<Second> seconds;  // index: steps of series_step_s seconds since measuring began
  std::uint32_t series_step_s = 1;  // a power of two: long runs keep a coarser series (coarsen)
  RaceStats race;
  std::uint64_t scheduled = 0;  // open loop: scheduled requests answered (their follow-ups, e.g. an untag, aside)
  std::uint64_t late = 0;       // open loop: requests sent more than one interval after they were due
  core::Histogram lag;          // open loop: how late requests were sent
  std::int64_t cpu_ns = 0;      // CPU time of the generator thread while measuring

  // Every second it touches is left packed: merged statistics are read, not
  // recorded into. Seconds `other` still has open are merged too. Series of
  // different steps merge at the coarser one.
  void merge(const Stats& other);

  // Doubles the series step, merging neighbours exactly, until it holds at
  // most `max_points` entries: the document of an hour-long soak stays the
  // size of a ten-minute run's. Call after close_seconds().
  void coarsen(std::size_t max_points);
  static constexpr std::size_t kMaxSeriesPoints = 600;
  Second& second(std::int64_t since_start_ns);

  // Counts one answer of `op` in the second it is counted in, in the load's
  // series and in the operation's. The last kOpenSeconds
  // seconds record into dense histograms kept aside (reused, so a second
  // costs no allocation but its packed copy); older ones are packed into
  // `seconds`, and a late answer for one of them (a request that took that
  // long) goes in on the slow path. A second's latency is in `seconds` once
  // it is packed: call close_seconds() when the run is over.
  void record_second(oracle::OpKind op, std::int64_t since_start_ns, std::int64_t latency_ns, bool error);
  void close_seconds();
  static constexpr std::size_t kOpenSeconds = 8;

 private:
  void close_second(std::size_t index);
  void double_step();
  std::size_t packed_until_ = 0;                    // seconds below this index are packed
  std::array<core::Histogram, kOpenSeconds> open_;  // the open seconds, at index % kOpenSeconds
  std::array<std::array<core::Histogram, oracle::kOpKinds>, kOpenSeconds> open_ops_;  // the same per operation
  std::array<std::size_t, kOpenSeconds> open_second_{};  // index + 1 of the second in each slot; 0: none
};

}  // namespace crh::loadgen
