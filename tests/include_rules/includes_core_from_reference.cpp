// Compiled as if it were a file of reference/: the reference service shares
// no code with the harness (a bug in one cannot hide the same bug in the
// other), so this include of core/ must not compile.
#include "core/http1.hpp"
