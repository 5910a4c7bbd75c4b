// Compiled as if it were a file of oracle/: the oracle depends on core only,
// so this include of loadgen/ (a wrong-way arrow) must not compile.
#include "loadgen/engine.hpp"
