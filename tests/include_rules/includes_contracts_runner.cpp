// Compiled as if it were a file of core/: core depends on nothing of the
// harness, so this include of contracts/ (a wrong-way arrow) must not compile.
#include "contracts/runner.hpp"
