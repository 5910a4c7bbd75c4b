// Wire timing (issue 14 §2): the exchanges of a capture paired with the
// client's own operations, giving per operation the wire latency and the
// harness's overhead (client latency minus wire latency). The records and the
// figures are core's vocabulary (core/wire_records.hpp): the runner that made
// the load and its capture joins the figures into the load's result.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/exchanges.hpp"
#include "core/wire_records.hpp"

namespace crh::capture {

// What the pairing found: per operation (indexed by ClientExchange::op, one
// for each oracle::OpKind; the measured requests only) and for the whole run.
struct WireFigures {
  std::vector<core::WireOpStats> ops;
  core::WireSummary summary;
};

// Pairs exchanges, as the reader hands them out, with the client records of
// a load run (loadgen's LoadConfig::keep_client_exchanges). Only the client
// records are indexed; exchanges stream through and are not kept.
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
  // `exchanges` must outlive the timer: the client records are read, not copied.
  WireTimer(std::span<const core::ClientConnection> connections, std::span<const core::ClientExchange> exchanges);

  void add(const WireExchange& x);

  // The figures: per operation (the measured requests only) and for the
  // whole run, `file` named as the capture.
  WireFigures finish(std::string file);

 private:
  const core::ClientExchange* find(std::uint64_t connection, const WireExchange& x);
  std::uint64_t connection_of(const WireExchange& x);

  std::span<const core::ClientExchange> exchanges_;
  std::vector<core::ClientConnection> connections_;  // by port, then connect time
  std::vector<std::uint32_t> records_;               // indexes of exchanges_, by connection then order
  std::vector<bool> matched_;                        // per exchanges_ index
  std::unordered_map<std::uint64_t, std::uint64_t> stream_connection_;  // stream -> serial (0: none)
  std::unordered_map<std::uint64_t, std::uint64_t> claimed_;            // serial -> stream
  std::vector<core::WireOpStats> ops_;
  core::WireSummary summary_;
};

// Reads the capture and pairs it with a load's client records (see
// WireTimer). Throws CaptureFileError when the file cannot be read.
WireFigures wire_timing(const std::string& pcap_file, std::span<const core::ClientConnection> connections,
                        std::span<const core::ClientExchange> exchanges, ReadLimits limits = {});

}  // namespace crh::capture
