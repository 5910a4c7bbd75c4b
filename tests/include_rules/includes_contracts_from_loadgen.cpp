// Compiled as if it were a file of loadgen/: loadgen and contracts share the
// oracle and core, never each other, so this include of contracts/ must not
// compile.
#include "contracts/runner.hpp"
