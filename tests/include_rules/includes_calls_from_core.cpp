// Compiled as if it were a file of core/: placing calls (the call drivers and
// SIP) sits above core, so this include must not compile.
#include "calls/call_driver.hpp"
