// The offline reader's parts, private to capture/: the state of a TCP stream
// and its HTTP exchanges, and the extractor whose steps these files define
// (one purpose each, so each reads alone):
//   frame_decode.cpp    frames decoded down to a TCP segment
//   tcp_streams.cpp     a segment's stream by its 4-tuple; streams opened, ended, cut, closed
//   tcp_reassembly.cpp  each direction's bytes put in order as the receiver delivers them
//   http_pairing.cpp    the HTTP/1 readers on those bytes; requests paired with answers in order
//   gap_pairing.cpp     after the capture lost bytes: answers paired by TCP sequence space
//   sip_extraction.cpp  SIP: UDP datagrams, and TCP streams that carry SIP instead of HTTP
//   exchanges.cpp       frames in, the summary, the public ExchangeExtractor
//   capture_file.cpp    read_capture: a pcap or pcapng file through libpcap
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capture/exchanges.hpp"
#include "capture/frame_decode.hpp"
#include "core/http1.hpp"
#include "calls/sip_message.hpp"

namespace crh::capture::extraction {

namespace http1 = core::http1;

// The 4-tuple with the lower endpoint first, so both directions find the stream.
struct Key {
  std::array<unsigned char, 37> bytes{};
  bool operator==(const Key& o) const { return bytes == o.bytes; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(k.bytes.data()), k.bytes.size()));
  }
};

// 16 address bytes then the port: one endpoint, comparable as bytes.
using Endpoint = std::array<unsigned char, 18>;
Endpoint endpoint(const Segment& s, bool source);
Key key_of(const Endpoint& a, const Endpoint& b, bool v6);

// Whether bytes begin a SIP request line or status line (sip_extraction.cpp).
bool starts_sip(std::string_view s);

// Whether bytes begin a request line or a status line (http_pairing.cpp).
bool starts_request(std::string_view s);
bool starts_response(std::string_view s);

// Marks an exchange incomplete; the first reason given is the one kept.
void mark(WireExchange& e, const std::string& why);

// Bytes not yet delivered: ahead of a hole, or missing from a truncated frame.
struct Held {
  std::string data;
  std::size_t missing = 0;  // a run of bytes the capture lacks (data empty)
  std::uint64_t frame = 0;
  std::int64_t ns = 0;
  std::uint32_t ack = 0;  // the segment's acknowledgment number
  bool acked = false;     // it had one (ACK flag, non-zero)
  std::size_t size() const { return missing ? missing : data.size(); }
};

constexpr std::int64_t kUnknown = INT64_MIN;

// A run of bytes the capture lacks, in a direction's offsets.
struct Lost {
  std::int64_t start = 0, end = 0;
};

struct Half {
  bool based = false;
  std::uint32_t next_seq = 0;  // sequence number of the next byte to deliver
  std::int64_t next_abs = 0;   // its offset from the direction's first byte (no wraparound)
  bool fin = false;
  std::int64_t fin_abs = 0;
  bool ended = false;
  bool from_syn = false;  // offsets count from the SYN (else from the first byte seen)
  std::map<std::int64_t, Held> held;
  std::size_t held_bytes = 0;
  // The HTTP reader's position: in step with message starts, or looking for one.
  bool synced = true;
  bool line_start = true;
  std::uint64_t skipped = 0;
  std::uint64_t skipped_frame = 0;
  WireTime last_byte;  // of the last payload delivered: where a close-delimited answer ends
};

struct Entry {
  WireExchange ex;
  bool request_done = false;
  bool response_done = false;
  // Where the request lies in the client's offsets and what the client had
  // received of the server's bytes when it began (its first segment's ack):
  // after a gap, answers are paired by these, not by order.
  std::int64_t req_start = 0, req_end = kUnknown, req_ack = kUnknown;
  bool req_whole = false;  // read to its end
  std::size_t bytes = 0;   // counted in the stream's queued_bytes (see cost)
};

// After a loss in the requests, the answers to the lost requests lie in the
// server's bytes from `from` (what the client had received when it sent the
// last request before the loss) to `to` (the same for the first request after
// it). Seen whole, each answer there stands for one lost request and the
// requests' places on the stream stay certain; lost too, they do not.
struct LossSpan {
  std::int64_t from = kUnknown, to = INT64_MAX;
  std::int64_t client_at = 0;  // where the lost requests began (client offset)
};

struct Stream {
  std::uint64_t index = 0;
  Key key;
  Endpoint client_ep{};
  WireEndpoint client, server;
  std::uint64_t first_frame = 0;
  std::int64_t last_ns = 0;
  bool midway = false;
  Half half[2];  // 0: client to server, 1: server to client
  http1::RequestReader req;
  http1::ResponseReader resp;
  bool req_active = false, resp_active = false;
  bool resp_orphan = false;
  bool pending_first = false;  // the final answer's first byte is in the next piece (after a 1xx)
  std::deque<Entry> queue;
  std::uint32_t next_sequence = 0;
  std::string uncertain;  // set when later exchanges cannot be paired with certainty
  // Resynchronising after gaps by TCP sequence space: answers pair with the
  // request whose end their ack names (see pair_by_ack).
  bool resync = false;       // a gap came: pair by acks from now on
  bool no_resync = false;    // pairing by acks is not possible (given up, pipelining)
  bool acks_ok = true;       // every data segment so far carried an ACK
  bool pipelined = false;    // an answer began with two requests waiting
  std::uint32_t resp_seq = 0;  // the sequence of the entry the active answer belongs to (not orphan)
  std::int64_t seg_abs = 0, seg_ack = kUnknown;  // the piece being delivered: its offset and its ack (other side's offset)
  std::int64_t last_req_ack = kUnknown;          // req_ack of the last request begun
  std::int64_t answer_end = kUnknown;            // server offset after the last answer read whole
  std::int64_t last_emitted_start = kUnknown;
  std::vector<Lost> lost[2];
  std::vector<LossSpan> spans;
  std::string unplaced;  // set once a loss hid an unknown number of requests: later places are unknown
  std::uint32_t carry_conflicts = 0;
  bool noted_unparsed = false;
  std::uint64_t emitted = 0;
  std::size_t queued_bytes = 0;    // of the entries in queue
  std::uint32_t skip_answers = 0;  // entries handed out unanswered whose answers, if they come, are not theirs to pair
  // A stream that carries SIP (its first bytes were a SIP start line): its
  // bytes go to these readers, one per direction, never to the HTTP ones.
  bool sip = false;
  bool sip_decided = false;  // the first bytes were seen
  // A first piece too short to tell ("INVITE "): held until the start line says.
  std::string sip_held;
  int sip_held_dir = 0;
  std::int64_t sip_held_abs = 0;
  bool sip_broken[2] = {false, false};
  std::unique_ptr<calls::sip::StreamReader> sip_reader[2];
  Stream* older = nullptr;         // open streams by last activity (Extractor::oldest .. newest)
  Stream* newer = nullptr;
  Stream(const http1::ReaderLimits& l)
      : req(l, http1::HeaderCapture::on), resp(l, http1::HeaderCapture::on) {}
};

// ExchangeExtractor's state and steps (its Impl); each step is defined in the
// file named beside it.
struct Extractor {
  ExchangeSink sink;
  SipSink sip_sink;
  ReadLimits limits;
  http1::ReaderLimits reader_limits;
  ReadSummary summary;
  std::unordered_map<Key, std::unique_ptr<Stream>, KeyHash> streams;
  std::size_t total_held = 0;
  std::size_t total_queued = 0;  // Entry::bytes of every queue
  std::size_t total_stream_bytes = 0;  // kStreamCost per open stream
  Stream* oldest = nullptr;  // the least recently active open stream
  Stream* newest = nullptr;
  // What one open stream costs besides its buffers: the object, its map node.
  static constexpr std::size_t kStreamCost = sizeof(Stream) + sizeof(Key) + sizeof(void*) * 4;

  std::size_t used() const { return total_held + total_queued + total_stream_bytes; }

  std::uint64_t next_index = 0;
  std::vector<int> links_seen;

  // ------------------------------------------- frames in (exchanges.cpp)
  void packet(int link, std::int64_t ns, std::uint64_t frame, std::string_view bytes, std::size_t wire_length);
  void finish();

  // ------------------------------------------------- streams (tcp_streams.cpp)
  void link_newest(Stream& st);
  void unlink(Stream& st);
  void touch(Stream& st);
  void tcp(const Segment& s, std::uint64_t frame, std::int64_t ns);
  Stream& open_stream(const Key& key, const Segment& s, bool source_is_client, std::uint64_t frame, std::int64_t ns);
  void maybe_end(Stream& st, int dir, std::uint64_t frame);
  void close(Stream& st, std::uint64_t frame, const char* why);
  void close_and_erase(std::unordered_map<Key, std::unique_ptr<Stream>, KeyHash>::iterator it, std::uint64_t frame,
                       const char* why);
  void cut_oldest(std::uint64_t frame);
  void sweep(std::int64_t now, std::uint64_t frame);

  // ------------------------------------------- reassembly (tcp_reassembly.cpp)
  void data_segment(Stream& st, int dir, const Segment& s, std::uint64_t frame, std::int64_t ns);
  void hold(Stream& st, int dir, std::int64_t abs, std::string_view data, std::size_t missing, std::uint64_t frame,
            std::int64_t ns, std::uint32_t ack, bool acked);
  void conflict(Stream& st, int dir);
  void release(Half& h, std::map<std::int64_t, Held>::iterator it);
  void drain(Stream& st, int dir);
  void skip_hole(Stream& st, int dir);
  void flush(Stream& st, int dir);
  void acked_gap(Stream& st, int dir, std::int64_t upto, std::uint64_t frame);

  // ------------------------------------------------ HTTP side (http_pairing.cpp)
  void deliver(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns, std::int64_t abs,
               std::uint32_t ack, bool acked);
  void request_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns);
  void response_bytes(Stream& st, std::string_view data, std::uint64_t frame, std::int64_t ns);
  std::size_t find_start(Half& h, std::string_view data, bool requests, std::uint64_t frame, bool segment_start);
  bool drop_headless_request(Stream& st);
  void request_failed(Stream& st, const std::string& why, std::uint64_t frame);
  void finish_response(Stream& st, Entry& e, WireTime last);
  void response_failed(Stream& st, const std::string& why, std::uint64_t frame);
  void end_direction(Stream& st, int dir, std::uint64_t frame);
  void note_unparsed(Stream& st, std::string why);
  void emit_ready(Stream& st);
  void emit(Stream& st, WireExchange&& ex);
  void bound_queue(Stream& st);
  static std::size_t cost(const WireExchange& ex);
  void recount(Stream& st, Entry& e);
  void uncount(Stream& st, Entry& e);
  Entry* unanswered(Stream& st);
  Entry* answered(Stream& st);

  // ------------------------------------------------------ SIP (sip_extraction.cpp)
  void udp(const Segment& s, std::uint64_t frame, std::int64_t ns);
  bool decide_sip(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns, std::int64_t abs,
                  std::uint32_t ack, bool acked);
  void release_held(Stream& st, std::uint64_t frame, std::int64_t ns);
  void sip_bytes(Stream& st, int dir, std::string_view data, std::uint64_t frame, std::int64_t ns);
  void sip_broken(Stream& st, int dir, const std::string& why, std::uint64_t frame, std::int64_t ns);
  void sip_out(WireSipMessage&& m);

  // ----------------------------------------- pairing after gaps (gap_pairing.cpp)
  void gap(Stream& st, int dir, std::size_t bytes, std::uint64_t frame);
  Entry* pair_by_ack(Stream& st, std::int64_t start, std::uint64_t frame);
  bool settle_earlier(Stream& st, const Entry* until, std::int64_t to);
  bool can_resync(const Stream& st) const;
  void give_up(Stream& st, const std::string& why);
  void unreadable(Stream& st, int dir, std::int64_t to);
  void lose_places(Stream& st, std::int64_t client_at, const std::string& where);
  void unplace(Stream& st, Entry& e);
  static bool overlaps(const std::vector<Lost>& lost, std::int64_t from, std::int64_t to);
  static bool inside(const std::vector<Lost>& lost, std::int64_t at);
};

}  // namespace crh::capture::extraction
