// Compiled as if it were a file of runners/: the public headers of the parts
// it links are reachable (the control case of the two includes that fail).
#include "contracts/runner.hpp"
#include "loadgen/engine.hpp"
#include "reports/html.hpp"
