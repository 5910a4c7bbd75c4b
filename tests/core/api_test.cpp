// The API model: requests for every operation in every encoding, and the
// readers of lists and ids in any reasonable shape under the dialect's names.
#include "core/api.hpp"
#include "core/target.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace crh::core::api {
namespace {
namespace json = boost::json;

const std::vector<std::string> kIdFields = {"id", "agent_id"};

TEST(FindList, AcceptsABareArrayTheNamedFieldOrTheOnlyArray) {
  std::string why;
  auto bare = json::parse(R"([{"id":1},{"id":2}])");
  auto found = find_list(bare, "agents", why);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->items->size(), 2u);
  EXPECT_EQ(found->where, "the body");

  auto named = json::parse(R"({"count":2,"agents":[{"id":"101"}],"links":[]})");
  found = find_list(named, "agents", why);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->where, "field \"agents\"");

  auto other_name = json::parse(R"({"total":1,"data":[{"id":"101"}]})");
  found = find_list(other_name, "agents", why);
  ASSERT_TRUE(found) << why;
  EXPECT_EQ(found->where, "field \"data\"");

  auto empty = json::parse(R"({"items":[]})");
  found = find_list(empty, "agents", why);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->items->empty());
}

TEST(FindList, RefusesWithAReasonWhenThereIsNoneOrSeveral) {
  std::string why;
  EXPECT_FALSE(find_list(json::parse(R"({"a":[1],"b":[2]})"), "agents", why));
  EXPECT_NE(why.find("several"), std::string::npos) << why;
  EXPECT_FALSE(find_list(json::parse(R"({"a":1})"), "agents", why));
  EXPECT_NE(why.find("no array"), std::string::npos) << why;
  EXPECT_FALSE(find_list(json::parse(R"("agents")"), "agents", why));
  EXPECT_FALSE(find_list(json::parse("null"), "agents", why));
}

TEST(ItemId, StringsNumbersAndBareItems) {
  EXPECT_EQ(item_id(json::parse(R"({"id":"101"})"), kIdFields), "101");
  EXPECT_EQ(item_id(json::parse(R"({"id":101})"), kIdFields), "101");
  EXPECT_EQ(item_id(json::parse(R"({"agent_id":7,"name":"x"})"), kIdFields), "7");
  EXPECT_EQ(item_id(json::parse(R"("abc")"), kIdFields), "abc");
  EXPECT_EQ(item_id(json::parse("42"), kIdFields), "42");
  EXPECT_FALSE(item_id(json::parse(R"({"id":""})"), kIdFields));
  EXPECT_FALSE(item_id(json::parse(R"({"id":1.5})"), kIdFields));
  EXPECT_FALSE(item_id(json::parse(R"({"id":null})"), kIdFields));
  EXPECT_FALSE(item_id(json::parse(R"({"name":"no id"})"), kIdFields));
  EXPECT_FALSE(item_id(json::parse("[1]"), kIdFields));
}

TEST(ApiModel, EveryOperationHasItsMethodAndPath) {
  Target t;
  t.channel = "7 x";
  auto req = [&](Operation op, Arguments a = {}) { return request(t, op, a); };
  EXPECT_EQ(req(Operation::list_agents).target, "/api/v1/local-agents");
  EXPECT_EQ(req(Operation::get_agent, {.id = "a/b"}).target, "/api/v1/local-agents/a%2Fb");
  EXPECT_EQ(req(Operation::snooze, {.id = "101"}).method, "PUT");
  EXPECT_EQ(req(Operation::snooze, {.id = "101"}).target, "/api/v1/local-agents/101/snooze");
  EXPECT_EQ(req(Operation::wake, {.id = "101"}).target, "/api/v1/local-agents/101/wake");
  EXPECT_EQ(req(Operation::db_get, {.id = "k"}).target, "/database/k");
  auto set = req(Operation::db_set, {.id = "k", .value = "v w"});
  EXPECT_EQ(set.method, "POST");
  EXPECT_EQ(set.body, "value=v%20w");
  EXPECT_EQ(req(Operation::list_aliases).target, "/channels/7%20x/alias-numbers");
  auto tag = req(Operation::tag, {.tag = "t", .minutes = 5});
  EXPECT_EQ(tag.target, "/channels/7%20x/alias-numbers/tag");
  EXPECT_EQ(tag.body, "tag=t&minutes=5");
  auto untag = req(Operation::untag, {.id = "9"});
  EXPECT_EQ(untag.method, "DELETE");
  EXPECT_EQ(untag.target, "/channels/7%20x/alias-numbers/9/tag");
  auto call = req(Operation::call, {.id = "9", .caller = "+1"});
  EXPECT_EQ(call.method, "POST");
  EXPECT_EQ(call.target, "/channels/7%20x/alias-numbers/9/calls");
  EXPECT_EQ(call.body, "caller=%2B1");
}

TEST(ApiModel, TheDialectPlacesParametersAndTheCallHook) {
  Target t;
  t.dialect.encoding = ParamEncoding::json;
  t.dialect.call_hook = {true, "PUT", "/hook/{alias}", "from"};
  auto tag = request(t, Operation::tag, {.tag = "t", .minutes = 5});
  EXPECT_EQ(tag.body, R"({"tag":"t","minutes":5})");
  auto call = request(t, Operation::call, {.id = "9", .caller = "+1"});
  EXPECT_EQ(call.method, "PUT");
  EXPECT_EQ(call.target, "/hook/9");
  EXPECT_EQ(call.body, R"({"from":"+1"})");
  t.dialect.encoding = ParamEncoding::query;
  EXPECT_EQ(request(t, Operation::db_set, {.id = "k", .value = "v"}).target, "/database/k?value=v");
}

// Exploration's requests come from the same model (issue 37: one place makes
// requests): parameters left out, minutes as any text, the operation's own
// channel, a database key with every byte encoded.
TEST(ApiModel, AnOperationAsAGeneratorSendsIt) {
  Target t;
  t.channel = "1";
  t.dialect.encoding = ParamEncoding::json;
  auto tag = request_as_sent(t, Operation::tag, Sent{.channel = "2", .minutes = "abc"});
  EXPECT_EQ(tag.target, "/channels/2/alias-numbers/tag");
  EXPECT_EQ(tag.body, R"({"minutes":"abc"})") << "no tag sent; a minutes that is no integer is a string";
  EXPECT_EQ(request_as_sent(t, Operation::tag, Sent{.tag = "t", .minutes = "-5"}).body, R"({"tag":"t","minutes":-5})");
  EXPECT_EQ(request_as_sent(t, Operation::db_set, Sent{.id = "k"}).body, "") << "the value left out: no parameter";
  t.dialect.encoding = ParamEncoding::query;
  EXPECT_EQ(request_as_sent(t, Operation::db_set, Sent{.id = "a/b", .value = "v", .every_byte_encoded = true}).target,
            "/database/%61%2F%62?value=v");
  EXPECT_EQ(request_as_sent(t, Operation::db_get, Sent{.id = "a/b"}).target, "/database/a%2Fb");
  EXPECT_EQ(request_as_sent(t, Operation::untag, Sent{.id = "9", .channel = "3"}).target, "/channels/3/alias-numbers/9/tag");
  // The everyday form is the generator's with every parameter sent on the target's channel.
  for (auto op : {Operation::list_agents, Operation::get_agent, Operation::snooze, Operation::wake, Operation::db_get,
                  Operation::db_set, Operation::list_aliases, Operation::tag, Operation::untag, Operation::call}) {
    const auto everyday = request(t, op, Arguments{.id = "9", .value = "v", .tag = "t", .minutes = 7, .caller = "+1"});
    const auto sent = request_as_sent(t, op, Sent{.id = "9", .channel = "1", .value = "v", .tag = "t", .minutes = "7", .caller = "+1"});
    EXPECT_EQ(everyday.method + " " + everyday.target + " " + everyday.body, sent.method + " " + sent.target + " " + sent.body);
  }
}

TEST(ApiModel, ReadersUseTheDialectsNames) {
  FieldNames n;
  n.alias_id = {"aliasNumberId"};
  n.alias_tag = "label";
  n.agent_state = "status";
  n.database_value = "data";
  EXPECT_EQ(alias_id(n, json::parse(R"({"aliasNumberId":5})")), "5");
  EXPECT_FALSE(alias_id(n, json::parse(R"({"id":5})")));
  EXPECT_EQ(tagged_alias_id(n, json::parse(R"({"alias":{"aliasNumberId":"a1"}})")), "a1");
  EXPECT_EQ(tag_of(n, json::parse(R"({"label":"x"})")), "x");
  EXPECT_EQ(tag_of(n, json::parse(R"({"label":null})")), "");
  EXPECT_FALSE(tag_of(n, json::parse(R"({"tag":"x"})")));
  EXPECT_EQ(agent_state(n, json::parse(R"({"status":"snoozed"})")), "\"snoozed\"");
  EXPECT_EQ(agent_state_text(n, json::parse(R"({"status":"snoozed"})")), "snoozed");
  EXPECT_FALSE(agent_state_text(n, json::parse(R"({"state":"snoozed"})")));
  EXPECT_EQ(database_value(n, json::parse(R"({"data":"v"})")), "v");
  EXPECT_EQ(database_value(n, json::parse(R"("bare")")), "bare");
  EXPECT_FALSE(database_value(n, json::parse(R"({"value":"v"})")));
}

}  // namespace
}  // namespace crh::core::api
