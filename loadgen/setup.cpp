// Preflight, discovery and restore with the blocking client of core/.
#include "core/outside.hpp"
#include "loadgen/setup.hpp"

#include <boost/json.hpp>

#include "core/http_client.hpp"

namespace crh::loadgen {
namespace json = boost::json;
namespace {

constexpr std::string_view kTagName = "crh-load";

core::HttpRequest with_key(core::HttpRequest r, const LoadConfig& c) {
  r.headers.push_back({"Apikey", c.target.api_key});
  return r;
}

core::HttpRequest get(const std::string& path, const LoadConfig& c) {
  return with_key(core::build_request("GET", path, {}, c.target.encoding), c);
}

std::string answer_text(const core::Exchange& x) {
  if (!x.response) return x.error_detail.empty() ? std::string(core::to_string(x.error)) : x.error_detail;
  std::string body = core::from_target(x.response->body, 200);  // redacted, then cut
  for (auto& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return "HTTP " + std::to_string(x.response->status) + " (body: " + body + ")";
}

// The array of objects in a list answer: the body itself, `preferred`, or the one array field.
const json::array* list_in(const json::value& v, std::string_view preferred) {
  if (v.is_array()) return &v.get_array();
  if (!v.is_object()) return nullptr;
  const auto& o = v.get_object();
  if (auto it = o.find(preferred); it != o.end() && it->value().is_array()) return &it->value().get_array();
  const json::array* found = nullptr;
  for (const auto& [k, inner] : o)
    if (inner.is_array()) {
      if (found) return nullptr;
      found = &inner.get_array();
    }
  return found;
}

std::optional<std::string> text_of(const json::object& o, std::string_view field) {
  auto it = o.find(field);
  if (it == o.end()) return std::nullopt;
  if (it->value().is_string()) return std::string(it->value().get_string());
  if (it->value().is_int64()) return std::to_string(it->value().get_int64());
  if (it->value().is_uint64()) return std::to_string(it->value().get_uint64());
  return std::nullopt;
}

json::value parse_or_throw(const core::Exchange& x, const std::string& what) {
  boost::system::error_code ec;
  auto v = json::parse(x.response->body, ec);
  if (ec) throw SetupError(what + ": expected a JSON body, got " + answer_text(x));
  return v;
}

core::Exchange expect_ok(core::HttpClient& client, core::HttpRequest r, const std::string& what,
                         const std::string& base) {
  const std::string shown = r.method + " " + base + r.target;
  auto x = client.send(std::move(r));
  if (!x.response)
    throw SetupError("cannot reach the target: " + shown + " got no answer (" + answer_text(x) +
                     "); is it running, and is --base-url right?");
  if (x.response->status == 401 || x.response->status == 403)
    throw SetupError(shown + " was refused with HTTP " + std::to_string(x.response->status) +
                     ": the API key (CRH_API_KEY or --api-key-file) is not accepted");
  if (x.response->status != 200) throw SetupError(what + ": " + shown + " expected HTTP 200, got " + answer_text(x));
  return x;
}

}  // namespace

std::optional<std::string> tagged_alias_id(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  if (auto id = text_of(v.get_object(), "id")) return id;
  for (const auto& [k, inner] : v.get_object())
    if (inner.is_object())
      if (auto id = text_of(inner.get_object(), "id")) return id;
  return std::nullopt;
}

Discovery discover(const LoadConfig& c, FoundState& found) {
  core::register_run_key(c.target.api_key);
  core::HttpClient client(c.target.base, {.timeout = std::min(c.timeout, std::chrono::milliseconds(3000))});
  const std::string base = c.target.base.to_string();
  Discovery d;
  if (c.scenario == Scenario::get) {
    // The path may need no key and any status is a fair answer; silence is not.
    auto x = client.send(get(c.path, c));
    if (!x.response)
      throw SetupError("cannot reach the target: GET " + base + c.path + " got no answer (" + answer_text(x) + ")");
    return d;
  }
  auto agents = expect_ok(client, get("/api/v1/local-agents", c), "listing the agents", base);
  const json::value agents_body = parse_or_throw(agents, "listing the agents");
  if (const auto* list = list_in(agents_body, "agents"))
    for (const auto& item : *list)
      if (item.is_object())
        if (auto id = text_of(item.get_object(), "id")) {
          d.agents.push_back(*id);
          found.agent_states.emplace_back(*id, text_of(item.get_object(), "state").value_or(""));
        }
  const std::string aliases_path = "/channels/" + core::percent_encode(c.target.channel) + "/alias-numbers";
  auto aliases = expect_ok(client, get(aliases_path, c), "listing the channel's aliases (is --channel right?)", base);
  const json::value aliases_body = parse_or_throw(aliases, "listing the aliases");
  if (const auto* list = list_in(aliases_body, "aliases"))
    for (const auto& item : *list)
      if (item.is_object())
        if (auto id = text_of(item.get_object(), "id")) d.aliases.push_back(*id);
  if (d.aliases.empty())
    throw SetupError("channel " + c.target.channel + " lists no aliases at GET " + base + aliases_path +
                     ": the race and the mix need at least one");

  auto db = client.send(get("/database/" + core::percent_encode(std::string(kLoadDatabaseKey)), c));
  if (db.response && db.response->status == 200) {
    boost::system::error_code ec;
    auto v = json::parse(db.response->body, ec);
    if (!ec && v.is_object())
      if (auto value = text_of(v.get_object(), "value")) found.database_value = *value;
  }

  if (c.scenario == Scenario::mixed)  // so that the mix's reads find the key (restored afterwards)
    expect_ok(client,
              with_key(core::build_request("POST", "/database/" + core::percent_encode(std::string(kLoadDatabaseKey)),
                                           {{"value", "crh load"}}, c.target.encoding),
                       c),
              "writing the database key the mix reads", base);

  if (c.scenario == Scenario::race) {
    if (!c.target.call_hook.enabled)
      throw SetupError("the race needs the call hook (DESIGN.md §4), and the profile says the target has none");
    auto tag = expect_ok(client,
                         with_key(core::build_request("POST", aliases_path + "/tag",
                                                      {{"tag", std::string(kTagName)}, {"minutes", "1", true}},
                                                      c.target.encoding),
                                  c),
                         "tagging an alias", base);
    auto alias = tagged_alias_id(tag.response->body);
    if (!alias) throw SetupError("tagging an alias: the answer names no alias id: " + answer_text(tag));
    auto call = client.send(with_key(
        core::build_request(c.target.call_hook.method, c.target.call_hook.path_for(c.target.channel, *alias),
                            {{c.target.call_hook.parameter, "+15559999999"}}, c.target.encoding),
        c));
    client.send(with_key(core::build_request("DELETE", aliases_path + "/" + core::percent_encode(*alias) + "/tag", {},
                                             c.target.encoding),
                         c));
    if (!call.response || call.response->status != 200)
      throw SetupError("the call hook did not connect the first caller of a freshly tagged alias: " +
                       c.target.call_hook.method + " " + base +
                       c.target.call_hook.path_for(c.target.channel, *alias) + " got " + answer_text(call) +
                       ". The race needs the hook of DESIGN.md §4 (README: the call hook)");
  }
  return d;
}

std::vector<std::string> restore(const LoadConfig& c, const FoundState& found) {
  std::vector<std::string> problems;
  if (c.scenario == Scenario::get) return problems;
  core::HttpClient client(c.target.base, {.timeout = c.timeout});
  auto send = [&](core::HttpRequest r, const std::string& what) {
    auto x = client.send(with_key(std::move(r), c));
    if (!x.response || x.response->status >= 300) problems.push_back(what + ": " + answer_text(x));
  };
  if (c.scenario == Scenario::mixed) {
    for (const auto& [id, state] : found.agent_states) {
      const char* op = state == "snoozed" ? "snooze" : state == "available" ? "wake" : nullptr;
      if (op)
        send(core::build_request("PUT", "/api/v1/local-agents/" + core::percent_encode(id) + "/" + op, {},
                                 c.target.encoding),
             std::string("putting agent ") + id + " back to " + state);
    }
    send(core::build_request("POST", "/database/" + core::percent_encode(std::string(kLoadDatabaseKey)),
                             {{"value", found.database_value.value_or("")}}, c.target.encoding),
         "restoring database key " + std::string(kLoadDatabaseKey));
  }
  // Tags a round could not delete (an answer lost, a run interrupted); then
  // the list again, so that a tag still there is named, never assumed gone.
  const std::string aliases_path = "/channels/" + core::percent_encode(c.target.channel) + "/alias-numbers";
  auto load_tags = [&](std::vector<std::string>& ids) -> std::optional<std::string> {
    auto list = client.send(get(aliases_path, c));
    if (!list.response || list.response->status != 200) return answer_text(list);
    boost::system::error_code ec;
    auto v = json::parse(list.response->body, ec);
    const auto* items = ec ? nullptr : list_in(v, "aliases");
    if (!items) return "no alias list in " + answer_text(list);
    for (const auto& item : *items)
      if (item.is_object())
        if (auto tag = text_of(item.get_object(), "tag"); tag && tag->starts_with(kTagName))
          if (auto id = text_of(item.get_object(), "id")) ids.push_back(*id);
    return std::nullopt;
  };
  std::vector<std::string> left;
  if (auto why = load_tags(left)) {
    problems.push_back("could not list the aliases of channel " + c.target.channel + " to delete the tags the load left (" +
                       *why + "): any \"" + std::string(kTagName) + "\" tag there is not restored");
    return problems;
  }
  for (const auto& id : left)
    send(core::build_request("DELETE", aliases_path + "/" + core::percent_encode(id) + "/tag", {}, c.target.encoding),
         "deleting the tag left on alias " + id);
  if (left.empty()) return problems;
  std::vector<std::string> still;
  if (auto why = load_tags(still))
    problems.push_back("could not list the aliases of channel " + c.target.channel + " again to see the tags gone (" +
                       *why + ")");
  for (const auto& id : still)
    problems.push_back("alias " + id + " of channel " + c.target.channel + " still carries a \"" + std::string(kTagName) +
                       "\" tag after the restore");
  return problems;
}

}  // namespace crh::loadgen
