// One request's way through the reference service, minus the sockets: the
// Beast parser the transport fills, the checks on its head, the service's
// reply. Synchronous, so the server and the fuzz target share every step.
// Included only by the transport and the fuzz target (it pulls in Beast).
#pragma once

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <optional>

#include "request_framing.hpp"
#include "service.hpp"

namespace crh::reference {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

struct ReadLimits {
  std::size_t header_limit = 8 * 1024;  // bytes of request line and headers (431 beyond)
  std::size_t body_limit = 64 * 1024;   // bytes of request body (413 beyond)
};

// Applies the limits to a parser made for one request.
void apply_limits(RequestParser& parser, const ReadLimits& limits);

// The answer to a request that could not be read (431, 413 or 400). The
// connection closes after it.
Response read_error_answer(const Service& service, const boost::system::error_code& ec,
                           const ReadLimits& limits);

// Once the head is read and before any of the body: why its framing is in
// doubt, or nothing. Adds to check_request_framing that Beast's parser must
// have read the framing the same way (chunked exactly when the rules say so).
std::optional<FramingError> framing_error(const RequestParser& parser);

// framing_error as the service's error answer. The connection must close
// after it, unread bytes and all.
std::optional<Response> refuse_head(const Service& service, const RequestParser& parser);

// True if the head asks for "100 Continue" before the body is sent.
bool expects_continue(const RequestParser& parser);

struct Handled {
  Reply reply;
  bool keep_alive = false;  // the connection may carry another request after the answer
};

// The service's reply to a request read whole, framing checked.
Handled handle_request(Service& service, const RequestParser::value_type& message);

}  // namespace crh::reference
