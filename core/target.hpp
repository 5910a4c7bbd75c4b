// What the harness talks to: base URL, key, channel, how parameters are
// encoded and how a call is placed (the call hook, DESIGN.md §4). Shared by
// the contract checks and the load generator.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api.hpp"
#include "core/base_url.hpp"
#include "core/http.hpp"

namespace crh::core {

// Where request parameters go. The spec does not say (DESIGN.md §3).
enum class ParamEncoding {
  form,   // application/x-www-form-urlencoded body (the default)
  json,   // a JSON object body
  query,  // the query string
};

std::string_view to_string(ParamEncoding e);

struct Param {
  std::string name;
  std::string value;
  bool number = false;  // a JSON body writes the value unquoted (minutes=5 → 5)
};

// How an alias is reached over SIP (issue 26): its number is the alias's
// field `number_field` in the aliases list; the INVITE's Request-URI is
// `uri_template` with {number}, {host} and {port} (the --sip-target's).
struct SipMapping {
  std::string number_field = "number";
  std::string uri_template = "sip:{number}@{host}:{port}";
};

// Where SIP calls go: "HOST:PORT[;transport=tcp]" ("[::1]:5060" for IPv6).
struct SipTarget {
  std::string host;
  unsigned short port = 5060;
  bool tcp = false;
  std::string text() const;  // as parse_sip_target reads it
};
// Nothing, with `why` set, when the text is not a SIP target.
std::optional<SipTarget> parse_sip_target(std::string_view text, std::string& why);

// Which call driver places the calls (--call-driver): the HTTP call hook or
// SIP (calls/call_drivers.hpp makes it).
struct CallDriverChoice {
  bool sip = false;
  SipTarget sip_target;                   // with sip: where the INVITEs go
  std::chrono::milliseconds sip_t1{500};  // RFC 3261 T1 (--sip-t1-ms)
  std::string name() const { return sip ? "sip" : "http"; }
};

// How the target speaks where the spec is silent (DESIGN.md §3): read once
// from the profile, owned here, used by every part that talks to it.
struct Dialect {
  ParamEncoding encoding = ParamEncoding::form;  // database value, tag parameters, caller
  CallHook call_hook;                            // enabled=false: the target has none
  FieldNames fields;
  MinutesRange minutes;  // what a tag may ask for
  // "database_keys": "case-insensitive": the target takes keys that differ
  // only in ASCII case for one (a case-insensitive store). The default reads
  // keys as RFC 3986 reads paths: case-sensitive.
  bool keys_fold_case = false;
  SipMapping sip;        // for the SIP call driver
};

struct Target {
  BaseUrl base;
  std::string api_key;  // never printed: evidence shows $CRH_API_KEY
  std::string channel = "1";
  Dialect dialect;
  std::chrono::milliseconds minute{60'000};  // one tag minute on the target
  CallDriverChoice calls;                    // how callers' calls reach it

  // Whether callers' calls can reach it at all: through its call hook, or as
  // SIP INVITEs. Scenarios ask this, never which protocol (calls/ knows).
  bool can_place_calls() const { return dialect.call_hook.enabled || calls.sip; }
};

// RFC 3986 percent-encoding of everything but unreserved characters: fit for
// a path segment, a query component and a form field.
std::string percent_encode(std::string_view text);

// A request for `path` (already encoded) with `params` placed as `encoding`
// says. No Apikey header: the caller decides how to authenticate.
HttpRequest build_request(std::string method, std::string path, const std::vector<Param>& params,
                          ParamEncoding encoding);

}  // namespace crh::core
