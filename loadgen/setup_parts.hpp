// The set-up's shared pieces (setup.cpp, preflight.cpp): requests with the
// key, answers as messages show them, and the preflight that reads the alias
// list and tries a tag and a call before a load that needs them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "core/api.hpp"
#include "core/outside.hpp"
#include "core/http_client.hpp"
#include "loadgen/setup.hpp"

namespace crh::loadgen::setup {

// The client of the set-up, its probes and the restore: a "not now" (a rate
// limit) is waited out and sent again, never taken for the answer.
core::ClientConfig around_load(const LoadConfig& c, std::chrono::milliseconds timeout);

core::HttpRequest with_key(core::HttpRequest r, const LoadConfig& c);
// An operation of the API model, with the key.
core::HttpRequest op(const LoadConfig& c, core::api::Operation o, core::api::Arguments args = {});
// The request as a message names it: "GET http://host:port/path".
std::string shown(const LoadConfig& c, const core::HttpRequest& r);
// The answer, redacted and cut: "HTTP 200 (body: ...)", or why there was none.
using core::answer_text;
std::optional<boost::json::value> parse(const std::string& body);
// The JSON body of `x`; else SetupError: `what`, the request, the answer,
// `looked_for` and the fix.
boost::json::value parse_or_throw(const core::Exchange& x, const std::string& request, const std::string& what,
                                  const std::string& looked_for);
// Sends `r`; SetupError unless HTTP 200 (a refused key named as such).
core::Exchange expect_ok(core::HttpClient& client, const LoadConfig& c, core::HttpRequest r, const std::string& what);
// The items of a list answer, found as the dialect names the list.
const boost::json::array* items_of(const boost::json::value& body, const std::string& preferred);
std::string joined(const std::vector<std::string>& names);

// The channel's aliases into d.aliases; their list answer. SetupError when
// the list cannot be read or holds no alias id.
boost::json::value discover_aliases(core::HttpClient& client, const LoadConfig& c, Discovery& d);
// One tag of the load's name (and its untag): its answer's JSON. `call`, when
// set, places a call on the tagged alias in between (the race's probe).
boost::json::value probe_tag(core::HttpClient& client, const LoadConfig& c,
                             const std::function<void(const std::string& alias)>& call = {});
// One call through the target's call driver on a freshly tagged alias, after
// asking calls/ whether the target can place calls at all: the tag answer.
boost::json::value probe_call(core::HttpClient& client, const LoadConfig& c, const boost::json::value& aliases);
// Whether the load places calls: the race, or a mix with calls.
bool places_calls(const LoadConfig& c);

}  // namespace crh::loadgen::setup
