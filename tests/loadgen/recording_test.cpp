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

}  // namespace
}  // namespace crh::loadgen::engine
