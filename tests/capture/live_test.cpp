// Tests of capture/live.
#include <gtest/gtest.h>
