// predict(): for each endpoint and the call hook, the statuses the MUST rules
// accept and those the profile names, and the fields of a 200 that the
// model's facts determine. What the facts leave open is named, never guessed.
#include <algorithm>

#include "oracle/answers.hpp"
#include "oracle/model.hpp"
#include "oracle/model_parts.hpp"

namespace crh::oracle {
namespace api = core::api;
using namespace model_parts;

namespace {

// Why an alias that is not tagged at a time has no tag: a tag still held
// in the facts has had its minutes elapse.
TagEnd end_of(const AliasFacts& a) { return a.tag_state == TagState::tagged ? TagEnd::expired : a.ended; }

const char* end_text(TagEnd e) {
  switch (e) {
    case TagEnd::deleted: return "deleted";
    case TagEnd::expired: return "expired";
    case TagEnd::none: break;
  }
  return "none";
}

struct Predictor {
  const Model& m;
  const Operation& op;
  const core::Profile& profile;
  const core::ExpectedStatuses& st = profile.statuses;
  Prediction out;

  void field(Field f, std::string item, std::vector<std::string> values, std::string_view rule, Severity wrong,
             std::optional<Severity> missing, std::string what, std::vector<Excluded> excluded = {}) {
    out.fields.push_back(
        {f, std::move(item), std::move(values), std::move(excluded), rule, wrong, missing, std::move(what)});
  }

  void auth(Expect& e) const {
    if (op.auth == Auth::missing) e.must_refuse(st.auth, "R5", "the request carries no Apikey header");
    if (op.auth == Auth::wrong) e.must_refuse(st.auth, "A2", "the Apikey is not the console's key");
  }

  // An empty id addresses another route (a trailing slash): not predicted.
  bool empty_id(Expect& e, const std::string& id, std::string_view what) {
    if (!id.empty()) return false;
    e.may_refuse(st.not_found, "X1", std::string("an empty ") + std::string(what) + " names another route");
    out.open.push_back("the answer to an empty " + std::string(what) + ": the path is not the endpoint's");
    return true;
  }

  void exists(Expect& e, Known k, std::string_view rule, const std::string& what) {
    if (k == Known::no) e.must_refuse(st.not_found, rule, what + " does not exist");
    if (k == Known::unknown) {
      e.may_refuse(st.not_found, rule, what + " is not known to exist yet");
      out.open.push_back("whether " + what + " exists");
    }
  }

  StatusExpectation agents() {
    const bool list = op.endpoint == api::Operation::list_agents;
    const bool snooze = op.endpoint == api::Operation::snooze, wake = op.endpoint == api::Operation::wake;
    const std::string_view rule = list ? "E1" : snooze ? "E3" : wake ? "E4" : "E2";
    Expect e(rule, rule);
    auth(e);
    if (list) {
      if (!m.agents_complete) out.open.push_back("which agents exist: not listed yet");
      std::vector<std::string> ids;
      for (const auto& [id, a] : m.agents)
        if (a.exists == Known::yes) ids.push_back(id);
      if (m.agents_complete) field(Field::agent_ids, {}, ids, "E1", Severity::must, Severity::should, "the agents");
      for (const auto& [id, a] : m.agents)
        if (a.exists == Known::yes && a.state && m.owns_agent(id))
          field(Field::listed_agent_state, id, {*a.state}, "E1", Severity::should, std::nullopt,
                "agent " + id + "'s state in the list");
      return e.done();
    }
    if (empty_id(e, op.id, "agent id")) return e.done();
    const auto a = m.agent(op.id);
    exists(e, a.exists, rule, "agent " + op.id);
    if (!snooze && !wake) {
      field(Field::agent_id, {}, {op.id}, "E2", Severity::must, Severity::should, "the agent's id");
      if (a.state && m.owns_agent(op.id))
        field(Field::agent_state, {}, {*a.state}, "E2", Severity::should, Severity::should,
              "agent " + op.id + "'s state");
      else
        out.open.push_back("agent " + op.id + "'s state: " + (m.owns_agent(op.id) ? "not read yet" : "not the run's"));
      return e.done();
    }
    const auto& to = snooze ? m.snoozed_state : m.awake_state;
    const auto& from = snooze ? m.awake_state : m.snoozed_state;
    // Snoozing a snoozed agent: the spec does not say it is refused, nor that it is not.
    const bool surely_changes = a.state && from && *a.state == *from && (!to || *to != *from);
    if (a.exists != Known::no && !surely_changes)
      e.refusal_tolerated(rule, "agent " + op.id + " may already be " + (snooze ? "snoozed" : "awake") +
                                    " (the spec does not say whether that is refused)");
    field(Field::agent_id, {}, {op.id}, "R1", Severity::must, Severity::should, "the agent's id");
    if (to)
      field(Field::agent_state, {}, {*to}, rule, Severity::should, Severity::should,
            std::string("the state ") + (snooze ? "snooze" : "wake") + " answers");
    else
      out.open.push_back(std::string("the state ") + (snooze ? "snooze" : "wake") +
                         " answers: learned from its first answer");
    return e.done();
  }

  StatusExpectation database() {
    const bool set = op.endpoint == api::Operation::db_set;
    const std::string_view rule = set ? "E6" : "E5";
    Expect e(rule, rule);
    auth(e);
    if (empty_id(e, op.id, "key")) return e.done();
    if (set) {
      if (!op.value) {
        e.should_refuse(st.bad_input, "E6", "the POST sends no value (no value: bad input, as profile statuses.bad_input says)");
      } else {
        // POST sets the value for the key (spec 4), but the spec shows no type
        // or size of values (spec 2, 8): a service may refuse an empty value,
        // a long one or one with control characters (a SHOULD); a short
        // printable one it must take. A write it confirms must read back.
        if (!e.must_refused() && value_may_be_refused(*op.value))
          e.refusal_tolerated("E6", "the spec shows no type or size of a value (spec 2, 8): a service may refuse "
                                    "an empty, long (over 255 bytes) or control-character value");
        field(Field::entry_value, {}, {*op.value}, "E6", Severity::should, Severity::should,
              "the value the write confirms");
      }
      return e.done();
    }
    const auto entry = m.entry(entry_key(profile, op.id));
    exists(e, entry.exists, "E5", "key " + op.id);
    if (entry.exists == Known::yes && entry.value)
      field(Field::entry_value, {}, {*entry.value}, "E5", Severity::must, Severity::should,
            "key " + op.id + "'s value");
    else if (entry.exists != Known::no)
      out.open.push_back("key " + op.id + "'s value: " + (m.owns_key(op.id) ? "not read yet" : "not the run's"));
    return e.done();
  }

  void alias_list_fields(const ChannelFacts& ch) {
    if (ch.aliases_complete) {
      std::vector<std::string> ids;
      for (const auto& a : ch.aliases) ids.push_back(a.id);
      field(Field::alias_ids, {}, ids, "E7", Severity::must, Severity::should, "the channel's aliases");
    } else {
      out.open.push_back("which aliases channel " + op.channel + " has: not listed yet");
    }
    for (const auto& a : ch.aliases) {
      switch (live_at(a, op.at_ms, m.clock)) {
        case Live::yes:
          field(Field::listed_tag, a.id, {a.tag}, "T1", Severity::must, Severity::should,
                "alias " + a.id + "'s tag (it lives until " + std::to_string(*a.expires_ms) + " ms)");
          if (a.bound == Bound::nobody || a.bound == Bound::caller)
            field(Field::listed_bound_caller, a.id, {a.bound == Bound::caller ? a.caller : ""}, "B2", Severity::should,
                  a.bound == Bound::caller ? std::optional(Severity::should) : std::nullopt,
                  "the caller alias " + a.id + " is bound to");
          break;
        case Live::no:
          field(Field::listed_tag, a.id, {""}, end_of(a) == TagEnd::deleted ? "R4" : "T1", Severity::must, std::nullopt,
                "alias " + a.id + "'s tag (" + end_text(end_of(a)) + ")");
          field(Field::listed_bound_caller, a.id, {""}, "B2", Severity::should, std::nullopt,
                "the caller untagged alias " + a.id + " is bound to");
          break;
        case Live::maybe:
          out.open.push_back(
              "alias " + a.id + "'s tag: " +
              (a.tag_state == TagState::tagged && a.expires_ms ? "within the margin of its expiry" : "not known"));
          break;
      }
    }
  }

  StatusExpectation aliases() {
    const auto ch = m.channel(op.channel);
    const std::string chan = "channel " + op.channel;
    switch (op.endpoint) {
      case api::Operation::list_aliases: {
        Expect e("E7", "E7");
        auth(e);
        if (empty_id(e, op.channel, "channel id")) return e.done();
        exists(e, ch.exists, "E7", chan);
        if (ch.exists != Known::no) alias_list_fields(ch);
        return e.done();
      }
      case api::Operation::tag: return tag(ch, chan);
      case api::Operation::untag:
      case api::Operation::call: return addressed(ch, chan);
      default: return {};
    }
  }

  StatusExpectation tag(const ChannelFacts& ch, const std::string& chan) {
    Expect e("E8", "E8");
    auth(e);
    if (empty_id(e, op.channel, "channel id")) return e.done();
    exists(e, ch.exists, "E8", chan);
    bool minutes_tolerated = false;
    if (!op.tag || !op.minutes) {
      e.must_refuse(st.bad_input, "R3", "the tag operation requires both tag and minutes (spec 4, rule 3)");
    } else if (const auto minutes = parse_minutes(*op.minutes); !minutes) {
      e.must_refuse(st.bad_input, "R3", "minutes=\"" + *op.minutes + "\" is not an integer (spec 2)");
    } else if (!profile.dialect.minutes.contains(*minutes)) {
      e.should_refuse(st.bad_input, "R3",
                      "minutes=" + *op.minutes + " is outside the profile's range " +
                          std::to_string(profile.dialect.minutes.min) + ".." +
                          std::to_string(profile.dialect.minutes.max));
    } else if (!profile.dialect.minutes.given && !e.must_refused() &&
               *minutes > std::max<std::int64_t>(m.minutes_taken, 1)) {
      minutes_tolerated = true;
      // The spec names bounds of minutes without showing them (spec 8): above
      // one minute (the least lifetime) and the most the target took, that it
      // takes these rests on DESIGN.md §3's default range alone.
      e.refusal_tolerated("R3", "minutes=" + *op.minutes +
                                    " lies in the default range 1..1440, which the profile does not "
                                    "confirm (spec 8 shows no bounds): set the profile's \"minutes\": {\"min\", "
                                    "\"max\"} to the range the target takes");
    }
    if (op.tag && op.tag->empty()) e.should_refuse(st.bad_input, "R3", "the tag is empty (an empty tag is bad input: profile statuses.bad_input)");
    if (ch.exists == Known::no) return e.done();
    const auto picks = possible_picks(ch, op.at_ms, m.clock);
    if (!picks.certain_free) {
      if (picks.maybe_free) {
        e.may_refuse(st.all_tagged, "T1", "every alias of " + chan + " may carry a live tag");
        out.open.push_back("whether an alias of " + chan + " is free");
      } else {
        e.must_refuse(st.all_tagged, "T1", "every alias of " + chan + " carries a live tag");
      }
    }
    // A refusal of the minutes is bad input, not the refusal of a full channel.
    if (minutes_tolerated && !e.refusal_named()) e.unexplained_by(st.all_tagged, "E8");
    std::vector<std::string> values = ch.aliases_complete ? picks.possible : std::vector<std::string>{};
    if (values.size() != 1) {
      std::string among;
      for (const auto& id : picks.possible) among += (among.empty() ? "" : ", ") + id;
      out.open.push_back("which alias the tag picks: " +
                         (ch.aliases_complete ? "any of " + among + " (their order of last use is not known)"
                                              : std::string("aliases not listed yet")));
    }
    field(Field::alias_id, {}, std::move(values), "E8", Severity::must, Severity::should, "the alias the tag picked",
          picks.excluded);
    if (op.tag) field(Field::alias_tag, {}, {*op.tag}, "E8", Severity::must, Severity::should, "the tag it carries");
    return e.done();
  }

  // DELETE of a tag, and a call: one alias of the channel addressed by its id.
  StatusExpectation addressed(const ChannelFacts& ch, const std::string& chan) {
    const bool call = op.endpoint == api::Operation::call;
    const std::string_view missing_rule = call ? "X1" : "R4";
    Expect e(missing_rule, call ? "B1" : "E9");
    auth(e);
    if (call && !profile.dialect.call_hook.enabled) {
      e.may_refuse(st.not_found, "B1", "the profile says the target has no call hook");
      e.may_refuse(st.wrong_method, "B1", "no route for it");
      out.open.push_back("the call: the profile says the target has no call hook");
      return e.done();
    }
    if (empty_id(e, op.channel, "channel id") || empty_id(e, op.id, "alias id")) return e.done();
    exists(e, ch.exists, missing_rule, chan);
    const AliasFacts* a = ch.find(op.id);
    if (!a) {
      if (ch.exists != Known::no)
        exists(e, ch.aliases_complete ? Known::no : Known::unknown, missing_rule, "alias " + op.id + " of " + chan);
      return e.done();
    }
    const auto live = live_at(*a, op.at_ms, m.clock);
    const std::string alias = "alias " + op.id;
    if (!call) {
      if (live == Live::no)
        e.should_refuse(st.not_found, "R4", alias + " has no tag (deleting no tag is not found: profile statuses.not_found)");
      if (live == Live::maybe) {
        e.may_refuse(st.not_found, "R4", alias + "'s tag may have ended");
        out.open.push_back("whether " + alias + " still has a tag");
      }
      field(Field::alias_id, {}, {op.id}, "R4", Severity::must, Severity::should, "the alias the deletion addressed");
      field(Field::alias_tag, {}, {""}, "E9", Severity::should, std::nullopt, "the tag left on " + alias);
      return e.done();
    }
    call_status(e, *a, live, alias);
    return e.done();
  }

  void call_status(Expect& e, const AliasFacts& a, Live live, const std::string& alias) {
    const LockAnswer lock = lock_answer(a, op.caller);
    const std::string_view through_rule = a.bound == Bound::nobody ? "B1" : "B3";
    const std::string holder = a.bound == Bound::caller ? a.caller : "another caller";
    switch (live) {
      case Live::yes:
        if (lock == LockAnswer::lets_through) e.success_rule(through_rule);
        if (lock == LockAnswer::refuses)
          e.must_refuse(
              st.call_refused, "B3",
              alias + " is bound to " + holder + " until its tag ends at " + std::to_string(*a.expires_ms) + " ms");
        if (lock == LockAnswer::open) {
          e.may_refuse(st.call_refused, "B3", alias + "'s caller lock is not known");
          out.open.push_back("whether " + alias + " is bound to " + op.caller);
        }
        return;
      case Live::no:
        if (end_of(a) == TagEnd::expired) e.success_rule("T1");  // the lock ended with the tag's minutes
        else
          e.refusal_tolerated(end_of(a) == TagEnd::deleted ? "T1" : "B1",
                              alias + (end_of(a) == TagEnd::deleted ? "'s tag was deleted" : " carries no tag") +
                                  ": any caller may call");
        return;
      case Live::maybe:
        if (lock == LockAnswer::lets_through && a.tag_state == TagState::tagged) {
          e.success_rule(through_rule);  // live or not, this caller gets through
          return;
        }
        if (lock == LockAnswer::lets_through) {
          e.refusal_tolerated("B1",
                              alias + "'s tag is not known: any caller may call an untagged alias");
          return;
        }
        e.may_refuse(st.call_refused, "B3", alias + "'s tag may still live");
        out.open.push_back("whether " + alias + "'s tag still lives, so whether " + op.caller + " gets through");
        return;
    }
  }
};

}  // namespace

Prediction predict(const Model& model, const Operation& op, const core::Profile& profile) {
  Predictor p{model, op, profile};
  p.out.operation = describe(op);
  p.out.names = profile.dialect.fields;
  switch (op.endpoint) {
    case api::Operation::list_agents:
    case api::Operation::get_agent:
    case api::Operation::snooze:
    case api::Operation::wake: p.out.status = p.agents(); break;
    case api::Operation::db_get:
    case api::Operation::db_set: p.out.status = p.database(); break;
    case api::Operation::list_aliases:
    case api::Operation::tag:
    case api::Operation::untag:
    case api::Operation::call: p.out.status = p.aliases(); break;
  }
  p.out.status.throttle = core::throttled(429, profile.statuses);
  return std::move(p.out);
}

}  // namespace crh::oracle
