// The API model: the one place outside reference/ that knows the nine
// endpoints of the spec and the call hook (DESIGN.md §4). An operation and
// its arguments in, a request out, encoded as the target's dialect says; and
// the readers of lists, ids and fields under the dialect's names. The
// contract checks and the load generator both build and read through it.
#pragma once

#include <algorithm>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/http.hpp"

namespace crh::core {

struct Target;

// How a caller calls an alias: the harness's extension, a setting so that
// another test hook can be driven.
struct CallHook {
  bool enabled = true;  // false: the target has none; binding checks are skipped
  std::string method = "POST";
  std::string path = "/channels/{channel}/alias-numbers/{alias}/calls";  // DESIGN.md §4
  std::string parameter = "caller";

  // The path with {channel} and {alias} replaced by percent-encoded ids.
  std::string path_for(std::string_view channel, std::string_view alias) const;
};

// Where the target puts ids, lists and fields the spec does not name. Ids
// may be strings or numbers; a list may also be a bare array or the only
// array field of the answer.
struct FieldNames {
  std::vector<std::string> agent_id{"id", "agent_id", "agentId", "ID"};
  std::vector<std::string> alias_id{"id", "alias_id", "aliasId", "ID"};
  std::string agents_list = "agents";
  std::string aliases_list = "aliases";
  std::string agent_state = "state";                // compared before and after snooze/wake
  std::string alias_tag = "tag";                    // null or absent: untagged
  std::string database_value = "value";             // where the database GET puts the value
  std::string alias_expiry = "expires_at";          // in the alias list: when the tag ends
  std::string alias_bound_caller = "bound_caller";  // in the alias list: the caller the alias is bound to
};

// The range of the tag's `minutes` the target accepts (the spec shows none; DESIGN.md §3).
struct MinutesRange {
  std::int64_t min = 1;
  std::int64_t max = 1440;
  bool given = false;  // the profile set it (else it is DESIGN.md §3's default)
  bool contains(std::int64_t m) const { return m >= min && m <= max; }
  // `m` moved into the range (and never below 1 minute): what a tag that is
  // meant to succeed asks for.
  int fit(int m) const { return static_cast<int>(std::clamp<std::int64_t>(m, std::max<std::int64_t>(min, 1), max)); }
};

}  // namespace crh::core

namespace crh::core::api {

// The spec's version prefix of the agent endpoints.
inline constexpr std::string_view kVersionPrefix = "/api/v1";

enum class Operation {
  list_agents,   // GET    /api/v1/local-agents
  get_agent,     // GET    /api/v1/local-agents/{id}
  snooze,        // PUT    /api/v1/local-agents/{id}/snooze
  wake,          // PUT    /api/v1/local-agents/{id}/wake
  db_get,        // GET    /database/{key}
  db_set,        // POST   /database/{key}        value
  list_aliases,  // GET    /channels/{channel}/alias-numbers
  tag,           // POST   /channels/{channel}/alias-numbers/tag          tag, minutes
  untag,         // DELETE /channels/{channel}/alias-numbers/{alias}/tag
  call,          // the call hook: the dialect's method and path         caller
};

// What an operation addresses and carries; each uses only its own fields.
struct Arguments {
  std::string id;      // the agent, database key or alias
  std::string value;   // db_set
  std::string tag;     // tag
  int minutes = 10;    // tag
  std::string caller;  // call
};

// The request for `op` on `target` (channel and dialect), without the Apikey
// header: the sender decides how to authenticate.
HttpRequest request(const Target& target, Operation op, const Arguments& args = {});

// An operation as a generator sends it (exploration, request_as_sent): a parameter may be left
// out, `minutes` is the text sent (a number when it is an integer, "abc"
// too), the channel is the operation's own, and a database key may have
// every byte percent-encoded (%XX: the same key to any reader of URIs).
struct Sent {
  std::string id;
  std::string channel;                 // list_aliases, tag, untag, call
  std::optional<std::string> value;    // db_set
  std::optional<std::string> tag;      // tag
  std::optional<std::string> minutes;  // tag
  std::string caller;                  // call
  bool every_byte_encoded = false;     // db_get, db_set
};
HttpRequest request_as_sent(const Target& target, Operation op, const Sent& sent);

// Paths, percent-encoded, under the base URL (for requests the model does
// not build: odd methods, odd bodies, labels in messages).
std::string agents_path();                                              // /api/v1/local-agents
std::string agent_path(const std::string& id);                          // /api/v1/local-agents/ID
std::string agent_op_path(const std::string& id, std::string_view op);  // .../ID/snooze
std::string database_path(const std::string& key);                      // /database/KEY
std::string aliases_path(const std::string& channel);                   // /channels/ID/alias-numbers
std::string tag_path(const std::string& channel);                       // .../alias-numbers/tag
std::string delete_tag_path(const std::string& channel, const std::string& alias);

// ---- reading answers, in any reasonable shape ----

struct FoundList {
  const boost::json::array* items = nullptr;
  std::string where;  // "the body" or "field \"agents\""
};

// The collection in `body`: the body itself when it is an array; else the
// field `preferred` when it is an array; else the one field that holds an
// array. Nothing (and `why`) when there is none or the choice is ambiguous.
std::optional<FoundList> find_list(const boost::json::value& body, std::string_view preferred, std::string& why);

// An item's id as text: a bare string or integer item is its own id; for an
// object, the first of `fields` holding a non-empty string or an integer.
std::optional<std::string> item_id(const boost::json::value& item, std::span<const std::string> fields);

// What an item holds, for a message that says what was found: "fields
// "id", "name"" (names made printable, 40 characters at most), "no fields",
// or what it is instead of an object.
std::string fields_text(const boost::json::value& item);

// Ids read under the dialect's id fields.
std::optional<std::string> agent_id(const FieldNames& names, const boost::json::value& item);
std::optional<std::string> alias_id(const FieldNames& names, const boost::json::value& item);

// The alias a tag answer names: its own id, else the id of the first object
// it holds that has one (a service may wrap the alias).
std::optional<std::string> tagged_alias_id(const FieldNames& names, const boost::json::value& body);

// The alias's tag as the list shows it: a string when tagged, "" when the tag
// field is null or empty, nothing when the object has no tag field at all.
std::optional<std::string> tag_of(const FieldNames& names, const boost::json::value& alias);

// The ids of the aliases in a list answer whose tag starts with `prefix`
// (what a run tagged, for its restore); nothing when the answer holds no list.
std::optional<std::vector<std::string>> aliases_tagged(const FieldNames& names, const boost::json::value& body,
                                                       std::string_view prefix);

// The agent's state field as JSON text, or the whole object's when it has none.
std::string agent_state(const FieldNames& names, const boost::json::value& agent);
// The state field when it is a string ("available", "snoozed"); else nothing.
std::optional<std::string> agent_state_text(const FieldNames& names, const boost::json::value& agent);

// The value a database answer holds: the dialect's field when present, else
// a bare string body. Nothing when neither is there.
std::optional<std::string> database_value(const FieldNames& names, const boost::json::value& body);

// ---- recognizing requests (a capture's traffic, `crh pcap check`) ----

// Which operation a request is, and what it addresses (ids percent-decoded).
struct Recognized {
  Operation op;
  std::string channel;  // list_aliases, tag, untag, call (when the hook's path holds {channel})
  std::string id;       // the agent, database key or alias
};

// The operation `method` and `target` (path and query, as sent) name, under
// `hook` (the dialect's call hook, tried first: its path may be anything) and
// below `base_path` (the base URL's path, "" or "/prefix"; a target outside
// it is no operation). Nothing for anything else (an unknown route, a wrong
// method, a malformed percent-encoding).
std::optional<Recognized> recognize(const CallHook& hook, std::string_view method, std::string_view target,
                                    std::string_view base_path = {});

// A request parameter wherever a client may have put it: the query string,
// a form body, a JSON object body (strings as they are, numbers as text).
std::optional<std::string> request_parameter(const HttpRequest& request, std::string_view name);

// `text` with %XX sequences decoded ('+' stays: paths keep it); nothing when
// a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

}  // namespace crh::core::api
