// Compiled as if it were a file of capture/: a capture is judged by the
// oracle (rules, shapes, the checker), never by contracts, so this include of
// contracts/ must not compile.
#include "contracts/runner.hpp"
