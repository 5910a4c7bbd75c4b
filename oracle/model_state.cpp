// The model's facts: operations and their descriptions, the two starts (a
// target known whole, a live one known by reading), lookups, whether a tag
// lives at a time, the aliases a tag may pick, and the status builder.
#include <algorithm>
#include <limits>

#include "oracle/model.hpp"
#include "oracle/model_parts.hpp"

namespace crh::oracle {
namespace api = core::api;
using namespace model_parts;

namespace {

std::string ms_text(std::int64_t ms) { return std::to_string(ms) + " ms"; }

std::string shown(const std::string& text) {
  constexpr std::size_t kMax = 40;
  if (text.size() <= kMax) return "\"" + text + "\"";
  return "\"" + text.substr(0, kMax) + "...\" (" + std::to_string(text.size()) + " bytes)";
}

// An operation on `endpoint` naming `id` (an agent, a key or an alias) and,
// for the alias endpoints, `channel`.
Operation make(api::Operation endpoint, std::int64_t at_ms, std::string id = {}, std::string channel = {}) {
  Operation op;
  op.endpoint = endpoint;
  op.at_ms = at_ms;
  op.id = std::move(id);
  op.channel = std::move(channel);
  return op;
}

}  // namespace

std::string describe(const Operation& op) {
  std::string out;
  switch (op.endpoint) {
    case api::Operation::list_agents: out = "GET " + api::agents_path(); break;
    case api::Operation::get_agent: out = "GET " + api::agent_path(op.id); break;
    case api::Operation::snooze: out = "PUT " + api::agent_op_path(op.id, "snooze"); break;
    case api::Operation::wake: out = "PUT " + api::agent_op_path(op.id, "wake"); break;
    case api::Operation::db_get: out = "GET " + api::database_path(op.id); break;
    case api::Operation::db_set:
      out = "POST " + api::database_path(op.id) + (op.value ? " with value=" + shown(*op.value) : " without value");
      break;
    case api::Operation::list_aliases: out = "GET " + api::aliases_path(op.channel); break;
    case api::Operation::tag:
      out = "POST " + api::tag_path(op.channel) + " with " + (op.tag ? "tag=" + shown(*op.tag) : "no tag") + ", " +
            (op.minutes ? "minutes=" + shown(*op.minutes) : "no minutes");
      break;
    case api::Operation::untag: out = "DELETE " + api::delete_tag_path(op.channel, op.id); break;
    case api::Operation::call:
      out = "call of alias " + op.id + " on channel " + op.channel + " from " + op.caller + " (the call hook)";
      break;
  }
  if (op.auth == Auth::missing) out += " without the Apikey header";
  if (op.auth == Auth::wrong) out += " with a wrong Apikey";
  return out + " at " + ms_text(op.at_ms);
}

namespace ops {
Operation list_agents(std::int64_t at_ms) { return make(api::Operation::list_agents, at_ms); }
Operation get_agent(std::string id, std::int64_t at_ms) { return make(api::Operation::get_agent, at_ms, std::move(id)); }
Operation snooze(std::string id, std::int64_t at_ms) { return make(api::Operation::snooze, at_ms, std::move(id)); }
Operation wake(std::string id, std::int64_t at_ms) { return make(api::Operation::wake, at_ms, std::move(id)); }
Operation db_get(std::string key, std::int64_t at_ms) { return make(api::Operation::db_get, at_ms, std::move(key)); }
Operation db_set(std::string key, std::string value, std::int64_t at_ms) {
  auto op = make(api::Operation::db_set, at_ms, std::move(key));
  op.value = std::move(value);
  return op;
}
Operation list_aliases(std::string channel, std::int64_t at_ms) {
  return make(api::Operation::list_aliases, at_ms, {}, std::move(channel));
}
Operation tag(std::string channel, std::string tag, std::int64_t minutes, std::int64_t at_ms) {
  auto op = make(api::Operation::tag, at_ms, {}, std::move(channel));
  op.tag = std::move(tag);
  op.minutes = std::to_string(minutes);
  return op;
}
Operation untag(std::string channel, std::string alias, std::int64_t at_ms) {
  return make(api::Operation::untag, at_ms, std::move(alias), std::move(channel));
}
Operation call(std::string channel, std::string alias, std::string caller, std::int64_t at_ms) {
  auto op = make(api::Operation::call, at_ms, std::move(alias), std::move(channel));
  op.caller = std::move(caller);
  return op;
}
}  // namespace ops

ObservedAnswer ObservedAnswer::of(const core::Exchange& e) {
  if (!e.response) return none();
  return {true, e.response->status, e.response->body};
}

const AliasFacts* ChannelFacts::find(std::string_view id) const {
  for (const auto& a : aliases)
    if (a.id == id) return &a;
  return nullptr;
}

AliasFacts* ChannelFacts::find(std::string_view id) {
  for (auto& a : aliases)
    if (a.id == id) return &a;
  return nullptr;
}

LockAnswer lock_answer(const AliasFacts& a, std::string_view caller) {
  const bool refused_before = std::find(a.not_bound.begin(), a.not_bound.end(), caller) != a.not_bound.end();
  const bool free_or_this_caller = a.bound == Bound::unknown && a.may_hold.size() == 1 && a.may_hold[0] == caller;
  if (a.bound == Bound::nobody || (a.bound == Bound::caller && a.caller == caller) || free_or_this_caller)
    return LockAnswer::lets_through;
  if (a.bound == Bound::caller || refused_before) return LockAnswer::refuses;
  return LockAnswer::open;
}

void lock_after_call(AliasFacts& f, std::string_view caller, CallAnswer answer) {
  switch (answer) {
    case CallAnswer::connected: {
      const bool other_holds = lock_answer(f, caller) == LockAnswer::refuses;
      f.not_bound.clear();
      f.may_hold.clear();
      if (other_holds) {  // the target let another caller through: who holds it now is unknown
        f.bound = Bound::unknown;
        return;
      }
      f.bound = Bound::caller;
      f.caller = caller;
      return;
    }
    case CallAnswer::refused: {
      if (f.bound == Bound::caller && f.caller != caller) return;
      const bool refused_before = std::find(f.not_bound.begin(), f.not_bound.end(), caller) != f.not_bound.end();
      // Someone other than this caller holds the lock: when the calls without
      // an answer left one other caller who may, it is that one.
      std::erase(f.may_hold, caller);
      if (f.bound == Bound::unknown && f.may_hold.size() == 1) {
        f.bound = Bound::caller;
        f.caller = f.may_hold.front();
        f.not_bound.clear();
        f.may_hold.clear();
        return;
      }
      f.bound = Bound::someone;
      f.caller.clear();
      f.may_hold.clear();
      if (!refused_before) f.not_bound.emplace_back(caller);
      return;
    }
    case CallAnswer::unknown:
      // The call may have bound its caller: if the lock was free, it is now
      // free or this caller's; if only some callers might hold it, one more.
      if (f.bound == Bound::nobody) f.may_hold = {std::string(caller)};
      else if (f.bound == Bound::unknown && !f.may_hold.empty() &&
               std::find(f.may_hold.begin(), f.may_hold.end(), caller) == f.may_hold.end())
        f.may_hold.emplace_back(caller);
      if (f.bound == Bound::nobody || f.bound == Bound::unknown) f.bound = Bound::unknown;
      return;
  }
}

AliasFacts ChannelFacts::unseen(std::string id) const {
  AliasFacts a;
  a.id = std::move(id);
  a.last_use.insert(a.last_use.end(), unseen_uses.begin(), unseen_uses.end());
  return a;
}

Model Model::known(const Start& start, ModelClock clock) {
  Model m;
  m.clock = clock;
  m.claims.everything = true;
  m.agents_complete = m.database_complete = m.channels_complete = true;
  for (const auto& a : start.agents) m.agents[a.id] = {Known::yes, a.state};
  for (const auto& [k, v] : start.database) m.database[k] = {Known::yes, v};
  for (const auto& c : start.channels) {
    ChannelFacts f;
    f.exists = Known::yes;
    f.aliases_complete = true;
    for (const auto& id : c.aliases) {
      AliasFacts a;
      a.id = id;
      a.tag_state = TagState::untagged;
      a.bound = Bound::nobody;
      f.aliases.push_back(std::move(a));
    }
    m.channels[c.id] = std::move(f);
  }
  m.awake_state = start.awake_state;
  m.snoozed_state = start.snoozed_state;
  return m;
}

Model Model::unknown(ModelClock clock, Claims claims) {
  Model m;
  m.clock = clock;
  m.claims = std::move(claims);
  return m;
}

AgentFacts Model::agent(const std::string& id) const {
  if (auto it = agents.find(id); it != agents.end()) return it->second;
  return {agents_complete ? Known::no : Known::unknown, std::nullopt};
}

EntryFacts Model::entry(const std::string& key) const {
  if (auto it = database.find(key); it != database.end()) return it->second;
  return {database_complete ? Known::no : Known::unknown, std::nullopt};
}

ChannelFacts Model::channel(const std::string& id) const {
  if (auto it = channels.find(id); it != channels.end()) return it->second;
  ChannelFacts f;
  f.exists = channels_complete ? Known::no : Known::unknown;
  f.aliases_complete = channels_complete;  // a channel that does not exist has no aliases
  return f;
}

bool Model::owns_agent(const std::string& id) const {
  return claims.everything || std::find(claims.agents.begin(), claims.agents.end(), id) != claims.agents.end();
}

bool Model::owns_key(const std::string& key) const {
  if (claims.everything) return true;
  return std::any_of(claims.key_prefixes.begin(), claims.key_prefixes.end(),
                     [&](const std::string& p) { return key.starts_with(p); });
}

bool Model::owns_channel(const std::string& id) const {
  return claims.everything || std::find(claims.channels.begin(), claims.channels.end(), id) != claims.channels.end();
}

Live live_at(const AliasFacts& alias, std::int64_t at_ms, const ModelClock& clock) {
  switch (alias.tag_state) {
    case TagState::untagged: return Live::no;
    case TagState::unknown: return Live::maybe;
    case TagState::tagged: break;
  }
  if (!alias.expires_ms) return Live::maybe;
  // [tag, tag + lifetime): at the expiry instant the lifetime has elapsed.
  // (Written around at_ms: an expiry saturated at the largest value never overflows.)
  if (at_ms + clock.margin_ms < *alias.expires_ms) return Live::yes;
  if (at_ms - clock.margin_ms >= *alias.expires_ms) return Live::no;
  return Live::maybe;
}

std::string_view to_string(Field f) {
  switch (f) {
    case Field::agent_id: return "agent id";
    case Field::agent_state: return "agent state";
    case Field::agent_ids: return "listed agent ids";
    case Field::listed_agent_state: return "listed agent state";
    case Field::entry_value: return "database value";
    case Field::alias_id: return "alias id";
    case Field::alias_tag: return "alias tag";
    case Field::alias_ids: return "listed alias ids";
    case Field::listed_tag: return "listed tag";
    case Field::listed_bound_caller: return "listed bound caller";
  }
  return "?";
}

namespace model_parts {

namespace {

std::int64_t lo(const AliasFacts& a) { return *std::min_element(a.last_use.begin(), a.last_use.end()); }
std::int64_t hi(const AliasFacts& a) { return *std::max_element(a.last_use.begin(), a.last_use.end()); }

std::string use_text(const AliasFacts& a) {
  if (a.last_use.size() == 1)
    return a.last_use[0] == 0 ? "before the model began" : "at use #" + std::to_string(a.last_use[0]);
  std::string out;
  for (auto u : a.last_use) out += (out.empty() ? "" : " or ") + (u == 0 ? "before" : "#" + std::to_string(u));
  return "at use " + out;
}

}  // namespace

Picks possible_picks(const ChannelFacts& channel, std::int64_t at_ms, const ModelClock& clock) {
  Picks p;
  std::vector<const AliasFacts*> free;  // certainly untagged
  for (const auto& a : channel.aliases)
    if (live_at(a, at_ms, clock) == Live::no) free.push_back(&a);
  p.certain_free = !free.empty();
  p.maybe_free = !channel.aliases_complete;
  // `a` may be the least recently used unless a certainly free alias was
  // certainly used before it (two uses before the model began: order unknown).
  auto refuter = [&](const AliasFacts& a) -> const AliasFacts* {
    for (const auto* b : free) {
      if (b == &a) continue;
      const auto la = lo(a), hb = hi(*b);
      if (la < hb || (la == 0 && hb == 0)) continue;
      return b;
    }
    return nullptr;
  };
  for (const auto& a : channel.aliases) {
    const auto live = live_at(a, at_ms, clock);
    if (live == Live::yes) {
      p.excluded.push_back({a.id, "T1",
                            "alias " + a.id + " carries the live tag \"" + a.tag + "\" (until " +
                                std::to_string(*a.expires_ms) + " ms): a tag never replaces a live one"});
      continue;
    }
    if (live == Live::maybe) p.maybe_free = true;
    if (const auto* b = refuter(a))
      p.excluded.push_back({a.id, "R2",
                            "alias " + b->id + " (last used " + use_text(*b) + ") was used less recently than alias " +
                                a.id + " (last used " + use_text(a) + ")"});
    else p.possible.push_back(a.id);
  }
  return p;
}

std::optional<std::int64_t> parse_minutes(const std::string& text) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) i = 1;
  if (i == text.size()) return std::nullopt;
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    const int d = c - '0';
    v = v > (kMax - d) / 10 ? kMax : v * 10 + d;
  }
  return negative ? -v : v;
}

std::int64_t expiry_of(std::int64_t at_ms, std::int64_t minutes, std::int64_t minute_ms) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if (minutes <= 0 || minute_ms <= 0) return at_ms;  // a lifetime of no minutes has elapsed when it begins
  if (minutes > (kMax - std::max<std::int64_t>(at_ms, 0)) / minute_ms) return kMax;
  return at_ms + minutes * minute_ms;
}

std::string entry_key(const core::Profile& profile, const std::string& key) {
  if (!profile.dialect.keys_fold_case) return key;
  std::string out = key;
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

Expect::Expect(std::string_view ok_rule, std::string_view refusal_rule) {
  s_.ok_rule = ok_rule;
  s_.refusal_rule = refusal_rule;
  s_.status_rule = refusal_rule;
}

void Expect::add(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why) {
  if (s_.statuses.empty()) s_.status_rule = rule;
  for (auto st : statuses)
    if (std::find(s_.statuses.begin(), s_.statuses.end(), st) == s_.statuses.end()) s_.statuses.push_back(st);
  s_.why += (s_.why.empty() ? "" : "; ") + why;
}

void Expect::must_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why) {
  if (s_.ok) s_.ok_rule = rule;  // the first cause names the rule a 200 breaks
  s_.ok = false;
  s_.ok_expected = false;
  s_.refusal = true;
  add(statuses, rule, why);
}

void Expect::should_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why) {
  if (s_.ok && s_.ok_expected) s_.ok_rule = rule;
  s_.ok_expected = false;
  s_.refusal = true;
  add(statuses, rule, why);
}

void Expect::may_refuse(const std::vector<unsigned>& statuses, std::string_view rule, const std::string& why) {
  s_.refusal = true;
  add(statuses, rule, why);
}

void Expect::refusal_tolerated(std::string_view rule, const std::string& why) {
  s_.refusal = true;
  s_.refusal_rule = rule;
  if (s_.statuses.empty()) s_.status_rule = rule;
  s_.why += (s_.why.empty() ? "" : "; ") + why;
}

}  // namespace model_parts
}  // namespace crh::oracle
