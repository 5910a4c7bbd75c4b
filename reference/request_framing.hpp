// The rules that decide whether a request's head frames its body beyond doubt
// (RFC 9112 §3.2 Host, §6.1 Transfer-Encoding, §6.3 message body length). Pure:
// plain types in, the refusal out, so they are tested and fuzzed without sockets.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace crh::reference {

struct HeaderField {
  std::string_view name;   // as sent; compared without regard to case
  std::string_view value;  // without surrounding whitespace
};

enum class FramingProblem {
  te_in_http10,            // Transfer-Encoding in an HTTP/1.0 request
  te_with_content_length,  // both Transfer-Encoding and Content-Length
  te_malformed,            // a list element that is not a transfer-coding
  te_empty,                // Transfer-Encoding present but names no coding
  te_final_not_chunked,    // the body's length cannot be determined
  te_chunked_twice,        // chunked applied more than once
  te_unknown_coding,       // a coding this service does not implement (501)
  te_parser_disagrees,     // our rules accept chunked but the HTTP parser did not read it so
  host_missing,            // HTTP/1.1 without Host
  host_repeated,           // more than one Host field line
  host_invalid,            // a Host value that is not uri-host [ ":" port ]
};

struct FramingError {
  FramingProblem problem;
  unsigned status;  // 400, or 501 for an unknown transfer coding
  std::string msg;  // what was wrong, for the answer's msg
};

// Checks the head of a request: `version` is 10 or 11, `fields` all of its
// header field lines in order (lines other than Host, Transfer-Encoding and
// Content-Length may be left out). Nothing when the framing is sound. After
// any error the connection must be closed: the bytes that follow the head
// cannot be trusted to start the next request.
std::optional<FramingError> check_request_framing(unsigned version,
                                                  std::span<const HeaderField> fields);

// True if `value` is a valid Host field value: empty, or uri-host with an
// optional port (RFC 9112 §3.2, RFC 3986 §3.2.2).
bool valid_host(std::string_view value);

}  // namespace crh::reference
