// The synchronous steps of one request shared by the server and the fuzz
// target: read errors as answers, the framing checks on the head, and the
// translation of Beast's message into the service's Request.
#include "exchange.hpp"

#include <boost/beast/http/error.hpp>
#include <boost/container/small_vector.hpp>
#include <string>

namespace crh::reference {
namespace http = boost::beast::http;

void apply_limits(RequestParser& parser, const ReadLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
  parser.body_limit(limits.body_limit);
}

Response read_error_answer(const Service& service, const boost::system::error_code& ec, const ReadLimits& limits) {
  if (ec == http::error::header_limit)
    return service.error(431, "request line and headers exceed " + std::to_string(limits.header_limit) + " bytes");
  if (ec == http::error::body_limit)
    return service.error(413, "request body exceeds " + std::to_string(limits.body_limit) + " bytes");
  return service.error(400, "malformed HTTP/1.1 request: " + ec.message());
}

std::optional<FramingError> framing_error(const RequestParser& parser) {
  const auto& head = parser.get();
  // Only the fields that frame the message; few, so no allocation per request.
  boost::container::small_vector<HeaderField, 4> fields;
  bool has_te = false;
  for (const auto& f : head) {
    const auto name = f.name();
    if (name == http::field::host || name == http::field::content_length || name == http::field::transfer_encoding) {
      fields.push_back({f.name_string(), f.value()});
      has_te |= name == http::field::transfer_encoding;
    }
  }
  if (auto err = check_request_framing(head.version(), {fields.data(), fields.size()})) return err;
  // The rules accepted a chunked body; Beast must be about to read it as
  // chunked too, or the body's bytes would be read as the next request.
  if (has_te != parser.chunked())
    return FramingError{FramingProblem::te_parser_disagrees, 400,
                        "Transfer-Encoding could not be read as chunked; send \"Transfer-Encoding: "
                        "chunked\" (RFC 9112 §6.3)"};
  return std::nullopt;
}

std::optional<Response> refuse_head(const Service& service, const RequestParser& parser) {
  auto err = framing_error(parser);
  if (!err) return std::nullopt;
  return service.error(err->status, err->msg);
}

bool expects_continue(const RequestParser& parser) {
  return !parser.is_done() && parser.get()[http::field::expect] == "100-continue";
}

Handled handle_request(Service& service, const RequestParser::value_type& req) {
  Request request{
      req.method_string(), req.target(), std::nullopt, false, std::nullopt, {}, req[http::field::content_type],
      req.body()};
  for (auto [it, end] = req.equal_range("Apikey"); it != end; ++it) {
    if (request.apikey) request.apikey_repeated = true;
    request.apikey = it->value();
  }
  if (auto it = req.find(http::field::authorization); it != req.end()) request.authorization = it->value();
  for (auto [it, end] = req.equal_range(http::field::cookie); it != end; ++it) request.cookies.push_back(it->value());
  // HEAD would need an answer without a body; closing after it is simpler.
  const bool keep_alive = req.keep_alive() && req.method() != http::verb::head;
  return Handled{service.handle(request), keep_alive};
}

}  // namespace crh::reference
