// Merging wire figures (shards of one load, each with its capture).
#include "core/wire_records.hpp"

namespace crh::core {

void WireOpStats::merge(const WireOpStats& other) {
  latency.merge(other.latency);
  client.merge(other.client);
  overhead.merge(other.overhead);
  paired += other.paired;
  unpaired += other.unpaired;
  incomplete += other.incomplete;
  negative_overhead += other.negative_overhead;
}

void WireSummary::merge(const WireSummary& other) {
  if (file != other.file) file += (file.empty() || other.file.empty() ? "" : ", ") + other.file;
  exchanges += other.exchanges;
  paired += other.paired;
  unpaired_client += other.unpaired_client;
  unpaired_wire += other.unpaired_wire;
  incomplete += other.incomplete;
  unanswered += other.unanswered;
  negative_overhead += other.negative_overhead;
}

}  // namespace crh::core
