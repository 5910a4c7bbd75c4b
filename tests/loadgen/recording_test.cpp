// What an answer counts as under load: a refusal the profile declares is an
// expected "no", any other refusal is an error, whatever the statuses.
#include "loadgen/engine_parts.hpp"

#include <gtest/gtest.h>

namespace crh::loadgen::engine {
namespace {

Answer answer(unsigned status) {
  Answer a;
  a.status = status;
  return a;
}

TEST(LoadRecording, TheDesignDefaultsExpect403ForACallAnd409ForATag) {
  LoadConfig c;
  EXPECT_FALSE(is_error(c, OpKind::call, answer(403)));
  EXPECT_FALSE(is_error(c, OpKind::recall, answer(403)));
  EXPECT_FALSE(is_error(c, OpKind::tag, answer(409)));
  EXPECT_TRUE(all_tagged(c, 409));
  EXPECT_TRUE(is_error(c, OpKind::call, answer(409)));
  EXPECT_TRUE(is_error(c, OpKind::get_agent, answer(403)));
  EXPECT_TRUE(is_error(c, OpKind::call, answer(500)));
  EXPECT_TRUE(is_error(c, OpKind::call, answer(0)));
  EXPECT_FALSE(is_error(c, OpKind::call, answer(429)));
  EXPECT_FALSE(is_error(c, OpKind::call, answer(200)));
}

TEST(LoadRecording, TheProfilesStatusesDecideWhatIsAnExpectedNo) {
  LoadConfig c;
  c.statuses.call_refused = {409};  // a service that answers a refused call 409
  c.statuses.all_tagged = {423};    // and every alias tagged 423
  EXPECT_FALSE(is_error(c, OpKind::call, answer(409)));
  EXPECT_FALSE(is_error(c, OpKind::recall, answer(409)));
  EXPECT_TRUE(is_error(c, OpKind::call, answer(403))) << "403 is not what this profile declares";
  EXPECT_FALSE(is_error(c, OpKind::tag, answer(423)));
  EXPECT_TRUE(all_tagged(c, 423));
  EXPECT_FALSE(all_tagged(c, 409));
  EXPECT_TRUE(is_error(c, OpKind::tag, answer(409)));
}

// A "not now" is read as core::throttled reads it: a 429 the profile gives no
// other meaning, or a SIP 503 with Retry-After. A profile that answers a
// refused call 429 gets refusals, not throttling.
TEST(LoadRecording, ANotNowIsA429TheProfileLeavesUnnamed) {
  LoadConfig c;
  EXPECT_TRUE(throttled(c, OpKind::call, answer(429)));
  EXPECT_TRUE(throttled(c, OpKind::get, answer(429)));
  EXPECT_FALSE(throttled(c, OpKind::call, answer(503)));
  Answer sip = answer(503);
  EXPECT_FALSE(throttled(c, OpKind::sip_call, sip)) << "a 503 without Retry-After is not a \"not now\"";
  sip.retry_after = 0.0;
  EXPECT_TRUE(throttled(c, OpKind::sip_call, sip));
  EXPECT_FALSE(throttled(c, OpKind::call, sip)) << "a 503 over HTTP is a server error";

  c.statuses.call_refused = {429};
  EXPECT_FALSE(throttled(c, OpKind::call, answer(429)));
  EXPECT_FALSE(is_error(c, OpKind::call, answer(429))) << "the profile's refusal";
  EXPECT_TRUE(is_error(c, OpKind::get, answer(429))) << "an unexpected 4xx of a live service";
}

// Issue 22, item 6b: success is exactly 200 (rule C2). A 204 or a 201 was
// counted as a success because it was below 300.
TEST(LoadRecording, OnlyTwoHundredIsASuccess) {
  LoadConfig c;
  for (unsigned status : {201u, 202u, 204u, 206u, 299u}) {
    EXPECT_TRUE(is_error(c, OpKind::get, answer(status))) << status;
    EXPECT_TRUE(is_error(c, OpKind::tag, answer(status))) << status;
    EXPECT_EQ(outcome_of(answer(status)), Outcome::fail) << status;
  }
  EXPECT_EQ(outcome_of(answer(200)), Outcome::ok);
  EXPECT_FALSE(is_error(c, OpKind::get, answer(200)));
}

}  // namespace
}  // namespace crh::loadgen::engine
