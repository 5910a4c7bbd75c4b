// Offline reading of captures (DESIGN.md §1, capture/): pcap and pcapng files
// from anyone (tcpdump, tshark, dumpcap, crh), decoded down to TCP, the TCP
// streams reassembled as the receiver's stack delivers them, and the HTTP/1.1
// exchanges on each stream, with the frames and wire times that carry them.
// Streaming: exchanges are handed out as they end and a stream's memory is
// freed when it closes, so memory stays flat in file size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/http.hpp"
#include "calls/sip_message.hpp"

namespace crh::capture {

// A moment on the wire: the capture's timestamp and the frame that carries it.
struct WireTime {
  std::int64_t ns = 0;      // capture timestamp, nanoseconds since the Unix epoch
  std::uint64_t frame = 0;  // frame number in the file, from 1, as Wireshark numbers them; 0: not seen
};

struct WireEndpoint {
  std::string address;  // "127.0.0.1", "::1" (printable, no brackets)
  std::uint16_t port = 0;
};

// One request and its answer as seen on one TCP stream.
struct WireExchange {
  std::uint64_t stream = 0;    // TCP stream index in order of first packet, from 0 (Wireshark's tcp.stream)
  std::uint32_t sequence = 0;  // this request's place on its stream, from 0 (see place_known)
  // Where the request's first byte lies in the client's bytes on the
  // connection (0: the first after the SYN): exact even where the capture lost
  // packets, whole requests with them. Absent when the capture did not see
  // the client's SYN or the request itself.
  std::optional<std::uint64_t> request_offset;
  WireEndpoint client, server; // the side that sent the request, the side that answered
  core::HttpRequest request;   // headers and body as sent (target with any base path); empty method: a
                               // request the capture lost, known by its answer (incomplete, keeps its place)
  std::optional<core::HttpResponse> response;  // absent: no answer seen (stream ended, gap, lost packets)
  bool head = false;           // a HEAD request (its answer has no body)
  unsigned interim = 0;        // interim 1xx answers (100 Continue, ...) seen before the response
  WireTime request_first, request_last;    // first and last byte of the request
  WireTime response_first, response_last;  // of the final response (after any 1xx); zero when none
  // Both messages whole, and paired with certainty: in stream order before
  // any gap; after one, by TCP sequence space (the answer's ack names the
  // request's end, and the request's ack the answer's start).
  bool complete = true;
  std::string incomplete;       // why not complete: "gap of 1448 bytes before the response", ...
  std::uint32_t conflicting_overlaps = 0;  // retransmitted bytes that differed from the first copy (kept)
  // `sequence` is the request's place on the connection. False after a loss
  // in both directions at once hid an unknown number of requests: sequence
  // then still orders the exchanges of the stream, but is not the place, so
  // pairing with the client's own operations by order must not use it (by
  // request_offset it may). Such exchanges are incomplete unless their
  // request_offset is known or ReadLimits::keep_unplaced.
  bool place_known = true;

  // Request last byte out to response last byte in, as Wireshark's http.time;
  // nothing when either is missing.
  std::optional<std::int64_t> wire_latency_ns() const;
};

// A stream that was not (or not wholly) HTTP/1.1: listed, never fatal.
struct UnparsedStream {
  std::uint64_t stream = 0;
  WireEndpoint client, server;
  std::uint64_t first_frame = 0;
  std::string why;  // the HTTP reader's error, or "not HTTP", with the direction
};

struct ReadLimits {
  std::size_t stream_buffer_bytes = 4 * 1024 * 1024;  // out-of-order bytes held per direction before a gap is declared
  // All streams together: out-of-order bytes, requests waiting for answers and
  // the streams' own state (a few KB each); past it the oldest streams are cut.
  std::size_t total_buffer_bytes = 256 * 1024 * 1024;
  std::size_t max_streams = 100'000;                  // open at once; past it the least recently active is cut
  // Requests waiting for their answers on one stream (a capture of one
  // direction only never sees any): past this many, or past
  // stream_buffer_bytes of them, the oldest is handed out without an answer.
  std::size_t max_waiting_requests = 1024;
  std::int64_t idle_close_ns = 600'000'000'000;       // a stream without a packet for this long is closed (capture time)
  std::size_t body_bytes = 4 * 1024 * 1024;            // body kept per message (larger: exchange marked incomplete)
  // Exchanges seen whole and paired with certainty whose place on the stream
  // a loss made unknown (place_known false) and whose request_offset is not
  // known either: complete (true; for readers that need only their order, as
  // the contract check) or incomplete (false).
  bool keep_unplaced = false;
};

// One SIP message on the wire (issue 26): a UDP datagram, or a message
// framed by Content-Length on a TCP stream. Told apart from other traffic by
// its start line (a SIP method and a sip:/sips:/tel: URI, or "SIP/2.0 ").
struct WireSipMessage {
  bool tcp = false;
  std::uint64_t stream = 0;  // TCP: the stream index (tcp.stream); UDP: 0
  WireEndpoint source, destination;
  WireTime at;  // the frame that carried its last byte
  std::optional<calls::sip::Message> message;  // absent: unreadable, `error` says why
  std::string error;
};

// What a whole file held.
struct ReadSummary {
  std::string format;          // "pcap" or "pcapng"
  std::string link_type;       // the link type's name ("EN10MB", "LINUX_SLL2", ...); several: joined by ", "
  std::uint64_t packets = 0;   // frames read
  std::uint64_t tcp_packets = 0;
  std::uint64_t udp_packets = 0;
  std::uint64_t skipped_packets = 0;   // neither TCP nor SIP over UDP (ARP, DNS, ...), or an unsupported link type
  std::uint64_t truncated_packets = 0; // caplen shorter than the packet: their bytes are missing
  std::uint64_t fragments_skipped = 0; // IPv4/IPv6 fragments: not reassembled, their bytes make gaps
  std::uint64_t streams = 0;
  std::uint64_t exchanges = 0;
  std::uint64_t incomplete_exchanges = 0;
  std::uint64_t conflicting_overlaps = 0;
  std::uint64_t streams_cut = 0;       // closed early by a ReadLimits bound
  std::int64_t first_ns = 0, last_ns = 0;
  std::vector<UnparsedStream> unparsed;  // the first 100; unparsed_count counts all
  std::uint64_t unparsed_count = 0;
  std::uint64_t sip_messages = 0;    // read whole (UDP datagrams and TCP streams)
  std::uint64_t sip_unreadable = 0;  // looked like SIP but did not parse (a broken TCP stream counts once)
  std::uint64_t sip_streams = 0;     // TCP streams carrying SIP (not HTTP exchanges)
};

// Called once per exchange, when it ends (response complete, stream closed
// or cut), in the order they end; exchanges of one stream arrive in order.
using ExchangeSink = std::function<void(WireExchange&&)>;
// Called once per SIP message, in capture order per stream (none set: SIP
// is still counted in the summary).
using SipSink = std::function<void(WireSipMessage&&)>;

// Streams packets in, exchanges out. Used by read_capture, by the fuzz target
// and by tests that build packets themselves.
class ExchangeExtractor {
 public:
  ExchangeExtractor(ExchangeSink sink, ReadLimits limits = {}, SipSink sip = {});
  ~ExchangeExtractor();
  ExchangeExtractor(const ExchangeExtractor&) = delete;
  ExchangeExtractor& operator=(const ExchangeExtractor&) = delete;

  // One frame as libpcap gives it: its link type (DLT_* value as pcap_datalink
  // returns it), capture time, frame number, captured bytes and original length.
  void packet(int link_type, std::int64_t ns, std::uint64_t frame, std::string_view bytes, std::size_t wire_length);

  // The capture has ended: every open stream is closed (what is missing is
  // marked incomplete) and the summary is final.
  void finish();

  const ReadSummary& summary() const;

  // What the extractor holds now, for tests and memory checks: streams open
  // and out-of-order bytes buffered. Both return to 0 as streams close.
  std::size_t open_streams() const;
  std::size_t buffered_bytes() const;
  // Requests (and any answers) held while earlier ones wait for answers:
  // bounded per stream by ReadLimits::max_waiting_requests and
  // stream_buffer_bytes; 0 once streams close.
  std::size_t queued_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The file cannot be opened or is not a capture libpcap reads.
struct CaptureFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a whole pcap or pcapng file (libpcap's pcap_open_offline).
ReadSummary read_capture(const std::string& path, const ExchangeSink& sink, ReadLimits limits = {},
                         const SipSink& sip = {});

}  // namespace crh::capture
