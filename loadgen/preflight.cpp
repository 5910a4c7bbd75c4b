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

#include "calls/call_drivers.hpp"

namespace crh::loadgen::setup {
namespace json = boost::json;
using core::api::Operation;

core::ClientConfig around_load(const LoadConfig& c, std::chrono::milliseconds timeout) {
  return {.timeout = timeout, .not_now_retries = core::throttled(429, c.statuses) ? core::kNotNowRetries : 0};
}

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

// What the list reading looks for, in the profile's terms.
std::string list_sought(const core::FieldNames& names) {
  return "the channel's aliases as a JSON array, the field \"" + names.aliases_list +
         "\" (profile lists.aliases) or the only array field of an object, each with an id under " +
         joined(names.alias_id) + " (profile id_fields.alias)";
}

}  // namespace

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
                     " (profile id_fields.alias), the first item has " + core::api::fields_text(found->items->front()) +
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
                     ", found " + core::api::fields_text(body) + fix);
  try {
    if (call) call(*alias);
  } catch (...) {
    client.send(op(c, Operation::untag, {.id = *alias}));
    throw;
  }
  client.send(op(c, Operation::untag, {.id = *alias}));
  return body;
}

json::value probe_call(core::HttpClient& client, const LoadConfig& c, const json::value& aliases) {
  if (auto why = calls::cannot_place_calls(c.target, aliases)) throw SetupError(*why);
  auto driver = calls::make_call_driver(c.target, c.statuses, {.timeout = c.timeout});
  return probe_tag(client, c, [&](const std::string& alias) {
    // An armed call is not sent through HttpClient::send, so its "not now"
    // (a rate limit) is waited out here, as the set-up's reads are.
    const int retries = around_load(c, c.timeout).not_now_retries;
    const auto r = calls::placed_past_not_now(
        [&] { return driver->place(alias, "+15559999999"); },
        [&](int again, const std::string& retry_after) {
          return core::wait_out_not_now(again, retries, retry_after, nullptr);
        });
    if (r.outcome == core::CallOutcome::connected) return;
    const std::string got = r.exchange ? shown(c, r.exchange->request) + " got " + answer_text(*r.exchange) : r.evidence;
    // No answer at all on the call's own connection (or none opened), while
    // the set-up's connection is open and answered: not the hook's doing.
    const bool unanswered = !c.target.calls.sip && r.outcome == core::CallOutcome::unknown &&
                            (!r.exchange || !r.exchange->answered());
    throw SetupError("the first caller of a freshly tagged alias (" + alias + ") did not connect: " + got + ". " +
                     (unanswered ? "The service answers on one connection but did not answer this call on a second "
                                   "one within --timeout: a service that serves one connection at a time cannot be "
                                   "raced (each caller needs a connection of its own); a slow one needs a longer "
                                   "--timeout"
                                 : calls::first_call_hint(c.target)));
  });
}

bool places_calls(const LoadConfig& c) {
  return c.scenario == Scenario::race ||
         (c.scenario == Scenario::mixed && std::any_of(c.mix.begin(), c.mix.end(), [](const MixEntry& m) {
            return m.op == oracle::OpKind::call && m.weight > 0;
          }));
}

}  // namespace crh::loadgen::setup
