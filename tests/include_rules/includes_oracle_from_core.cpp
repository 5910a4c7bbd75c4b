// Compiled as if it were a file of core/: core depends on nothing of the
// harness, so this include of oracle/ (a wrong-way arrow) must not compile.
#include "oracle/rules.hpp"
