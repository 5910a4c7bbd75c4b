// Operation names and the JSON-lines form of an operation.
#include "oracle/history.hpp"

#include <array>
#include <cstdio>

#include "core/outside.hpp"
#include "core/history_line_keys.hpp"

namespace crh::oracle {
namespace {

constexpr std::array<std::string_view, kOpKinds> kOpNames = {"get",  "list-agents", "get-agent", "snooze",
                                                             "wake", "db-get",      "db-set",    "list-aliases",
                                                             "tag",  "untag",       "call",      "recall",
                                                             "sip-call", "sip-recall"};

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          // Target text may be anything: keep the file valid JSON and ASCII.
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", c);
          out += hex;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

}  // namespace

std::string_view to_string(OpKind k) { return kOpNames[static_cast<std::size_t>(k)]; }

std::optional<OpKind> op_kind_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kOpKinds; ++i)
    if (kOpNames[i] == name) return static_cast<OpKind>(i);
  return std::nullopt;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::fail: return "fail";
    case Outcome::indeterminate: return "indeterminate";
    case Outcome::count_: break;
  }
  return "?";
}

namespace {

// `,"key":` (or `{"key":` for the first field): the keys of a proof operation
// are the history line's (core/history_line_keys.hpp), which a load document's proof carries.
void field(std::string& out, std::string_view key, bool first = false) {
  out += first ? "{\"" : ",\"";
  out += key;
  out += "\":";
}

}  // namespace

std::string to_json_line(const Op& op) {
  namespace p = core::history_line;
  std::string out;
  field(out, p::round, true);
  out += std::to_string(op.round);
  field(out, p::op);
  out += '"';
  out += to_string(op.kind);
  out += '"';
  field(out, p::alias);
  append_json_string(out, core::composed(op.alias));  // the target named it: it could echo the key
  if (!op.caller.empty()) {
    field(out, p::caller);
    append_json_string(out, op.caller);
  }
  field(out, p::invoke_ns);
  out += std::to_string(op.invoke_ns);
  field(out, p::complete_ns);
  out += std::to_string(op.complete_ns);
  field(out, p::outcome);
  out += '"';
  out += to_string(op.outcome);
  out += '"';
  field(out, p::status);
  out += std::to_string(op.status);
  if (!op.error.empty()) {
    field(out, p::error);
    append_json_string(out, op.error);
  }
  if (op.not_now) {
    field(out, p::not_now);
    out += "true";
  }
  if (!op.id.empty()) {
    field(out, p::id);
    append_json_string(out, core::composed(op.id));
  }
  if (op.value) {
    field(out, p::value);
    append_json_string(out, core::composed(*op.value));  // a value read may echo anything
  }
  out += '}';
  return out;
}

void read_call_outcome(Op& op, core::CallOutcome o) {
  op.not_now = o == core::CallOutcome::throttled;
  switch (o) {
    case core::CallOutcome::connected: op.outcome = Outcome::ok; return;
    case core::CallOutcome::refused:
    case core::CallOutcome::throttled: op.outcome = Outcome::fail; return;
    case core::CallOutcome::unknown: break;
  }
  op.outcome = Outcome::indeterminate;
}

}  // namespace crh::oracle
