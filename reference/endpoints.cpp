// The reference service's endpoints, one function each: a routed request
// (service.cpp) checked, applied to the state and answered in JSON.
#include <boost/json.hpp>
#include <charconv>

#include "params.hpp"
#include "route.hpp"
#include "service.hpp"

namespace crh::reference {
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kMaxTagMinutes = 1440;
constexpr auto kSlowTagDelay = 20ms;
constexpr auto kRacyBindYield = 5ms;
constexpr auto kRacyTagYield = 5ms;           // tag-racy
constexpr std::size_t kKeyColumnBytes = 255;  // db-long-key-500

json::value agent_json(const Agent& a) {
  return json::object{{"id", a.id}, {"name", a.name}, {"state", a.snoozed ? "snoozed" : "available"}};
}

json::value alias_json(const AliasView& a, const Clock& clock) {
  auto opt = [](const std::optional<std::string>& s) -> json::value {
    return s ? json::value(*s) : json::value(nullptr);
  };
  auto stamp = [&](const std::optional<Clock::time_point>& t) -> json::value {
    return t ? json::value(clock.rfc3339(*t)) : json::value(nullptr);
  };
  return json::object{{"id", a.id},
                      {"number", a.number},
                      {"tag", opt(a.tag)},
                      {"expires_at", stamp(a.expires_at)},
                      {"bound_caller", opt(a.bound_caller)},
                      {"last_used_at", stamp(a.last_used_at)}};
}

Response ok(const json::value& body) { return Response{200, "application/json", json::serialize(body), {}}; }

}  // namespace

Response Service::unknown_channel(const Route& route) const {
  return error(404, "no channel with id " + in_quotes(route.id));
}

Response Service::unknown_alias(const Route& route) const {
  return error(404, "channel " + in_quotes(route.id) + " has no alias with id " + in_quotes(route.alias));
}

Response Service::unknown_agent(const Route& route) const {
  return error(404, "no local agent with id " + in_quotes(route.id));
}

Reply Service::dispatch(const Route& route, const Request& req) {
  Params params;
  if (route.endpoint == Endpoint::db_set || route.endpoint == Endpoint::tag || route.endpoint == Endpoint::call) {
    if (auto err = read_params(req, route.query, params)) return {error(err->first, err->second)};
  }
  auto param = [&](std::string_view name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };

  switch (route.endpoint) {
    case Endpoint::agents_list: return {list_agents()};
    case Endpoint::agent_get: return {get_agent(route)};
    case Endpoint::agent_snooze: return {set_snoozed(route, true)};
    case Endpoint::agent_wake:
      if (config_.faults.has(Fault::crash_unknown_wake) && !state_.agent(route.id)) return Reply{.drop = true};
      return {set_snoozed(route, false)};
    case Endpoint::db_get: return {db_get(route)};
    case Endpoint::db_set: return {db_set(route, param("value"))};
    case Endpoint::aliases_list: return {list_aliases(route)};
    case Endpoint::tag: return tag(route, param("tag"), param("minutes"));
    case Endpoint::untag: return {untag(route)};
    case Endpoint::call: return call(route, param("caller"));
  }
  return {error(404, "no such route")};
}

Response Service::list_agents() const {
  json::array list;
  for (const auto& a : state_.agents())
    if (!(a.snoozed && config_.mutants.has(Mutant::agents_list_hides_snoozed))) list.push_back(agent_json(a));
  return ok(json::object{{"agents", std::move(list)}});
}

Response Service::get_agent(const Route& route) const {
  auto a = state_.agent(route.id);
  if (a && a->snoozed && config_.mutants.has(Mutant::agent_get_snoozed_404)) return unknown_agent(route);
  return a ? ok(agent_json(*a)) : unknown_agent(route);
}

Response Service::set_snoozed(const Route& route, bool snooze) {
  auto before = state_.agent(route.id);
  auto a = state_.set_snoozed(route.id, snooze);
  if (a && !snooze && config_.mutants.has(Mutant::wake_answer_stale)) a = before;  // the row read before the update
  if (!a) return unknown_agent(route);
  if (snooze && config_.faults.has(Fault::snooze_shape)) return ok(json::object{{"ok", true}});
  json::value body = agent_json(*a);
  if (!snooze && config_.faults.has(Fault::wake_types)) {
    // Same field names and the same id, only a type differs from the GET.
    std::uint64_t number = 0;
    std::from_chars(a->id.data(), a->id.data() + a->id.size(), number);
    if (std::to_string(number) == a->id) body.as_object()["id"] = number;
    else body.as_object()["name"] = json::array{json::value(a->name)};
  }
  return ok(body);
}

Response Service::db_get(const Route& route) const {
  auto v = state_.db_get(route.id);
  if (!v) return error(404, "no value stored for key " + in_quotes(route.id));
  return ok(json::object{{"key", route.id}, {"value", *v}});
}

Response Service::db_set(const Route& route, const std::string* value) {
  if (!value) return error(400, "missing parameter \"value\" (send value=... form-encoded or as JSON)");
  if (route.id.size() > kKeyColumnBytes && config_.mutants.has(Mutant::db_long_key_500))
    return error(500, "internal error: data too long for column 'key'");
  if (state_.db_set(route.id, *value) == DbWriteStatus::full)
    return error(409, "the database is full: the reference service keeps at most 256 MiB of keys and values");
  return ok(json::object{{"key", route.id}, {"value", *value}});
}

Response Service::list_aliases(const Route& route) const {
  auto aliases = state_.aliases(route.id);
  if (!aliases && config_.mutants.has(Mutant::list_unknown_channel_empty))
    return ok(json::object{{"channel", route.id}, {"aliases", json::array{}}});
  if (!aliases) return unknown_channel(route);
  json::array list;
  for (const auto& a : *aliases)
    if (!(a.bound_caller && config_.mutants.has(Mutant::list_hides_bound)))
      list.push_back(alias_json(a, state_.clock()));
  return ok(json::object{{"channel", route.id}, {"aliases", std::move(list)}});
}

Reply Service::tag(const Route& route, const std::string* name, const std::string* minutes_text) {
  const auto& f = config_.faults;
  if (!state_.has_channel(route.id)) return {unknown_channel(route)};
  if (!name) return {error(400, "missing parameter \"tag\" (required by the tag operation)")};
  if (name->empty() && !config_.mutants.has(Mutant::tag_empty_accepted))
    return {error(400, "parameter \"tag\" must not be empty")};
  std::int64_t minutes = 5;
  if (const std::string* sent = minutes_text) {
    std::string_view m = *sent;
    // minutes-fraction-truncated: "2.5" read up to its dot.
    if (auto dot = m.find('.'); config_.mutants.has(Mutant::minutes_fraction_truncated) && dot != 0 &&
                                dot != std::string_view::npos && dot + 1 < m.size() &&
                                m.find_first_not_of("0123456789", dot + 1) == std::string_view::npos)
      m = m.substr(0, dot);
    // minutes-loose-parse: read as parseInt does, up to the first letter or space after the digits.
    if (auto stop = m.find_first_of(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
        config_.mutants.has(Mutant::minutes_loose_parse) && stop != std::string_view::npos && stop > 0 &&
        m.find_first_not_of("0123456789") == stop)
      m = m.substr(0, stop);
    auto [end, ec] = std::from_chars(m.data(), m.data() + m.size(), minutes);
    bool digits_only = !m.empty() && m.front() != '-' && m.front() != '+';
    if (ec != std::errc{} || end != m.data() + m.size() || !digits_only || minutes < 1 || minutes > kMaxTagMinutes)
      return {error(400, "parameter \"minutes\" must be an integer from 1 to 1440, got " + in_quotes(*sent))};
  } else if (!f.has(Fault::tag_minutes_optional)) {
    return {error(400, "missing parameter \"minutes\" (required by the tag operation)")};
  }
  if (config_.mutants.has(Mutant::tag_racy)) return tag_racy(route, *name, minutes);
  auto r = state_.tag(route.id, *name, minutes);
  if (r.status == TagStatus::unknown_channel) return {unknown_channel(route)};
  if (r.status == TagStatus::all_tagged) {
    const std::string msg =
        "every alias of channel " + in_quotes(route.id) + " is tagged; delete a tag or wait for one to expire";
    if (config_.mutants.has(Mutant::error_409_no_msg))
      return {Response{409, "application/json", json::serialize(json::object{{"error", msg}}), {}}};
    return {error(409, msg)};
  }
  Reply reply{ok(alias_json(r.alias, state_.clock()))};
  if (f.has(Fault::slow_tag)) reply.wait = kSlowTagDelay;
  return reply;
}

// tag-racy: the pick and the assignment in two steps with a timer between,
// as a read, a round trip and an update would be.
Reply Service::tag_racy(const Route& route, const std::string& name, std::int64_t minutes) {
  auto picked = state_.tag_pick(route.id);
  if (picked.status == TagStatus::unknown_channel) return {unknown_channel(route)};
  if (picked.status == TagStatus::all_tagged)
    return {error(409,
                  "every alias of channel " + in_quotes(route.id) + " is tagged; delete a tag or wait for one to expire")};
  Reply reply;
  reply.wait = kRacyTagYield;
  reply.then = [this, route, name, minutes, alias = picked.alias.id] {
    auto r = state_.tag_apply(route.id, alias, name, minutes);
    return r.status == TagStatus::tagged ? ok(alias_json(r.alias, state_.clock())) : unknown_channel(route);
  };
  return reply;
}

Response Service::untag(const Route& route) {
  auto r = state_.untag(route.id, route.alias);
  switch (r.status) {
    case UntagStatus::unknown_channel: return unknown_channel(route);
    case UntagStatus::unknown_alias: return unknown_alias(route);
    case UntagStatus::not_tagged:
      return error(404, "alias " + in_quotes(route.alias) + " of channel " + in_quotes(route.id) + " has no tag to delete");
    case UntagStatus::untagged: break;
  }
  return ok(alias_json(r.alias, state_.clock()));
}

Service::Windowed Service::windowed_check(const std::string& channel, const std::string& alias,
                                          const std::string& caller) {
  std::lock_guard guard(window_lock_);
  const auto now = std::chrono::steady_clock::now();
  const std::string key = channel + '\n' + alias;
  auto pending = pending_binds_.find(key);
  if (pending != pending_binds_.end() && now >= pending->second.at) {  // the window has closed: the bind lands first
    land_bind(pending);
    pending = pending_binds_.end();
  }
  Windowed w{state_.call_check(channel, alias, caller), std::nullopt};
  if (w.checked.status == CallStatus::connected && pending == pending_binds_.end()) {
    pending_binds_[key] = {channel, alias, caller, now + config_.bind_window};
    w.wait = config_.bind_window;
  }
  return w;
}

void Service::close_window(const std::string& channel, const std::string& alias) {
  std::lock_guard guard(window_lock_);
  auto pending = pending_binds_.find(channel + '\n' + alias);
  if (pending != pending_binds_.end()) land_bind(pending);  // else a later check landed it already
}

void Service::land_bind(PendingBinds::iterator pending) {
  const PendingBind& bind = pending->second;
  state_.call_apply(bind.channel, bind.alias, bind.caller);
  pending_binds_.erase(pending);
}

Reply Service::call(const Route& route, const std::string* caller) {
  if (!caller || caller->empty()) return {error(400, "missing or empty parameter \"caller\" (the calling number)")};
  if (config_.bind_window.count() > 0) {
    auto w = windowed_check(route.id, route.alias, *caller);
    Reply reply{call_answer(route, *caller, w.checked)};
    if (w.wait) {  // the first to pass: answered once its bind has landed
      reply.wait = *w.wait;
      reply.then = [this, route, caller = *caller, checked = w.checked] {
        close_window(route.id, route.alias);
        return call_answer(route, caller, checked);
      };
    }
    return reply;
  }
  const auto& f = config_.faults;
  if (!f.has(Fault::binding_racy) && !f.has(Fault::binding_racy_turn))
    return {call_answer(route, *caller, state_.call(route.id, route.alias, *caller))};
  // Check, yield, then bind: racing callers can all pass the check. The
  // timer makes the window wide; the bare turn leaves only what was queued.
  CallResult checked = state_.call_check(route.id, route.alias, *caller);
  if (checked.status != CallStatus::connected) return {call_answer(route, *caller, checked)};
  Reply reply;
  if (f.has(Fault::binding_racy)) reply.wait = kRacyBindYield;
  else reply.yield = true;
  reply.then = [this, route, caller = *caller] {
    return call_answer(route, caller, state_.call_apply(route.id, route.alias, caller));
  };
  return reply;
}

SipCallReply Service::sip_call(std::string_view number, std::string_view caller) {
  auto where = state_.find_number(number);
  if (!where && number.find(';') != std::string_view::npos)
    where = state_.find_number(number.substr(0, number.find(';')));
  if (!where || caller.empty()) return {CallStatus::unknown_alias};
  if (config_.bind_window.count() > 0) {
    auto w = windowed_check(where->channel, where->alias, std::string(caller));
    SipCallReply reply{w.checked.status};
    if (w.wait) {
      reply.wait = *w.wait;
      reply.then = [this, where = *where, status = w.checked.status] {
        close_window(where.channel, where.alias);
        return status;
      };
    }
    return reply;
  }
  const auto& f = config_.faults;
  if (!f.has(Fault::binding_racy) && !f.has(Fault::binding_racy_turn))
    return {state_.call(where->channel, where->alias, caller).status};
  // The same check-then-act as the HTTP hook's racy faults.
  CallResult checked = state_.call_check(where->channel, where->alias, caller);
  if (checked.status != CallStatus::connected) return {checked.status};
  SipCallReply reply{CallStatus::connected};
  if (f.has(Fault::binding_racy)) reply.wait = kRacyBindYield;
  else reply.yield = true;
  reply.then = [this, where = *where, caller = std::string(caller)] {
    return state_.call_apply(where.channel, where.alias, caller).status;
  };
  return reply;
}

Response Service::call_answer(const Route& route, const std::string& caller, const CallResult& r) const {
  switch (r.status) {
    case CallStatus::unknown_channel: return unknown_channel(route);
    case CallStatus::unknown_alias: return unknown_alias(route);
    case CallStatus::locked:
      return error(403, "alias " + in_quotes(route.alias) + " is tagged and bound to another caller until " +
                            (r.alias.expires_at ? state_.clock().rfc3339(*r.alias.expires_at) : "its tag ends"));
    case CallStatus::connected: break;
  }
  return ok(json::object{{"alias", route.alias}, {"caller", caller}, {"connected", true}});
}

}  // namespace crh::reference
