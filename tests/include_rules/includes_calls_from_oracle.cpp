// Compiled as if it were a file of oracle/: the judge reads call outcomes
// (core/call_outcome.hpp), never the drivers that place calls.
#include "calls/call_driver.hpp"
