// `crh pcap check` (issue 14 §3): the contract judged on a capture made by
// anyone, without sending a request. Exchanges stream through a judge that
// keeps counts and the first few pieces of evidence per rule, and bounded
// state for the rules that relate exchanges (R1 shapes, database read-back,
// the binding rules through the oracle's Checker).
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/exchanges.hpp"
#include "core/profile.hpp"
#include "results/verdict.hpp"

namespace crh::capture {

struct CheckConfig {
  core::Profile profile;                 // the dialect (names, call hook, encoding) and the expected statuses
  std::optional<std::string> base_path;  // the base URL's path ("/prefix"); nothing: detected from the traffic
  std::int64_t minute_ns = 60'000'000'000;  // one tag minute on the target (crh serve --minute-ms)
  bool strict = false;                   // SHOULD findings fail too
  std::size_t evidence_per_check = 5;    // pieces of evidence kept per check (all are counted)
  std::size_t max_agents = 10'000;       // agents whose GET shape is kept for R1
  std::size_t max_db_keys = 100'000;     // database keys whose writes are kept
  std::size_t max_pending = 100'000;     // read-backs and snooze/wake answers waiting for the end
};

// Where in the capture: what a user types in Wireshark to see it.
struct WireEvidence {
  std::uint64_t request_first = 0, request_last = 0, response_first = 0, response_last = 0;  // frames; 0: none
  std::uint64_t stream = 0;
  std::int64_t request_ns = 0;  // request's first byte, capture time
  std::string method, target;   // target: every key learned redacted, any apikey parameter's value masked
  unsigned status = 0;          // 0: no answer
  std::string what;             // what was expected and what came (redacted)
  bool must = true;             // a MUST violation; else a SHOULD finding
  // A SIP call's evidence (issue 26): its Call-ID (the frames are its INVITE's
  // and final answer's, `status` the SIP status); empty for HTTP.
  std::string sip_call_id;
  bool udp = false;  // the SIP call went over UDP (`stream` means nothing then)
};

struct JudgedCheck {
  std::string id;                  // "capture.error-shape"
  std::vector<std::string> rules;  // catalogue ids
  bool must = true;
  std::string summary;
  std::string outcome;  // pass, warn, fail, skip, indeterminate
  std::string message;  // counts, or why skipped
  std::uint64_t judged = 0, violations = 0, warnings = 0, indeterminate = 0;
  std::vector<WireEvidence> evidence;  // the first evidence_per_check, in wire-time order
};

// SIP calls in the capture (issue 26): INVITE transactions by Call-ID.
struct SipCallSeen {
  std::string call_id, caller, called;  // caller: P-Asserted-Identity's user, else From's; called: Request-URI's
  std::string request_uri;
  unsigned final_status = 0;  // of the call's last INVITE transaction; 0: no final answer seen
  std::string outcome;        // connected (2xx), refused (the profile's statuses.sip_refused), other, unanswered
  std::uint32_t retransmissions = 0;  // INVITEs and final answers seen again (same branch, same sender)
  WireTime invite, answer;            // the first INVITE, the final answer (frame 0: none)
  bool tcp = false;
  std::uint64_t stream = 0;  // TCP: tcp.stream
};

// Who connected to one called number, and whether the capture can judge it.
struct SipNumberSeen {
  std::string number;
  std::string alias;  // the alias the capture's HTTP side gives this number; "" when it names none
  std::uint64_t calls = 0, connected = 0;
  std::string winner;                          // the first caller whose INVITE got a 2xx; "" when none
  std::vector<std::string> connected_callers;  // distinct, in order of their INVITEs (the first 20)
  std::uint64_t epochs_judged = 0;             // tag epochs with a connected call inside them
  std::uint64_t epochs_with_two_winners = 0;   // of those, with two distinct connected callers
  std::string judged;                          // how the winners were judged, or why not
};

struct SipReport {
  std::uint64_t messages = 0, unreadable = 0;
  std::uint64_t calls = 0, connected = 0, refused = 0, other = 0, unanswered = 0, retransmissions = 0;
  std::uint64_t answers_without_invite = 0;   // final answers to INVITEs the capture lacks
  std::vector<SipCallSeen> calls_seen;        // in INVITE order, the first 1000
  std::vector<SipNumberSeen> numbers;         // in order of their first INVITE
  std::vector<std::string> unreadable_why;    // the first 20
  std::string judgement;                      // the winners judged per tag epoch, or why not
};

struct CheckReport {
  std::string file;
  ReadSummary capture;
  std::string base_path;  // what was used ("" for none)
  std::vector<JudgedCheck> checks;
  std::vector<std::string> notes;
  SipReport sip;
  // Only operations of the API (under the base path, the profile's call hook)
  // are judged; none judged: UNTESTED (exit 3), whatever else was seen.
  std::uint64_t api_exchanges = 0;         // recognized operations, complete or not
  std::uint64_t other_exchanges = 0;       // HTTP, but no operation of the API: counted, never judged
  std::uint64_t requests_without_key = 0;  // operations of the API without an Apikey header
  std::uint64_t not_judged_incomplete = 0; // operations marked incomplete (never judged)
  results::Verdict verdict;  // passed, failed or untested
};

// Takes exchanges in any order (as a reader hands them out); judges in
// wire-time order where the order matters. Keys are learned from every
// request (the Apikey header, apikey parameters of the query, a form or a JSON
// body, any case; CRH_API_KEY when set) and hidden from every text it shows,
// before any excerpt is cut.
class ContractJudge {
 public:
  explicit ContractJudge(CheckConfig config);
  ~ContractJudge();
  ContractJudge(const ContractJudge&) = delete;
  ContractJudge& operator=(const ContractJudge&) = delete;

  void add(WireExchange&& exchange);
  // A SIP message (the reader's SipSink): calls counted, winners judged at
  // the end against the tag epochs the HTTP exchanges show.
  void add_sip(WireSipMessage&& message);
  // Judges what waited for the end and returns the report; `capture` is the
  // reader's summary (its first packet's time is the zero of the times shown).
  CheckReport finish(const ReadSummary& capture);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads `path` (ReadLimits::keep_unplaced: the judge needs a stream's order,
// not the places) and judges it. Throws CaptureFileError when it cannot be read.
CheckReport check_capture(const std::string& path, const CheckConfig& config);

// "frames 1203–1207 (tcp.stream 14, 12.031 s): POST /x → HTTP 200: what"
std::string evidence_line(const WireEvidence& e, std::int64_t capture_start_ns);
// A Wireshark display filter showing the exchange's frames.
std::string display_filter(const WireEvidence& e);

// The crh.result document of kind "pcap": the contract document's shape
// (verdict, counts, suites, rules, checks with findings and evidence) and a
// "capture" section. Values are redacted already.
boost::json::value result_document(const CheckReport& report, const CheckConfig& config,
                                   std::chrono::system_clock::time_point started, double duration_ms);

}  // namespace crh::capture
