// The get and mixed scenarios: requests built once through the API model, and
// a coroutine per connection, closed loop or paced by an open-loop schedule.
#include "loadgen/engine_parts.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/api.hpp"
#include "loadgen/setup.hpp"

namespace crh::loadgen::engine {
using boost::system::error_code;
// `id`: the agent, database key or alias the operation addresses; `caller`: who calls.
core::HttpRequest request_for(const LoadConfig& c, OpKind op, const std::string& id, const std::string& caller,
                              std::string_view value) {
  using core::api::Operation;
  auto model = [&](Operation o, core::api::Arguments args = {}) {
    args.id = id;
    return core::api::request(c.target, o, args);
  };
  switch (op) {
    case OpKind::get: return core::build_request("GET", c.path, {}, c.target.dialect.encoding);
    case OpKind::list_agents: return model(Operation::list_agents);
    case OpKind::get_agent: return model(Operation::get_agent);
    case OpKind::snooze: return model(Operation::snooze);
    case OpKind::wake: return model(Operation::wake);
    case OpKind::db_get: return model(Operation::db_get);
    case OpKind::db_set: return model(Operation::db_set, {.value = std::string(value)});
    case OpKind::list_aliases: return model(Operation::list_aliases);
    case OpKind::tag:
      return model(Operation::tag, {.tag = load_tag_name(c.shard), .minutes = c.effective_tag_minutes()});
    case OpKind::untag: return model(Operation::untag);
    case OpKind::call:
    case OpKind::recall: return model(Operation::call, {.caller = caller});
    case OpKind::sip_call:
    case OpKind::sip_recall:  // placed by the SIP driver (race.cpp), never as HTTP
    case OpKind::count_: break;
  }
  return {};
}

std::string bytes_for(const Run& run, const core::HttpRequest& r) {
  return core::http1::serialize_request(r, run.config.target.base, run.config.target.api_key);
}

Mix prepare_mix(const Run& run) {
  const auto& c = run.config;
  Mix mix;
  std::vector<double> weights;
  auto ids_for = [&](OpKind op) -> std::vector<std::string> {
    switch (op) {
      case OpKind::get_agent:
      case OpKind::snooze:
      case OpKind::wake: return run.discovery.agents;
      case OpKind::call: return run.discovery.aliases;
      case OpKind::db_get:
      case OpKind::db_set: return {load_database_key(c.shard)};
      default: return {""};
    }
  };
  // The answers whose bodies are judged: the tag's alias, and what the
  // reads show and the agent writes answer (mixed_history.cpp).
  auto keeps_body = [](OpKind op) {
    return op == OpKind::tag || op == OpKind::db_get || op == OpKind::get_agent || op == OpKind::list_agents ||
           op == OpKind::snooze || op == OpKind::wake;
  };
  for (const auto& e : c.mix) {
    std::vector<Prepared> v;
    for (const auto& id : ids_for(e.op))
      v.push_back({e.op, bytes_for(run, request_for(c, e.op, id)), keeps_body(e.op), id});
    if (v.empty() || e.weight <= 0) continue;
    mix.variants.push_back(std::move(v));
    weights.push_back(e.weight);
  }
  mix.pick = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
  return mix;
}

net::awaitable<void> connection_loop(Worker& w, Conn& c, const Mix* mix, const Prepared* single,
                                     Clock::duration interval, Clock::time_point first_due) {
  Run& run = w.run;
  Clock::time_point due = first_due;
  std::string untag_bytes;
  while (!run.over()) {
    if (interval.count() > 0) {
      if (due >= run.measure_until) break;
      if (Clock::now() < due) co_await sleep_for(run, c, due - Clock::now());
      if (run.over()) break;
      const auto lateness = Clock::now() - due;
      if (due >= run.measure_from) {
        w.stats.lag.record(std::chrono::duration_cast<std::chrono::nanoseconds>(lateness).count());
        if (lateness > interval) ++w.stats.late;
      }
    } else {
      due = Clock::now();
    }
    const Prepared* p = single;
    if (mix) {
      const auto& v = mix->variants[mix->pick(w.rng)];
      p = &v[v.size() == 1 ? 0 : std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(w.rng)];
    }
    if (p->op == OpKind::call && !run.calls.has_wire()) {  // a SIP call: the driver owns its sockets
      Clock::time_point sent, done;
      const std::string caller(kMixedCaller);
      const auto r = co_await place_armed(w, p->id, caller, sent, done);
      const Answer a = answer_of(r, done);
      record(w, OpKind::sip_call, a, due, sent, due);
      if (due >= run.measure_from) ++w.stats.scheduled;
      Op logged = make_op(run, 0, OpKind::sip_call, p->id, caller, sent, a);
      oracle::read_call_outcome(logged, r.outcome);
      w.log(std::move(logged));
      if (interval.count() > 0) due += interval;
      continue;
    }
    std::string written;
    const std::string unique = mix && p->op == OpKind::db_set ? unique_write(w, *p, written) : std::string();
    Clock::time_point sent = Clock::now();
    const std::uint64_t ticket = p->op == OpKind::tag ? ledger_tag_sent(run) : 0;
    Answer a = co_await exchange(w, c, unique.empty() ? p->bytes : unique, p->keep_body, sent);
    record(w, p->op, a, due, sent, due);
    if (due >= run.measure_from && !a.interrupted) ++w.stats.scheduled;
    // A mixed tag and its untag are one round of the checker: numbered as the race's.
    const std::uint64_t round = mix && p->op == OpKind::tag ? ++run.round_ids : 0;
    Op logged = make_op(run, round, p->op, "", "", sent, a);
    if (mix) note_mixed(w, *p, a, written, logged);
    if (p->op != OpKind::tag) w.log(std::move(logged));
    if (p->op == OpKind::tag) {
      auto alias =
          outcome_of(a) == Outcome::ok ? tagged_alias_id(run.config.target.dialect.fields, a.body) : std::nullopt;
      ledger_tag_done(run, ticket, a, alias, sent);
      logged.alias = alias.value_or("");
      w.log(logged);
      if (alias) {
        untag_bytes = bytes_for(run, request_for(run.config, OpKind::untag, *alias));
        Clock::time_point untag_sent = Clock::now();
        Answer u = co_await exchange(w, c, untag_bytes, false, untag_sent);  // a tag in the mix is undone at once
        record(w, OpKind::untag, u, untag_sent, untag_sent, due);
        const Op untag = make_op(run, round, OpKind::untag, *alias, "", untag_sent, u);
        ledger_untag_done(run, untag);
        if (mix) note_mixed_tag(run, logged, untag);
        w.log(untag);
      }
    }
    co_await back_off(w, c, a);
    if (interval.count() > 0) due += interval;
  }
  --w.active;
}

}  // namespace crh::loadgen::engine
