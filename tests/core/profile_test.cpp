// Profiles: defaults as DESIGN.md §3 says, every setting readable, and every
// mistake in a file named by its field.
#include "core/profile.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace crh::core {
namespace {
namespace json = boost::json;

Profile parse(std::string_view text) { return parse_profile(json::parse(text), "test.json"); }

std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Profile, DefaultsAreTheDesignDefaults) {
  Profile p;
  EXPECT_EQ(p.dialect.encoding, ParamEncoding::form);
  EXPECT_TRUE(p.dialect.call_hook.enabled);
  EXPECT_EQ(p.dialect.call_hook.method, "POST");
  EXPECT_EQ(p.dialect.call_hook.path, "/channels/{channel}/alias-numbers/{alias}/calls");
  EXPECT_EQ(p.dialect.call_hook.parameter, "caller");
  EXPECT_EQ(p.statuses.auth, (std::vector<unsigned>{401, 403}));
  EXPECT_EQ(p.statuses.not_found, (std::vector<unsigned>{404}));
  EXPECT_EQ(p.statuses.bad_input, (std::vector<unsigned>{400}));
  EXPECT_EQ(p.statuses.all_tagged, (std::vector<unsigned>{409}));
  EXPECT_EQ(p.dialect.fields.agents_list, "agents");
  EXPECT_EQ(p.dialect.fields.aliases_list, "aliases");
  EXPECT_EQ(p.dialect.fields.alias_expiry, "expires_at");
  EXPECT_EQ(p.dialect.fields.alias_bound_caller, "bound_caller");
  EXPECT_EQ(p.dialect.minutes.min, 1);
  EXPECT_EQ(p.dialect.minutes.max, 1440);
  EXPECT_EQ(parse("{}").dialect.encoding, ParamEncoding::form);
}

TEST(Profile, ReadsEverySetting) {
  auto p = parse(R"({
    "encoding": "json",
    "call_hook": {"method": "PUT", "path": "/hook/{channel}/{alias}", "parameter": "from"},
    "statuses": {"auth": [403], "not_found": [404, 410], "bad_input": [422], "all_tagged": [503],
                 "call_refused": [423], "wrong_method": [405]},
    "id_fields": {"agent": ["agentId"], "alias": ["aliasNumberId"]},
    "lists": {"agents": "items", "aliases": "numbers"},
    "fields": {"agent_state": "status", "alias_tag": "label", "database_value": "data",
               "alias_expiry": "valid_until", "alias_bound_caller": "holder"},
    "minutes": {"min": 5, "max": 10080}
  })");
  EXPECT_EQ(p.dialect.encoding, ParamEncoding::json);
  EXPECT_EQ(p.dialect.call_hook.method, "PUT");
  EXPECT_EQ(p.dialect.call_hook.path_for("1", "a b"), "/hook/1/a%20b");
  EXPECT_EQ(p.dialect.call_hook.parameter, "from");
  EXPECT_EQ(p.statuses.auth, (std::vector<unsigned>{403}));
  EXPECT_EQ(p.statuses.not_found, (std::vector<unsigned>{404, 410}));
  EXPECT_EQ(p.statuses.bad_input, (std::vector<unsigned>{422}));
  EXPECT_EQ(p.statuses.all_tagged, (std::vector<unsigned>{503}));
  EXPECT_EQ(p.statuses.call_refused, (std::vector<unsigned>{423}));
  EXPECT_EQ(p.dialect.fields.agent_id, (std::vector<std::string>{"agentId"}));
  EXPECT_EQ(p.dialect.fields.alias_id, (std::vector<std::string>{"aliasNumberId"}));
  EXPECT_EQ(p.dialect.fields.agents_list, "items");
  EXPECT_EQ(p.dialect.fields.aliases_list, "numbers");
  EXPECT_EQ(p.dialect.fields.agent_state, "status");
  EXPECT_EQ(p.dialect.fields.alias_tag, "label");
  EXPECT_EQ(p.dialect.fields.database_value, "data");
  EXPECT_EQ(p.dialect.fields.alias_expiry, "valid_until");
  EXPECT_EQ(p.dialect.fields.alias_bound_caller, "holder");
  EXPECT_EQ(p.dialect.minutes.min, 5);
  EXPECT_EQ(p.dialect.minutes.max, 10080);
  EXPECT_EQ(parse(R"({"encoding": "query"})").dialect.encoding, ParamEncoding::query);
  EXPECT_TRUE(p.encoding_given);
  EXPECT_FALSE(parse("{}").encoding_given) << "a contract run may then find the encoding the target takes";
}

TEST(Profile, ANullCallHookMeansTheTargetHasNone) {
  EXPECT_FALSE(parse(R"({"call_hook": null})").dialect.call_hook.enabled);
  EXPECT_FALSE(parse(R"({"call_hook": false})").dialect.call_hook.enabled);
}

TEST(Profile, RoundTripsThroughItsJson) {
  auto p = parse(R"({"encoding": "json", "statuses": {"auth": [403]}, "call_hook": null,
                      "fields": {"alias_expiry": "until"}, "minutes": {"max": 60}})");
  auto again = parse_profile(to_json(p), "again");
  EXPECT_EQ(again.dialect.fields.alias_expiry, "until");
  EXPECT_EQ(again.dialect.minutes.max, 60);
  EXPECT_EQ(again.dialect.encoding, ParamEncoding::json);
  EXPECT_EQ(again.statuses.auth, (std::vector<unsigned>{403}));
  EXPECT_FALSE(again.dialect.call_hook.enabled);
}

TEST(Profile, ReadsHowAnAliasIsReachedOverSip) {
  Profile defaults;
  EXPECT_EQ(defaults.dialect.sip.number_field, "number");
  EXPECT_EQ(defaults.dialect.sip.uri_template, "sip:{number}@{host}:{port}");
  EXPECT_EQ(defaults.statuses.sip_refused, (std::vector<unsigned>{403}));
  auto p = parse(R"({"sip": {"number_field": "e164", "uri": "sip:{number}@pbx.example;user=phone"},
                      "statuses": {"sip_refused": [403, 486]}})");
  EXPECT_EQ(p.dialect.sip.number_field, "e164");
  EXPECT_EQ(p.dialect.sip.uri_template, "sip:{number}@pbx.example;user=phone");
  EXPECT_EQ(p.statuses.sip_refused, (std::vector<unsigned>{403, 486}));
  auto again = parse_profile(to_json(p), "again");
  EXPECT_EQ(again.dialect.sip.number_field, "e164");
  EXPECT_EQ(again.dialect.sip.uri_template, p.dialect.sip.uri_template);
  EXPECT_EQ(again.statuses.sip_refused, p.statuses.sip_refused);
  EXPECT_NE(error_of(R"({"sip": {"uri": "sip:alias@host"}})").find("sip.uri\" must contain {number}"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"sip": {"uri": "http://{number}"}})").find("must be a sip: or sips: URI"), std::string::npos);
  EXPECT_NE(error_of(R"({"sip": {"numbr": "x"}})").find("sip.numbr"), std::string::npos);
}

TEST(Profile, NamesTheFieldOfEveryMistake) {
  EXPECT_NE(error_of(R"({"encodingg": "form"})").find("field \"encodingg\" is not a profile setting"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"encoding": "xml"})").find("field \"encoding\" must be \"form\", \"json\" or \"query\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"statuses": {"auth": [200]}})").find("statuses.auth"), std::string::npos);
  EXPECT_NE(error_of(R"({"statuses": {"auth": []}})").find("statuses.auth"), std::string::npos);
  EXPECT_NE(error_of(R"({"statuses": {"oops": [400]}})").find("statuses.oops"), std::string::npos);
  EXPECT_NE(error_of(R"({"call_hook": {"path": "/calls"}})").find("call_hook.path\" must contain {alias}"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"lists": {"agents": ""}})").find("lists.agents"), std::string::npos);
  EXPECT_NE(error_of(R"({"minutes": {"max": 1.5}})").find("minutes.max\" must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"minutes": {"min": 10, "max": 5}})").find("field \"minutes\" must have max >= min"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"minutes": {"mx": 5}})").find("minutes.mx"), std::string::npos);
  EXPECT_NE(error_of(R"([1])").find("test.json"), std::string::npos);
}

TEST(Profile, LoadNamesAMissingOrBrokenFile) {
  try {
    load_profile("/nonexistent/profile.json");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/profile.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace crh::core
