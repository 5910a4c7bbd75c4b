// The replay of a capture's exchanges, one at a time as the reader hands them
// out: each recognized as an operation of the API (the base path detected
// when not given), judged by the rules that need only its own answer, and
// handed to the rules that relate exchanges (pcap_check_relations.cpp).
#include <algorithm>
#include <boost/json.hpp>
#include <limits>

#include "capture/pcap_check_parts.hpp"
#include "oracle/answers.hpp"

namespace crh::capture {
namespace json = boost::json;
namespace api = core::api;

namespace judging {

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

// Its place as an operation for the oracle's Checker: request last byte out,
// response last byte in.
std::int64_t invoke_of(const WireExchange& e) { return e.request_last.ns; }
std::int64_t complete_of(const WireExchange& e) {
  return e.response && e.complete ? e.response_last.ns : std::numeric_limits<std::int64_t>::max() / 4;
}

}  // namespace judging

using namespace judging;

void ContractJudge::Impl::evidence(std::size_t check, WireEvidence w, std::string what, bool must) {
  auto& c = checks[check];
  if (must) ++c.violations;
  else ++c.warnings;
  w.what = std::move(what);
  w.must = must;
  c.evidence.push_back(std::move(w));  // trimmed to the earliest at the end
  if (c.evidence.size() > 4 * config.evidence_per_check + 16) trim(c);
}

void ContractJudge::Impl::trim(JudgedCheck& c) const {
  std::stable_sort(c.evidence.begin(), c.evidence.end(),
                   [](const WireEvidence& a, const WireEvidence& b) { return a.request_ns < b.request_ns; });
  if (c.evidence.size() > config.evidence_per_check) c.evidence.resize(config.evidence_per_check);
}

std::optional<api::Recognized> ContractJudge::Impl::recognize(const WireExchange& e) {
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

void ContractJudge::Impl::add(WireExchange&& e) {
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

  // The rules on every answer (oracle::judge_answer): the status rules hold
  // for bodiless answers (HEAD, 204, 304) too.
  const std::string content_type = r.header("Content-Type");
  oracle::SeenAnswer seen{.request_target = e.request.target,
                          .keyed = keyed,
                          .head = e.head,
                          .status = r.status,
                          .content_type = content_type,
                          .body = r.body};
  auto judged = oracle::judge_answer(seen);
  if (!judged.findings.empty() && !redactors.empty()) {  // their texts quote the body: with the keys hidden
    const std::string hidden = redact(r.body);
    seen.shown_body = hidden;
    judged = oracle::judge_answer(seen);
  }
  const auto cls = oracle::status_class(r.status);
  // R5/A2: judge the answer, not the presence (crh's own runs send requests without a key on purpose).
  if (!keyed) ++checks[kMissingKey].judged;
  ++checks[kNo5xx].judged;
  ++checks[kSuccess200].judged;
  if (!seen.bodiless() && cls != oracle::StatusClass::server_error) ++checks[kJson].judged;
  if (!seen.bodiless() && cls == oracle::StatusClass::error) ++checks[kErrorShape].judged;
  for (const auto& [aspect, f] : judged.findings) {
    const bool must = f.severity == oracle::Severity::must;
    switch (aspect) {
      case oracle::Aspect::missing_key: evidence(kMissingKey, place(e), f.text, must); break;
      case oracle::Aspect::server_error: evidence(kNo5xx, place(e), f.text, must); break;
      case oracle::Aspect::success_status: evidence(kSuccess200, place(e), f.text, must); break;
      case oracle::Aspect::json_body:
      case oracle::Aspect::content_type: evidence(kJson, place(e), f.text, must); break;
      case oracle::Aspect::error_shape:
        evidence(kErrorShape, place(e), std::string(f.rule) + ": " + f.text, must);
        break;
    }
  }
  const auto& body = judged.body;
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
    case api::Operation::list_aliases:
      // Which alias a SIP call's number is.
      if (r.status == 200)
        sip.learn_numbers(*body, names, config.profile.dialect.sip.number_field, alias_key(*op, ""));
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

}  // namespace crh::capture
