// Preflight, discovery and restore with the blocking client of core/; the
// restore puts agents and the database key back as core/leave_as_found does.
#include "core/outside.hpp"
#include "loadgen/setup.hpp"
#include "loadgen/setup_parts.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "calls/call_drivers.hpp"
#include "core/api.hpp"
#include "core/http_client.hpp"
#include "core/leave_as_found.hpp"
#include "oracle/answers.hpp"

namespace crh::loadgen {
namespace json = boost::json;
using core::api::Operation;
using namespace setup;
namespace {


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

std::optional<std::string> state_of(const core::FieldNames& names, const json::value& agent) {
  if (!agent.is_object()) return std::nullopt;
  const auto* v = agent.get_object().if_contains(names.agent_state);
  if (!v) return std::nullopt;
  return json::serialize(*v);
}

// Whether the mix reads or changes agents.
bool uses_agents(const LoadConfig& c) {
  return c.scenario == Scenario::mixed && std::any_of(c.mix.begin(), c.mix.end(), [](const MixEntry& m) {
           return m.weight > 0 && (m.op == oracle::OpKind::get_agent || m.op == oracle::OpKind::snooze ||
                                   m.op == oracle::OpKind::wake);
         });
}

void discover_agents(core::HttpClient& client, const LoadConfig& c, Discovery& d, FoundState& found) {
  const auto& names = c.target.dialect.fields;
  auto request = op(c, Operation::list_agents);
  const std::string sent = shown(c, request);
  const std::string sought = "the agents as a JSON array, the field \"" + names.agents_list +
                             "\" (profile lists.agents) or the only array field of an object, each with an id under " +
                             joined(names.agent_id) + " (profile id_fields.agent)";
  const std::string fix = "; set lists.agents and id_fields.agent in a profile (--profile) to where the target puts them";
  auto agents = expect_ok(client, c, std::move(request), "listing the agents");
  const json::value body = parse_or_throw(agents, sent, "listing the agents", sought + fix);
  if (const auto* list = items_of(body, names.agents_list))
    for (const auto& item : *list)
      if (auto id = core::api::agent_id(names, item)) {  // bare ids too, as the contract reads them
        d.agents.push_back(*id);
        found.agent_states.emplace_back(*id, state_of(names, item));
      }
  // The mix's agent operations would silently drop out of it.
  if (d.agents.empty() && uses_agents(c))
    throw SetupError("listing the agents (the mix's get-agent, snooze and wake need them): " + sent + " answered " +
                     answer_text(agents) + "; looked for " + sought + " and found none" + fix +
                     ", or use a --mix without get-agent, snooze and wake");
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
  core::add_run_key(c.target.api_key);  // beside a compared target's (crh load --against)
  core::HttpClient client(c.target.base, around_load(c, std::min(c.timeout, std::chrono::milliseconds(3000))));
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
  if (c.scenario == Scenario::race) tag_answer = probe_call(client, c, aliases);
  else if (tags) tag_answer = probe_tag(client, c);  // a tag answer the mix cannot read is said now
  if (c.scenario == Scenario::mixed && places_calls(c))
    if (auto why = calls::cannot_place_calls(c.target, aliases))
      throw SetupError(*why + "; or leave call out of --mix");
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

}  // namespace

std::vector<std::string> restore(const LoadConfig& c, const FoundState& found) {
  std::vector<std::string> problems;
  if (c.scenario == Scenario::get) return problems;
  core::HttpClient client(c.target.base, around_load(c, c.timeout));
  auto send = [&](core::HttpRequest r, const std::string& what) {
    auto x = client.send(std::move(r));
    if (!x.response || x.response->status >= 300) problems.push_back(what + ": " + answer_text(x));
  };
  if (c.scenario == Scenario::mixed) {
    // Put back as every run puts back (core/leave_as_found.hpp).
    const core::SendRequest keyed = [&](core::HttpRequest r) { return client.send(with_key(std::move(r), c)); };
    for (const auto& [id, state] : found.agent_states) {
      if (!state) {
        problems.push_back("agent " + id + ": its state could not be read at the start (no field \"" +
                           c.target.dialect.fields.agent_state +
                           "\"; set fields.agent_state in the profile), so whether the run left it snoozed or woken "
                           "is unknown");
        continue;
      }
      if (auto problem = core::put_agent_back(keyed, c.target, id, *state)) problems.push_back(*problem);
    }
    if (auto problem = core::put_database_value_back(keyed, c.target, load_database_key(c.shard), found.database_value))
      problems.push_back(*problem);
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
