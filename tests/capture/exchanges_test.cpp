// Tests of capture/exchanges.
#include <gtest/gtest.h>
