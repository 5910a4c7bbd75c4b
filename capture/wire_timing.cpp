// Wire timing: exchanges of a capture paired with a load run's client records.
#include "capture/wire_timing.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "oracle/history.hpp"

namespace crh::capture {
namespace {

// tcpdump writes microsecond pcap by default: a packet's stamp may be up to
// 1 us below the moment it was sent, so a connect that began in the same
// microsecond as its first request must still come before it.
constexpr std::int64_t kStampResolutionNs = 1000;

std::int64_t first_seen_ns(const WireExchange& x) {
  if (x.request_first.frame) return x.request_first.ns;
  if (x.request_last.frame) return x.request_last.ns;
  return x.response_first.ns;
}

}  // namespace

WireTimer::WireTimer(std::span<const core::ClientConnection> connections,
                     std::span<const core::ClientExchange> exchanges)
    : exchanges_(exchanges),
      connections_(connections.begin(), connections.end()),
      matched_(exchanges.size(), false),
      ops_(oracle::kOpKinds) {
  std::sort(connections_.begin(), connections_.end(), [](const auto& a, const auto& b) {
    return std::tie(a.port, a.connect_unix_ns, a.serial) < std::tie(b.port, b.connect_unix_ns, b.serial);
  });
  records_.resize(exchanges_.size());
  std::iota(records_.begin(), records_.end(), 0u);
  const auto& all = exchanges_;
  // Offsets grow with the order on a connection: one sort serves both keys.
  std::sort(records_.begin(), records_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(all[a].connection, all[a].order) < std::tie(all[b].connection, all[b].order);
  });
}

// By the request's place in the stream's bytes when the capture knows it
// (it saw the SYN): exact even where packets were lost and whole requests
// with them. Otherwise by its order on the connection.
const core::ClientExchange* WireTimer::find(std::uint64_t connection, const WireExchange& x) {
  const auto& all = exchanges_;
  auto it = std::lower_bound(records_.begin(), records_.end(), connection, [&](std::uint32_t i, std::uint64_t conn) {
    if (all[i].connection != conn) return all[i].connection < conn;
    return x.request_offset ? all[i].offset < *x.request_offset : all[i].order < x.sequence;
  });
  if (it == records_.end() || all[*it].connection != connection) return nullptr;
  if (x.request_offset ? all[*it].offset != *x.request_offset : all[*it].order != x.sequence) return nullptr;
  if (matched_[*it]) return nullptr;  // a second exchange for one request: the pairing went wrong, keep the first
  matched_[*it] = true;
  return &all[*it];
}

// The stream's connection, decided by its first exchange seen: the last
// connect on its client port that began before the stream's first request,
// unless another stream claimed that connection already.
std::uint64_t WireTimer::connection_of(const WireExchange& x) {
  if (auto it = stream_connection_.find(x.stream); it != stream_connection_.end()) return it->second;
  std::uint64_t serial = 0;
  const std::int64_t seen = first_seen_ns(x);
  auto begin = std::lower_bound(connections_.begin(), connections_.end(), x.client.port,
                                [](const auto& c, std::uint16_t port) { return c.port < port; });
  auto end = std::upper_bound(begin, connections_.end(), x.client.port,
                              [](std::uint16_t port, const auto& c) { return port < c.port; });
  auto after = std::upper_bound(begin, end, seen + kStampResolutionNs,
                                [](std::int64_t t, const auto& c) { return t < c.connect_unix_ns; });
  if (after != begin) {
    const auto candidate = std::prev(after)->serial;
    if (claimed_.emplace(candidate, x.stream).second) serial = candidate;
  }
  stream_connection_.emplace(x.stream, serial);
  return serial;
}

void WireTimer::add(const WireExchange& x) {
  ++summary_.exchanges;
  const auto wire = x.wire_latency_ns();
  const bool whole = x.complete && wire.has_value();
  if (!whole) ++summary_.incomplete;
  const std::uint64_t serial = connection_of(x);
  const core::ClientExchange* rec = serial ? find(serial, x) : nullptr;
  if (!rec) {
    ++summary_.unpaired_wire;
    return;
  }
  ++summary_.paired;
  auto& op = ops_[static_cast<std::size_t>(rec->op)];
  if (!whole) {  // the capture did not see it whole: counted, never judged
    op.incomplete += rec->measured;
    return;
  }
  if (rec->latency_ns < 0) {  // the client had no answer (timeout, cut): nothing to compare
    ++summary_.unanswered;
    return;
  }
  if (!rec->measured) return;
  ++op.paired;
  op.latency.record(*wire);
  op.client.record(rec->latency_ns);
  const std::int64_t overhead = rec->latency_ns - *wire;
  if (overhead < 0) {
    ++op.negative_overhead;
    ++summary_.negative_overhead;
  } else {
    op.overhead.record(overhead);
  }
}

WireFigures WireTimer::finish(std::string file) {
  const auto& all = exchanges_;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (matched_[i]) continue;
    ++summary_.unpaired_client;
    ops_[static_cast<std::size_t>(all[i].op)].unpaired += all[i].measured;
  }
  summary_.file = std::move(file);
  return {ops_, summary_};
}

WireFigures wire_timing(const std::string& pcap_file, std::span<const core::ClientConnection> connections,
                        std::span<const core::ClientExchange> exchanges, ReadLimits limits) {
  WireTimer timer(connections, exchanges);
  read_capture(
      pcap_file, [&](WireExchange&& x) { timer.add(x); }, limits);
  return timer.finish(pcap_file);
}

}  // namespace crh::capture
