// Compiled with the include paths a user of oracle/ gets (crh::oracle and
// core): every public header of the oracle is reachable and compiles on its
// own (the control case of the includes of oracle/ that fail).
#include "oracle/checker.hpp"
#include "oracle/history.hpp"
#include "oracle/rules.hpp"
#include "oracle/shapes.hpp"
#include "oracle/verdicts.hpp"
#include "oracle/model.hpp"
