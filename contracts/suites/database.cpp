// database: values round-trip exactly whatever their characters and size;
// a write overwrites; keys that need percent-encoding work; an unknown key
// is refused.
#include <boost/json.hpp>

#include "contracts/suites/suites.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// POST value, GET it back: MUST the entry holds it; SHOULD in the profile's field.
void round_trip(CheckContext& ctx, const std::string& key, const std::string& value, std::string_view rule) {
  if (oracle::value_may_be_refused(value)) {
    // The spec shows no type or size of values (spec 2, 8): a refusal of this
    // one is a SHOULD, and there is then nothing to read back.
    auto e = ctx.send(core::api::Operation::db_set, {.id = key, .value = value});
    const std::string post = "POST " + database_path(key) + " value=" + oracle::excerpt(value, 60);
    if (ctx.response(e, post).status != 200) {
      ctx.prefer(false, "E6",
                 post + ": expected HTTP 200, got " + describe_answer(e) +
                     " (the spec shows no size or type of values; a target that refuses it says so)");
      return;
    }
    ctx.ok_json(e, "E6", post);
  } else {
    database_set(ctx, key, value);
  }
  const std::string what = "GET " + database_path(key);
  auto body = ctx.ok_json(ctx.send(core::api::Operation::db_get, {.id = key}), "E5", what);
  ctx.require(holds_string(body, value), rule,
              what + " after POST value=" + oracle::excerpt(value, 60).substr(value.empty() ? 0 : 5) +
                  ": expected the entry to hold that value exactly, got " +
                  oracle::excerpt(json::serialize(body), 200));
  auto field = database_value(ctx, body);
  ctx.prefer(field == value, rule,
             what + ": expected the value in field \"" + ctx.fields().database_value + "\", got " +
                 oracle::excerpt(json::serialize(body), 200));
}

struct Sample {
  const char* name;
  std::string value;
};

const std::vector<Sample>& sample_values() {
  static const std::vector<Sample> values{
      {"plain", "crh-value"},
      {"spaces", "a value with  spaces "},
      {"plus", "1+1=2"},
      {"ampersand", "a&b&c"},
      {"equals", "k=v=w"},
      {"percent", "100% %41 %zz"},
      {"unicode", "h\xc3\xa9llo \xe2\x98\x8e \xf0\x9f\x93\x9e \xe6\x97\xa5\xe6\x9c\xac"},
      {"quotes", "\"quoted\" 'single' \\back\\slash"},
      {"empty", ""},
      {"16k", std::string(16 * 1024, 'x')},
  };
  return values;
}

const std::vector<Sample>& sample_keys() {
  static const std::vector<Sample> keys{
      {"space", "key with space"},
      {"plus", "a+b"},
      {"percent", "50%"},
      {"ampersand", "a&b=c"},
      {"unicode", "cl\xc3\xa9-\xe2\x98\x8e"},
      {"dots", "v1.2_x~y"},
  };
  return keys;
}

// E5, E6: the sample value reads back exactly as written.
void value_round_trip(CheckContext& ctx, const Sample& v) {
  if (v.value.size() > 1024 && ctx.target().dialect.encoding == core::ParamEncoding::query)
    ctx.skip("the profile sends parameters in the query string, where a 16 KiB value does not fit");
  round_trip(ctx, probe_key(ctx, "round-trip"), v.value, "E6");
}

// E6: a second write replaces the first value rather than adding to it.
void overwrite(CheckContext& ctx) {
  auto key = probe_key(ctx, "overwrite");
  database_set(ctx, key, "crh first value");
  round_trip(ctx, key, "crh second value", "E6");
  auto body = ctx.ok_json(ctx.send(core::api::Operation::db_get, {.id = key}), "E5", "GET " + database_path(key));
  ctx.require(
      !holds_string(body, "crh first value"), "E6",
      "GET " + database_path(key) + ": expected only the second value, got " + oracle::excerpt(json::serialize(body)));
}

// E5, E6: a key with the sample's characters, percent-encoded in the path, stores and reads back.
void key_round_trip(CheckContext& ctx, const Sample& k) {
  auto key = probe_key(ctx, "key-" + k.value);
  auto e = ctx.send(core::api::Operation::db_set, {.id = key, .value = "crh key probe"});
  auto answered = ctx.response(e, "POST " + database_path(key));
  if (answered.status != 200) {
    ctx.prefer(false, "E6",
               "POST " + database_path(key) + ": expected HTTP 200 for a key \"" + key +
                   "\" (keys are arbitrary UTF-8 text), got " + describe_answer(e));
    return;
  }
  auto get = ctx.send(core::api::Operation::db_get, {.id = key});
  const auto& r = ctx.response(get, "GET " + database_path(key));
  std::string why;
  auto body = oracle::parse_json(r.body, why);
  ctx.prefer(
      r.status == 200 && body && holds_string(*body, "crh key probe"), "E5",
      "GET " + database_path(key) + ": expected the value written under \"" + key + "\", got " + describe_answer(get));
}

// E5, X1, X2: a key never written is refused, not answered 200.
void unknown_key(CheckContext& ctx) {
  const std::string key = std::string(kProbePrefix) + "absent-" + ctx.run().caller_base.substr(5);
  ctx.refused(ctx.send(core::api::Operation::db_get, {.id = key}), "E5", "GET " + database_path(key),
              ctx.statuses().not_found);
}

}  // namespace

void add_database_checks(std::vector<Check>& out) {
  const std::string s = "database";
  for (const auto& v : sample_values())
    out.push_back({.id = std::string("database.round-trip.") + v.name,
                   .suite = s,
                   .rules = {"E5", "E6"},
                   .summary = std::string("a ") + v.name + " value written with POST reads back exactly with GET",
                   .body = [&v](CheckContext& ctx) { value_round_trip(ctx, v); }});
  out.push_back({.id = "database.overwrite",
                 .suite = s,
                 .rules = {"E6", "E5"},
                 .summary = "a second POST to a key replaces its value",
                 .body = overwrite});
  for (const auto& k : sample_keys())
    out.push_back(
        {.id = std::string("database.key-encoding.") + k.name,
         .suite = s,
         .rules = {"E5", "E6"},
         .severity = Severity::should,
         .summary = std::string("a key with ") + k.name + " characters, percent-encoded in the path, round-trips",
         .body = [&k](CheckContext& ctx) { key_round_trip(ctx, k); }});
  out.push_back({.id = "database.unknown-key",
                 .suite = s,
                 .rules = {"E5", "X1", "X2"},
                 .summary = "a key never written is refused with a msg (404 expected), not answered 200",
                 .body = unknown_key});
}

}  // namespace crh::contracts::suites
