// Compiled as if it were a file of oracle/: the oracle is below every source
// of exchanges and depends on core only, so this include of contracts/ (a
// wrong-way arrow) must not compile.
#include "contracts/runner.hpp"
