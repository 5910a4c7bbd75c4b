// Merging the per-thread statistics of a load run.
#include "loadgen/stats.hpp"

namespace crh::loadgen {

std::string_view to_string(Failure f) {
  switch (f) {
    case Failure::connect: return "connect";
    case Failure::timeout: return "timeout";
    case Failure::reset: return "reset";
    case Failure::malformed: return "malformed";
    case Failure::count_: break;
  }
  return "?";
}

std::uint64_t OpStats::count() const {
  std::uint64_t n = 0;
  for (const auto& h : latency) n += h.count();
  return n;
}

void OpStats::merge(const OpStats& other) {
  for (std::size_t i = 0; i < kOutcomes; ++i) latency[i].merge(other.latency[i]);
  uncorrected.merge(other.uncorrected);
  for (std::size_t i = 0; i < statuses.size(); ++i) statuses[i] += other.statuses[i];
  for (std::size_t i = 0; i < kFailures; ++i) failures[i] += other.failures[i];
  errors += other.errors;
  refusals += other.refusals;
  throttled += other.throttled;
}

void RaceStats::merge(const RaceStats& other) {
  rounds += other.rounds;
  rounds_without_winner += other.rounds_without_winner;
  if (winners.size() < other.winners.size()) winners.resize(other.winners.size());
  for (std::size_t i = 0; i < other.winners.size(); ++i) winners[i] += other.winners[i];
  skew.merge(other.skew);
  tag_busy += other.tag_busy;
}

void Stats::merge(const Stats& other) {
  for (std::size_t i = 0; i < kOpKinds; ++i) ops[i].merge(other.ops[i]);
  if (seconds.size() < other.seconds.size()) seconds.resize(other.seconds.size());
  for (std::size_t i = 0; i < other.seconds.size(); ++i) {
    seconds[i].requests += other.seconds[i].requests;
    seconds[i].errors += other.seconds[i].errors;
    seconds[i].latency.merge(other.seconds[i].latency);
  }
  race.merge(other.race);
  scheduled += other.scheduled;
  late += other.late;
  lag.merge(other.lag);
  cpu_ns += other.cpu_ns;
}

Second& Stats::second(std::int64_t since_start_ns) {
  auto i = static_cast<std::size_t>(since_start_ns < 0 ? 0 : since_start_ns / 1'000'000'000);
  if (i >= seconds.size()) seconds.resize(i + 1);
  return seconds[i];
}

}  // namespace crh::loadgen
