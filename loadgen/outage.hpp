// Outages (issue 35): the stretches of time in which requests were sent and
// none succeeded. An error rate hides them: a closed loop sends little while
// nothing answers (it backs off), so a quarter of a run without a service is
// a handful of failed attempts among thousands of good ones.
//
// Every answer is up, down or neither. Up: a success (HTTP 200, SIP 2xx), a
// refusal the profile expects for that operation, or a throttle (429, a SIP
// 503 with Retry-After: the service is there and says "not now"; throttling
// is counted on its own). Down: no answer (connect failed, reset, timeout,
// malformed, unsolicited) or a 5xx. Neither: any other answer (an unexpected
// 4xx is an error of a live service: the error rate's business).
//
// A Timeline holds, per thread and then merged, the lit spans (up answers
// less than kGapNs apart: the service was seen up throughout) and the runs
// of down answers outside them. An outage is a dark gap (between two lit
// spans, or before the first or after the last) that holds a down answer:
// from the last success before it to the first after it. Merging is a union
// of lit spans and of down runs, so threads and shards (aligned at the start
// of measuring, as the series is) merge exactly: the service is down only
// where no answer anywhere succeeded. Standard library only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/stats.hpp"

namespace crh::loadgen {

// What the down answers of a run or stretch were: failures by kind and 5xx by status.
struct DownAnswers {
  std::array<std::uint64_t, kFailures> failures{};
  std::vector<std::pair<unsigned, std::uint64_t>> statuses;  // status, count; in the order first seen

  void add(unsigned status, Failure failure, std::uint64_t n = 1);
  void merge(const DownAnswers& other);
  std::uint64_t total() const;
  // "connect×30, reset×4, HTTP 503×2" (failures first, statuses ascending).
  std::string text() const;
};

struct LitSpan {
  std::int64_t from_ns = 0, to_ns = 0;
};

struct DownRun {
  std::int64_t from_ns = 0, to_ns = 0;
  DownAnswers answers;
};

// Times are ns since measuring began (negative: the warm-up).
class Timeline {
 public:
  // Up answers closer than this leave no gap: shorter silences are no outage
  // (a slow answer is the latency's business).
  static constexpr std::int64_t kGapNs = 100'000'000;

  // The hot path: O(1) for answers in time order; others are sorted later.
  void up(std::int64_t t);
  void down(std::int64_t t, unsigned status, Failure failure);
  // Adds another thread's or shard's timeline; `offset_ns` later (a
  // repetition run after this one: its times follow this one's measured time).
  void merge(const Timeline& other, std::int64_t offset_ns = 0);
  // Sorted, lit spans coalesced, down runs inside a lit span dropped, down
  // runs in the same dark gap joined (their counts add).
  void normalize();
  // For the document: at most `max` lit spans, coalescing the gaps that hold
  // no down answer (shortest first); returns false when that was not enough.
  bool bound(std::size_t max);

  const std::vector<LitSpan>& lit() const { return lit_; }
  const std::vector<DownRun>& downs() const { return downs_; }
  // Read back from a document (normalize() after).
  void add_lit(LitSpan s);
  void add_down(DownRun d);

 private:
  std::vector<LitSpan> lit_;
  std::vector<DownRun> downs_;
  bool sorted_ = true;
  bool up_since_down_ = true;  // an up came after the last down run: the next down starts a new run
};

struct Outage {
  std::int64_t start_ns = 0, end_ns = 0;           // clipped to the measured time
  std::int64_t first_down_ns = 0, last_down_ns = 0;
  bool from_start = false;  // no success before it in the measured time
  bool to_end = false;      // no success after it: down until measuring ended
  DownAnswers answers;
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

// The outages of a normalized timeline within [0, measured_ns], in time order.
std::vector<Outage> outages_of(const Timeline& t, std::int64_t measured_ns);

// What a load reports of its outages, and of its closed loop's back-off.
struct OutageReport {
  Timeline timeline;
  std::uint64_t back_offs = 0;    // pauses after a failed connect (closed loop)
  double back_off_s = 0;          // connection-seconds spent in them while measuring
  bool timeline_complete = true;  // false: the document's timeline was bounded (bound())
};

struct OutageSummary {
  std::vector<Outage> stretches;
  std::int64_t down_ns = 0;     // their total
  std::int64_t longest_ns = 0;  // 0: none
  double unavailable = 0;       // down_ns over the measured time
  const Outage* longest() const;
};
// `r.timeline` normalized (a run's merged one, or one read back, is).
OutageSummary summarize(const OutageReport& r, double measured_s);

// "2.012 s to 3.561 s (1.55 s): connect×30, reset×4", with "(from the start)" or "(to the end)".
std::string describe(const Outage& o);

// The attempts the closed loop did not send while backing off: its back-off
// time at the rate per connection of the rest of the run.
double attempts_lost(const OutageReport& r, std::uint64_t requests, int connections, double measured_s);

}  // namespace crh::loadgen
