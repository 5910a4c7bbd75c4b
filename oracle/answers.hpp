// The rules every answer of the API is judged by, wherever it was seen: a
// contract check's exchange or a captured one (C1, C2, X1, X2, R5, and a
// framework's refusal judged apart). Each rule is read here once; the parts
// that report them pick the aspects their checks cover. The load's error
// rate reads statuses through status_class too.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "core/profile.hpp"
#include "oracle/shapes.hpp"

namespace crh::oracle {

// What an HTTP status says, read one way by every part.
enum class StatusClass {
  none,          // 0: no answer
  success,       // 200, the only success (spec 1, 7.1)
  other_2xx,     // another 2xx: a success that breaks C2
  error,         // any other status below 500: an error answer (spec 7.2), judged by its shape
  server_error,  // 5xx: never a contract answer (DESIGN §3)
};
StatusClass status_class(unsigned status);

// One answer as the run-wide rules see it.
struct SeenAnswer {
  std::string_view request_target;
  bool keyed = true;      // the request carried an Apikey header
  bool head = false;      // a HEAD request: its answer has no body
  unsigned status = 0;
  std::string_view content_type;
  std::string_view body;
  // The body as texts may quote it (a capture's, with keys hidden); the body
  // itself when empty.
  std::string_view shown_body;

  // No body to judge: the answer to a HEAD, a 204 or a 304.
  bool bodiless() const { return head || status == 204 || status == 304; }
};

// The run-wide rule a finding is on. A part reports the aspects its checks
// cover, e.g. contracts' every-answer check C1 and C2, its every-error-answer
// check the server error and the error shape.
enum class Aspect {
  server_error,    // X1: a 5xx
  success_status,  // C2: a 2xx other than 200
  json_body,       // C1: a body that is not JSON (MUST)
  content_type,    // C1: a Content-Type that is not JSON (SHOULD)
  error_shape,     // X2: an error body that is not a JSON object with a string msg
  missing_key,     // R5: a request without the Apikey header answered with a success
};

struct AnswerFinding {
  Aspect aspect;
  Finding finding;
};

struct AnswerJudgement {
  // The HTTP layer refused a malformed request (shapes.hpp): every finding on
  // the body and its type is judged apart (a SHOULD).
  bool protocol_refusal = false;
  std::vector<AnswerFinding> findings;  // empty when the answer breaks none of the rules
  std::optional<boost::json::value> body;  // the body parsed, when it was judged and is JSON
};

// The readings: a 5xx breaks X1 and nothing more is asked of its body; a 2xx
// other than 200 breaks C2; every other answer with a body is JSON (C1, MUST)
// with a JSON Content-Type (C1, SHOULD); an error answer (StatusClass::error)
// has the error shape (X2); a success to a request without a key breaks R5.
AnswerJudgement judge_answer(const SeenAnswer& answer);

}  // namespace crh::oracle
