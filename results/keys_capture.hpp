// The keys of a capture: a `crh pcap check` document, and the live capture section of the other documents.
#pragma once

#include "results/keys_load.hpp"

namespace crh::results::keys {

// ---- pcap: a `crh pcap check` document (capture/pcap_check.cpp): the contract
// document's counts, notes, suites, rules and checks, and a "capture" section
namespace pcap {
inline constexpr Key suite_name = "capture";  // the one suite (a value, not a key)
inline constexpr Key capture = "capture";
using history::file;
inline constexpr Key base_path = "base_path";  // config
inline constexpr Key format = "format";
inline constexpr Key link_types = "link_types";
inline constexpr Key packets = "packets";
inline constexpr Key tcp_packets = "tcp_packets";
inline constexpr Key skipped_packets = "skipped_packets";
inline constexpr Key truncated_packets = "truncated_packets";
inline constexpr Key streams = "streams";
inline constexpr Key exchanges = "exchanges";
inline constexpr Key api_exchanges = "api_exchanges";
inline constexpr Key other_exchanges = "other_exchanges";
inline constexpr Key requests_without_key = "requests_without_key";
inline constexpr Key incomplete = "incomplete";
inline constexpr Key conflicting_overlaps = "conflicting_overlaps";
inline constexpr Key streams_cut = "streams_cut";
inline constexpr Key duration_s = "duration_s";
inline constexpr Key unparsed_count = "unparsed_count";
inline constexpr Key unparsed = "unparsed";  // the first 100
// capture.unparsed[]
inline constexpr Key stream = "stream";
inline constexpr Key client = "client";
inline constexpr Key server = "server";
inline constexpr Key first_frame = "first_frame";
inline constexpr Key why = "why";
// checks[]: counts; checks[].evidence[]: where in the capture
inline constexpr Key judged = "judged";
inline constexpr Key violations = "violations";
inline constexpr Key indeterminate = "indeterminate";
inline constexpr Key frames = "frames";  // request first, last, response first, last (0: none)
inline constexpr Key time_s = "time_s";  // the request's first byte, from the capture's first packet
}  // namespace pcap

// ---- pcap_sip: the "sip" section of a `crh pcap check` document (issue 26;
// capture/pcap_check_sip_report.cpp): the SIP calls, their outcomes, who connected to each number
namespace pcap_sip {
inline constexpr Key section = "sip";
inline constexpr Key messages = "messages";
inline constexpr Key unreadable = "unreadable";
inline constexpr Key unreadable_why = "unreadable_why";  // the first 20
inline constexpr Key calls = "calls";                    // counts; calls_listed: the calls themselves
inline constexpr Key connected = "connected";
inline constexpr Key refused = "refused";
inline constexpr Key other = "other";
inline constexpr Key unanswered = "unanswered";
inline constexpr Key retransmissions = "retransmissions";
inline constexpr Key answers_without_invite = "answers_without_invite";
inline constexpr Key judgement = "judgement";
inline constexpr Key calls_listed = "calls_listed";  // the first 1000, in INVITE order
inline constexpr Key numbers = "numbers";
// calls_listed[]
inline constexpr Key call_id = "call_id";
inline constexpr Key caller = "caller";
inline constexpr Key called = "called";
inline constexpr Key request_uri = "request_uri";
inline constexpr Key final_status = "final_status";  // 0: none seen
inline constexpr Key outcome = "outcome";
inline constexpr Key transport = "transport";  // "udp" or "tcp"
inline constexpr Key frames = "frames";        // the INVITE's and its final answer's (0: none)
inline constexpr Key time_s = "time_s";        // the INVITE, from the capture's first packet
// numbers[]
inline constexpr Key number = "number";
inline constexpr Key alias = "alias";  // "" when the HTTP side names none
inline constexpr Key winner = "winner";
inline constexpr Key connected_callers = "connected_callers";
inline constexpr Key epochs_judged = "epochs_judged";
inline constexpr Key epochs_with_two_winners = "epochs_with_two_winners";
inline constexpr Key judged = "judged";
}  // namespace pcap_sip

// ---- live_capture: the "capture" section of a contract, load or run document
// made with --capture (runners/capture_session.cpp, capture/live.hpp's LiveSummary)
namespace live_capture {
inline constexpr Key section = "capture";
inline constexpr Key made = "made";
inline constexpr Key not_made = "not_made";  // why no capture was made
inline constexpr Key file = "file";
inline constexpr Key interface = "interface";
inline constexpr Key filter = "filter";
inline constexpr Key packets = "packets";  // written to the file
inline constexpr Key bytes = "bytes";
inline constexpr Key kernel_received = "kernel_received";
inline constexpr Key kernel_dropped = "kernel_dropped";
inline constexpr Key interface_dropped = "interface_dropped";
inline constexpr Key counted_twice = "counted_twice";  // the kernel counted each packet twice (loopback)
inline constexpr Key lost_packets = "lost_packets";
inline constexpr Key limit_bytes = "limit_bytes";  // 0: none
inline constexpr Key limit_reached = "limit_reached";
inline constexpr Key redactions = "redactions";
inline constexpr Key checksums_recomputed = "checksums_recomputed";
inline constexpr Key warnings = "warnings";
}  // namespace live_capture

}  // namespace crh::results::keys
