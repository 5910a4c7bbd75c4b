// The model of the spec (issue 25): a pure, deterministic state machine of
// what the spec and the profile say. Given an operation it predicts the
// answer (the statuses the rules accept, the fields that are determined, what
// is open); given the answer that came, it advances, learning what it did not
// know. It shares no code with the reference service, so a bug in one cannot
// hide in the other. Steps: the facts (model_state.cpp), the predictions
// (model_predict.cpp), the learning (model_observe.cpp), the judging of an
// answer (model_check.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api.hpp"
#include "core/http.hpp"
#include "core/profile.hpp"
#include "oracle/shapes.hpp"  // Severity

namespace crh::oracle {

// ---- time ----

// The model's clock is the caller's: an operation says when it was sent, in
// ms since the model began. A tag of m minutes lives [sent, sent + m × minute_ms).
struct ModelClock {
  std::int64_t minute_ms = 60'000;  // one tag minute on the target (--minute-ms)
  // Within this many ms either side of a tag's expiry the tag may or may not
  // live, and either answer is accepted: the time a request is sent is not
  // the time the target handles it. 0: exact (a replay on the model's clock).
  std::int64_t margin_ms = 0;
};

// ---- operations: every endpoint of the spec and the call hook ----

enum class Auth : std::uint8_t { key, missing, wrong };  // the Apikey header: the console's key, none, another

struct Operation {
  core::api::Operation endpoint = core::api::Operation::list_agents;
  std::string channel;                 // list_aliases, tag, untag, call
  std::string id;                      // the agent, database key or alias
  std::optional<std::string> value;    // db_set: nothing when the parameter is not sent
  std::optional<std::string> tag;      // tag: nothing when not sent
  std::optional<std::string> minutes;  // tag: the text sent ("5", "abc"); nothing when not sent
  std::string caller;                  // call
  Auth auth = Auth::key;
  std::int64_t at_ms = 0;  // when it is sent, on the model's clock; operations come in the order sent
};

// "GET /api/v1/local-agents/101 at 1500 ms", for messages.
std::string describe(const Operation& op);

namespace ops {
Operation list_agents(std::int64_t at_ms = 0);
Operation get_agent(std::string id, std::int64_t at_ms = 0);
Operation snooze(std::string id, std::int64_t at_ms = 0);
Operation wake(std::string id, std::int64_t at_ms = 0);
Operation db_get(std::string key, std::int64_t at_ms = 0);
Operation db_set(std::string key, std::string value, std::int64_t at_ms = 0);
Operation list_aliases(std::string channel, std::int64_t at_ms = 0);
Operation tag(std::string channel, std::string tag, std::int64_t minutes, std::int64_t at_ms = 0);
Operation untag(std::string channel, std::string alias, std::int64_t at_ms = 0);
Operation call(std::string channel, std::string alias, std::string caller, std::int64_t at_ms = 0);
}  // namespace ops

// ---- answers ----

struct ObservedAnswer {
  bool answered = true;  // false: no answer (timeout, reset); it may or may not have taken effect
  unsigned status = 0;
  std::string body;

  static ObservedAnswer of(const core::Exchange& e);
  static ObservedAnswer none() { return {false, 0, {}}; }
};

// ---- what the model knows ----

enum class Known : std::uint8_t { no, yes, unknown };

struct AgentFacts {
  Known exists = Known::unknown;
  std::optional<std::string> state;  // the state field as a GET would show it now (JSON text); nothing: unknown
};

struct EntryFacts {
  Known exists = Known::unknown;
  std::optional<std::string> value;  // exists: its value, exactly; nothing: unknown
};

enum class TagState : std::uint8_t { untagged, tagged, unknown };
enum class TagEnd : std::uint8_t { none, deleted, expired };  // why an untagged alias has no tag (none: not known)
enum class Bound : std::uint8_t { nobody, caller, someone, unknown };

struct AliasFacts {
  std::string id;
  TagState tag_state = TagState::unknown;
  std::string tag;                         // tagged: its text
  std::optional<std::int64_t> expires_ms;  // tagged: when its minutes elapse; nothing: a tag found, not made
  TagEnd ended = TagEnd::none;             // untagged: why
  Bound bound = Bound::unknown;            // the caller lock of the current tag
  std::string caller;                      // bound == caller
  std::vector<std::string> not_bound;      // someone or unknown: callers refused, so not the bound one
  // unknown: when not empty, the lock is held by nobody or by one of these
  // (the callers whose calls went unanswered since it was last known free).
  std::vector<std::string> may_hold;
  // The uses (1, 2, ...: the model's tags and calls, in order) its last use
  // may be; 0: before the model began (or never), in an order not known.
  std::vector<std::int64_t> last_use{0};
};

struct ChannelFacts {
  Known exists = Known::unknown;
  bool aliases_complete = false;  // `aliases` are all the channel has
  std::vector<AliasFacts> aliases;
  // The uses that may have gone to an alias not among `aliases` (a tag whose
  // pick is unknown while the list was incomplete): an alias found later may
  // have been last used at any of them, not only before the model began.
  std::vector<std::int64_t> unseen_uses;

  const AliasFacts* find(std::string_view id) const;
  AliasFacts* find(std::string_view id);
  // An alias not among `aliases`: nothing known of it but its possible last uses.
  AliasFacts unseen(std::string id) const;
  AliasFacts& add(std::string id) { return aliases.emplace_back(unseen(std::move(id))); }
};

// What no other client touches on a live target: only these are predicted
// beyond what an operation itself determines.
struct Claims {
  bool everything = false;                // the model is the target's only client
  std::vector<std::string> channels;      // channels taken for the run (--channel)
  std::vector<std::string> agents;        // agents no one else snoozes or wakes
  std::vector<std::string> key_prefixes;  // database keys no one else writes ("crh-probe-")
};

// A target known whole: a fresh service and its fixtures, or a replay.
struct Start {
  struct Agent {
    std::string id;
    std::optional<std::string> state;  // JSON text ("\"available\""); nothing: unknown
  };
  struct Channel {
    std::string id;
    std::vector<std::string> aliases;
  };
  std::vector<Agent> agents;
  std::map<std::string, std::string> database;
  std::vector<Channel> channels;
  std::optional<std::string> awake_state, snoozed_state;  // what wake and snooze answer (JSON text), if known
};

// A value: copy it to keep a snapshot (a shrinker replays from one).
struct Model {
  ModelClock clock;
  Claims claims;
  bool agents_complete = false;    // `agents` are all there are
  bool database_complete = false;  // a key not in `database` does not exist
  bool channels_complete = false;  // a channel not in `channels` does not exist
  std::map<std::string, AgentFacts> agents;
  std::map<std::string, EntryFacts> database;
  std::map<std::string, ChannelFacts> channels;
  std::optional<std::string> awake_state, snoozed_state;  // learned from wake and snooze answers
  std::int64_t uses = 0;                                  // the model's uses of aliases so far
  // The most minutes the target took in a tag. The spec names bounds of
  // minutes without showing them (spec 8): from 1 up to what was taken lies
  // inside them, so the model then predicts those are taken.
  std::int64_t minutes_taken = 0;

  // Everything known; the model is the target's only client.
  static Model known(const Start& start, ModelClock clock = {});
  // A live target: nothing known; what is read is learned, and what others may
  // touch (anything outside `claims`) is read but never predicted.
  static Model unknown(ModelClock clock, Claims claims);

  AgentFacts agent(const std::string& id) const;
  EntryFacts entry(const std::string& key) const;
  ChannelFacts channel(const std::string& id) const;
  bool owns_agent(const std::string& id) const;
  bool owns_key(const std::string& key) const;
  bool owns_channel(const std::string& id) const;
};

// Whether an alias's tag lives at `at_ms`: maybe within the margin of its
// expiry, or when the model never learned it.
enum class Live : std::uint8_t { yes, no, maybe };
Live live_at(const AliasFacts& alias, std::int64_t at_ms, const ModelClock& clock);

// ---- the caller lock (B1, B3), read once ----

// The model predicts and learns calls on a live tag through these two, and
// the race's checker (checker.hpp) judges its rounds with them: one reading
// of first-caller-wins.
enum class LockAnswer : std::uint8_t {
  lets_through,  // free, held by this caller, or (calls without an answer) one or the other
  refuses,       // held by another caller, or this caller was refused before
  open,          // not known
};
LockAnswer lock_answer(const AliasFacts& alias, std::string_view caller);

enum class CallAnswer : std::uint8_t { connected, refused, unknown };  // unknown: no answer, or a 5xx
// What a call on a live tag leaves its lock as.
void lock_after_call(AliasFacts& alias, std::string_view caller, CallAnswer answer);

// ---- predictions ----

// What the status of an answer may be. A refusal is any status but 200
// below 500; a 5xx is never a contract answer.
struct StatusExpectation {
  bool ok = true;                  // the MUST rules accept 200
  bool ok_expected = true;         // the profile expects 200 (else a 200 is a SHOULD difference)
  bool refusal = false;            // the MUST rules accept a refusal
  std::vector<unsigned> statuses;  // the refusals the profile names (empty: it expects none)
  std::string_view ok_rule;        // broken by a 200 where none is accepted (or expected)
  std::string_view refusal_rule;   // broken by a refusal where none is accepted (or expected)
  std::string_view status_rule;    // broken (SHOULD) by a refusal with a status the profile does not name
  std::string why;                 // what decides it, for messages
  // Refusals tolerated for one cause that these statuses do not explain (a
  // tag refused as if every alias were tagged, when one is certainly free):
  // a refusal with one of them breaks `unexplained_rule` (MUST).
  std::vector<unsigned> unexplained;
  std::string_view unexplained_rule;
  bool throttle = false;  // a 429 is a "not now" (core::throttled): no rule judges it
};

// A field of a 200 answer, read under the profile's names.
enum class Field : std::uint8_t {
  agent_id,             // the agent object's id
  agent_state,          // its state field (JSON text)
  agent_ids,            // the listed agents' ids, as a set
  listed_agent_state,   // `item`'s state in the agent list
  entry_value,          // the database value
  alias_id,             // the alias a tag or delete answer names
  alias_tag,            // that alias's tag ("" untagged)
  alias_ids,            // the listed aliases' ids, as a set
  listed_tag,           // `item`'s tag in the alias list ("" untagged)
  listed_bound_caller,  // `item`'s bound caller in the alias list ("" nobody)
};
std::string_view to_string(Field f);

struct Excluded {
  std::string value;
  std::string_view rule;  // the rule that value breaks
  std::string why;
};

struct FieldExpectation {
  Field field;
  std::string item;                 // listed_*: the listed item's id
  std::vector<std::string> values;  // the value, or the values it may take (empty: any but `excluded`); sets: exactly
  std::vector<Excluded> excluded;   // values ruled out, each with its rule and reason
  std::string_view rule;            // the rule a value not among `values` breaks
  Severity wrong = Severity::must;  // a value shown that differs
  std::optional<Severity> missing = Severity::should;  // nothing shown under the profile's name (nothing: fine)
  std::string what;                                    // "agent 101's state", for messages
};

struct Prediction {
  std::string operation;  // describe(op)
  StatusExpectation status;
  std::vector<FieldExpectation> fields;  // judged on a 200
  std::vector<std::string> open;         // what the model leaves open, and why
  core::FieldNames names;                // the profile's names the fields are read under
};

Prediction predict(const Model& model, const Operation& op, const core::Profile& profile);

// ---- learning and judging ----

// Advances the model by the answer that came: the answer is what the target
// now holds (a divergence is followed, so later predictions stay useful); no
// answer or a 5xx leaves what the operation may have changed unknown.
void observe(Model& model, const Operation& op, const ObservedAnswer& answer, const core::Profile& profile);

struct Divergence {
  Severity severity;
  std::string_view rule;  // a catalogue id (oracle/rules.hpp)
  std::string expected;
  std::string got;
  std::string text;  // one line: the operation, what was expected, what came, the rule
};

// What in the answer the prediction does not accept; empty when it accepts
// it all. No answer is judged by no rule here (X0 is the checks', who retry).
std::vector<Divergence> check(const Prediction& prediction, const ObservedAnswer& answer);

}  // namespace crh::oracle
