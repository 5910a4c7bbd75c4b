// What a load and a capture of it share for wire timing (issue 14 §2): the
// client's own record of the connections it opened and the requests it wrote
// (kept by the load engine when asked), and the figures a capture's pairing
// with them yields (per operation and for the run), which the load's result
// document carries.
#pragma once

#include <cstdint>
#include <string>

#include "core/histogram.hpp"

namespace crh::core {

// A connection the engine opened, for pairing with a capture's TCP streams.
struct ClientConnection {
  std::uint64_t serial = 0;  // run-unique, from 1
  std::uint16_t port = 0;    // the local (client) port
  // The wall clock when the connect began (before its SYN): captures are
  // stamped with the wall clock, so this tells two connections on one port
  // apart, and a connection of the engine from one of the setup's.
  std::int64_t connect_unix_ns = 0;
};

// One request the engine wrote on a socket (LoadConfig::keep_client_exchanges).
struct ClientExchange {
  std::uint64_t connection = 0;  // ClientConnection::serial
  std::uint32_t order = 0;       // its place on the connection, from 0, every request written counted
  // The operation's kind (oracle::OpKind in a load), as the index of its
  // figures among the per-operation ones.
  std::uint8_t op = 0;
  bool measured = false;  // counted in the measured window
  // From the request's first byte written to the answer's last byte read
  // (uncorrected: not from when it was due); -1 without an answer.
  std::int64_t latency_ns = -1;
  // Request bytes written on the connection before it: where it starts in
  // the TCP stream, which a capture knows exactly even where it lost packets.
  std::uint64_t offset = 0;
};

// Wire timing of one operation (capture/wire_timing): measured requests only.
struct WireOpStats {
  Histogram latency;             // request last byte out -> response last byte in, on the wire
  Histogram client;              // the client's latency of the same requests (from the send), to set beside it
  Histogram overhead;            // client latency - wire latency, when not negative
  std::uint64_t paired = 0;      // measured requests paired with a complete exchange of the capture
  std::uint64_t unpaired = 0;    // measured requests the capture has no exchange for
  std::uint64_t incomplete = 0;  // paired with an exchange the capture did not see whole: not judged
  // Client latency below the wire latency: impossible for a right pairing on
  // one clock, so counted apart rather than clamped into the overhead.
  std::uint64_t negative_overhead = 0;

  bool empty() const { return paired + unpaired + incomplete == 0; }
  void merge(const WireOpStats& other);
};

// Wire timing of the whole run: how well the capture and the client's
// records paired (every request the engine wrote, measured or not).
struct WireSummary {
  std::string file;                     // the capture
  std::uint64_t exchanges = 0;          // exchanges the capture held
  std::uint64_t paired = 0;             // exchanges paired with a client record
  std::uint64_t unpaired_client = 0;    // client records without an exchange
  std::uint64_t unpaired_wire = 0;      // exchanges without a client record (other clients, the setup)
  std::uint64_t incomplete = 0;         // exchanges not seen whole (lost packets, cut streams)
  std::uint64_t unanswered = 0;         // paired, but the client had no answer (timeout, cut): not judged
  std::uint64_t negative_overhead = 0;  // measured pairs whose client latency was below the wire's

  void merge(const WireSummary& other);
};

}  // namespace crh::core
