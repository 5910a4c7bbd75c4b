// Tests of capture/pcap_check.
#include <gtest/gtest.h>
