// The offline contract check: per-exchange rules counted as exchanges stream
// through; R1, the database read-back and the binding rules kept in bounded
// maps and judged in wire-time order once the times make the order certain
// (at the end, or when an alias's epochs are old enough to be freed).
#include "capture/pcap_check.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "capture/packet_redaction.hpp"
#include "contracts/rules.hpp"
#include "contracts/shapes.hpp"
#include "core/api.hpp"
#include "core/http1.hpp"
#include "core/redact.hpp"
#include "core/result_envelope.hpp"
#include "core/result_keys.hpp"
#include "loadgen/checker.hpp"

namespace crh::capture {
namespace json = boost::json;
namespace api = core::api;
namespace k = core::keys;

namespace {

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

struct CheckSpec {
  const char* id;
  std::vector<std::string> rules;
  const char* summary;
};

const CheckSpec& spec(std::size_t i) {
  static const CheckSpec specs[kChecks] = {
      {"capture.auth.missing-key", {"R5", "A2"}, "a request without the Apikey header is never answered 200"},
      {"capture.no-5xx", {"X1"}, "no answer is a 5xx (a server error is never a contract answer)"},
      {"capture.json-bodies", {"C1"}, "every answer's body is JSON"},
      {"capture.error-shape", {"X1", "X2"}, "every error answer is a JSON object with a string msg"},
      {"capture.success-is-200", {"C2"}, "success is HTTP 200, never another 2xx"},
      {"capture.snooze-wake-shape", {"R1"}, "snooze and wake answer with the fields and types of the agent's GET"},
      {"capture.database-readback", {"E5", "E6"},
       "a database GET after a POST of the key on the same stream (no other write between) returns the value"},
      {"capture.tag-answer", {"E8"}, "a tag answer names the alias under the profile's id fields"},
      {"capture.binding", {"B1", "B2", "B3"},
       "per alias and tag epoch: the first caller is bound, others refused, the bound caller still connects"},
  };
  return specs[i];
}

// A request header's value (the first of that name, case-insensitive), as
// core::HttpResponse::header gives a response's.
const std::string* request_header(const core::HttpRequest& r, std::string_view name) {
  for (const auto& h : r.headers)
    if (core::http1::iequals(h.name, name)) return &h.value;
  return nullptr;
}

bool is_apikey_name(std::string_view name) { return core::http1::iequals(name, "apikey"); }

bool mentions_apikey(std::string_view text) {
  static constexpr std::string_view kName = "apikey";
  if (text.size() < kName.size()) return false;
  for (std::size_t i = 0; i + kName.size() <= text.size(); ++i)
    if (core::http1::iequals(text.substr(i, kName.size()), kName)) return true;
  return false;
}

// The values of the parameters named apikey (any case) in a query string or
// a form body, percent-decoded ('+' a space).
void apikey_pairs(std::string_view pairs, std::vector<std::string>& out) {
  while (!pairs.empty()) {
    const auto amp = pairs.find('&');
    const std::string_view pair = pairs.substr(0, amp);
    pairs = amp == std::string_view::npos ? std::string_view{} : pairs.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = api::percent_decode(pair.substr(0, eq), true);
    if (!name || !is_apikey_name(*name)) continue;
    if (auto v = api::percent_decode(pair.substr(eq + 1), true); v && !v->empty()) out.push_back(*v);
    out.emplace_back(pair.substr(eq + 1));  // as sent, too
  }
}

// Every apikey a request carries outside its header: query, form or JSON body.
std::vector<std::string> apikey_parameters(const core::HttpRequest& r) {
  std::vector<std::string> out;
  if (const auto q = r.target.find('?'); q != std::string::npos && mentions_apikey(r.target))
    apikey_pairs(std::string_view(r.target).substr(q + 1), out);
  if (!r.body.empty() && mentions_apikey(r.body)) {
    boost::system::error_code ec;
    auto body = json::parse(r.body, ec);
    if (!ec && body.is_object()) {
      for (const auto& [name, v] : body.get_object())
        if (is_apikey_name(name) && v.is_string()) out.emplace_back(v.get_string());
    } else {
      apikey_pairs(r.body, out);
    }
  }
  std::erase_if(out, [](const std::string& v) { return v.empty(); });
  return out;
}

// The target with the value of every query parameter named apikey replaced,
// whatever key it holds: a target is never printed with one.
std::string mask_target(const std::string& target) {
  const auto q = target.find('?');
  if (q == std::string::npos || !mentions_apikey(std::string_view(target).substr(q))) return target;
  std::string out = target.substr(0, q + 1);
  std::string_view pairs = std::string_view(target).substr(q + 1);
  bool first = true;
  while (true) {
    const auto amp = pairs.find('&');
    const std::string_view pair = pairs.substr(0, amp);
    if (!first) out += '&';
    first = false;
    const auto eq = pair.find('=');
    const auto name = api::percent_decode(pair.substr(0, eq), true);
    if (eq != std::string_view::npos && name && is_apikey_name(*name)) {
      out.append(pair.substr(0, eq + 1));
      out.append(core::kKeyPlaceholder);
    } else {
      out.append(pair);
    }
    if (amp == std::string_view::npos) break;
    pairs = pairs.substr(amp + 1);
  }
  return out;
}

// A value crh's own capture wrote over (capture/packet_redaction: the key
// with 'x', another value with '*'): nothing to learn or redact.
bool redacted_value(std::string_view v) {
  const auto filled_with = [&](char f) { return std::all_of(v.begin(), v.end(), [f](char c) { return c == f; }); };
  return !v.empty() && (filled_with(detail::PacketRedactor::kFill) || filled_with(detail::PacketRedactor::kOtherFill));
}

// One exchange's place in the capture, before its evidence text is known.
WireEvidence place(const WireExchange& e) {
  WireEvidence w;
  w.request_first = e.request_first.frame;
  w.request_last = e.request_last.frame;
  w.response_first = e.response_first.frame;
  w.response_last = e.response_last.frame;
  w.stream = e.stream;
  w.request_ns = e.request_first.ns;
  w.method = e.request.method;
  w.target = mask_target(e.request.target);  // the keys learned are redacted too, at the end
  w.status = e.response ? e.response->status : 0;
  return w;
}

// Its place as an operation for loadgen's Checker: request last byte out,
// response last byte in.
std::int64_t invoke_of(const WireExchange& e) { return e.request_last.ns; }
std::int64_t complete_of(const WireExchange& e) {
  return e.response && e.complete ? e.response_last.ns : std::numeric_limits<std::int64_t>::max() / 4;
}

// A binding-relevant operation on one alias, with where it is in the capture.
struct Event {
  loadgen::Op op;
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
  json::object answer;
  WireEvidence where;
};

}  // namespace

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

  std::unordered_map<std::string, json::object> agent_shapes;  // the first 200 GET of each agent
  std::vector<PendingShape> pending_shapes;

  std::unordered_map<std::string, std::vector<Write>> writes;  // per database key
  std::vector<PendingRead> pending_reads;
  // The last successful POST per stream and key, for the read that follows on the stream.
  std::map<std::pair<std::uint64_t, std::string>, Write> last_post_on_stream;

  std::unordered_map<std::string, std::vector<Event>> alias_events;  // per "channel/alias"
  std::unordered_map<std::string, std::int64_t> alias_judged_until;  // events invoked before were judged
  loadgen::Checker checker;
  std::optional<std::int64_t> time_zero;
  bool capture_has_gaps = false;
  std::uint64_t rounds = 0, late_events = 0, epochs_cut_by_gaps = 0;

  explicit Impl(CheckConfig c) : config(std::move(c)) {
    if (config.base_path) {
      base_known = true;
      base_path = *config.base_path;
    }
    // The key the user holds, wherever a target echoed it.
    if (const char* key = std::getenv("CRH_API_KEY"); key && *key) learn_key(key);
    for (std::size_t i = 0; i < kChecks; ++i) {
      JudgedCheck j;
      j.id = spec(i).id;
      j.rules = spec(i).rules;
      j.summary = spec(i).summary;
      checks.push_back(std::move(j));
    }
  }

  void learn_key(const std::string& key) {
    if (key.empty() || redacted_value(key) || keys.count(key)) return;
    if (keys.size() >= kMaxKeys) {
      keys_overflow = true;
      return;
    }
    keys.insert(key);
    redactors.emplace_back(key);
    short_keys.push_back(core::key_is_short(key));
  }

  // Text from the capture (a body, a value, a target), fit to show: every
  // key learned so far replaced. Always before an excerpt is cut.
  std::string redact(std::string_view text) const {
    std::string out(text);
    for (const auto& r : redactors) out = r.redact(out);
    return out;
  }
  // Text the check composed, which may quote the capture: redacted with the
  // keys that match only themselves (a short key would mangle its words; the
  // quotes were redacted with every key known when they were cut).
  std::string redact_composed(std::string_view text) const {
    std::string out(text);
    for (std::size_t i = 0; i < redactors.size(); ++i)
      if (!short_keys[i]) out = redactors[i].redact(out);
    return out;
  }
  // The start of a body, redacted before it is cut (a key across the cut
  // leaves no prefix behind).
  std::string shown(std::string_view body, std::size_t max = 120) const {
    return contracts::excerpt(redact(body), max);
  }

  void evidence(std::size_t check, WireEvidence w, std::string what, bool must = true) {
    auto& c = checks[check];
    if (must) ++c.violations;
    else ++c.warnings;
    w.what = std::move(what);
    w.must = must;
    c.evidence.push_back(std::move(w));  // trimmed to the earliest at the end
    if (c.evidence.size() > 4 * config.evidence_per_check + 16) trim(c);
  }
  void trim(JudgedCheck& c) const {
    std::stable_sort(c.evidence.begin(), c.evidence.end(),
                     [](const WireEvidence& a, const WireEvidence& b) { return a.request_ns < b.request_ns; });
    if (c.evidence.size() > config.evidence_per_check) c.evidence.resize(config.evidence_per_check);
  }

  // The base path, when none was given: "" as soon as one request names an
  // endpoint without a prefix; else the prefix below which three requests
  // named one (crh's own checks send odd paths such as /api/v1/database/k,
  // so one vote is not enough).
  std::map<std::string, int> prefix_votes;
  bool root_seen = false;
  std::optional<api::Recognized> recognize(const WireExchange& e) {
    const auto& hook = config.profile.dialect.call_hook;
    if (base_known) return api::recognize(hook, e.request.method, e.request.target, base_path);
    if (auto r = api::recognize(hook, e.request.method, e.request.target)) {
      root_seen = true;
      return r;
    }
    if (root_seen) return std::nullopt;
    const std::string_view path = std::string_view(e.request.target).substr(0, e.request.target.find('?'));
    for (std::string_view marker : {"/api/v1/local-agents", "/database/", "/channels/"}) {
      const auto at = path.find(marker);
      if (at == std::string_view::npos || at == 0) continue;
      const std::string prefix(path.substr(0, at));
      auto r = api::recognize(hook, e.request.method, e.request.target, prefix);
      if (!r || ++prefix_votes[prefix] < 3) continue;
      base_known = true;
      base_path = prefix;
      report.notes.push_back("the base path " + prefix + " was detected from the traffic (--base-path to set it)");
      return r;
    }
    return std::nullopt;
  }

  void add(WireExchange&& e) {
    // Keys are learned from all traffic (to hide them), wherever a request carried one.
    const std::string* key = request_header(e.request, "Apikey");
    const bool keyed = key != nullptr;
    if (keyed) learn_key(*key);
    for (const auto& k : apikey_parameters(e.request)) learn_key(k);
    const auto op = recognize(e);
    if (!op) {  // not an operation of the API (a health check, a wrong base path or call hook): counted, not judged
      ++report.other_exchanges;
      return;
    }
    ++report.api_exchanges;
    std::size_t key_hash = 0;
    if (keyed) key_hash = std::hash<std::string>{}(*key) | 1;
    else ++report.requests_without_key;
    const bool whole = e.complete && e.response.has_value();
    if (!e.complete) ++report.not_judged_incomplete;

    // The binding rules take unknown outcomes too, as indeterminate operations.
    if (op->op == api::Operation::call || op->op == api::Operation::untag || op->op == api::Operation::tag)
      binding_event(e, *op, keyed ? key : nullptr, key_hash, whole);
    if (op->op == api::Operation::db_set) database_write(e, *op, whole);
    if (!whole) {
      for (auto i : {kNo5xx, kJson, kErrorShape, kSuccess200}) ++checks[i].indeterminate;
      if (!keyed) ++checks[kMissingKey].indeterminate;
      return;
    }
    const auto& r = *e.response;
    if (r.status >= 200 && r.status < 300 && keyed) accepted_keys.insert(key_hash);

    // The status checks hold for every answer, bodiless ones (HEAD, 204, 304) too.
    // R5/A2: judge the answer, not the presence (crh's own runs send requests without a key on purpose).
    if (!keyed) {
      ++checks[kMissingKey].judged;
      if (r.status >= 200 && r.status < 300)
        evidence(kMissingKey, place(e),
                 "expected a refusal of a request without the Apikey header, got HTTP " + std::to_string(r.status));
    }
    ++checks[kNo5xx].judged;
    if (r.status >= 500)
      evidence(kNo5xx, place(e), "expected an answer of the API, got the server error HTTP " + std::to_string(r.status));
    ++checks[kSuccess200].judged;
    if (r.status > 200 && r.status < 300)
      evidence(kSuccess200, place(e), "expected HTTP 200 for a success, got HTTP " + std::to_string(r.status));
    if (e.head || r.status == 204 || r.status == 304) return;  // no body to judge

    const std::string content_type = r.header("Content-Type");
    const bool refusal = contracts::protocol_level_refusal(e.request.target, r.status, content_type, r.body);
    std::string why;
    const std::optional<json::value> body = contracts::parse_json(r.body, why);
    if (!refusal) {
      ++checks[kJson].judged;
      if (!body) {
        // The reason quotes the body: taken from the redacted body.
        std::string shown_why;
        if (contracts::parse_json(redact(r.body), shown_why)) shown_why = "a body that is not JSON: " + shown(r.body);
        evidence(kJson, place(e), "expected a JSON body, got " + shown_why);
      }
    }
    if (r.status != 200 && r.status < 500) {
      ++checks[kErrorShape].judged;
      auto findings = contracts::error_shape_findings(r.status, content_type, r.body);
      // Their texts quote the body: found again on the redacted body.
      if (!findings.empty() && !redactors.empty())
        findings = contracts::error_shape_findings(r.status, content_type, redact(r.body));
      if (refusal) findings = contracts::judged_apart(std::move(findings));
      for (const auto& f : findings)
        evidence(kErrorShape, place(e), std::string(f.rule) + ": " + f.text,
                 f.severity == contracts::Severity::must);
    }
    if (!body) return;
    switch (op->op) {
      case api::Operation::get_agent:
        if (r.status == 200 && body->is_object() && agent_shapes.size() < config.max_agents)
          agent_shapes.try_emplace(op->id, body->get_object());
        break;
      case api::Operation::snooze:
      case api::Operation::wake:
        if (r.status == 200) {
          if (!body->is_object()) {
            ++checks[kSnoozeWake].judged;
            evidence(kSnoozeWake, place(e), "expected the agent object, got a body that is not a JSON object");
          } else if (pending_shapes.size() < config.max_pending) {
            pending_shapes.push_back({op->id, body->get_object(), place(e)});
          }
        }
        break;
      case api::Operation::db_get:
        if (r.status == 200 && pending_reads.size() < config.max_pending) {
          // Only a read that follows a POST of the key on its stream is judged.
          auto it = last_post_on_stream.find({e.stream, op->id});
          if (it != last_post_on_stream.end() && it->second.sequence < e.sequence)
            pending_reads.push_back({op->id, e.stream, e.sequence, invoke_of(e), complete_of(e),
                                     api::database_value(names, *body), place(e), e.place_known});
        }
        break;
      case api::Operation::tag:
        if (r.status == 200) {
          ++checks[kTagAnswer].judged;
          if (!api::tagged_alias_id(names, *body))
            evidence(kTagAnswer, place(e),
                     "expected an alias object with an id under the profile's id fields, got " + shown(r.body),
                     false);
        }
        break;
      default: break;
    }
  }

  // ---- the database read-back ----

  void database_write(const WireExchange& e, const api::Recognized& op, bool whole) {
    // A refused write (a complete 4xx) changed nothing; anything else may have.
    if (whole && e.response->status != 200 && e.response->status < 500) return;
    Write w{invoke_of(e), complete_of(e), e.stream, e.sequence, std::nullopt, place(e), e.place_known};
    if (whole && e.response->status == 200) w.value = api::request_parameter(e.request, "value");
    auto it = writes.find(op.id);
    if (it == writes.end()) {
      if (writes.size() >= config.max_db_keys) return;
      it = writes.emplace(op.id, std::vector<Write>{}).first;
    }
    if (it->second.size() >= kWritesPerKey) it->second.erase(it->second.begin());
    it->second.push_back(w);
    if (whole && e.response->status == 200) {
      // Streams come and go without a word from the reader: the oldest are forgotten first.
      if (last_post_on_stream.size() >= config.max_db_keys) last_post_on_stream.erase(last_post_on_stream.begin());
      auto& last = last_post_on_stream[{e.stream, op.id}];
      if (last.where.request_first == 0 || last.sequence < e.sequence) last = w;
    }
  }

  void judge_reads() {
    auto& c = checks[kDatabase];
    for (auto& p : pending_reads) {
      const auto& post = last_post_before(p);
      if (!post) continue;
      // Another write of the key that may have landed between the POST and the GET: nothing is certain.
      bool other = false;
      for (const auto& w : writes[p.key])
        if (!(w.stream == post->stream && w.sequence == post->sequence) && w.invoke < p.complete &&
            w.complete > post->invoke)
          other = true;
      // `sequence` orders a stream's exchanges, but after a loss that hid an
      // unknown number of requests (place_known false) a hidden write may lie
      // between the POST and the GET: the order alone proves nothing then.
      if (!p.place_known || !post->place_known) other = true;
      if (other || !post->value) {
        ++c.indeterminate;
        continue;
      }
      ++c.judged;
      if (!p.got)  // the value's field is the profile's to name
        evidence(kDatabase, p.where,
                 "expected the value under the field \"" + names.database_value +
                     "\" (fields.database_value in --profile), found none",
                 false);
      else if (p.got != post->value)
        evidence(kDatabase, p.where,
                 "expected the value written by the POST at frames " + std::to_string(post->where.request_first) + "–" +
                     std::to_string(post->where.response_last) + " (" + std::to_string(post->value->size()) +
                     " bytes: \"" + shown(*post->value, 60) + "\"), got " +
                     (p.got ? "\"" + shown(*p.got, 60) + "\"" : std::string("no value")));
    }
    pending_reads.clear();
  }

  // The last 200 POST of the read's key on its stream before it.
  std::optional<Write> last_post_before(const PendingRead& p) {
    std::optional<Write> best;
    for (const auto& w : writes[p.key])
      if (w.stream == p.stream && w.sequence < p.sequence && w.value && (!best || w.sequence > best->sequence))
        best = w;
    return best;
  }

  // ---- R1 ----

  void judge_shapes() {
    auto& c = checks[kSnoozeWake];
    for (auto& p : pending_shapes) {
      auto it = agent_shapes.find(p.agent);
      if (it == agent_shapes.end()) continue;  // no GET of this agent in the capture
      ++c.judged;
      const auto& get = it->second;
      std::vector<std::string> problems;
      for (const auto& [name, v] : get)
        if (!p.answer.contains(name)) problems.push_back("lacks \"" + std::string(name) + "\"");
      for (const auto& [name, v] : p.answer)
        if (!get.contains(name)) problems.push_back("has \"" + std::string(name) + "\" the GET has not");
      for (auto& d : contracts::field_type_differences(get, p.answer)) problems.push_back("type of " + d);
      const auto want_id = api::agent_id(names, get), got_id = api::agent_id(names, p.answer);
      if (want_id != got_id) problems.push_back("names another agent id");
      if (problems.empty()) continue;
      std::string text = "expected the fields and types of the GET of agent " + redact(p.agent) + "; the answer";
      for (std::size_t i = 0; i < problems.size(); ++i) text += (i ? ", " : " ") + redact(problems[i]);
      evidence(kSnoozeWake, p.where, std::move(text));
    }
    pending_shapes.clear();
  }

  // ---- the binding rules ----

  std::string alias_key(const api::Recognized& op, const std::string& alias) const {
    return (config.profile.dialect.call_hook.path.find("{channel}") != std::string::npos ? op.channel + "/" : "") +
           alias;
  }

  void binding_event(const WireExchange& e, const api::Recognized& op, const std::string* key, std::size_t key_hash,
                     bool whole) {
    if (!key) return;  // no key: never a binding operation
    Event ev;
    ev.key_hash = key_hash;
    ev.where = place(e);  // its target is redacted with every key learned when it becomes evidence (finish)
    auto& o = ev.op;
    // The checker's times count from the first exchange the judge saw (its
    // sentences show them in µs): about the capture's start.
    if (!time_zero) time_zero = e.request_first.ns;
    o.invoke_ns = invoke_of(e) - *time_zero;
    o.complete_ns = complete_of(e) - (e.response && e.complete ? *time_zero : 0);
    o.status = whole ? e.response->status : 0;
    // A 2xx other than 200 breaks C2 (judged there) but is a success all the same.
    o.outcome = !whole || o.status >= 500            ? loadgen::Outcome::indeterminate
                : o.status >= 200 && o.status < 300 ? loadgen::Outcome::ok
                                                     : loadgen::Outcome::fail;
    if (!whole) o.error = e.incomplete.empty() ? "no answer in the capture" : e.incomplete;
    std::string alias = op.id;
    const auto& statuses = config.profile.statuses;
    switch (op.op) {
      case api::Operation::tag: {
        if (o.outcome != loadgen::Outcome::ok) return;  // which alias a refused or unknown tag took is unknown
        boost::system::error_code ec;
        auto body = json::parse(e.response->body, ec);
        auto id = api::tagged_alias_id(config.profile.dialect.fields, body);
        if (!id) return;
        alias = *id;
        o.kind = loadgen::OpKind::tag;
        // The lifetime, from the tag's minutes; unknown minutes: unlimited.
        if (auto m = api::request_parameter(e.request, "minutes"))
          try {
            o.round = static_cast<std::uint64_t>(std::stoll(*m));
          } catch (...) {
          }
        break;
      }
      case api::Operation::untag:
        if (o.outcome == loadgen::Outcome::fail) return;  // refused: no tag ended
        o.kind = loadgen::OpKind::untag;
        break;
      case api::Operation::call:
        // An answer that is neither a connection nor the profile's refusal
        // (a refused key, bad input) says nothing about binding.
        if (o.outcome == loadgen::Outcome::fail &&
            std::find(statuses.call_refused.begin(), statuses.call_refused.end(), o.status) ==
                statuses.call_refused.end())
          return;
        o.kind = loadgen::OpKind::call;
        o.caller = api::request_parameter(e.request, config.profile.dialect.call_hook.parameter).value_or("");
        if (o.caller.empty()) return;
        break;
      default: return;
    }
    o.alias = alias_key(op, alias);
    const auto judged = alias_judged_until.find(o.alias);
    if (judged != alias_judged_until.end() && o.invoke_ns < judged->second) {
      ++late_events;
      return;
    }
    auto& events = alias_events[o.alias];
    events.push_back(std::move(ev));
    if (o.kind == loadgen::OpKind::tag &&
        std::count_if(events.begin(), events.end(), [](const Event& x) { return x.op.kind == loadgen::OpKind::tag; }) >
            static_cast<long>(kEpochsBeforeFlush))
      judge_alias(events.front().op.alias, false);
  }

  // Builds the alias's rounds in wire-time order and gives them to the
  // checker; unless `all`, the two newest epochs wait for later exchanges.
  void judge_alias(const std::string& alias, bool all) {
    auto& events = alias_events[alias];
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.op.invoke_ns < b.op.invoke_ns; });
    std::vector<std::size_t> tags;
    for (std::size_t i = 0; i < events.size(); ++i)
      if (events[i].op.kind == loadgen::OpKind::tag) tags.push_back(i);
    const std::size_t judge_count = all ? tags.size() : (tags.size() > kEpochsKept ? tags.size() - kEpochsKept : 0);
    // Data missing from the capture may have held this epoch's untag: then
    // its end is only certain up to the alias's next tag. Before the end of
    // the capture nobody knows whether it has gaps.
    const bool gaps = !all || capture_has_gaps || report.not_judged_incomplete > 0;
    if (judge_count == 0) return;
    auto& c = checks[kBinding];
    for (std::size_t t = 0; t < judge_count; ++t) {
      const Event& tag = events[tags[t]];
      const std::int64_t next_invoke = t + 1 < tags.size() ? events[tags[t + 1]].op.invoke_ns
                                                           : std::numeric_limits<std::int64_t>::max();
      const std::int64_t next_complete = t + 1 < tags.size() ? events[tags[t + 1]].op.complete_ns
                                                             : std::numeric_limits<std::int64_t>::max();
      loadgen::Round round;
      round.id = ++rounds;
      round.tag = tag.op;
      round.tag.round = round.id;
      round.lifetime_ns = tag.op.round > 0 ? static_cast<std::int64_t>(tag.op.round) * config.minute_ns : 0;
      const bool untagged = std::any_of(events.begin() + tags[t] + 1, events.end(), [&](const Event& ev) {
        return ev.op.kind == loadgen::OpKind::untag && ev.op.invoke_ns < next_invoke;
      });
      if (gaps && !untagged && t + 1 < tags.size()) {
        const std::int64_t until_next = std::max<std::int64_t>(next_invoke - tag.op.invoke_ns, 1);
        round.lifetime_ns = round.lifetime_ns ? std::min(round.lifetime_ns, until_next) : until_next;
        ++epochs_cut_by_gaps;
      }
      std::vector<const Event*> members{&tag};
      for (std::size_t i = tags[t] + 1; i < events.size(); ++i) {
        const Event& ev = events[i];
        if (ev.op.kind == loadgen::OpKind::untag && !round.untag && ev.op.invoke_ns < next_invoke) {
          round.untag = ev.op;
          members.push_back(&ev);
        }
        if (ev.op.kind != loadgen::OpKind::call || ev.op.invoke_ns >= next_complete) continue;
        if (ev.op.outcome == loadgen::Outcome::fail && !accepted_keys.count(ev.key_hash)) continue;  // a wrong key's refusal
        if (round.untag && ev.op.invoke_ns > round.untag->complete_ns) continue;
        round.calls.push_back(ev.op);
        round.calls.back().round = round.id;
        members.push_back(&ev);
      }
      if (round.calls.empty()) continue;
      ++c.judged;
      for (const auto& v : checker.add(round)) {
        const Event* first = nullptr;
        std::string ops;
        for (const auto& p : v.proof)
          for (const Event* m : members)
            if (m->op.invoke_ns == p.invoke_ns && m->op.kind == p.kind && m->op.caller == p.caller) {
              if (!first || m->where.request_ns < first->where.request_ns) first = m;
              ops += (ops.empty() ? "" : "; ") + std::string(loadgen::to_string(p.kind)) + " frames " +
                     std::to_string(m->where.request_first) + "–" + std::to_string(m->where.response_last) +
                     " (tcp.stream " + std::to_string(m->where.stream) + ")" +
                     (p.caller.empty() ? "" : " by " + p.caller) + " → " +
                     (p.status ? "HTTP " + std::to_string(p.status) : std::string("no answer"));
              break;
            }
        WireEvidence w = first ? first->where : tag.where;
        evidence(kBinding, w,
                 std::string(loadgen::to_string(v.kind)) + ": " + redact(v.explanation) + " [" + ops + "]");
      }
    }
    // Free the judged epochs: everything invoked before the first epoch still waiting.
    const std::int64_t keep_from =
        judge_count < tags.size() ? events[tags[judge_count]].op.invoke_ns : std::numeric_limits<std::int64_t>::max();
    if (!all) alias_judged_until[alias] = keep_from;
    std::erase_if(events, [&](const Event& e) { return e.op.invoke_ns < keep_from; });
  }

  CheckReport finish(const ReadSummary& capture) {
    capture_has_gaps = capture.incomplete_exchanges > 0 || capture.truncated_packets > 0 ||
                       capture.unparsed_count > 0 || capture.streams_cut > 0;
    judge_shapes();
    judge_reads();
    for (auto& [alias, events] : alias_events) judge_alias(alias, true);
    alias_events.clear();
    if (epochs_cut_by_gaps)
      report.notes.push_back(std::to_string(epochs_cut_by_gaps) +
                             " tag epochs had no untag in the capture, which may miss data (gaps, or judged before its "
                             "end): each was taken to end at its alias's next tag, so a tag of an alias still tagged "
                             "is not proved there");
    if (keys_overflow)
      report.notes.push_back("more than " + std::to_string(kMaxKeys) +
                             " distinct keys in the capture: the later ones are not redacted by value in bodies (an "
                             "apikey query parameter is always masked)");
    if (late_events)
      report.notes.push_back(std::to_string(late_events) +
                             " calls, tags or untags reached the check after their alias's epoch was judged; not judged");

    report.capture = capture;
    report.base_path = base_path;
    int failed = 0, warned = 0, judged_any = 0;
    for (std::size_t i = 0; i < kChecks; ++i) {
      auto& c = checks[i];
      trim(c);
      // Keys learned after a piece of evidence was written are hidden too.
      for (auto& w : c.evidence) {
        w.target = redact(w.target);
        w.what = redact_composed(w.what);
      }
      std::string counts = std::to_string(c.judged) + " judged";
      if (c.indeterminate) counts += ", " + std::to_string(c.indeterminate) + " not provable (no answer, a gap, or another write between)";
      if (c.violations) {
        c.outcome = "fail";
        c.message = std::to_string(c.violations) + " violations; " + counts;
      } else if (c.warnings) {
        c.outcome = "warn";
        c.message = std::to_string(c.warnings) + " SHOULD findings; " + counts;
      } else if (c.judged) {
        c.outcome = "pass";
        c.message = counts;
      } else if (c.indeterminate) {
        c.outcome = "indeterminate";
        c.message = "nothing the capture proves: " + counts;
      } else {
        c.outcome = "skip";
        c.message = skip_reason(i);
      }
      failed += c.outcome == "fail";
      warned += c.outcome == "warn";
      judged_any += c.judged > 0;
    }
    if (report.other_exchanges)
      report.notes.push_back(std::to_string(report.other_exchanges) +
                             " exchanges were not operations of the API (another path, base path or method): counted, "
                             "not judged");
    if (report.requests_without_key)
      report.notes.push_back(std::to_string(report.requests_without_key) +
                             " requests carried no Apikey header (their answers are judged, not their presence)");
    if (report.not_judged_incomplete)
      report.notes.push_back(std::to_string(report.not_judged_incomplete) +
                             " exchanges were incomplete in the capture and were not judged");
    report.checks = std::move(checks);
    if (failed) {
      report.status = "failed";
      report.exit_code = 1;
      report.reason = std::to_string(failed) + " checks found a MUST violation";
    } else if (warned && config.strict) {
      report.status = "failed";
      report.exit_code = 1;
      report.reason = std::to_string(warned) + " checks found SHOULD findings (--strict)";
    } else if (!judged_any || report.api_exchanges == 0) {
      // A capture that proved nothing never passes a CI gate (as crh contract's UNTESTED):
      // a wrong file, port or filter must not go green.
      report.status = "untested";
      report.exit_code = 3;
      report.reason = "the capture holds no exchange of the API that could be judged (" +
                      std::to_string(report.api_exchanges) + " of the API, " + std::to_string(report.other_exchanges) +
                      " other exchanges, not judged: check --base-path and the profile's call hook)";
    } else {
      report.status = "passed";
      report.exit_code = 0;
      report.reason = "no violation in " + std::to_string(report.api_exchanges) + " exchanges of the API";
      if (warned) report.reason += "; " + std::to_string(warned) + " checks with SHOULD findings";
    }
    return std::move(report);
  }

  std::string skip_reason(std::size_t i) const {
    switch (i) {
      case kMissingKey: return "every request carried an Apikey header";
      case kSnoozeWake: return "no snooze or wake answer with a GET of the same agent in the capture";
      case kDatabase: return "no database GET after a POST of the same key on one stream";
      case kTagAnswer: return "no successful tag in the capture";
      case kBinding: return "no call through the call hook to an alias tagged in the capture";
      default: return "no complete exchange in the capture";
    }
  }
};

ContractJudge::ContractJudge(CheckConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
ContractJudge::~ContractJudge() = default;
void ContractJudge::add(WireExchange&& exchange) { impl_->add(std::move(exchange)); }
CheckReport ContractJudge::finish(const ReadSummary& capture) { return impl_->finish(capture); }

CheckReport check_capture(const std::string& path, const CheckConfig& config) {
  ContractJudge judge(config);
  // Exchanges whose place on their stream a loss hid are judged too: the
  // judge needs only their order on the stream (`sequence`), never the place.
  ReadLimits limits;
  limits.keep_unplaced = true;
  const auto summary = read_capture(path, [&](WireExchange&& e) { judge.add(std::move(e)); }, limits);
  auto report = judge.finish(summary);
  report.file = path;
  return report;
}

std::string evidence_line(const WireEvidence& e, std::int64_t start_ns) {
  char when[32];
  std::snprintf(when, sizeof when, "%.3f s", static_cast<double>(e.request_ns - start_ns) / 1e9);
  const std::uint64_t last = e.response_last ? e.response_last : e.request_last;
  return "frames " + std::to_string(e.request_first) + "–" + std::to_string(last) + " (tcp.stream " +
         std::to_string(e.stream) + ", " + when + "): " + e.method + " " + e.target + " → " +
         (e.status ? "HTTP " + std::to_string(e.status) : std::string("no answer")) + ": " + e.what;
}

std::string display_filter(const WireEvidence& e) {
  std::string frames;
  for (auto f : {e.request_first, e.request_last, e.response_first, e.response_last})
    if (f && frames.find(" " + std::to_string(f) + " ") == std::string::npos &&
        !frames.ends_with(" " + std::to_string(f)))
      frames += " " + std::to_string(f);
  return "frame.number in {" + frames.substr(frames.empty() ? 0 : 1) + "} || tcp.stream eq " + std::to_string(e.stream);
}

json::value result_document(const CheckReport& r, const CheckConfig& config,
                            std::chrono::system_clock::time_point started, double duration_ms) {
  json::object doc = core::result_envelope(k::kind_pcap, started, duration_ms, core::BaseUrl{}, "", false);
  namespace p = k::pcap;
  doc[k::envelope::config] = json::object{{p::file, r.file},
                                          {p::base_path, r.base_path},
                                          {k::contract_config::strict, config.strict},
                                          {k::contract_config::minute_ms, config.minute_ns / 1'000'000},
                                          {k::contract_config::profile, core::to_json(config.profile)}};
  doc[k::envelope::verdict] = json::object{{k::verdict::status, r.status},
                                           {k::verdict::exit_code, r.exit_code},
                                           {k::verdict::reason, r.reason}};
  json::object counts{{k::counts::total, r.checks.size()}};
  for (const char* o : {"pass", "warn", "fail", "skip", "indeterminate"})
    counts[o] = std::count_if(r.checks.begin(), r.checks.end(), [&](const JudgedCheck& c) { return c.outcome == o; });
  doc[k::contract::counts] = counts;
  json::array notes;
  for (const auto& n : r.notes) notes.emplace_back(n);
  doc[k::contract::notes] = std::move(notes);
  doc[k::contract::suites] = json::array{json::object{{k::suite::name, p::suite_name}, {k::suite::counts, counts}}};

  const std::int64_t start = r.capture.first_ns;
  json::array checks;
  for (const auto& c : r.checks) {
    json::array rules, findings, evidence;
    for (const auto& id : c.rules) rules.emplace_back(id);
    for (const auto& e : c.evidence) {
      findings.push_back(json::object{{k::finding::severity, e.must ? "MUST" : "SHOULD"},
                                      {k::finding::rule, c.rules.front()},
                                      {k::finding::text, evidence_line(e, start)}});
      evidence.push_back(json::object{{k::evidence::curl, display_filter(e)},
                                      {k::evidence::answer, e.what},
                                      {k::evidence::elapsed_ms, 0},
                                      {p::frames, json::array{e.request_first, e.request_last, e.response_first,
                                                              e.response_last}},
                                      {p::stream, e.stream},
                                      {p::time_s, static_cast<double>(e.request_ns - start) / 1e9}});
    }
    checks.push_back(json::object{{k::check::id, c.id},
                                  {k::check::suite, p::suite_name},
                                  {k::check::summary, c.summary},
                                  {k::check::rules, std::move(rules)},
                                  {k::check::severity, c.must ? "MUST" : "SHOULD"},
                                  {k::check::outcome, c.outcome},
                                  {k::check::message, c.message},
                                  {k::check::duration_ms, 0},
                                  {k::check::findings, std::move(findings)},
                                  {k::check::evidence, std::move(evidence)},
                                  {p::judged, c.judged},
                                  {p::violations, c.violations},
                                  {p::indeterminate, c.indeterminate}});
  }
  // Every rule of the catalogue the capture's checks cover, with their outcomes.
  json::array rules;
  for (const auto& rule : contracts::rule_catalogue()) {
    json::array ids;
    std::string outcome = "uncovered";
    for (const auto& c : r.checks)
      if (std::find(c.rules.begin(), c.rules.end(), rule.id) != c.rules.end()) {
        ids.push_back(json::object{{k::rule_check::id, c.id},
                                   {k::rule_check::outcome, c.outcome},
                                   {k::rule_check::severity, c.must ? "MUST" : "SHOULD"}});
        static const std::vector<std::string> order{"fail", "indeterminate", "warn", "pass", "skip", "uncovered"};
        if (std::find(order.begin(), order.end(), c.outcome) < std::find(order.begin(), order.end(), outcome))
          outcome = c.outcome;
      }
    rules.push_back(json::object{{k::rule::id, rule.id},
                                 {k::rule::section, rule.section},
                                 {k::rule::text, rule.text},
                                 {k::rule::outcome, outcome},
                                 {k::rule::checks, std::move(ids)}});
  }
  doc[k::contract::rules] = std::move(rules);
  doc[k::contract::checks] = std::move(checks);

  const auto& s = r.capture;
  json::array unparsed;
  for (const auto& u : s.unparsed)
    unparsed.push_back(json::object{{p::stream, u.stream},
                                    {p::client, u.client.address + " " + std::to_string(u.client.port)},
                                    {p::server, u.server.address + " " + std::to_string(u.server.port)},
                                    {p::first_frame, u.first_frame},
                                    {p::why, u.why}});
  doc[p::capture] = json::object{{p::file, r.file},
                                 {p::format, s.format},
                                 {p::link_types, s.link_type},
                                 {p::packets, s.packets},
                                 {p::tcp_packets, s.tcp_packets},
                                 {p::skipped_packets, s.skipped_packets},
                                 {p::truncated_packets, s.truncated_packets},
                                 {p::streams, s.streams},
                                 {p::exchanges, s.exchanges},
                                 {p::api_exchanges, r.api_exchanges},
                                 {p::other_exchanges, r.other_exchanges},
                                 {p::requests_without_key, r.requests_without_key},
                                 {p::incomplete, s.incomplete_exchanges},
                                 {p::conflicting_overlaps, s.conflicting_overlaps},
                                 {p::streams_cut, s.streams_cut},
                                 {p::duration_s, static_cast<double>(s.last_ns - s.first_ns) / 1e9},
                                 {p::unparsed_count, s.unparsed_count},
                                 {p::unparsed, std::move(unparsed)}};
  return doc;
}

}  // namespace crh::capture
