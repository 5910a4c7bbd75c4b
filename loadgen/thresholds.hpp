// Pass/fail thresholds for `crh load`, written as in k6 (`call.p99<20ms`,
// `errors<0.1%`, `violations==0`), so a load run can gate CI. Standard library
// only: the CLI parses these before any networking code is involved.
#pragma once

#include <string>
#include <string_view>

namespace crh::loadgen {

enum class Comparator { less, less_equal, greater, greater_equal, equal, not_equal };

// The unit `Threshold::limit` and the measured value share.
enum class Quantity {
  latency_ns,  // nanoseconds
  fraction,    // 0.001 for 0.1%
  count,       // requests, violations, rounds
  per_second,  // requests per second
};

struct Threshold {
  std::string text;       // as the user wrote it (surrounding whitespace dropped), for messages
  std::string subject;    // operation, or "" for the whole run
  std::string statistic;  // canonical: "p50","p90","p95","p99","p99.9","max","mean","min",
                          // "errors","indeterminate","violations","requests","rounds","rps",
                          // "unavailable"; "max" of the subject "outage" is the longest outage
  Comparator comparator = Comparator::less;
  double limit = 0;       // in the quantity's unit: ns, fraction, count, per second
  Quantity quantity = Quantity::count;
  bool implicit = false;  // added by default (kDefaultErrorLimit, ...), not written by the user
  // outage.max: the longest stretch with requests sent and none succeeded (loadgen/outage.hpp)
  bool is_outage_max() const { return subject == kOutageSubject && statistic == "max"; }
  // unavailable: the share of the measured time in outages
  bool is_unavailable() const { return subject.empty() && statistic == "unavailable"; }
  static constexpr std::string_view kOutageSubject = "outage";
};

// The error-rate limit every load has unless the user sets one of their own
// (`--threshold 'errors<5%'`): a load whose every answer was an error must
// not pass a CI gate.
inline constexpr std::string_view kDefaultErrorLimit = "errors<1%";
// The outage limits every load has unless the user sets their own (issue
// 35): a stretch without a success longer than a second, or outages over 1%
// of the measured time, fail the load. `outage.max<=86400s` and
// `unavailable<=100%` turn them off, as `errors<=100%` does the error limit.
inline constexpr std::string_view kDefaultOutageLimit = "outage.max<1s";
inline constexpr std::string_view kDefaultUnavailableLimit = "unavailable<1%";

// THRESHOLD := [SUBJECT "."] STATISTIC OP NUMBER [UNIT]. Throws
// std::invalid_argument quoting `text` and saying what was expected.
// Decimal limits are converted exactly (0.1% is the double nearest 0.001,
// 0.1ms the double 100000), so a measurement equal to the limit compares equal.
Threshold parse_threshold(std::string_view text);

// `actual` is in the same unit as `t.limit`. A NaN (nothing measured) never holds.
bool holds(const Threshold& t, double actual);

// `call.p99<20ms: 31.2 ms (limit 20 ms) BREACHED`; an implicit threshold says
// it is the default and how to change it., `errors<0.1%: 0.02% (limit 0.1%) held`.
std::string describe(const Threshold& t, double actual, bool held);

// 31.2 ms, 812 us, 1.50 s, 20 ms, 0.02%, 12, 1520/s.
std::string format_quantity(Quantity q, double value);

// "<", "<=", ">", ">=", "==", "!=".
std::string_view comparator_symbol(Comparator c);

}  // namespace crh::loadgen
