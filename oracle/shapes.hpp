// Reading answers without assuming one shape: JSON bodies and content types,
// and whether an error answer has the documented shape (X2). Lists and ids
// are read by the API model (core/api.hpp).
// Pure functions over bodies, so verdicts can be tested on crafted input.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace crh::oracle {

// The body parsed as JSON; nothing (and `why`) when it is not JSON.
std::optional<boost::json::value> parse_json(std::string_view body, std::string& why);

// The same, with `why` quoting `shown` instead (the body with keys hidden,
// say; the body itself when `shown` is empty). The verdict rests on `body`.
std::optional<boost::json::value> parse_json_shown(std::string_view body, std::string_view shown, std::string& why);

// True for application/json and application/*+json, with or without parameters.
bool is_json_content_type(std::string_view content_type);

enum class Severity { must, should };

struct Finding {
  Severity severity;
  std::string_view rule;  // catalogue id
  std::string text;       // what was expected and what came
  // A framework's refusal of a malformed request, judged apart (judged_apart):
  // a SHOULD that stays a warning under --strict, since no service on that
  // stack could answer otherwise.
  bool apart = false;
};

// How a check's outcome bears on one rule it covers (DESIGN.md §5): a fail or
// a warn blames only the rules its findings name ("fail" for a MUST finding
// on the rule, "warn" for a SHOULD one). A warned check ran to its end, so
// its other rules held ("pass"); a failed one may have stopped before it
// reached them, so they are not shown as held ("skip"). A fail with no MUST
// finding names no rule to blame, so it blames them all. Other outcomes bear
// on every rule alike.
std::string_view outcome_for_rule(std::string_view check_outcome, const std::vector<Finding>& findings,
                                  std::string_view rule);

// A 5xx (X1, MUST): a server error is never a contract answer.
Finding server_error_finding(unsigned status);

// A Content-Type that is not JSON (C1, SHOULD); nothing when it is.
std::optional<Finding> content_type_finding(unsigned status, std::string_view content_type);

// An error body that is not a JSON object with a string msg (X2, MUST), or an
// empty msg (SHOULD); nothing when it has the shape. Texts quote `shown` (the
// body with keys hidden, say), or the body when it is empty.
std::optional<Finding> error_body_finding(unsigned status, std::string_view body, std::string_view shown = {});

// The findings on one error answer when its check expected a refusal: the
// three above. Empty when the answer is right. (The run-wide rules on every
// answer are judged by judge_answer, answers.hpp.)
std::vector<Finding> error_shape_findings(unsigned status, std::string_view content_type, std::string_view body);

// A request target the HTTP layer may refuse before any code of the API runs:
// not a valid URI (a '%' without two hex digits, a control character, a
// space, a byte outside ASCII) or longer than kLongTarget bytes.
inline constexpr std::size_t kLongTarget = 1024;
bool malformed_target(std::string_view request_target);

// The HTTP layer's refusal of such a request (400, 413, 414 or 431, answered
// without the API's error shape, e.g. a framework's text/html page). It is
// not an answer of the API, so it is judged apart: its shape findings are
// SHOULD findings (what a user would like, not what the spec's rules cover).
bool protocol_level_refusal(std::string_view request_target, unsigned status, std::string_view content_type,
                            std::string_view body);

// `findings` of a protocol-level refusal, judged apart: every one a SHOULD.
std::vector<Finding> judged_apart(std::vector<Finding> findings);

// The JSON type of a value as two answers' forms are compared: "string",
// "number" (an integer and a double alike), "bool", "object", "array", "null".
std::string_view json_type_name(const boost::json::value& v);

// The fields both objects have whose values differ in JSON type, in `reference`'s
// order, each as "id (string, then number)". A null matches every type: an
// optional field may be null in one answer and set in the other.
std::vector<std::string> field_type_differences(const boost::json::object& reference, const boost::json::object& other);

// R1 (spec 4, rule 1): whether `answer` (snooze's or wake's) has the form of
// `get`, the single-agent GET of the same agent in the same state. The form is
// the field names and their JSON types: the order of fields is no part of it
// (RFC 8259 §4: an object is unordered), a null matches every type, and a
// field null on one side and absent on the other is the same (a serializer
// that leaves out empty fields). Nothing when they agree, else what differs.
std::optional<std::string> form_difference(const boost::json::object& get, const boost::json::object& answer);

// A database value a service may refuse to store, the spec showing no type
// or size of values (spec 2, 8): empty, over 255 bytes, or holding a control
// character. A short printable value it must take (E6).
bool value_may_be_refused(std::string_view value);

// A short, printable excerpt of a body for messages (at most `max` bytes).
std::string excerpt(std::string_view body, std::size_t max = 120);

}  // namespace crh::oracle
