// Compiled as if it were a file of results/: the verdict is below every part
// that writes a document, so this include of contracts/ must not compile.
#include "contracts/runner.hpp"
