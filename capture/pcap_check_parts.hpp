// The offline contract check's parts, private to capture/ (`crh pcap check`):
// the judge's state, and the steps each file defines.
//   pcap_check.cpp            the checks, the judge's public face, a capture file judged
//   pcap_check_keys.cpp       the keys requests carry, learned to hide them from every text shown
//   pcap_check_replay.cpp     the replay: each exchange recognized, judged by the per-exchange rules
//   pcap_check_relations.cpp  the rules that relate exchanges: database read-back, R1, binding
//   pcap_check_report.cpp     the report: outcomes, notes and verdict; evidence lines; the document
//   pcap_check_sip*.cpp       SIP calls gathered, their winners judged against the tag epochs (pcap_check_sip.hpp)
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "capture/pcap_check.hpp"
#include "capture/pcap_check_sip.hpp"
#include "core/api.hpp"
#include "core/redact.hpp"
#include "oracle/checker.hpp"

namespace crh::capture {
namespace judging {

constexpr std::size_t kMaxKeys = 10'000;        // distinct keys remembered for redaction (header and apikey parameters)
constexpr std::size_t kEpochsBeforeFlush = 64;  // tags kept per alias before the oldest epochs are judged
constexpr std::size_t kEpochsKept = 16;          // the newest epochs wait for exchanges that end later
constexpr std::size_t kWritesPerKey = 256;      // database writes kept per key

enum CheckIndex : std::size_t {
  kMissingKey,
  kNo5xx,
  kJson,
  kErrorShape,
  kSuccess200,
  kSnoozeWake,
  kDatabase,
  kTagAnswer,
  kBinding,
  kChecks
};

// ---- keys (pcap_check_keys.cpp)

// A request header's value (the first of that name, case-insensitive).
const std::string* request_header(const core::HttpRequest& r, std::string_view name);
// Every apikey a request carries outside its header: query, form or JSON body.
std::vector<std::string> apikey_parameters(const core::HttpRequest& r);
// The target with the value of every query parameter named apikey replaced.
std::string mask_target(const std::string& target);
// A value crh's own capture wrote over: nothing to learn or redact.
bool redacted_value(std::string_view v);

// ---- places (pcap_check_replay.cpp)

// One exchange's place in the capture, before its evidence text is known.
WireEvidence place(const WireExchange& e);
// Its place as an operation for the oracle's Checker.
std::int64_t invoke_of(const WireExchange& e);
std::int64_t complete_of(const WireExchange& e);

// A binding-relevant operation on one alias, with where it is in the capture.
struct Event {
  oracle::Op op;
  std::size_t key_hash = 0;  // of the Apikey value (0: none)
  WireEvidence where;
};

struct Write {
  std::int64_t invoke, complete;
  std::uint64_t stream;
  std::uint32_t sequence;
  std::optional<std::string> value;  // nothing: the value is unknown
  WireEvidence where;
  bool place_known = true;  // false: a loss may have hidden requests of the stream before it
};

struct PendingRead {
  std::string key;
  std::uint64_t stream;
  std::uint32_t sequence;
  std::int64_t invoke, complete;
  std::optional<std::string> got;  // the value the GET returned; nothing: no value in it
  WireEvidence where;
  bool place_known = true;
};

struct PendingShape {
  std::string agent;
  boost::json::object answer;
  WireEvidence where;
};

}  // namespace judging

struct ContractJudge::Impl {
  CheckConfig config;
  const core::FieldNames& names = config.profile.dialect.fields;
  std::vector<JudgedCheck> checks;
  CheckReport report;
  bool base_known = false;
  std::string base_path;

  // Keys: every distinct Apikey value (hidden from every text shown), and
  // those that some request had answered 200 with (the accepted ones).
  std::unordered_set<std::string> keys;  // every key learned (header values and apikey parameters)
  std::vector<core::Redactor> redactors;  // one per key of `keys`
  std::vector<bool> short_keys;           // per redactor: core::key_is_short
  bool keys_overflow = false;             // more than kMaxKeys: later ones are not redacted by value
  std::unordered_set<std::size_t> accepted_keys;

  std::unordered_map<std::string, boost::json::object> agent_shapes;  // the first 200 GET of each agent
  std::vector<judging::PendingShape> pending_shapes;

  std::unordered_map<std::string, std::vector<judging::Write>> writes;  // per database key
  std::vector<judging::PendingRead> pending_reads;
  // The last successful POST per stream and key, for the read that follows on the stream.
  std::map<std::pair<std::uint64_t, std::string>, judging::Write> last_post_on_stream;

  std::unordered_map<std::string, std::vector<judging::Event>> alias_events;  // per "channel/alias"
  std::unordered_map<std::string, std::int64_t> alias_judged_until;  // events invoked before were judged
  oracle::Checker checker;
  judging::SipCalls sip;  // the SIP calls, and what the HTTP side says of their numbers
  std::optional<std::int64_t> time_zero;
  bool capture_has_gaps = false;
  std::uint64_t rounds = 0, late_events = 0, epochs_cut_by_gaps = 0;

  // The base path, when none was given: "" as soon as one request names an
  // endpoint without a prefix; else the prefix below which three requests
  // named one (crh's own checks send odd paths such as /api/v1/database/k,
  // so one vote is not enough).
  std::map<std::string, int> prefix_votes;
  bool root_seen = false;

  explicit Impl(CheckConfig c);

  // The keys (pcap_check_keys.cpp).
  void learn_key(const std::string& key);
  std::string redact(std::string_view text) const;
  std::string redact_composed(std::string_view text) const;
  std::string shown(std::string_view body, std::size_t max = 120) const;

  // The replay (pcap_check_replay.cpp).
  void evidence(std::size_t check, WireEvidence w, std::string what, bool must = true);
  void trim(JudgedCheck& c) const;
  std::optional<core::api::Recognized> recognize(const WireExchange& e);
  void add(WireExchange&& e);

  // The database read-back, R1 and the binding rules (pcap_check_relations.cpp).
  void database_write(const WireExchange& e, const core::api::Recognized& op, bool whole);
  void judge_reads();
  std::optional<judging::Write> last_post_before(const judging::PendingRead& p);
  void judge_shapes();
  std::string alias_key(const core::api::Recognized& op, const std::string& alias) const;
  void binding_event(const WireExchange& e, const core::api::Recognized& op, const std::string* key,
                     std::size_t key_hash, bool whole);
  void judge_alias(const std::string& alias, bool all);

  // The SIP calls judged into report.sip (pcap_check_sip_report.cpp).
  void judge_sip();

  // The report (pcap_check_report.cpp).
  CheckReport finish(const ReadSummary& capture);
  std::string skip_reason(std::size_t i) const;
};

}  // namespace crh::capture
