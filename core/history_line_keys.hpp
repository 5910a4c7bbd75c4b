// The keys of one line of an operation history (--history, JSON lines): the
// oracle writes them (oracle/history.cpp) and a load document carries such
// lines as a violation's proof, which renderers read through
// results/keys_load.hpp (its `proof` names these). Defined below both, once.
#pragma once

#include <string_view>

namespace crh::core::history_line {

using Key = std::string_view;
inline constexpr Key round = "round";
inline constexpr Key op = "op";
inline constexpr Key alias = "alias";
inline constexpr Key caller = "caller";  // absent for the control connection's operations
inline constexpr Key invoke_ns = "invoke_ns";
inline constexpr Key complete_ns = "complete_ns";
inline constexpr Key outcome = "outcome";
inline constexpr Key status = "status";  // the HTTP status; 0 without an answer
inline constexpr Key error = "error";    // absent without one
inline constexpr Key not_now = "not_now";  // true for an HTTP "not now" (a 429, oracle::Op::not_now); else absent
inline constexpr Key id = "id";          // the mixed load's key or agent (absent without one)
inline constexpr Key value = "value";    // the value written or read (absent without one)

}  // namespace crh::core::history_line
