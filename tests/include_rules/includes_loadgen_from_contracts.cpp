// Compiled as if it were a file of contracts/: contracts and loadgen share
// the oracle and core, never each other, so this include of loadgen/ must not
// compile.
#include "loadgen/engine.hpp"
