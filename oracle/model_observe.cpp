// observe(): what an answer teaches the model. A 200 is what the target now
// holds; a refusal teaches only through the profile's statuses (a not-found
// says the resource is not there, a call refusal that a lock held); no answer
// or a 5xx leaves what the operation may have changed unknown. At the end,
// what other clients may touch is forgotten.
#include <algorithm>
#include <boost/json.hpp>

#include "oracle/answers.hpp"
#include "oracle/model.hpp"
#include "oracle/model_parts.hpp"

namespace crh::oracle {
namespace api = core::api;
namespace json = boost::json;
using namespace model_parts;

namespace {

void free_alias(AliasFacts& a, TagEnd why) {
  a.tag_state = TagState::untagged;
  a.tag.clear();
  a.expires_ms.reset();
  a.ended = why;
  a.bound = Bound::nobody;
  a.caller.clear();
  a.not_bound.clear();
  a.may_hold.clear();
}

void forget_alias(AliasFacts& a) {
  const auto id = a.id;
  a = AliasFacts{};
  a.id = id;
}

struct Observer {
  Model& m;
  const Operation& op;
  const ObservedAnswer& a;
  const core::Profile& profile;
  const core::FieldNames& names = profile.dialect.fields;
  const core::ExpectedStatuses& st = profile.statuses;
  std::optional<json::value> body = a.answered && a.status == 200 ? json_body(a) : std::nullopt;
  bool ok = a.answered && a.status == 200;
  bool unanswered = !a.answered || a.status >= 500;

  bool refused_as(const std::vector<unsigned>& statuses) const {
    return a.answered && a.status != 200 && a.status < 500 &&
           std::find(statuses.begin(), statuses.end(), a.status) != statuses.end();
  }

  void settle_expiries() {
    for (auto& [id, ch] : m.channels)
      for (auto& al : ch.aliases)
        if (al.tag_state == TagState::tagged && live_at(al, op.at_ms, m.clock) == Live::no)
          free_alias(al, TagEnd::expired);
  }

  void agents() {
    if (op.endpoint == api::Operation::list_agents) {
      if (!ok || !body) return;
      std::string why;
      auto list = api::find_list(*body, names.agents_list, why);
      if (!list) return;
      for (auto& [id, facts] : m.agents) facts.exists = Known::no;
      for (const auto& item : *list->items)
        if (auto id = api::agent_id(names, item)) {
          auto& facts = m.agents[*id];
          facts.exists = Known::yes;
          if (auto s = state_text(names, item)) facts.state = s;
        }
      m.agents_complete = true;
      return;
    }
    if (op.id.empty()) return;
    auto facts =
        m.agent(op.id);  // a copy: an agent a complete list lacks stays absent unless the target says otherwise
    const bool snooze = op.endpoint == api::Operation::snooze, wake = op.endpoint == api::Operation::wake;
    if (refused_as(st.not_found)) facts.exists = Known::no;
    if (unanswered && (snooze || wake)) facts.state.reset();
    if (ok) {
      facts.exists = Known::yes;
      auto s = body ? state_text(names, *body) : std::nullopt;
      if (snooze || wake) {
        auto& word = snooze ? m.snoozed_state : m.awake_state;
        if (s && !word) word = s;
        facts.state = s ? s : word;
      } else if (s) {
        facts.state = s;
      }
    }
    m.agents[op.id] = std::move(facts);
  }

  void database() {
    if (op.id.empty()) return;
    const auto key = entry_key(profile, op.id);
    auto entry = m.entry(key);  // a copy, written back: a complete database's absent key stays absent
    if (op.endpoint == api::Operation::db_set) {
      if (ok) entry = {Known::yes, op.value};
      else if (unanswered) entry = {Known::unknown, std::nullopt};
    } else {
      if (refused_as(st.not_found)) entry = {Known::no, std::nullopt};
      if (ok) entry = {Known::yes, body ? api::database_value(names, *body) : std::nullopt};
    }
    m.database[key] = std::move(entry);
  }

  ChannelFacts& channel() {
    auto it = m.channels.find(op.channel);
    if (it == m.channels.end()) it = m.channels.emplace(op.channel, m.channel(op.channel)).first;
    return it->second;
  }

  // The alias addressed; added when the channel's list is not complete.
  AliasFacts* alias(ChannelFacts& ch, const std::string& id) {
    if (auto* f = ch.find(id)) return f;
    if (ch.aliases_complete) return nullptr;
    return &ch.add(id);
  }

  void list_aliases(ChannelFacts& ch) {
    if (refused_as(st.not_found)) {
      ch.exists = Known::no;
      ch.aliases.clear();
      ch.aliases_complete = true;
    }
    if (!ok || !body) return;
    std::string why;
    auto list = api::find_list(*body, names.aliases_list, why);
    if (!list) return;
    std::vector<AliasFacts> listed;
    for (const auto& item : *list->items) {
      auto id = api::alias_id(names, item);
      if (!id) continue;
      const auto* known = ch.find(*id);
      AliasFacts f = known ? *known : ch.unseen(*id);
      learn_listed(f, item);
      listed.push_back(std::move(f));
    }
    ch.exists = Known::yes;
    ch.aliases = std::move(listed);
    ch.aliases_complete = true;
  }

  // The target's list is what it holds: its tag is followed; its bound
  // caller (a profile field) only where the model's own calls did not tell.
  void learn_listed(AliasFacts& f, const json::value& item) {
    const auto live = live_at(f, op.at_ms, m.clock);
    if (auto t = api::tag_of(names, item)) {
      if (t->empty() && f.tag_state != TagState::untagged)
        free_alias(f, f.expires_ms && live != Live::yes ? TagEnd::expired : TagEnd::none);
      if (!t->empty() && !(f.tag_state == TagState::tagged && f.tag == *t && live != Live::no)) {
        free_alias(f, TagEnd::none);  // a tag the model did not make: its expiry and lock are unknown
        f.tag_state = TagState::tagged;
        f.tag = *t;
        f.bound = Bound::unknown;  // by anyone: free_alias emptied may_hold
      }
    }
    if (f.tag_state != TagState::tagged || (f.bound != Bound::unknown && f.bound != Bound::someone)) return;
    if (auto c = field_text(item, names.alias_bound_caller)) {
      // A refusal proved someone holds the lock: a list showing nobody does
      // not undo that (its bound caller is a profile field, a SHOULD).
      if (c->empty()) f.bound = f.bound == Bound::someone ? Bound::someone : Bound::nobody;
      else if (std::find(f.not_bound.begin(), f.not_bound.end(), *c) == f.not_bound.end()) {
        f.bound = Bound::caller;
        f.caller = *c;
      }
      if (f.bound != Bound::unknown) f.may_hold.clear();
    }
  }

  // Every alias a tag whose pick is unknown may have taken.
  void tag_unknown_pick(ChannelFacts& ch) {
    const auto seq = ++m.uses;
    if (!ch.aliases_complete) ch.unseen_uses.push_back(seq);
    for (auto& al : ch.aliases)
      if (live_at(al, op.at_ms, m.clock) != Live::yes) {
        al.tag_state = TagState::unknown;
        al.bound = Bound::unknown;
        al.may_hold.clear();
        al.last_use.push_back(seq);
      }
  }

  void tag(ChannelFacts& ch) {
    if (refused_as(st.not_found) && ch.exists == Known::unknown) {
      ch.exists = Known::no;
      ch.aliases_complete = true;
    }
    if (unanswered) return tag_unknown_pick(ch);
    if (!ok) return;
    ch.exists = Known::yes;
    auto picked = body ? api::tagged_alias_id(names, *body) : std::nullopt;
    if (!picked) return tag_unknown_pick(ch);
    AliasFacts* x = ch.find(*picked);
    if (!x) x = &ch.add(*picked);  // not yet seen, or one more than the complete list held
    // The pick was older than every certainly free alias: their last uses
    // before its oldest possible one are ruled out.
    const auto lo_x = *std::min_element(x->last_use.begin(), x->last_use.end());
    for (auto& b : ch.aliases) {
      if (&b == x || live_at(b, op.at_ms, m.clock) != Live::no) continue;
      std::vector<std::int64_t> kept;
      for (auto v : b.last_use)
        if (v >= lo_x) kept.push_back(v);
      if (!kept.empty()) b.last_use = std::move(kept);
    }
    const auto minutes = op.minutes ? parse_minutes(*op.minutes) : std::nullopt;
    if (minutes) m.minutes_taken = std::max(m.minutes_taken, *minutes);
    free_alias(*x, TagEnd::none);
    x->tag_state = TagState::tagged;
    x->tag = op.tag.value_or("");
    if (minutes) x->expires_ms = expiry_of(op.at_ms, *minutes, m.clock.minute_ms);
    x->last_use = {++m.uses};
  }

  void untag(ChannelFacts& ch) {
    AliasFacts* f = op.id.empty() ? nullptr : ch.find(op.id);
    if (ok && !f) f = alias(ch, op.id);
    if (!f) return;
    const auto live = live_at(*f, op.at_ms, m.clock);
    if (ok) free_alias(*f, f->tag_state == TagState::untagged ? f->ended : TagEnd::deleted);
    else if (refused_as(st.not_found) && f->tag_state != TagState::untagged)
      free_alias(*f, f->expires_ms && live == Live::maybe ? TagEnd::expired : TagEnd::none);
    else if (unanswered && f->tag_state != TagState::untagged) {
      f->tag_state = TagState::unknown;
      f->bound = Bound::unknown;
      f->may_hold.clear();
    }
  }

  void call(ChannelFacts& ch) {
    if (!profile.dialect.call_hook.enabled) return;
    // A call that may have been a use is kept even on an alias not yet seen:
    // a list that shows it later must not date its last use before the model.
    const bool maybe_used = ok || unanswered || refused_as(st.call_refused);
    AliasFacts* f = maybe_used ? alias(ch, op.id) : ch.find(op.id);
    if (!f) return;
    const auto live = live_at(*f, op.at_ms, m.clock);
    if (ok) {
      // The spec's "last use" does not say whether a call is one (a service
      // that counts only tags reads it as well as one that counts calls): a
      // connected call may or may not be the alias's last use.
      f->last_use.push_back(++m.uses);
      if (live == Live::no) return;  // a free alias binds nobody
      // Only an ended tag lets another caller through.
      if (live == Live::maybe && lock_answer(*f, op.caller) == LockAnswer::refuses)
        return free_alias(*f, f->tag_state == TagState::tagged && f->expires_ms ? TagEnd::expired : TagEnd::none);
      return lock_after_call(*f, op.caller, CallAnswer::connected);
    }
    const bool refused = refused_as(st.call_refused);
    if (refused || unanswered) f->last_use.push_back(++m.uses);  // a use, or not
    if (live == Live::no) return;
    if (refused) lock_after_call(*f, op.caller, CallAnswer::refused);
    else if (unanswered) lock_after_call(*f, op.caller, CallAnswer::unknown);
  }

  void forget_what_others_touch() {
    for (auto& [id, facts] : m.agents)
      if (!m.owns_agent(id)) facts.state.reset();
    if (!m.database_complete) std::erase_if(m.database, [&](const auto& kv) { return !m.owns_key(kv.first); });
    for (auto& [id, ch] : m.channels)
      if (!m.owns_channel(id))
        for (auto& al : ch.aliases) forget_alias(al);
  }

  void run() {
    settle_expiries();
    if (a.answered && core::throttled(a.status, st)) return forget_what_others_touch();  // not now: no effect
    // A refused key explains a refusal: nothing is learned from it.
    const bool key_refused = op.auth != Auth::key && !ok && !unanswered;
    if (!key_refused) {
      switch (op.endpoint) {
        case api::Operation::list_agents:
        case api::Operation::get_agent:
        case api::Operation::snooze:
        case api::Operation::wake: agents(); break;
        case api::Operation::db_get:
        case api::Operation::db_set: database(); break;
        case api::Operation::list_aliases:
          if (!op.channel.empty()) list_aliases(channel());
          break;
        case api::Operation::tag:
          if (!op.channel.empty()) tag(channel());
          break;
        case api::Operation::untag:
          if (!op.channel.empty()) untag(channel());
          break;
        case api::Operation::call:
          if (!op.channel.empty()) call(channel());
          break;
      }
    }
    forget_what_others_touch();
  }
};

}  // namespace

void observe(Model& model, const Operation& op, const ObservedAnswer& answer, const core::Profile& profile) {
  Observer{model, op, answer, profile}.run();
}

}  // namespace crh::oracle
