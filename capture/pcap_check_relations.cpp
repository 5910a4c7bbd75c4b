// The rules that relate exchanges, kept in bounded maps and judged in
// wire-time order once the times make the order certain: the database
// read-back (E5, E6), the snooze and wake answers' shape against the agent's
// GET (R1), and the binding rules (B1-B3), each tag epoch replayed as a round
// for the oracle's Checker.
#include <algorithm>
#include <boost/json.hpp>
#include <limits>

#include "capture/pcap_check_parts.hpp"
#include "oracle/shapes.hpp"

namespace crh::capture {
namespace json = boost::json;
namespace api = core::api;
using namespace judging;

// ---- the database read-back ----

void ContractJudge::Impl::database_write(const WireExchange& e, const api::Recognized& op, bool whole) {
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

void ContractJudge::Impl::judge_reads() {
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
std::optional<Write> ContractJudge::Impl::last_post_before(const PendingRead& p) {
  std::optional<Write> best;
  for (const auto& w : writes[p.key])
    if (w.stream == p.stream && w.sequence < p.sequence && w.value && (!best || w.sequence > best->sequence))
      best = w;
  return best;
}

// ---- R1 ----

void ContractJudge::Impl::judge_shapes() {
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
    for (auto& d : oracle::field_type_differences(get, p.answer)) problems.push_back("type of " + d);
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

std::string ContractJudge::Impl::alias_key(const api::Recognized& op, const std::string& alias) const {
  return (config.profile.dialect.call_hook.path.find("{channel}") != std::string::npos ? op.channel + "/" : "") +
         alias;
}

void ContractJudge::Impl::binding_event(const WireExchange& e, const api::Recognized& op, const std::string* key,
                                        std::size_t key_hash, bool whole) {
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
  o.outcome = !whole || o.status >= 500           ? oracle::Outcome::indeterminate
              : o.status >= 200 && o.status < 300 ? oracle::Outcome::ok
                                                  : oracle::Outcome::fail;
  if (!whole) o.error = e.incomplete.empty() ? "no answer in the capture" : e.incomplete;
  const auto& statuses = config.profile.statuses;
  o.not_now = whole && core::throttled(o.status, statuses);
  std::string alias = op.id;
  switch (op.op) {
    case api::Operation::tag: {
      if (o.outcome != oracle::Outcome::ok) return;  // which alias a refused or unknown tag took is unknown
      boost::system::error_code ec;
      auto body = json::parse(e.response->body, ec);
      auto id = api::tagged_alias_id(config.profile.dialect.fields, body);
      if (!id) return;
      alias = *id;
      o.kind = oracle::OpKind::tag;
      sip.learn_numbers(body, config.profile.dialect.fields, config.profile.dialect.sip.number_field,
                        alias_key(op, ""));
      // The lifetime, from the tag's minutes; unknown minutes: unlimited.
      if (auto m = api::request_parameter(e.request, "minutes"))
        try {
          o.round = static_cast<std::uint64_t>(std::stoll(*m));
        } catch (...) {
        }
      break;
    }
    case api::Operation::untag:
      if (o.outcome == oracle::Outcome::fail) return;  // refused: no tag ended
      o.kind = oracle::OpKind::untag;
      break;
    case api::Operation::call:
      // An answer that is neither a connection nor the profile's refusal
      // (a refused key, bad input) says nothing about binding.
      if (o.outcome == oracle::Outcome::fail &&
          std::find(statuses.call_refused.begin(), statuses.call_refused.end(), o.status) ==
              statuses.call_refused.end())
        return;
      o.kind = oracle::OpKind::call;
      o.caller = api::request_parameter(e.request, config.profile.dialect.call_hook.parameter).value_or("");
      if (o.caller.empty()) return;
      break;
    default: return;
  }
  o.alias = alias_key(op, alias);
  // The SIP calls' epochs (pcap_check_sip_report.cpp), in capture time.
  if (o.kind == oracle::OpKind::tag)
    sip.tags[o.alias].push_back({invoke_of(e), complete_of(e),
                                 static_cast<std::int64_t>(o.round) * config.minute_ns});
  else if (o.kind == oracle::OpKind::untag)
    sip.untags[o.alias].push_back(invoke_of(e));
  const auto judged = alias_judged_until.find(o.alias);
  if (judged != alias_judged_until.end() && o.invoke_ns < judged->second) {
    ++late_events;
    return;
  }
  auto& events = alias_events[o.alias];
  events.push_back(std::move(ev));
  if (o.kind == oracle::OpKind::tag &&
      std::count_if(events.begin(), events.end(), [](const Event& x) { return x.op.kind == oracle::OpKind::tag; }) >
          static_cast<long>(kEpochsBeforeFlush))
    judge_alias(events.front().op.alias, false);
}

// Builds the alias's rounds in wire-time order and gives them to the
// checker; unless `all`, the two newest epochs wait for later exchanges.
void ContractJudge::Impl::judge_alias(const std::string& alias, bool all) {
  auto& events = alias_events[alias];
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.op.invoke_ns < b.op.invoke_ns; });
  std::vector<std::size_t> tags;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].op.kind == oracle::OpKind::tag) tags.push_back(i);
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
    oracle::Round round;
    round.id = ++rounds;
    round.tag = tag.op;
    round.tag.round = round.id;
    round.lifetime_ns = tag.op.round > 0 ? static_cast<std::int64_t>(tag.op.round) * config.minute_ns : 0;
    const bool untagged = std::any_of(events.begin() + tags[t] + 1, events.end(), [&](const Event& ev) {
      return ev.op.kind == oracle::OpKind::untag && ev.op.invoke_ns < next_invoke;
    });
    if (gaps && !untagged && t + 1 < tags.size()) {
      const std::int64_t until_next = std::max<std::int64_t>(next_invoke - tag.op.invoke_ns, 1);
      round.lifetime_ns = round.lifetime_ns ? std::min(round.lifetime_ns, until_next) : until_next;
      ++epochs_cut_by_gaps;
    }
    std::vector<const Event*> members{&tag};
    for (std::size_t i = tags[t] + 1; i < events.size(); ++i) {
      const Event& ev = events[i];
      if (ev.op.kind == oracle::OpKind::untag && !round.untag && ev.op.invoke_ns < next_invoke) {
        round.untag = ev.op;
        members.push_back(&ev);
      }
      if (ev.op.kind != oracle::OpKind::call || ev.op.invoke_ns >= next_complete) continue;
      if (ev.op.outcome == oracle::Outcome::fail && !accepted_keys.count(ev.key_hash)) continue;  // a wrong key's refusal
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
            ops += (ops.empty() ? "" : "; ") + std::string(oracle::to_string(p.kind)) + " frames " +
                   std::to_string(m->where.request_first) + "–" + std::to_string(m->where.response_last) +
                   " (tcp.stream " + std::to_string(m->where.stream) + ")" +
                   (p.caller.empty() ? "" : " by " + p.caller) + " → " +
                   (p.status ? "HTTP " + std::to_string(p.status) : std::string("no answer"));
            break;
          }
      WireEvidence w = first ? first->where : tag.where;
      evidence(kBinding, w,
               std::string(oracle::to_string(v.kind)) + ": " + redact(v.explanation) + " [" + ops + "]");
    }
  }
  // Free the judged epochs: everything invoked before the first epoch still waiting.
  const std::int64_t keep_from =
      judge_count < tags.size() ? events[tags[judge_count]].op.invoke_ns : std::numeric_limits<std::int64_t>::max();
  if (!all) alias_judged_until[alias] = keep_from;
  std::erase_if(events, [&](const Event& e) { return e.op.invoke_ns < keep_from; });
}

}  // namespace crh::capture
