// Compiled as if it were a file of nightly/: the record of nights reads
// documents and depends on core only, so this include of loadgen/ (the code
// that made the documents) must not compile.
#include "loadgen/result.hpp"
