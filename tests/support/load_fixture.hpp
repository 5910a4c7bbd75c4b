// A load run made of known samples, for tests of the result document: all of
// them (part 0), or the even (part 1) or odd (part 2) ones, so that parts 1
// and 2 are shards whose merge must equal part 0 exactly.
#pragma once

#include "loadgen/readback.hpp"

namespace crh::test {

loadgen::LoadRun synthetic_load_run(loadgen::Scenario scenario, int part, double latency_scale = 1.0);

}  // namespace crh::test
