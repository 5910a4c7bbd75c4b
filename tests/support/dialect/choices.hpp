// The silent-gap switches of crh_dialect_server (issue 35): each is a point
// where the spec says "not shown" or says nothing, and each value is a
// correct reading of it. `--choice NAME=VALUE` picks one; the first value of
// each is the dialect's own answer (what it did before the switches came), so
// a server started without --choice answers as it always did.
// `--list-choices` prints this table (bench/explore/zoo.sh reads it).
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dialect {

struct Switch {
  const char* name;
  std::vector<const char*> values;  // the first is the default
  const char* gap;                  // what the spec leaves open
};

inline const std::vector<Switch>& switches() {
  static const std::vector<Switch> table = {
      {"slash", {"refused", "same", "distinct"},
       "a path with a trailing '/': 404 / the same resource / a database key \"x/\" of its own (other paths 404)"},
      {"empty", {"null", "omit"},
       "a field without a value (snoozed_since, last_change, an untagged alias's tag, expiry, holder): null / absent"},
      {"lists", {"wrapped", "bare"}, "agent and alias lists: an object holding the array / the array itself"},
      {"ids", {"mixed", "string", "number"},
       "agent and alias ids: agent 7 and alias \"a-1\" / \"7\" and \"a-1\" / 7 and 1"},
      {"names", {"dialect", "plain"},
       "field names: uid, label, status on|off, members, numbers, alias_uid, msisdn, label, valid_until, holder, "
       "name/data / DESIGN §3's id, name, state available|snoozed, agents, aliases, number, tag, expires_at, "
       "bound_caller, key/value"},
      {"state", {"word", "bool"},
       "an agent's state: a word (status on|off, or state available|snoozed) / a boolean field snoozed"},
      {"db", {"named", "bare", "confirm"},
       "database answers: an object with the key and value / the value as a JSON string / GET as named, POST "
       "{\"stored\": true} only"},
      {"keycase", {"exact", "fold"}, "database keys: case-sensitive / ASCII case folded (crh-probe-x is crh-probe-X)"},
      {"auth", {"403", "401"}, "a missing or wrong Apikey"},
      {"bad", {"422", "400"}, "bad input: a missing or malformed parameter"},
      {"full", {"423", "409"}, "a tag when every alias of the channel is tagged"},
      {"refused", {"409", "403", "423"}, "a call by another caller to a bound alias"},
      {"method", {"405", "404"}, "a method a path does not take"},
      {"notag", {"404", "409"}, "deleting a tag the alias does not have"},
      {"ties", {"low", "high", "random"}, "which of several never-used aliases a tag picks"},
      {"minutes", {"week", "day", "hour", "min5"},
       "the minutes a tag may ask for: 1-10080 / 1-1440 / 1-60 / 5-1440"},
      {"encoding", {"json", "form", "query", "any"},
       "where parameters go: a JSON body / a form body / the query string / any of the three"},
      {"hook", {"dial", "calls", "none"},
       "the call hook: POST .../:id/dial with from / POST .../:id/calls with caller (DESIGN §4) / none at all"},
      {"ctype", {"charset", "plain"}, "Content-Type: application/json; charset=utf-8 / application/json"},
      {"untag", {"alias", "confirm"}, "the tag deletion's answer: the alias untagged / {\"removed\": true}"},
      {"taganswer", {"alias", "wrapped"}, "the tag's answer: the alias / {\"tagged\": ALIAS}"},
      {"expiry", {"rfc3339", "epoch"}, "a tag's end as shown: RFC 3339 text / Unix seconds"},
      {"again", {"ok", "refused"}, "snoozing a snoozed agent or waking an awake one: 200 / 409"},
      {"order", {"auth", "route"}, "a request with a bad key to a path that is no endpoint: auth refusal / 404"},
      {"errors", {"msg", "rich"}, "error bodies: {\"msg\"} / {\"msg\", \"code\", \"error\"}"},
      {"limit", {"none", "255"}, "the size of a database value: none / at most 255 bytes (longer is bad input)"},
      {"listorder", {"id", "reverse"}, "the order of agent and alias lists: by id / the reverse"},
      {"framing", {"length", "chunked"}, "a response body framed by Content-Length / chunked (HTTP/1.1)"},
      {"keepalive", {"yes", "no"}, "the connection after an answer: kept / closed (Connection: close)"},
      {"tagnames", {"repeat", "unique"},
       "a tag name already on another alias of the channel: allowed / refused 409"},
  };
  return table;
}

// The chosen value of every switch (its default unless --choice set it).
class Choices {
 public:
  Choices() {
    for (const auto& s : switches()) chosen_[s.name] = s.values.front();
  }
  // NAME=VALUE; false (with `why`) for an unknown switch or value.
  bool set(std::string_view text, std::string& why) {
    const auto eq = text.find('=');
    const std::string name(text.substr(0, eq)), value(eq == text.npos ? "" : text.substr(eq + 1));
    for (const auto& s : switches()) {
      if (name != s.name) continue;
      for (const char* v : s.values)
        if (value == v) {
          chosen_[name] = value;
          return true;
        }
      why = "--choice " + name + ": \"" + value + "\" is not one of its values (--list-choices)";
      return false;
    }
    why = "--choice: no switch named \"" + name + "\" (--list-choices)";
    return false;
  }
  bool is(const std::string& name, std::string_view value) const { return chosen_.at(name) == value; }
  const std::string& operator[](const std::string& name) const { return chosen_.at(name); }
  unsigned status(const std::string& name) const { return static_cast<unsigned>(std::stoul(chosen_.at(name))); }

 private:
  std::map<std::string, std::string> chosen_;
};

inline void print_switches() {
  for (const auto& s : switches()) {
    std::printf("%s", s.name);
    for (const char* v : s.values) std::printf(" %s", v);
    std::printf("\t%s\n", s.gap);
  }
}

}  // namespace dialect
