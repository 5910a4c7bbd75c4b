// The report of the offline check: each check's outcome and message from its
// counts, the notes and the verdict (exit code); evidence lines, Wireshark
// display filters and the result document of kind "pcap".
#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>

#include "capture/pcap_check_parts.hpp"
#include "results/envelope.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "oracle/rules.hpp"

namespace crh::capture {
namespace json = boost::json;
namespace k = results::keys;
using namespace judging;

CheckReport ContractJudge::Impl::finish(const ReadSummary& capture) {
  capture_has_gaps = capture.incomplete_exchanges > 0 || capture.truncated_packets > 0 ||
                     capture.unparsed_count > 0 || capture.streams_cut > 0;
  judge_shapes();
  judge_reads();
  for (auto& [alias, events] : alias_events) judge_alias(alias, true);
  alias_events.clear();
  judge_sip();
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
    report.verdict = {results::Status::failed, std::to_string(failed) + " checks found a MUST violation"};
  } else if (warned && config.strict) {
    report.verdict = {results::Status::failed, std::to_string(warned) + " checks found SHOULD findings (--strict)"};
  } else if (!judged_any || report.api_exchanges == 0) {
    // A capture that proved nothing never passes a CI gate (as crh contract's UNTESTED):
    // a wrong file, port or filter must not go green.
    report.verdict.status = results::Status::untested;
    report.verdict.reason = "the capture holds no exchange of the API that could be judged (" +
                    std::to_string(report.api_exchanges) + " of the API, " + std::to_string(report.other_exchanges) +
                    " other exchanges, not judged: check --base-path and the profile's call hook)";
  } else {
    report.verdict.status = results::Status::passed;
    report.verdict.reason = "no violation in " + std::to_string(report.api_exchanges) + " exchanges of the API";
    if (warned) report.verdict.reason += "; " + std::to_string(warned) + " checks with SHOULD findings";
  }
  return std::move(report);
}

std::string ContractJudge::Impl::skip_reason(std::size_t i) const {
  switch (i) {
    case kMissingKey: return "every request carried an Apikey header";
    case kSnoozeWake: return "no snooze or wake answer with a GET of the same agent in the capture";
    case kDatabase: return "no database GET after a POST of the same key on one stream";
    case kTagAnswer: return "no successful tag in the capture";
    case kBinding: return "no call through the call hook to an alias tagged in the capture";
    default: return "no complete exchange in the capture";
  }
}

std::string evidence_line(const WireEvidence& e, std::int64_t start_ns) {
  char when[32];
  std::snprintf(when, sizeof when, "%.3f s", static_cast<double>(e.request_ns - start_ns) / 1e9);
  const std::uint64_t last = e.response_last ? e.response_last : e.request_last;
  const bool sip = !e.sip_call_id.empty();
  return "frames " + std::to_string(e.request_first) + "–" + std::to_string(last) + " (" +
         (sip && e.udp ? std::string("UDP") : "tcp.stream " + std::to_string(e.stream)) + ", " + when + "): " +
         e.method + " " + e.target + " → " +
         (e.status ? (sip ? "SIP " : "HTTP ") + std::to_string(e.status) : std::string("no answer")) + ": " + e.what;
}

std::string display_filter(const WireEvidence& e) {
  if (!e.sip_call_id.empty()) {
    // Every message of the SIP call, whichever transport carried it.
    std::string id;
    for (char c : e.sip_call_id) id += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return "sip.Call-ID == \"" + id + "\"";
  }
  std::string frames;
  for (auto f : {e.request_first, e.request_last, e.response_first, e.response_last})
    if (f && frames.find(" " + std::to_string(f) + " ") == std::string::npos &&
        !frames.ends_with(" " + std::to_string(f)))
      frames += " " + std::to_string(f);
  return "frame.number in {" + frames.substr(frames.empty() ? 0 : 1) + "} || tcp.stream eq " + std::to_string(e.stream);
}

json::value result_document(const CheckReport& r, const CheckConfig& config,
                            std::chrono::system_clock::time_point started, double duration_ms) {
  json::object doc = results::result_envelope(k::kind_pcap, started, duration_ms, core::BaseUrl{}, "", false);
  namespace p = k::pcap;
  doc[k::envelope::config] = json::object{{p::file, r.file},
                                          {p::base_path, r.base_path},
                                          {k::contract_config::strict, config.strict},
                                          {k::contract_config::minute_ms, config.minute_ns / 1'000'000},
                                          {k::contract_config::profile, core::to_json(config.profile)}};
  doc[k::envelope::verdict] = results::verdict_json(r.verdict);
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
  for (const auto& rule : oracle::rule_catalogue()) {
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
  // Only a capture that held SIP has the section (issue 26).
  if (r.sip.messages || r.sip.unreadable) doc[k::pcap_sip::section] = sip_document(r.sip, s.first_ns);
  return doc;
}

}  // namespace crh::capture
