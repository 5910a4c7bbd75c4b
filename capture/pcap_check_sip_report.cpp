// The SIP calls judged and reported (pcap_check_sip.hpp): outcomes counted,
// per called number who connected, and, where the capture's HTTP exchanges
// show the number's alias and its tag epochs, whether two different callers
// connected inside one epoch (a binding violation, evidence of the binding
// check; oracle's Checker judges it). Without epochs the winners are listed,
// not judged.
#include <algorithm>
#include <boost/json.hpp>
#include <limits>
#include <map>

#include "capture/pcap_check_parts.hpp"
#include "oracle/checker.hpp"
#include "results/keys_capture.hpp"

namespace crh::capture {
using namespace judging;

namespace {

constexpr std::size_t kCallsListed = 1000;
constexpr std::size_t kCallersListed = 20;

bool connected(const SipCallSeen& c) { return c.final_status >= 200 && c.final_status < 300; }

std::string frames_of(const SipCallSeen& c) {
  return "frames " + std::to_string(c.invite.frame) + "–" + std::to_string(c.answer.frame) +
         (c.tcp ? " (tcp.stream " + std::to_string(c.stream) + ")" : " (UDP)");
}

// The alias's tag `t` as a round for the oracle's Checker, with the
// connected calls to its number: the tag held from its answer (surely in
// effect) to the first of its untag, the next tag and its expiry, so the
// round's lifetime ends at the earliest of the three. Refusals stay out: the
// capture does not judge them over SIP.
oracle::Round round_of(const std::vector<TagSpan>& tags, std::size_t t, const std::vector<std::int64_t>& untags,
                       const std::string& alias, const std::vector<const SipCallSeen*>& calls) {
  const TagSpan& tag = tags[t];
  std::int64_t end = t + 1 < tags.size() ? tags[t + 1].invoke : std::numeric_limits<std::int64_t>::max();
  for (auto u : untags)
    if (u > tag.invoke) end = std::min(end, u);
  if (tag.lifetime_ns > 0) end = std::min(end, tag.invoke + tag.lifetime_ns);
  oracle::Round round;
  round.id = t + 1;
  round.tag = {.kind = oracle::OpKind::tag, .alias = alias, .invoke_ns = tag.invoke, .complete_ns = tag.complete,
               .outcome = oracle::Outcome::ok};
  if (end != std::numeric_limits<std::int64_t>::max()) round.lifetime_ns = std::max<std::int64_t>(end - tag.invoke, 1);
  for (const SipCallSeen* c : calls)
    if (connected(*c))
      round.calls.push_back({.round = round.id, .kind = oracle::OpKind::sip_call, .alias = alias, .caller = c->caller,
                             .invoke_ns = c->invite.ns, .complete_ns = c->answer.ns, .outcome = oracle::Outcome::ok,
                             .status = c->final_status});
  return round;
}

}  // namespace

void ContractJudge::Impl::judge_sip() {
  SipReport& r = report.sip;
  r.messages = sip.messages;
  r.unreadable = sip.unreadable;
  r.unreadable_why = sip.unreadable_why;
  r.answers_without_invite = sip.answers_without_invite;
  std::vector<const SipCalls::Call*> ordered;
  ordered.reserve(sip.calls.size());
  for (auto& [id, c] : sip.calls) ordered.push_back(&c);
  std::sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->order < b->order; });
  const auto& refused = config.profile.statuses.sip_refused;
  std::map<std::string, std::size_t> number_index;
  std::vector<std::vector<const SipCallSeen*>> calls_of_number;
  for (const auto* call : ordered) {
    SipCallSeen seen = call->seen;
    seen.outcome = seen.final_status == 0 ? "unanswered"
                   : connected(seen)      ? "connected"
                   : std::find(refused.begin(), refused.end(), seen.final_status) != refused.end() ? "refused"
                                                                                                    : "other";
    ++r.calls;
    r.retransmissions += seen.retransmissions;
    r.connected += seen.outcome == "connected";
    r.refused += seen.outcome == "refused";
    r.other += seen.outcome == "other";
    r.unanswered += seen.outcome == "unanswered";
    auto [it, fresh] = number_index.try_emplace(seen.called, r.numbers.size());
    if (fresh) {
      r.numbers.push_back(SipNumberSeen{.number = seen.called});
      calls_of_number.emplace_back();
    }
    SipNumberSeen& n = r.numbers[it->second];
    ++n.calls;
    calls_of_number[it->second].push_back(&call->seen);
    if (connected(seen)) {
      ++n.connected;
      if (n.winner.empty()) n.winner = seen.caller;
      if (std::find(n.connected_callers.begin(), n.connected_callers.end(), seen.caller) ==
              n.connected_callers.end() &&
          n.connected_callers.size() < kCallersListed)
        n.connected_callers.push_back(seen.caller);
    }
    if (r.calls_seen.size() < kCallsListed) r.calls_seen.push_back(std::move(seen));
  }
  if (sip.calls_not_followed)
    report.notes.push_back(std::to_string(sip.calls_not_followed) + " SIP calls past the first " +
                           std::to_string(SipCalls::kMaxCalls) + " were not followed");

  std::uint64_t judged_numbers = 0;
  for (std::size_t i = 0; i < r.numbers.size(); ++i) {
    SipNumberSeen& n = r.numbers[i];
    if (auto a = sip.alias_of_number.find(n.number); a != sip.alias_of_number.end()) n.alias = a->second;
    else if (sip.tags.contains(n.number)) n.alias = n.number;  // an alias that is its own number
    if (n.connected == 0) {
      n.judged = "no call connected";
      continue;
    }
    const auto tags_it = n.alias.empty() ? sip.tags.end() : sip.tags.find(n.alias);
    if (tags_it == sip.tags.end()) {
      n.judged = n.alias.empty() ? "the capture's HTTP exchanges name no alias with this number: winners listed, not judged"
                                 : "no tag epochs of " + n.alias + " in the capture: winners listed, not judged";
      continue;
    }
    auto& tags = tags_it->second;
    std::sort(tags.begin(), tags.end(), [](const TagSpan& a, const TagSpan& b) { return a.invoke < b.invoke; });
    static const std::vector<std::int64_t> none;
    const auto untags_it = sip.untags.find(n.alias);
    const auto& untags = untags_it == sip.untags.end() ? none : untags_it->second;
    std::uint64_t outside = 0;
    std::vector<bool> inside(calls_of_number[i].size(), false);
    oracle::Checker judge;  // this number's epochs only: its alias's tags never overlap here
    for (std::size_t t = 0; t < tags.size(); ++t) {
      const oracle::Round round = round_of(tags, t, untags, n.alias, calls_of_number[i]);
      const auto [from, to] = oracle::certain_window(round);
      std::vector<const SipCallSeen*> winners;
      for (std::size_t k = 0; k < calls_of_number[i].size(); ++k) {
        const SipCallSeen* c = calls_of_number[i][k];
        if (!connected(*c) || c->invite.ns < from || c->answer.ns > to) continue;
        inside[k] = true;
        if (std::none_of(winners.begin(), winners.end(), [&](auto* w) { return w->caller == c->caller; }))
          winners.push_back(c);
      }
      const auto violations = judge.add(round);  // the one first-caller-wins judge (oracle/checker.hpp)
      if (winners.empty()) continue;
      ++n.epochs_judged;
      ++checks[kBinding].judged;
      if (violations.empty()) continue;
      ++n.epochs_with_two_winners;
      std::string proof;
      for (const auto* w : winners)
        proof += (proof.empty() ? "" : "; ") + std::string("INVITE by ") + w->caller + " → SIP " +
                 std::to_string(w->final_status) + ", " + frames_of(*w);
      WireEvidence where;
      where.request_first = where.request_last = winners[1]->invite.frame;
      where.response_first = where.response_last = winners[1]->answer.frame;
      where.stream = winners[1]->stream;
      where.request_ns = winners[1]->invite.ns;
      where.method = "INVITE";
      where.target = winners[1]->request_uri;
      where.status = winners[1]->final_status;
      where.sip_call_id = winners[1]->call_id;
      where.udp = !winners[1]->tcp;
      evidence(kBinding, where,
               "SIP: " + std::to_string(winners.size()) + " different callers connected to " + n.number +
                   " (alias " + n.alias + ") within one tag epoch; expected only the first bound [" + proof + "]");
    }
    for (std::size_t k = 0; k < inside.size(); ++k) outside += connected(*calls_of_number[i][k]) && !inside[k];
    ++judged_numbers;
    n.judged = "judged per tag epoch: " + std::to_string(n.epochs_judged) + " with a connected call, " +
               std::to_string(n.epochs_with_two_winners) + " of them with two winners" +
               (outside ? "; " + std::to_string(outside) + " connected calls outside any epoch (or at its edge): not judged"
                        : "");
  }
  if (r.numbers.empty()) r.judgement = r.unreadable ? "no SIP call could be read" : "";
  else if (judged_numbers == 0 && sip.tags.empty())
    r.judgement = "no tag epochs in the capture: winners listed, not judged";
  else
    r.judgement = std::to_string(judged_numbers) + " of " + std::to_string(r.numbers.size()) +
                  " called numbers judged against their alias's tag epochs";
  if (r.unreadable)
    report.notes.push_back(std::to_string(r.unreadable) + " SIP messages (or broken SIP streams) were unreadable");
}

namespace judging {

boost::json::object sip_document(const SipReport& r, std::int64_t start_ns) {
  namespace k = results::keys::pcap_sip;
  boost::json::array why(r.unreadable_why.begin(), r.unreadable_why.end());
  boost::json::array calls;
  for (const auto& c : r.calls_seen)
    calls.push_back(boost::json::object{
        {k::call_id, c.call_id},
        {k::caller, c.caller},
        {k::called, c.called},
        {k::request_uri, c.request_uri},
        {k::final_status, c.final_status},
        {k::outcome, c.outcome},
        {k::retransmissions, c.retransmissions},
        {k::transport, c.tcp ? "tcp" : "udp"},
        {k::frames, boost::json::array{c.invite.frame, c.answer.frame}},
        {k::time_s, static_cast<double>(c.invite.ns - start_ns) / 1e9}});
  boost::json::array numbers;
  for (const auto& n : r.numbers)
    numbers.push_back(boost::json::object{
        {k::number, n.number},
        {k::alias, n.alias},
        {k::calls, n.calls},
        {k::connected, n.connected},
        {k::winner, n.winner},
        {k::connected_callers, boost::json::array(n.connected_callers.begin(), n.connected_callers.end())},
        {k::epochs_judged, n.epochs_judged},
        {k::epochs_with_two_winners, n.epochs_with_two_winners},
        {k::judged, n.judged}});
  return boost::json::object{{k::messages, r.messages},
                             {k::unreadable, r.unreadable},
                             {k::unreadable_why, std::move(why)},
                             {k::calls, r.calls},
                             {k::connected, r.connected},
                             {k::refused, r.refused},
                             {k::other, r.other},
                             {k::unanswered, r.unanswered},
                             {k::retransmissions, r.retransmissions},
                             {k::answers_without_invite, r.answers_without_invite},
                             {k::judgement, r.judgement},
                             {k::numbers, std::move(numbers)},
                             {k::calls_listed, std::move(calls)}};
}

}  // namespace judging
}  // namespace crh::capture
