// The one judge of the rules every answer is held to.
#include "oracle/answers.hpp"

#include <string>

namespace crh::oracle {

StatusClass status_class(unsigned status) {
  if (status == 0) return StatusClass::none;
  if (status == 200) return StatusClass::success;
  if (status >= 200 && status < 300) return StatusClass::other_2xx;
  if (status >= 500) return StatusClass::server_error;
  return StatusClass::error;
}

AnswerJudgement judge_answer(const SeenAnswer& a) {
  AnswerJudgement out;
  const std::string_view shown = a.shown_body.empty() ? a.body : a.shown_body;
  const std::string got = "HTTP " + std::to_string(a.status);
  auto add = [&](Aspect aspect, Finding f) {
    if (out.protocol_refusal && (aspect == Aspect::json_body || aspect == Aspect::content_type ||
                                 aspect == Aspect::error_shape))
      f = judged_apart({std::move(f)}).front();
    out.findings.push_back({aspect, std::move(f)});
  };
  const StatusClass cls = status_class(a.status);
  if (!a.keyed && (cls == StatusClass::success || cls == StatusClass::other_2xx))
    add(Aspect::missing_key,
        {Severity::must, "R5", "expected a refusal of a request without the Apikey header, got " + got});
  if (cls == StatusClass::server_error) {
    add(Aspect::server_error, server_error_finding(a.status));
    return out;  // a crash page says nothing more about the contract
  }
  if (cls == StatusClass::other_2xx)
    add(Aspect::success_status,
        {Severity::must, "C2", "expected HTTP 200 for a success (success is HTTP 200 only), got " + got});
  if (a.bodiless()) return out;
  out.protocol_refusal = protocol_level_refusal(a.request_target, a.status, a.content_type, a.body);
  std::string why;
  out.body = parse_json_shown(a.body, shown, why);
  if (!out.body)
    add(Aspect::json_body,
        {Severity::must, "C1", "expected a JSON body (responses are JSON), got " + got + " where " + why});
  if (auto f = content_type_finding(a.status, a.content_type)) add(Aspect::content_type, std::move(*f));
  if (cls == StatusClass::error)
    if (auto f = error_body_finding(a.status, a.body, shown)) add(Aspect::error_shape, std::move(*f));
  return out;
}

}  // namespace crh::oracle
