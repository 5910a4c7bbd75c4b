// auth, continued: a key that nearly is the key (A2), or the key anywhere but in the Apikey header (R5), is refused.
#include <boost/json.hpp>
#include <cctype>
#include <functional>

#include "contracts/suites/suites.hpp"
#include "core/curl.hpp"
#include "core/redact.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// ---- A key that is nearly the key (A2), or the key outside the Apikey header (R5)

// A value the request offers instead of the proper Apikey header. It is the
// key or derived from it, and the harness's redaction knows only the exact
// key (core/outside.hpp), so the value itself is never shown: `shell` stands
// for it in the curl reproducer (bash rebuilding it from $CRH_API_KEY) and
// `words` in messages. Bash counts characters where this counts bytes; the
// two agree for the ASCII keys consoles show.
struct Offer {
  std::string value;
  std::string shell;
  std::string words;
};

// Puts an offered value into a request; `where` says where, for messages.
struct Place {
  std::string where;
  std::function<void(core::HttpRequest&, const std::string&)> put;
};

// Stands for the offered value in the request the evidence shows: a word
// that survives quoting and percent-encoding unchanged.
constexpr std::string_view kStandIn = "CRH_OFFERED_VALUE";

// The curl reproducer of `shown`, with the stand-in replaced by `shell`. The
// stand-in sits inside a single-quoted word (core::shell_word), so the shell
// expression goes between a closing and a reopening quote; a quote pair left
// empty by that is dropped, unless it would leave a `$` before a double quote.
std::string reproducer(const CheckContext& ctx, const core::HttpRequest& shown, const std::string& shell) {
  std::string curl = core::to_curl(shown, ctx.target().base, ctx.target().api_key);
  for (auto at = curl.find(kStandIn); at != std::string::npos; at = curl.find(kStandIn, at)) {
    std::size_t from = at, to = at + kStandIn.size();
    std::string with = "'" + shell + "'";
    if (to < curl.size() && curl[to] == '\'') {
      ++to;
      with.pop_back();
    }
    if (from >= 2 && curl[from - 1] == '\'' && curl[from - 2] != '$') {
      --from;
      with.erase(0, 1);
    }
    curl.replace(from, to - from, with);
    at = from + with.size();
  }
  return curl;
}

Place in_header(const std::string& name, const std::string& prefix, const std::string& where) {
  return {where, [name, prefix](core::HttpRequest& r, const std::string& v) {
            r.headers.push_back({name, prefix + v});
          }};
}

Place in_query(const std::string& name) {
  return {"as query parameter " + name + ", with no Apikey header", [name](core::HttpRequest& r, const std::string& v) {
            r.target += (r.target.find('?') == std::string::npos ? "?" : "&") + name + "=" + core::percent_encode(v);
          }};
}

Offer whole_key(const CheckContext& ctx) {
  // In a query, a key with reserved characters goes percent-encoded; the
  // reproducer then sends it raw, which is as close as a shell word gets.
  return {ctx.target().api_key, "\"$CRH_API_KEY\"", "the key"};
}

// The start of `key` up to about `n` bytes, never cutting a UTF-8 character.
std::size_t char_boundary(const std::string& key, std::size_t n) {
  while (n > 0 && n < key.size() && (static_cast<unsigned char>(key[n]) & 0xC0) == 0x80) --n;
  return n;
}

// A near-miss variant of the key: nothing, and `why`, when the key has no such variant.
struct NearMiss {
  const char* name;
  const char* summary;
  std::optional<Offer> (*derive)(const std::string& key, std::string& why);
};

// The key's first n bytes as a POSIX shell word (sh, not only bash: the
// reproducer scripts run under sh).
std::string first_chars(std::size_t n) {
  return "\"$(printf %s \"$CRH_API_KEY\" | cut -c1-" + std::to_string(n) + ")\"";
}

std::optional<Offer> prefix_equal(const std::string& key, std::string& why) {
  const std::size_t half = char_boundary(key, key.size() / 2);
  if (half == 0) {
    why = "the key is too short to keep a first half and change the rest";
    return std::nullopt;
  }
  std::string rest;  // differs from the key at every position, whatever the case
  for (std::size_t i = half; i < key.size(); ++i) rest.push_back(key[i] == '7' ? '3' : '7');
  return Offer{key.substr(0, half) + rest, first_chars(half) + "'" + rest + "'",
               "the key's first " + std::to_string(half) + " characters followed by " + std::to_string(rest.size()) +
                   " other ones (the key's length)"};
}

std::optional<Offer> case_changed(const std::string& key, std::string& why) {
  bool lower = false, upper = false;
  for (unsigned char c : key) {
    lower = lower || std::islower(c);
    upper = upper || std::isupper(c);
  }
  if (!lower && !upper) {
    why = "the key has no letters, so changing their case gives the key itself";
    return std::nullopt;
  }
  // Upper-case the lower-case letters if there are any, else lower-case the
  // upper-case ones: either way a different key, and tr can say which.
  std::string v = key;
  for (auto& c : v) {
    auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(lower ? std::toupper(u) : std::tolower(u));
  }
  return Offer{v, lower ? "\"$(printf %s \"$CRH_API_KEY\" | tr '[:lower:]' '[:upper:]')\""
                     : "\"$(printf %s \"$CRH_API_KEY\" | tr '[:upper:]' '[:lower:]')\"",
               lower ? "the key in upper case" : "the key in lower case"};
}

std::optional<Offer> truncated(const std::string& key, std::string& why) {
  const std::size_t cut = key.empty() ? 0 : char_boundary(key, key.size() - 1);
  if (cut == 0) {
    why = "the key is one character: without it, it is the empty key (auth.empty-key.*)";
    return std::nullopt;
  }
  return Offer{key.substr(0, cut), "\"${CRH_API_KEY%?}\"", "the key with its last character removed"};
}

std::optional<Offer> extended(const std::string& key, std::string&) {
  return Offer{key + "x", "\"$CRH_API_KEY\"'x'", "the key with one character (x) appended"};
}

std::optional<Offer> inner_space(const std::string& key, std::string& why) {
  // Inside, not around: whitespace around a header value is optional
  // whitespace that HTTP strips (RFC 9110 §5.5), so " KEY " is the key.
  const std::size_t half = char_boundary(key, key.size() / 2);
  if (half == 0) {
    why = "the key is too short to have an inside";
    return std::nullopt;
  }
  const std::string n = std::to_string(half);
  return Offer{key.substr(0, half) + " " + key.substr(half),
               first_chars(half) + "' '\"$(printf %s \"$CRH_API_KEY\" | cut -c" + std::to_string(half + 1) + "-)\"",
               "the key with a space inserted after its first " + n + " characters"};
}

constexpr NearMiss kNearMisses[] = {
    {"prefix-equal", "the key's first half and a different rest of the same length", prefix_equal},
    {"case-changed", "the key with its letters in the other case", case_changed},
    {"truncated", "the key without its last character", truncated},
    {"extended", "the key with one character appended", extended},
    {"inner-space", "the key with a space in its middle", inner_space},
};

// Sends `request` with `offer` put in by `place`. Evidence shows the offer as
// its shell expression; the exchange returned (for verdicts and messages)
// holds neither the offer in its request nor anywhere in its answer's body.
core::Exchange send_offer(CheckContext& ctx, const std::string& id, core::HttpRequest request, const Offer& offer,
                          const Place& place) {
  core::HttpRequest shown = request;
  place.put(request, offer.value);
  place.put(shown, std::string(kStandIn));
  core::Exchange e{request};
  if (ctx.run().target_lost) {
    e.error = core::TransportError::connect_failed;
    e.error_detail = "not sent: the target stopped accepting connections earlier in the run";
  } else {
    auto client = ctx.new_client();
    e = client->send(request);
    for (int again = 0; ctx.not_now(e) && ctx.wait_out_not_now(again, e.response->header("Retry-After")); ++again)
      e = client->send(request);  // the offer again: a "not now" took no effect
    if (e.error == core::TransportError::connect_failed) ctx.run().target_lost = true;
  }
  e.request = shown;
  if (!e.answered()) {
    ctx.record(e);  // no answer to cite: the stand-in shows where the offer went
    return e;
  }
  // An echo of the offer is hidden like an echo of the key, and as with the
  // key (core::composed), not when it is so short that it matches ordinary
  // text: the body is still judged, and "msg" must stay "msg".
  if (!core::key_is_short(offer.value)) e.response->body = core::Redactor(offer.value).redact(e.response->body);
  Recorded r{id, reproducer(ctx, shown, offer.shell), e.response->status, e.response->header("Content-Type"),
             e.response->body};
  r.replay = ReplayStep{.request = shown,
                    .status = r.status,
                    .content_type = r.content_type,
                    .body = r.body,
                    .stand_in = std::string(kStandIn),
                    .stand_in_shell = offer.shell};
  ctx.run().record(r);  // the run-wide checks judge it like every other answer
  r.check = "this check, with " + offer.words + " " + place.where;
  ctx.cite(r);
  return e;
}

// `place` puts `offer` in the agents list (a read) or a database POST to a
// probe key (a write); either must be refused, and the write store nothing.
void offer_refused(CheckContext& ctx, const std::string& id, std::string_view rule, bool write, const Offer& offer,
                   const Place& place) {
  if (!write) {
    auto request = ctx.request(core::api::Operation::list_agents, {});
    ctx.refused(send_offer(ctx, id, request, offer, place), rule,
                "GET " + agents_path() + " with " + offer.words + " " + place.where, ctx.statuses().auth);
    return;
  }
  auto key = probe_key(ctx, "rejected-offer");
  database_set(ctx, key, "crh value before");
  auto read = [&] {
    auto e = ctx.send(core::api::Operation::db_get, {.id = key});
    return json::serialize(ctx.ok_json(e, "E5", "GET " + database_path(key)));
  };
  const std::string before = read();
  const std::string what = "POST " + database_path(key) + " with " + offer.words + " " + place.where;
  auto write_request = ctx.request(core::api::Operation::db_set, {.id = key, .value = "crh value after"});
  ctx.refused(send_offer(ctx, id, write_request, offer, place), rule, what, ctx.statuses().auth);
  const std::string after = read();
  ctx.require(after == before, rule,
              what + " was refused but changed the stored value: before " + excerpt(before, 160) + ", after " +
                  excerpt(after, 160));
}

void near_miss_refused(CheckContext& ctx, const std::string& id, const NearMiss& variant, bool write) {
  std::string why;
  auto offer = variant.derive(ctx.target().api_key, why);
  if (!offer) ctx.skip(why);
  offer_refused(ctx, id, "A2", write, *offer, in_header("Apikey", "", "in the Apikey header"));
}

// Where a service might look for the key besides the Apikey header.
struct Elsewhere {
  const char* name;
  const char* summary;
  std::vector<Place> (*places)();
};

const Elsewhere kElsewhere[] = {
    {"query", "the key as query parameter apikey or Apikey",
     [] {
       return std::vector<Place>{in_query("apikey"), in_query("Apikey")};
     }},
    {"authorization", "the key in Authorization, as \"Bearer KEY\" or bare",
     [] {
       return std::vector<Place>{
           in_header("Authorization", "Bearer ", "as \"Authorization: Bearer ...\", with no Apikey header"),
           in_header("Authorization", "", "as the whole Authorization header, with no Apikey header")};
     }},
    {"cookie", "the key in a cookie named Apikey",
     [] { return std::vector<Place>{in_header("Cookie", "Apikey=", "as cookie Apikey, with no Apikey header")}; }},
};

// A2 and R5 on one read and one write: the near misses and the key elsewhere.
struct OfferEndpoint {
  const char* name;
  bool write;
  const char* refused;  // for summaries
};
constexpr OfferEndpoint kOfferEndpoints[] = {{"agents-list", false, "is refused with a msg (401/403 expected)"},
                                             {"database-post", true, "is refused with a msg and stores nothing"}};

}  // namespace

void add_auth_offer_checks(std::vector<Check>& out) {
  for (const auto& v : kNearMisses)
    for (const auto& ep : kOfferEndpoints) {
      std::string id = std::string("auth.near-miss.") + v.name + "." + ep.name;
      out.push_back({.id = id,
                     .suite = "auth",
                     .rules = {"A2", "X1", "X2"},
                     .summary = std::string(ep.name) + " with " + v.summary + " as Apikey " + ep.refused,
                     .body = [id, &v, write = ep.write](CheckContext& ctx) { near_miss_refused(ctx, id, v, write); }});
    }
  for (const auto& place : kElsewhere)
    for (const auto& ep : kOfferEndpoints) {
      std::string id = std::string("auth.key-in-") + place.name + "." + ep.name;
      out.push_back({.id = id,
                     .suite = "auth",
                     .rules = {"R5", "X1", "X2"},
                     .summary = std::string(ep.name) + " with " + place.summary + " and no Apikey header " + ep.refused,
                     .body = [id, &place, write = ep.write](CheckContext& ctx) {
                       for (const auto& p : place.places()) offer_refused(ctx, id, "R5", write, whole_key(ctx), p);
                     }});
    }
}

}  // namespace crh::contracts::suites
