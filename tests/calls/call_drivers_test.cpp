// What a load asks calls/ before placing any call: whether this target can
// place calls at all (a hook in the profile; over SIP, a number to dial in the
// alias list), and what to set when a first call did not connect.
#include "calls/call_drivers.hpp"
#include "calls/http_call_driver.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace crh::calls {
namespace {

core::Target http_target() {
  core::Target t;
  std::string why;
  t.base = *core::parse_base_url("http://127.0.0.1:9", why);
  t.channel = "1";
  return t;
}

core::Target sip_target() {
  core::Target t = http_target();
  t.calls.sip = true;
  return t;
}

TEST(CannotPlaceCalls, AHookInTheProfileIsEnoughOverHttp) {
  const auto list = boost::json::parse(R"({"aliases":[{"id":"a"}]})");
  EXPECT_FALSE(cannot_place_calls(http_target(), list));
  auto no_hook = http_target();
  no_hook.dialect.call_hook.enabled = false;
  const auto why = cannot_place_calls(no_hook, list);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("call_hook: null"), std::string::npos) << *why;
}

TEST(CannotPlaceCalls, OverSipAnAliasNeedsANumberToDial) {
  EXPECT_FALSE(cannot_place_calls(sip_target(), boost::json::parse(R"({"aliases":[{"id":"1","number":"+15550101"}]})")));
  EXPECT_FALSE(cannot_place_calls(sip_target(), boost::json::parse(R"(["+15550101","+15550102"])")))
      << "ids that are numbers are dialled as they are";
  const auto why = cannot_place_calls(
      sip_target(), boost::json::parse(R"({"aliases":[{"id":"a","e164":"+14420001"},{"id":"b","e164":"+14420002"}]})"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("no alias shows field \"number\" (profile sip.number_field)"), std::string::npos) << *why;
  EXPECT_NE(why->find("field \"e164\" holds \"+14420001\""), std::string::npos) << *why;
  EXPECT_NE(why->find("GET http://127.0.0.1:9/channels/1/alias-numbers"), std::string::npos) << *why;
}

// The HTTP driver reads a "not now" as core::throttled does: a 429 the
// profile gives no meaning is throttled, one it names a refusal is refused.
TEST(HttpCallDriver, A429IsThrottledUnlessTheProfileNamesItARefusal) {
  core::ExpectedStatuses statuses;
  auto driver = make_call_driver(http_target(), statuses, {});
  EXPECT_EQ(driver->outcome_of(429), core::CallOutcome::throttled);
  EXPECT_EQ(driver->outcome_of(403), core::CallOutcome::refused);
  EXPECT_EQ(driver->outcome_of(200), core::CallOutcome::connected);
  EXPECT_EQ(driver->outcome_of(503), core::CallOutcome::unknown);
  statuses.call_refused = {403, 429};
  EXPECT_EQ(make_call_driver(http_target(), statuses, {})->outcome_of(429), core::CallOutcome::refused);
}

TEST(FirstCallHint, NamesWhatToSetForTheTargetsDriver) {
  EXPECT_NE(first_call_hint(http_target()).find("call_hook.method"), std::string::npos);
  EXPECT_NE(first_call_hint(sip_target()).find("--sip-target"), std::string::npos);
}

// A "not now" is placed again while the caller's wait says to go on, with
// the answer's Retry-After; any other answer ends the loop at once.
TEST(PlacedPastNotNow, PlacesAgainWhileNotNowAndTheWaitGoesOn) {
  const auto answer = [](bool not_now) {
    CallResult r;
    r.not_now = not_now;
    r.outcome = not_now ? core::CallOutcome::throttled : core::CallOutcome::connected;
    core::Exchange e;
    e.response = core::HttpResponse{.status = not_now ? 429u : 200u, .headers = {{"Retry-After", "1"}}};
    r.exchange = std::move(e);
    return r;
  };
  int placed = 0;
  std::vector<std::pair<int, std::string>> waits;
  const auto place = [&] { return answer(++placed <= 2); };
  const auto r = placed_past_not_now(place, [&](int again, const std::string& retry_after) {
    waits.push_back({again, retry_after});
    return true;
  });
  EXPECT_EQ(placed, 3);
  EXPECT_EQ(r.outcome, core::CallOutcome::connected);
  EXPECT_EQ(waits, (std::vector<std::pair<int, std::string>>{{0, "1"}, {1, "1"}}));

  placed = 0;
  const auto given_up = placed_past_not_now(place, [](int, const std::string&) { return false; });
  EXPECT_EQ(placed, 1) << "the wait said stop";
  EXPECT_TRUE(given_up.not_now);
}

TEST(NoCallHook, OnlyNoRouteNoMethodOrNotImplemented) {
  for (unsigned s : {404u, 405u, 501u}) EXPECT_TRUE(no_call_hook(s)) << s;
  for (unsigned s : {200u, 400u, 401u, 403u, 409u, 429u, 500u, 503u}) EXPECT_FALSE(no_call_hook(s)) << s;
}

}  // namespace
}  // namespace crh::calls
