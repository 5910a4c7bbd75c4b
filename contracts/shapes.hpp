// Reading answers without assuming one shape: JSON bodies and content types,
// and whether an error answer has the documented shape (X2). Lists and ids
// are read by the API model (core/api.hpp).
// Pure functions over bodies, so verdicts can be tested on crafted input.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace crh::contracts {

// The body parsed as JSON; nothing (and `why`) when it is not JSON.
std::optional<boost::json::value> parse_json(std::string_view body, std::string& why);

// True for application/json and application/*+json, with or without parameters.
bool is_json_content_type(std::string_view content_type);

enum class Severity { must, should };

struct Finding {
  Severity severity;
  std::string_view rule;  // catalogue id
  std::string text;       // what was expected and what came
};

// The findings on one error answer (any status but 200): a 5xx, a body that
// is not a JSON object with a string msg (MUST, X2), an empty msg or a
// Content-Type that is not JSON (SHOULD). Empty when the answer is right.
std::vector<Finding> error_shape_findings(unsigned status, std::string_view content_type, std::string_view body);

// A short, printable excerpt of a body for messages (at most `max` bytes).
std::string excerpt(std::string_view body, std::size_t max = 120);

}  // namespace crh::contracts
