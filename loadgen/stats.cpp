// Merging the per-thread statistics of a load run.
#include "loadgen/stats.hpp"

#include <algorithm>

namespace crh::loadgen {

std::string_view to_string(Failure f) {
  switch (f) {
    case Failure::connect: return "connect";
    case Failure::timeout: return "timeout";
    case Failure::reset: return "reset";
    case Failure::malformed: return "malformed";
    case Failure::unsolicited: return "unsolicited";
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
  for (std::size_t i = 0; i < oracle::kOutcomes; ++i) latency[i].merge(other.latency[i]);
  uncorrected.merge(other.uncorrected);
  for (std::size_t i = 0; i < statuses.size(); ++i) statuses[i] += other.statuses[i];
  for (std::size_t i = 0; i < kFailures; ++i) failures[i] += other.failures[i];
  errors += other.errors;
  refusals += other.refusals;
  throttled += other.throttled;
  wire.merge(other.wire);
  if (seconds.size() < other.seconds.size()) seconds.resize(other.seconds.size());
  for (std::size_t i = 0; i < other.seconds.size(); ++i) {
    if (other.seconds[i].count() == 0) continue;
    seconds[i].merge(other.seconds[i]);
    seconds[i].pack();
  }
}

void RaceStats::merge(const RaceStats& other) {
  rounds += other.rounds;
  rounds_without_winner += other.rounds_without_winner;
  if (winners.size() < other.winners.size()) winners.resize(other.winners.size());
  for (std::size_t i = 0; i < other.winners.size(); ++i) winners[i] += other.winners[i];
  skew.merge(other.skew);
  tag_busy += other.tag_busy;
  if (release_path.empty()) release_path = other.release_path;
  else if (!other.release_path.empty() && release_path.find(other.release_path) == std::string::npos)
    release_path += "; " + other.release_path;  // threads or shards that released differently
}

void Stats::merge(const Stats& other) {
  if (other.series_step_s != series_step_s) {  // shards of different lengths: at the coarser step
    Stats theirs = other;
    theirs.close_seconds();
    close_seconds();
    while (series_step_s < theirs.series_step_s) double_step();
    while (theirs.series_step_s < series_step_s) theirs.double_step();
    merge(theirs);
    return;
  }
  for (std::size_t i = 0; i < oracle::kOpKinds; ++i) ops[i].merge(other.ops[i]);
  if (seconds.size() < other.seconds.size()) seconds.resize(other.seconds.size());
  for (std::size_t i = 0; i < other.seconds.size(); ++i) {
    seconds[i].requests += other.seconds[i].requests;
    seconds[i].errors += other.seconds[i].errors;
    seconds[i].latency.merge(other.seconds[i].latency);
    seconds[i].latency.pack();
  }
  for (std::size_t slot = 0; slot < kOpenSeconds; ++slot) {
    if (other.open_second_[slot] == 0) continue;
    const std::size_t i = other.open_second_[slot] - 1;
    seconds[i].latency.merge(other.open_[slot]);
    seconds[i].latency.pack();
    for (std::size_t k = 0; k < oracle::kOpKinds; ++k) {
      if (other.open_ops_[slot][k].count() == 0) continue;
      auto& op_seconds = ops[k].seconds;
      if (op_seconds.size() <= i) op_seconds.resize(i + 1);
      op_seconds[i].merge(other.open_ops_[slot][k]);
      op_seconds[i].pack();
    }
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

void Stats::record_second(oracle::OpKind op, std::int64_t since_start_ns, std::int64_t latency_ns, bool error) {
  const auto i = static_cast<std::size_t>(since_start_ns < 0 ? 0 : since_start_ns / 1'000'000'000);
  const auto k = static_cast<std::size_t>(op);
  Second& s = second(since_start_ns);
  ++s.requests;
  s.errors += error;
  auto& op_seconds = ops[k].seconds;
  if (op_seconds.size() <= i) op_seconds.resize(i + 1);
  if (i < packed_until_) {  // late: unpack, add, pack again
    s.latency.record(latency_ns);
    s.latency.pack();
    op_seconds[i].record(latency_ns);
    op_seconds[i].pack();
    return;
  }
  while (packed_until_ + kOpenSeconds <= i) close_second(packed_until_++);
  const std::size_t slot = i % kOpenSeconds;
  open_second_[slot] = i + 1;  // whatever the slot held was closed above
  open_[slot].record(latency_ns);
  open_ops_[slot][k].record(latency_ns);
}

void Stats::close_second(std::size_t index) {
  const std::size_t slot = index % kOpenSeconds;
  if (open_second_[slot] == index + 1) {
    auto& latency = seconds[index].latency;
    if (latency.count() == 0) latency = open_[slot];  // packs straight from the dense form
    else latency.merge(open_[slot]);
    open_[slot].reset();  // keeps its buckets for the second that takes the slot
    open_second_[slot] = 0;
    for (std::size_t k = 0; k < oracle::kOpKinds; ++k) {
      auto& open = open_ops_[slot][k];
      if (open.count() == 0) continue;
      auto& latency_of_op = ops[k].seconds[index];  // sized when the sample came
      if (latency_of_op.count() == 0) latency_of_op = open;
      else latency_of_op.merge(open);
      open.reset();
    }
  }
  seconds[index].latency.pack();
  for (auto& op : ops)
    if (index < op.seconds.size()) op.seconds[index].pack();
}

void Stats::double_step() {
  std::vector<Second> merged((seconds.size() + 1) / 2);
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    auto& m = merged[i / 2];
    m.requests += seconds[i].requests;
    m.errors += seconds[i].errors;
    m.latency.merge(seconds[i].latency);
  }
  for (auto& m : merged) m.latency.pack();
  seconds = std::move(merged);
  for (auto& op : ops) {
    std::vector<core::PackedHistogram> halved((op.seconds.size() + 1) / 2);
    for (std::size_t i = 0; i < op.seconds.size(); ++i) halved[i / 2].merge(op.seconds[i]);
    for (auto& h : halved) h.pack();
    op.seconds = std::move(halved);
  }
  series_step_s *= 2;
  packed_until_ = seconds.size();
}

void Stats::coarsen(std::size_t max_points) {
  close_seconds();
  while (seconds.size() > std::max<std::size_t>(1, max_points)) double_step();
}

void Stats::close_seconds() {
  while (packed_until_ < seconds.size()) close_second(packed_until_++);
  open_ = {};  // frees the dense buckets: a result is copied, never recorded into
  open_ops_ = {};
  open_second_ = {};
}

}  // namespace crh::loadgen
