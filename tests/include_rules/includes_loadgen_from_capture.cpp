// Compiled as if it were a file of capture/: wire timing pairs core's client
// records and returns its figures (the runner joins them into the load's
// result), so this include of loadgen/ must not compile.
#include "loadgen/engine.hpp"
