// Compiled as if it were a file of runners/, which links contracts: the check
// context is internal to contracts/, so this include must not compile.
#include "contracts/context.hpp"
