// Compiled as if it were a file of calls/: the drivers place calls and say
// what came back; judging it is the oracle's, above them.
#include "oracle/rules.hpp"
