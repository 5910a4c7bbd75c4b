// The API's operations as checks use them: paths, and reading lists, ids,
// tags and database values out of answers in any reasonable shape. Each
// helper ends the check with a MUST failure when the answer breaks the spec.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contracts/context.hpp"
#include "core/api.hpp"
#include "core/leave_as_found.hpp"

namespace crh::contracts::api {

// Paths come from the API model (core/api.hpp), the one place that knows them.
using core::api::agent_op_path;
using core::api::agent_path;
using core::api::agents_path;
using core::api::aliases_path;
using core::api::database_path;
using core::api::delete_tag_path;
using core::api::tag_path;

struct Item {
  std::string id;
  boost::json::value value;
};

// GET the list (E1 / E7): HTTP 200, JSON, a list found, every item with an id.
std::vector<Item> list_agents(CheckContext& ctx);
std::vector<Item> list_aliases(CheckContext& ctx);

// Ids read with the dialect's id fields.
std::optional<std::string> agent_id(const CheckContext& ctx, const boost::json::value& item);
std::optional<std::string> alias_id(const CheckContext& ctx, const boost::json::value& item);
// The alias a tag answer names: its own id, or the id of an object it holds
// (the spec does not show the tag answer's body).
std::optional<std::string> tagged_alias_id(const CheckContext& ctx, const boost::json::value& body);

// The alias's tag as the list shows it: a string when tagged, "" when the tag
// field is null or empty, nothing when the object has no tag field at all.
std::optional<std::string> tag_of(const CheckContext& ctx, const boost::json::value& alias);

// The agent's state field, or the whole object as text when it has none.
std::string agent_state(const CheckContext& ctx, const boost::json::value& agent);

// GET one agent (E2): 200, JSON object.
boost::json::value get_agent(CheckContext& ctx, const std::string& id);
// The operation named "snooze" or "wake" (the checks' loops and labels use the names).
core::api::Operation snooze_or_wake(std::string_view op);
// PUT snooze/wake (E3/E4): 200, JSON; notes the agent for the janitor.
boost::json::value agent_op(CheckContext& ctx, const std::string& id, const char* op);
// Sends the operation opposite to `op` (wake before a snooze), whatever it
// answers, so that `op` then changes the agent's state: the spec does not say
// whether snoozing a snoozed agent (or waking an awake one) is refused.
void ready_for(CheckContext& ctx, const std::string& id, std::string_view op);

// POST tag (E8): 200, JSON with the alias's id, and where the alias shows a
// tag, the one just set; the janitor deletes it unless delete_tag() does.
// `minutes` as the dialect encodes integers. `answer`, when given, gets the body.
std::string tag(CheckContext& ctx, const std::string& tag_name, int minutes = 10,
                boost::json::value* answer = nullptr);
// DELETE the tag (E9): 200, JSON.
void delete_tag(CheckContext& ctx, const std::string& alias);

// The value a database answer holds for `expected`: the dialect's field when
// present, else a bare string body. Nothing when neither is there.
std::optional<std::string> database_value(const CheckContext& ctx, const boost::json::value& body);
// True when `expected` appears as a string anywhere in the answer (any shape).
bool holds_string(const boost::json::value& body, const std::string& expected);

// A probe key: "crh-probe-" + suffix. Notes it (and its old value) with the
// janitor before the first write.
std::string probe_key(CheckContext& ctx, const std::string& suffix);
// GET the key without judging the answer: its value, or nothing when it has
// no value that can be read (cleanup, and the value a probe key had).
std::optional<std::string> read_database_value(CheckContext& ctx, const std::string& key);
// POST value to key (E6): 200, JSON.
void database_set(CheckContext& ctx, const std::string& key, const std::string& value);

// The first listed agent; the check is skipped when the target lists none.
std::string first_agent(CheckContext& ctx);

// The check's recording client, with the run's key, as the sender the
// putting back takes (core/leave_as_found.hpp).
core::SendRequest sender(CheckContext& ctx);

// Puts the agent back in `start_state` as every run does (core::put_agent_back:
// wake, and if that is not it, snooze, each read back). Never ends the check;
// true when the agent is back.
bool restore_agent(CheckContext& ctx, const std::string& id, const std::string& start_state);

// Notes the agent's state on construction and restores it on destruction.
class AgentGuard {
 public:
  AgentGuard(CheckContext& ctx, std::string id);
  ~AgentGuard();
  const std::string& start_state() const { return start_; }

 private:
  CheckContext& ctx_;
  std::string id_;
  std::string start_;
};

// DELETE the tag without judging the answer (cleanup); the janitor retries
// at the end of the run when this did not work.
void untag_quietly(CheckContext& ctx, const std::string& alias);

// When `e` is a 200 answer to a tag request that should have been refused,
// untags the alias it names (cleanup; never ends the check).
void untag_if_tagged(CheckContext& ctx, const core::Exchange& e);

// Deletes, on destruction, every tag the check made through it.
class TagGuard {
 public:
  explicit TagGuard(CheckContext& ctx) : ctx_(ctx) {}
  ~TagGuard();
  std::string tag(const std::string& what, int minutes = 10);  // api::tag, remembered
  void forget(const std::string& alias);                       // deleted by the check itself
  void adopt(const std::string& alias);                        // tagged by the check itself

 private:
  CheckContext& ctx_;
  std::vector<std::string> aliases_;
};

// The untagged aliases of the list (tag field null, "" or absent); nothing
// when its items are bare ids, which show no tags.
std::optional<std::vector<std::string>> untagged_aliases(CheckContext& ctx, const std::vector<Item>& aliases);

// Skips the check when the list shows every alias tagged: a tag is then
// rightly refused, and the check could test nothing.
void need_an_untagged_alias(CheckContext& ctx, const std::vector<Item>& aliases);
// Skips the check when `tag` was refused as when every alias is tagged (the
// profile's status) and the list shows them all tagged: tags of earlier
// checks a service failed to delete, or another client's, not this check's
// to judge.
void skip_if_rightly_full(CheckContext& ctx, const core::Exchange& tag);

// "crh-probe-<what>": tags the run makes, so a sweep can find leftovers.
std::string tag_name(const std::string& what);
inline constexpr std::string_view kProbePrefix = "crh-probe-";

}  // namespace crh::contracts::api
