// Compiled as if it were a file of core/: results/ sits above core (the
// document's keys and readers are to move there), so this include must not compile.
#include "results/verdict.hpp"
