// Compiled as if it were a file of oracle/: the judge uses core only; what it
// writes into a document (a history line) is keyed by core/history_line_keys.hpp.
#include "results/keys_load.hpp"
