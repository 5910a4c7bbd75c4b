// Compiled as if it were a file of reports/: reports draw what the documents
// say; the nightly gate writes its judgement into the trend document, so
// reports never ask nightly/ and this include must not compile.
#include "nightly/record.hpp"
