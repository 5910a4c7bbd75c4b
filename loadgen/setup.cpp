// Preflight, discovery and restore with the blocking client of core/.
#include "core/outside.hpp"
#include "loadgen/setup.hpp"

#include <algorithm>
#include <functional>
#include <boost/json.hpp>

#include "core/api.hpp"
#include "core/call_drivers.hpp"
#include "core/http_client.hpp"

namespace crh::loadgen {
namespace json = boost::json;
using core::api::Operation;
namespace {

core::HttpRequest with_key(core::HttpRequest r, const LoadConfig& c) {
  r.headers.push_back({"Apikey", c.target.api_key});
  return r;
}

// An operation of the API model, with the key.
core::HttpRequest op(const LoadConfig& c, Operation o, core::api::Arguments args = {}) {
  return with_key(core::api::request(c.target, o, args), c);
}

std::string answer_text(const core::Exchange& x) {
  if (!x.response) return x.error_detail.empty() ? std::string(core::to_string(x.error)) : x.error_detail;
  std::string body = core::from_target(x.response->body, 200);  // redacted, then cut
  for (auto& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return "HTTP " + std::to_string(x.response->status) + " (body: " + body + ")";
}

std::optional<json::value> parse(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec) return std::nullopt;
  return v;
}

// What `read` finds in the JSON body of a 200 answer; nothing for any other answer.
template <class Read>
std::optional<std::string> from_ok_json(const core::Exchange& x, Read read) {
  if (!x.response || x.response->status != 200) return std::nullopt;
  auto v = parse(x.response->body);
  return v ? read(*v) : std::nullopt;
}

// The database value in a GET's answer, under the dialect's field name.
std::optional<std::string> database_value_in(const LoadConfig& c, const core::Exchange& x) {
  return from_ok_json(x, [&](const json::value& v) { return core::api::database_value(c.target.dialect.fields, v); });
}

json::value parse_or_throw(const core::Exchange& x, const std::string& what) {
  auto v = parse(x.response->body);
  if (!v) throw SetupError(what + ": expected a JSON body, got " + answer_text(x));
  return *v;
}

// A setup step that must succeed; a refused key (a status of the profile's
// `auth`) is named as such.
const core::Exchange& checked_ok(const LoadConfig& c, const core::Exchange& x, const std::string& shown,
                                 const std::string& what) {
  if (!x.response)
    throw SetupError("cannot reach the target: " + shown + " got no answer (" + answer_text(x) +
                     "); is it running, and is --base-url right?");
  const auto& auth = c.statuses.auth;
  if (std::find(auth.begin(), auth.end(), x.response->status) != auth.end())
    throw SetupError(shown + " was refused with HTTP " + std::to_string(x.response->status) +
                     ": the API key (CRH_API_KEY or --api-key-file) is not accepted");
  if (x.response->status != 200) throw SetupError(what + ": " + shown + " expected HTTP 200, got " + answer_text(x));
  return x;
}

core::Exchange expect_ok(core::HttpClient& client, const LoadConfig& c, core::HttpRequest r, const std::string& what) {
  const std::string shown = r.method + " " + c.target.base.to_string() + r.target;
  auto x = client.send(std::move(r));
  checked_ok(c, x, shown, what);
  return x;
}

// The items of a list answer, found as the dialect names the list.
const json::array* items_of(const json::value& body, const std::string& preferred) {
  std::string why;
  auto found = core::api::find_list(body, preferred, why);
  return found ? found->items : nullptr;
}

// The agent's state field as JSON text, compared as is: the harness does not
// need to know the target's words for "snoozed" to put an agent back.
std::optional<std::string> state_of(const core::FieldNames& names, const json::value& agent) {
  if (!agent.is_object()) return std::nullopt;
  const auto* v = agent.get_object().if_contains(names.agent_state);
  if (!v) return std::nullopt;
  return json::serialize(*v);
}

void discover_agents(core::HttpClient& client, const LoadConfig& c, Discovery& d, FoundState& found) {
  const auto& names = c.target.dialect.fields;
  auto agents = expect_ok(client, c, op(c, Operation::list_agents), "listing the agents");
  const json::value body = parse_or_throw(agents, "listing the agents");
  if (const auto* list = items_of(body, names.agents_list))
    for (const auto& item : *list)
      if (auto id = core::api::agent_id(names, item); id && item.is_object()) {
        d.agents.push_back(*id);
        found.agent_states.emplace_back(*id, state_of(names, item));
      }
}

// Why the load cannot take itself for the channel's only tagging client, so
// that a tag refused as "every alias is tagged" is judged against its own
// tags (tag_ledger.hpp); "" when it can: unsharded, and the channel showed no
// tag at set-up but crh's own (crh-load, crh-probe-: left by an earlier run).
std::string sole_tagger_doubt(const LoadConfig& c, const json::value& list_body, const core::FieldNames& names) {
  if (c.shard.sharded())
    return "shard " + std::to_string(c.shard.index) + "/" + std::to_string(c.shard.count) +
           ": the other shards tag the same channel, so an alias this shard freed may be theirs";
  const auto* list = items_of(list_body, names.aliases_list);
  if (!list || list->empty()) return "the alias list could not be read";
  bool shown = false;
  std::vector<std::string> foreign;
  for (const auto& item : *list) {
    auto tag = core::api::tag_of(names, item);
    shown |= tag.has_value();
    if (tag && !tag->empty() && !tag->starts_with("crh-"))
      foreign.push_back(core::api::alias_id(names, item).value_or("?") + " (\"" + *tag + "\")");
  }
  if (!shown)
    return "the alias objects show no field \"" + names.alias_tag +
           "\" (profile fields.alias_tag) and no tag answer named another, so whether another client holds tags "
           "is unknown";
  if (foreign.empty()) return "";
  return "channel " + c.target.channel + " showed " + std::to_string(foreign.size()) +
         " tag(s) not made by crh at set-up (alias " + foreign.front() +
         (foreign.size() > 1 ? ", ..." : "") + "): another client tags it, so an alias the load freed may be theirs";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

// The field names of an object, for a message that says what was found.
std::string fields_of(const json::value& v) {
  if (!v.is_object()) return std::string("not an object but ") + (v.is_string() ? "a string" : "a scalar or array");
  std::vector<std::string> names;
  for (const auto& [k, x] : v.get_object()) names.emplace_back(core::from_target(std::string(k), 40));
  return names.empty() ? "no fields" : "fields " + joined(names);
}

json::value discover_aliases(core::HttpClient& client, const LoadConfig& c, Discovery& d) {
  const auto& names = c.target.dialect.fields;
  const std::string shown = "GET " + c.target.base.to_string() + core::api::aliases_path(c.target.channel);
  auto aliases =
      expect_ok(client, c, op(c, Operation::list_aliases), "listing the channel's aliases (is --channel right?)");
  json::value body = parse_or_throw(aliases, "listing the aliases");
  std::string why;
  auto found = core::api::find_list(body, names.aliases_list, why);
  if (!found)
    throw SetupError(shown + ": looked for the list of aliases in field \"" + names.aliases_list +
                     "\" (profile lists.aliases), a bare array or the only array field, and found none (" + why +
                     "); the race and the mix need the channel's aliases");
  for (const auto& item : *found->items)
    if (auto id = core::api::alias_id(names, item); id && item.is_object()) d.aliases.push_back(*id);
  if (d.aliases.empty())
    throw SetupError(
        shown + ": found " + std::to_string(found->items->size()) + " item(s) in " + found->where +
        (found->items->empty() ? ""
                               : " but no alias id: looked for an id under " + joined(names.alias_id) +
                                     " (profile id_fields.alias), the first item has " +
                                     fields_of(found->items->front())) +
        "; the race and the mix need at least one alias");
  return body;
}

// Whether the load tags aliases: the race, or a mix with tags.
bool tags_aliases(const LoadConfig& c) {
  return c.scenario == Scenario::race ||
         (c.scenario == Scenario::mixed && std::any_of(c.mix.begin(), c.mix.end(), [](const MixEntry& m) {
            return m.op == oracle::OpKind::tag && m.weight > 0;
          }));
}

// The field of a tag answer that holds the tag name just sent: where this
// target shows an alias's tag when the profile's field is not there.
std::optional<std::string> field_holding(const json::value& body, const std::string& tag) {
  if (!body.is_object()) return std::nullopt;
  for (const auto& [k, v] : body.get_object())
    if (v.is_string() && v.get_string() == tag) return std::string(k);
  for (const auto& [k, v] : body.get_object())
    if (auto inner = field_holding(v, tag)) return inner;
  return std::nullopt;
}

// Whether any alias of the list shows `field`.
bool shows_field(const core::FieldNames& names, const json::value& list_body) {
  const auto* list = items_of(list_body, names.aliases_list);
  return list && std::any_of(list->begin(), list->end(),
                             [&](const json::value& a) { return core::api::tag_of(names, a).has_value(); });
}

// The race needs an untagged alias: with none, every tag would be refused and
// the run would measure nothing. Read leniently, as the contract does: a tag
// field null, "" or absent is untagged.
void require_untagged(const LoadConfig& c, const core::FieldNames& names, const json::value& list_body) {
  const auto* list = items_of(list_body, names.aliases_list);
  if (!list) return;
  std::vector<std::string> tagged;
  if (list->empty()) return;
  for (const auto& a : *list)
    if (auto t = core::api::tag_of(names, a); t && !t->empty())
      tagged.push_back(core::api::alias_id(names, a).value_or("?") + "=\"" + core::from_target(*t, 40) + "\"");
    else return;
  throw SetupError("channel " + c.target.channel + ": every one of its " + std::to_string(tagged.size()) +
                   " alias(es) shows a tag in field \"" + names.alias_tag + "\" (profile fields.alias_tag; " +
                   tagged.front() + (tagged.size() > 1 ? ", ..." : "") +
                   "), so every tag of the race would be refused: untag one, wait for the tags to expire, or use "
                   "another --channel");
}

// One tag of the load's name (and its untag): its answer's JSON. `call`, when
// set, places a call on the tagged alias in between (the race's probe).
json::value probe_tag(core::HttpClient& client, const LoadConfig& c,
                      const std::function<void(const std::string& alias)>& call = {}) {
  auto request = op(c, Operation::tag, {.tag = load_tag_name(c.shard), .minutes = c.target.dialect.minutes.fit(1)});
  const std::string shown = request.method + " " + c.target.base.to_string() + request.target;
  auto tag = client.send(std::move(request));
  const auto& full = c.statuses.all_tagged;
  if (tag.response && std::find(full.begin(), full.end(), tag.response->status) != full.end())
    throw SetupError("tagging an alias: " + shown + " was refused with HTTP " + std::to_string(tag.response->status) +
                     ", every alias tagged (profile statuses.all_tagged), although the list showed none tagged in \"" +
                     c.target.dialect.fields.alias_tag + "\" (profile fields.alias_tag): " + answer_text(tag) +
                     "; untag one, wait for the tags to expire, or name the tag field in the profile");
  checked_ok(c, tag, shown, "tagging an alias");
  const json::value body = parse_or_throw(tag, "tagging an alias");
  auto alias = core::api::tagged_alias_id(c.target.dialect.fields, body);
  if (!alias)
    throw SetupError("tagging an alias: looked for the alias id under " + joined(c.target.dialect.fields.alias_id) +
                     " (profile id_fields.alias) in the answer, found " + fields_of(body) + ": " + answer_text(tag));
  try {
    if (call) call(*alias);
  } catch (...) {
    client.send(op(c, Operation::untag, {.id = *alias}));
    throw;
  }
  client.send(op(c, Operation::untag, {.id = *alias}));
  return body;
}

// Places one SIP call on a freshly tagged alias through the SIP driver, so
// that a SIP target that does not answer or does not connect is told so
// instead of racing on unknown outcomes.
json::value probe_sip_call(core::HttpClient& client, const LoadConfig& c) {
  auto driver = core::make_call_driver(c.target, c.statuses, {.timeout = c.timeout});
  return probe_tag(client, c, [&](const std::string& alias) {
    const auto r = driver->place(alias, "+15559999999");
    if (r.outcome != core::CallOutcome::connected)
      throw SetupError("the first SIP caller of a freshly tagged alias (" + alias + ") did not connect: " + r.evidence +
                       ". The race over SIP needs --sip-target to take calls to the alias's number (profile "
                       "sip.number_field, sip.uri)");
  });
}

json::value probe_call_hook(core::HttpClient& client, const LoadConfig& c) {
  const auto& hook = c.target.dialect.call_hook;
  if (!hook.enabled)
    throw SetupError("the race needs the call hook (DESIGN.md §4), and the profile says the target has none");
  const std::string base = c.target.base.to_string();
  std::optional<core::Exchange> placed;
  json::value body =
      probe_tag(client, c, [&](const std::string& alias) {
        placed = client.send(op(c, Operation::call, {.id = alias, .caller = "+15559999999"}));
      });
  const auto alias = core::api::tagged_alias_id(c.target.dialect.fields, body).value_or("?");
  const core::Exchange& call = *placed;
  if (!call.response || call.response->status != 200)
    throw SetupError("the call hook did not connect the first caller of a freshly tagged alias: " + hook.method + " " +
                     base + hook.path_for(c.target.channel, alias) + " got " + answer_text(call) +
                     ". The race needs the hook of DESIGN.md §4 (README: the call hook)");
  return body;
}

// A sharded mix reads and changes only its shard's agents and calls only its
// shard's aliases: another shard's snooze of the same agent would read as a
// broken rule in this shard's checker. (The race's aliases are picked by the
// target's tag operation, so the race needs no split of them.)
void share_discovery(const LoadConfig& c, Discovery& d, FoundState& found) {
  const auto shard_text = std::to_string(c.shard.index) + "/" + std::to_string(c.shard.count);
  auto uses = [&](oracle::OpKind op) {
    return std::any_of(c.mix.begin(), c.mix.end(), [&](const MixEntry& m) { return m.op == op && m.weight > 0; });
  };
  const auto all_agents = d.agents.size(), all_aliases = d.aliases.size();
  d.agents = strided(std::move(d.agents), c.shard);
  d.aliases = strided(std::move(d.aliases), c.shard);
  std::erase_if(found.agent_states, [&](const auto& state) {
    return std::find(d.agents.begin(), d.agents.end(), state.first) == d.agents.end();
  });
  if (d.agents.empty() &&
      (uses(oracle::OpKind::get_agent) || uses(oracle::OpKind::snooze) || uses(oracle::OpKind::wake)))
    throw SetupError("shard " + shard_text + ": the target lists " + std::to_string(all_agents) + " agent(s) for " +
                     std::to_string(c.shard.count) +
                     " shards, none for this one (each shard reads and changes its own agents): use fewer shards, "
                     "or a --mix without get-agent, snooze and wake");
  if (d.aliases.empty() && uses(oracle::OpKind::call))
    throw SetupError("shard " + shard_text + ": channel " + c.target.channel + " lists " + std::to_string(all_aliases) +
                     " alias(es) for " + std::to_string(c.shard.count) +
                     " shards, none for this one (each shard calls its own aliases): use fewer shards, or a --mix "
                     "without call");
}

}  // namespace

std::optional<std::string> tagged_alias_id(const core::FieldNames& names, const std::string& body) {
  auto v = parse(body);
  return v ? core::api::tagged_alias_id(names, *v) : std::nullopt;
}

Discovery discover(const LoadConfig& c, FoundState& found) {
  core::register_run_key(c.target.api_key);
  core::HttpClient client(c.target.base, {.timeout = std::min(c.timeout, std::chrono::milliseconds(3000))});
  const std::string base = c.target.base.to_string();
  Discovery d;
  if (c.scenario == Scenario::get) {
    // The path may need no key and any status is a fair answer; silence is not.
    auto x = client.send(with_key(core::build_request("GET", c.path, {}, c.target.dialect.encoding), c));
    // An answer that breaks HTTP (bytes nobody asked for, past the caps) is
    // still an answer: the load measures it as the error it is.
    const bool answered =
        x.response || x.error == core::TransportError::malformed || x.error == core::TransportError::too_large;
    if (!answered)
      throw SetupError("cannot reach the target: GET " + base + c.path + " got no answer (" + answer_text(x) + ")");
    return d;
  }
  discover_agents(client, c, d, found);
  const json::value aliases = discover_aliases(client, c, d);
  core::FieldNames names = c.target.dialect.fields;
  const bool tags = tags_aliases(c);
  if (c.scenario == Scenario::race) require_untagged(c, names, aliases);
  if (c.scenario == Scenario::mixed && c.shard.sharded()) share_discovery(c, d, found);

  found.database_value =
      database_value_in(c, client.send(op(c, Operation::db_get, {.id = load_database_key(c.shard)})));

  if (c.scenario == Scenario::mixed) {  // so that the mix's reads find the key (restored afterwards)
    expect_ok(client, c,
              op(c, Operation::db_set, {.id = load_database_key(c.shard), .value = std::string(kLoadDatabaseValue)}),
              "writing the database key the mix reads");
    // What the mix's reads are judged against: the value as read back (a
    // target that ignored the write shows it here), and the agents' states.
    d.database_value = database_value_in(c, client.send(op(c, Operation::db_get, {.id = load_database_key(c.shard)})));
    d.agent_states = found.agent_states;
  }
  std::optional<json::value> tag_answer;
  if (c.scenario == Scenario::race) tag_answer = c.target.calls.sip ? probe_sip_call(client, c) : probe_call_hook(client, c);
  else if (tags && !shows_field(names, aliases)) tag_answer = probe_tag(client, c);
  // Where the list shows no tag under the profile's name, the field in which
  // the tag answer showed the name just sent is where this target keeps it.
  if (tag_answer && !shows_field(names, aliases))
    if (auto learned = field_holding(*tag_answer, load_tag_name(c.shard))) names.alias_tag = *learned;
  found.alias_tag = shows_field(names, aliases) ? names.alias_tag : "";
  d.all_tagged_unjudged = sole_tagger_doubt(c, aliases, names);
  return d;
}

namespace {

// The aliases whose tag the load made (crh-load...), or why the list could not be read.
std::optional<std::string> load_tags(core::HttpClient& client, const LoadConfig& c, const FoundState& found,
                                     std::vector<std::string>& ids) {
  core::FieldNames names = c.target.dialect.fields;
  if (!found.alias_tag.empty()) names.alias_tag = found.alias_tag;
  auto list = client.send(op(c, Operation::list_aliases));
  if (!list.response || list.response->status != 200) return answer_text(list);
  auto v = parse(list.response->body);
  auto tagged = v ? core::api::aliases_tagged(names, *v, load_tag_name(c.shard)) : std::nullopt;
  if (!tagged) return "no alias list in " + answer_text(list);
  ids = std::move(*tagged);
  return std::nullopt;
}

// Reads the agent's state from `x` (a GET, wake or snooze answer, all the
// agent object by spec rule R1); nothing when it cannot be read.
std::optional<std::string> state_in(const LoadConfig& c, const core::Exchange& x) {
  return from_ok_json(x, [&](const json::value& v) { return state_of(c.target.dialect.fields, v); });
}

// Puts one agent back: read it; if its state differs from the start, wake it,
// then snooze it, until a state read back equals the start. A problem when
// the state cannot be read or no operation restores it.
std::optional<std::string> restore_agent(core::HttpClient& client, const LoadConfig& c, const std::string& id,
                                         const std::optional<std::string>& start) {
  const auto& field = c.target.dialect.fields.agent_state;
  if (!start)
    return "agent " + id + ": its state could not be read at the start (no field \"" + field +
           "\"; set fields.agent_state in the profile), so whether the run left it snoozed or woken is unknown";
  auto now = client.send(op(c, Operation::get_agent, {.id = id}));
  auto state = state_in(c, now);
  for (auto o : {Operation::wake, Operation::snooze}) {
    if (state == start) return std::nullopt;
    state = state_in(c, client.send(op(c, o, {.id = id})));
  }
  if (state == start) return std::nullopt;
  return "agent " + id + ": its \"" + field + "\" was " + *start + " at the start and is " +
         state.value_or("unreadable (" + answer_text(now) + ")") +
         " after the run; neither wake nor snooze put it back";
}

// Writes the load's database key back and reads it to see the value there.
// A key that had no value keeps "" (the API has no delete; the key is the
// harness's own, under crh-probe-).
std::optional<std::string> restore_database(core::HttpClient& client, const LoadConfig& c,
                                            const std::optional<std::string>& start) {
  const std::string key = load_database_key(c.shard);
  const std::string value = start.value_or("");
  auto set = client.send(op(c, Operation::db_set, {.id = key, .value = value}));
  if (!set.response || set.response->status != 200) return "restoring database key " + key + ": " + answer_text(set);
  auto get = client.send(op(c, Operation::db_get, {.id = key}));
  if (database_value_in(c, get) == value) return std::nullopt;
  return "database key " + key + " was written back but a read does not show the value (field \"" +
         c.target.dialect.fields.database_value + "\"): " + answer_text(get);
}

}  // namespace

std::vector<std::string> restore(const LoadConfig& c, const FoundState& found) {
  std::vector<std::string> problems;
  if (c.scenario == Scenario::get) return problems;
  core::HttpClient client(c.target.base, {.timeout = c.timeout});
  auto send = [&](core::HttpRequest r, const std::string& what) {
    auto x = client.send(std::move(r));
    if (!x.response || x.response->status >= 300) problems.push_back(what + ": " + answer_text(x));
  };
  if (c.scenario == Scenario::mixed) {
    for (const auto& [id, state] : found.agent_states)
      if (auto problem = restore_agent(client, c, id, state)) problems.push_back(*problem);
    if (auto problem = restore_database(client, c, found.database_value)) problems.push_back(*problem);
  }
  // Tags a round could not delete (an answer lost, a run interrupted); then
  // the list again, so that a tag still there is named, never assumed gone.
  std::vector<std::string> left;
  if (auto why = load_tags(client, c, found, left)) {
    problems.push_back("could not list the aliases of channel " + c.target.channel +
                       " to delete the tags the load left (" + *why + "): any \"" + load_tag_name(c.shard) +
                       "\" tag there is not restored");
    return problems;
  }
  if (found.alias_tag.empty() && tags_aliases(c))
    problems.push_back("the aliases of channel " + c.target.channel + " show no tag field (\"" +
                       c.target.dialect.fields.alias_tag +
                       "\", profile fields.alias_tag, and none a tag answer named): a \"" + load_tag_name(c.shard) +
                       "\" tag the load left could not be seen");
  for (const auto& id : left) send(op(c, Operation::untag, {.id = id}), "deleting the tag left on alias " + id);
  if (left.empty()) return problems;
  std::vector<std::string> still;
  if (auto why = load_tags(client, c, found, still))
    problems.push_back("could not list the aliases of channel " + c.target.channel + " again to see the tags gone (" +
                       *why + ")");
  for (const auto& id : still)
    problems.push_back("alias " + id + " of channel " + c.target.channel + " still carries a \"" +
                       load_tag_name(c.shard) + "\" tag after the restore");
  return problems;
}

}  // namespace crh::loadgen
