// The set-up's reading of the target, as leniently as the contract reads it
// (DESIGN.md §3: a bare array or any single array, ids strings or numbers),
// and the preflight's tag and call. An answer it cannot use stops the load
// (exit 3) naming the request, the answer, what was looked for and the
// profile field that would say where it is: a load must never measure
// nothing in silence.
#include "core/outside.hpp"
#include "loadgen/setup_parts.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "calls/call_drivers.hpp"

namespace crh::loadgen::setup {
namespace json = boost::json;
using core::api::Operation;

core::HttpRequest with_key(core::HttpRequest r, const LoadConfig& c) {
  r.headers.push_back({"Apikey", c.target.api_key});
  return r;
}

core::HttpRequest op(const LoadConfig& c, Operation o, core::api::Arguments args) {
  return with_key(core::api::request(c.target, o, args), c);
}

std::string shown(const LoadConfig& c, const core::HttpRequest& r) {
  return r.method + " " + c.target.base.to_string() + r.target;
}

std::optional<json::value> parse(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec) return std::nullopt;
  return v;
}

json::value parse_or_throw(const core::Exchange& x, const std::string& request, const std::string& what,
                           const std::string& looked_for) {
  auto v = parse(x.response->body);
  if (!v)
    throw SetupError(what + ": " + request + " answered " + answer_text(x) + ", which is not JSON; looked for " +
                     looked_for);
  return *v;
}

namespace {

// A setup step that must succeed; a refused key (a status of the profile's
// `auth`) is named as such.
const core::Exchange& checked_ok(const LoadConfig& c, const core::Exchange& x, const std::string& request,
                                 const std::string& what) {
  if (!x.response)
    throw SetupError("cannot reach the target: " + request + " got no answer (" + answer_text(x) +
                     "); is it running, and is --base-url right?");
  const auto& auth = c.statuses.auth;
  if (std::find(auth.begin(), auth.end(), x.response->status) != auth.end())
    throw SetupError(request + " was refused with HTTP " + std::to_string(x.response->status) +
                     ": the API key (CRH_API_KEY or --api-key-file) is not accepted");
  if (x.response->status != 200)
    throw SetupError(what + ": " + request + " expected HTTP 200, got " + answer_text(x));
  return x;
}

// The field names of an object, for a message that says what was found.
std::string fields_of(const json::value& v) {
  if (!v.is_object()) return std::string("not an object but ") + (v.is_string() ? "a string" : "a scalar or array");
  std::vector<std::string> names;
  for (const auto& [k, x] : v.get_object()) names.emplace_back(core::from_target(std::string(k), 40));
  return names.empty() ? "no fields" : "fields " + joined(names);
}

// What the list reading looks for, in the profile's terms.
std::string list_sought(const core::FieldNames& names) {
  return "the channel's aliases as a JSON array, the field \"" + names.aliases_list +
         "\" (profile lists.aliases) or the only array field of an object, each with an id under " +
         joined(names.alias_id) + " (profile id_fields.alias)";
}

// Digits, at least five, after an optional '+': what a telephone number looks like.
bool number_like(std::string_view s) {
  if (s.starts_with('+')) s.remove_prefix(1);
  return s.size() >= 5 && std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

}  // namespace

// Over SIP a caller dials the alias's number, read from the list's field
// sip.number_field; an alias without it is dialled at its id (a target whose
// ids are the numbers). Objects with neither leave nothing to dial: said
// before racing, with the field that looks like the number.
void require_sip_numbers(const LoadConfig& c, const json::value& body) {
  const auto& names = c.target.dialect.fields;
  const auto& field = c.target.dialect.sip.number_field;
  const auto* list = items_of(body, names.aliases_list);
  if (!list || list->empty()) return;
  for (const auto& item : *list) {
    if (!item.is_object() || item.get_object().contains(field)) return;
    if (auto id = core::api::alias_id(names, item); id && number_like(*id)) return;
  }
  std::string hint;
  for (const auto& [k, v] : list->front().get_object())
    if (v.is_string() && v.get_string().starts_with('+') && number_like(v.get_string())) {
      hint = " (field \"" + core::from_target(std::string(k), 40) + "\" holds \"" +
             core::from_target(std::string(v.get_string()), 40) + "\")";
      break;
    }
  throw SetupError("GET " + c.target.base.to_string() + core::api::aliases_path(c.target.channel) +
                   ": no alias shows field \"" + field +
                   "\" (profile sip.number_field) and no alias id looks like a telephone number, so a SIP caller has "
                   "no number to dial; the first alias has " + fields_of(list->front()) +
                   ": set sip.number_field in a profile (--profile) to the field holding the alias's number" + hint);
}

core::Exchange expect_ok(core::HttpClient& client, const LoadConfig& c, core::HttpRequest r, const std::string& what) {
  const std::string request = shown(c, r);
  auto x = client.send(std::move(r));
  checked_ok(c, x, request, what);
  return x;
}

const json::array* items_of(const json::value& body, const std::string& preferred) {
  std::string why;
  auto found = core::api::find_list(body, preferred, why);
  return found ? found->items : nullptr;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

json::value discover_aliases(core::HttpClient& client, const LoadConfig& c, Discovery& d) {
  const auto& names = c.target.dialect.fields;
  auto request = op(c, Operation::list_aliases);
  const std::string sent = shown(c, request);
  const std::string what = "listing the channel's aliases (the race and the mix need them)";
  const std::string fix = "; set lists.aliases and id_fields.alias in a profile (--profile) to where the target "
                          "puts them";
  auto aliases = expect_ok(client, c, std::move(request), what + " (is --channel right?)");
  json::value body = parse_or_throw(aliases, sent, what, list_sought(names) + fix);
  std::string why;
  auto found = core::api::find_list(body, names.aliases_list, why);
  if (!found)
    throw SetupError(what + ": " + sent + " answered " + answer_text(aliases) + "; looked for " + list_sought(names) +
                     " and found none (" + why + ")" + fix);
  // Bare ids (strings or numbers) are aliases too, as the contract reads them.
  for (const auto& item : *found->items)
    if (auto id = core::api::alias_id(names, item)) d.aliases.push_back(*id);
  if (found->items->empty())
    throw SetupError(what + ": " + sent + " answered " + answer_text(aliases) + "; found no alias in " + found->where +
                     ": the race and the mix need at least one (is --channel right?)");
  if (d.aliases.empty())
    throw SetupError(what + ": " + sent + " answered " + answer_text(aliases) + "; found " +
                     std::to_string(found->items->size()) + " item(s) in " + found->where +
                     " but no alias id: looked under " + joined(names.alias_id) +
                     " (profile id_fields.alias), the first item has " + fields_of(found->items->front()) +
                     "; set id_fields.alias in a profile (--profile) to the field holding the id");
  return body;
}

json::value probe_tag(core::HttpClient& client, const LoadConfig& c,
                      const std::function<void(const std::string& alias)>& call) {
  const auto& names = c.target.dialect.fields;
  auto request = op(c, Operation::tag, {.tag = load_tag_name(c.shard), .minutes = c.target.dialect.minutes.fit(1)});
  const std::string sent = shown(c, request);
  auto tag = client.send(std::move(request));
  const auto& full = c.statuses.all_tagged;
  if (tag.response && std::find(full.begin(), full.end(), tag.response->status) != full.end())
    throw SetupError("tagging an alias: " + sent + " was refused with HTTP " + std::to_string(tag.response->status) +
                     ", every alias tagged (profile statuses.all_tagged), although the list showed none tagged in \"" +
                     names.alias_tag + "\" (profile fields.alias_tag): " + answer_text(tag) +
                     "; untag one, wait for the tags to expire, or name the tag field in the profile");
  checked_ok(c, tag, sent, "tagging an alias");
  const std::string sought = "the tagged alias's id under " + joined(names.alias_id) +
                             " (profile id_fields.alias) in the answer or an object it holds";
  const std::string fix = "; set id_fields.alias in a profile (--profile) to the answer's field holding the alias "
                          "id: the race and the mix delete each tag, and call its alias, by that id";
  const json::value body = parse_or_throw(tag, sent, "tagging an alias", sought + fix);
  auto alias = core::api::tagged_alias_id(names, body);
  if (!alias)
    throw SetupError("tagging an alias: " + sent + " answered " + answer_text(tag) + "; looked for " + sought +
                     ", found " + fields_of(body) + fix);
  try {
    if (call) call(*alias);
  } catch (...) {
    client.send(op(c, Operation::untag, {.id = *alias}));
    throw;
  }
  client.send(op(c, Operation::untag, {.id = *alias}));
  return body;
}

json::value probe_sip_call(core::HttpClient& client, const LoadConfig& c, const json::value& aliases) {
  require_sip_numbers(c, aliases);
  auto driver = calls::make_call_driver(c.target, c.statuses, {.timeout = c.timeout});
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
  std::optional<core::Exchange> placed;
  std::string sent;
  json::value body = probe_tag(client, c, [&](const std::string& alias) {
    auto request = op(c, Operation::call, {.id = alias, .caller = "+15559999999"});
    sent = shown(c, request);
    placed = client.send(std::move(request));
  });
  const core::Exchange& call = *placed;
  if (!call.response || call.response->status != 200)
    throw SetupError("the call hook did not connect the first caller of a freshly tagged alias: " + sent + " got " +
                     answer_text(call) +
                     ". The race needs the hook of DESIGN.md §4 (README: the call hook); a target whose hook differs "
                     "says so with call_hook.method, .path and .parameter in a profile (--profile)");
  return body;
}

bool places_calls(const LoadConfig& c) {
  return c.scenario == Scenario::race ||
         (c.scenario == Scenario::mixed && std::any_of(c.mix.begin(), c.mix.end(), [](const MixEntry& m) {
            return m.op == oracle::OpKind::call && m.weight > 0;
          }));
}

}  // namespace crh::loadgen::setup
