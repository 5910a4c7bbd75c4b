// Tests of capture/wire_timing.
#include <gtest/gtest.h>
