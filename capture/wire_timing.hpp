// Wire timing (issue 14 §2): the exchanges of a capture paired with the
// client's own operations, giving per operation the wire latency and the
// harness's overhead (client latency minus wire latency).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/exchanges.hpp"
#include "loadgen/engine.hpp"

namespace crh::capture {

// Pairs exchanges, as the reader hands them out, with the client records of
// a load run (LoadConfig::keep_client_exchanges). Only the client records are
// indexed; exchanges stream through and are not kept.
//
// A TCP stream belongs to the engine's connection on the same client port
// whose connect began last before the stream's first request: two
// connections on one port in turn are told apart, and the setup's own
// connections (discovery, restore) that reused a port do not shift them.
// Within a connection, the request's first byte's place in the stream (when
// the capture saw the SYN) is the request's offset in the bytes the client
// wrote, which holds even where the capture lost packets; without the SYN,
// the exchange's place on the stream is the request's order.
class WireTimer {
 public:
  // `result` must outlive the timer; its client records are read, not moved.
  explicit WireTimer(loadgen::LoadResult& result);

  void add(const WireExchange& x);

  // Writes the figures into the result: stats.ops[].wire per operation (the
  // measured requests only) and result.wire for the whole run.
  void finish(std::string file);

 private:
  const loadgen::ClientExchange* find(std::uint64_t connection, const WireExchange& x);
  std::uint64_t connection_of(const WireExchange& x);

  loadgen::LoadResult& result_;
  std::vector<loadgen::ClientConnection> connections_;  // by port, then connect time
  std::vector<std::uint32_t> records_;                  // indexes of result.client_exchanges, by connection then order
  std::vector<bool> matched_;                           // per client_exchanges index
  std::unordered_map<std::uint64_t, std::uint64_t> stream_connection_;  // stream -> serial (0: none)
  std::unordered_map<std::uint64_t, std::uint64_t> claimed_;            // serial -> stream
  std::vector<loadgen::WireOpStats> ops_;
  loadgen::WireSummary summary_;
};

// Reads the capture and pairs it with `result` (see WireTimer); returns the
// run-level summary, also left in result.wire. Throws CaptureFileError when
// the file cannot be read.
loadgen::WireSummary attach_wire_timing(const std::string& pcap_file, loadgen::LoadResult& result,
                                        ReadLimits limits = {});

}  // namespace crh::capture
