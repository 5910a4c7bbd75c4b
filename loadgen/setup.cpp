// Preflight, discovery and restore with the blocking client of core/.
#include "core/outside.hpp"
#include "loadgen/setup.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "core/api.hpp"
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
core::Exchange expect_ok(core::HttpClient& client, const LoadConfig& c, core::HttpRequest r, const std::string& what) {
  const std::string shown = r.method + " " + c.target.base.to_string() + r.target;
  auto x = client.send(std::move(r));
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

void discover_aliases(core::HttpClient& client, const LoadConfig& c, Discovery& d) {
  const auto& names = c.target.dialect.fields;
  const std::string base = c.target.base.to_string();
  auto aliases =
      expect_ok(client, c, op(c, Operation::list_aliases), "listing the channel's aliases (is --channel right?)");
  const json::value body = parse_or_throw(aliases, "listing the aliases");
  if (const auto* list = items_of(body, names.aliases_list))
    for (const auto& item : *list)
      if (auto id = core::api::alias_id(names, item); id && item.is_object()) d.aliases.push_back(*id);
  if (d.aliases.empty())
    throw SetupError("channel " + c.target.channel + " lists no aliases at GET " + base +
                     core::api::aliases_path(c.target.channel) + ": the race and the mix need at least one");
}

// Places one call on a freshly tagged alias, so that a target without the
// call hook is told so instead of racing on 404s.
void probe_call_hook(core::HttpClient& client, const LoadConfig& c) {
  const auto& hook = c.target.dialect.call_hook;
  if (!hook.enabled)
    throw SetupError("the race needs the call hook (DESIGN.md §4), and the profile says the target has none");
  const std::string base = c.target.base.to_string();
  auto tag = expect_ok(
      client, c, op(c, Operation::tag, {.tag = load_tag_name(c.shard), .minutes = c.target.dialect.minutes.fit(1)}),
      "tagging an alias");
  auto alias = tagged_alias_id(c.target.dialect.fields, tag.response->body);
  if (!alias) throw SetupError("tagging an alias: the answer names no alias id: " + answer_text(tag));
  auto call = client.send(op(c, Operation::call, {.id = *alias, .caller = "+15559999999"}));
  client.send(op(c, Operation::untag, {.id = *alias}));
  if (!call.response || call.response->status != 200)
    throw SetupError("the call hook did not connect the first caller of a freshly tagged alias: " + hook.method + " " +
                     base + hook.path_for(c.target.channel, *alias) + " got " + answer_text(call) +
                     ". The race needs the hook of DESIGN.md §4 (README: the call hook)");
}

// A sharded mix reads and changes only its shard's agents and calls only its
// shard's aliases: another shard's snooze of the same agent would read as a
// broken rule in this shard's checker. (The race's aliases are picked by the
// target's tag operation, so the race needs no split of them.)
void share_discovery(const LoadConfig& c, Discovery& d, FoundState& found) {
  const auto shard_text = std::to_string(c.shard.index) + "/" + std::to_string(c.shard.count);
  auto uses = [&](OpKind op) {
    return std::any_of(c.mix.begin(), c.mix.end(), [&](const MixEntry& m) { return m.op == op && m.weight > 0; });
  };
  const auto all_agents = d.agents.size(), all_aliases = d.aliases.size();
  d.agents = strided(std::move(d.agents), c.shard);
  d.aliases = strided(std::move(d.aliases), c.shard);
  std::erase_if(found.agent_states, [&](const auto& state) {
    return std::find(d.agents.begin(), d.agents.end(), state.first) == d.agents.end();
  });
  if (d.agents.empty() && (uses(OpKind::get_agent) || uses(OpKind::snooze) || uses(OpKind::wake)))
    throw SetupError("shard " + shard_text + ": the target lists " + std::to_string(all_agents) + " agent(s) for " +
                     std::to_string(c.shard.count) +
                     " shards, none for this one (each shard reads and changes its own agents): use fewer shards, "
                     "or a --mix without get-agent, snooze and wake");
  if (d.aliases.empty() && uses(OpKind::call))
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
    if (!x.response)
      throw SetupError("cannot reach the target: GET " + base + c.path + " got no answer (" + answer_text(x) + ")");
    return d;
  }
  discover_agents(client, c, d, found);
  discover_aliases(client, c, d);
  if (c.scenario == Scenario::mixed && c.shard.sharded()) share_discovery(c, d, found);

  found.database_value =
      database_value_in(c, client.send(op(c, Operation::db_get, {.id = load_database_key(c.shard)})));

  if (c.scenario == Scenario::mixed)  // so that the mix's reads find the key (restored afterwards)
    expect_ok(client, c,
              op(c, Operation::db_set, {.id = load_database_key(c.shard), .value = std::string(kLoadDatabaseValue)}),
              "writing the database key the mix reads");
  if (c.scenario == Scenario::race) probe_call_hook(client, c);
  return d;
}

namespace {

// The aliases whose tag the load made (crh-load...), or why the list could not be read.
std::optional<std::string> load_tags(core::HttpClient& client, const LoadConfig& c, std::vector<std::string>& ids) {
  const auto& names = c.target.dialect.fields;
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
  if (auto why = load_tags(client, c, left)) {
    problems.push_back("could not list the aliases of channel " + c.target.channel +
                       " to delete the tags the load left (" + *why + "): any \"" + load_tag_name(c.shard) +
                       "\" tag there is not restored");
    return problems;
  }
  for (const auto& id : left) send(op(c, Operation::untag, {.id = id}), "deleting the tag left on alias " + id);
  if (left.empty()) return problems;
  std::vector<std::string> still;
  if (auto why = load_tags(client, c, still))
    problems.push_back("could not list the aliases of channel " + c.target.channel + " again to see the tags gone (" +
                       *why + ")");
  for (const auto& id : still)
    problems.push_back("alias " + id + " of channel " + c.target.channel + " still carries a \"" +
                       load_tag_name(c.shard) + "\" tag after the restore");
  return problems;
}

}  // namespace crh::loadgen
