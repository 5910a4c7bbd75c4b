// The blocking HTTP/1.1 client: Beast's async operations driven to
// completion on a private io_context, so every step shares one deadline.
// The only file of core/ that instantiates Beast's async operations.
#include "core/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace crh::core {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

// A connection idle this long may have been closed by the server; sending on
// it could lose a request whose fate is then unknown, so reconnect instead.
constexpr auto kMaxIdleReuse = std::chrono::seconds(2);

TransportError classify(const error_code& ec) {
  if (ec == beast::error::timeout) return TransportError::timeout;
  if (ec == http::error::body_limit || ec == http::error::header_limit ||
      ec == http::error::buffer_overflow)
    return TransportError::too_large;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == net::error::eof || ec == net::error::connection_reset ||
      ec == net::error::broken_pipe || ec == net::error::connection_aborted)
    return TransportError::reset;
  // Any other parse error of Beast's HTTP category: the bytes are not HTTP/1.1.
  if (ec.category() == http::make_error_code(http::error::bad_version).category())
    return TransportError::malformed;
  return TransportError::reset;
}

}  // namespace

std::string_view to_string(TransportError e) {
  switch (e) {
    case TransportError::none: return "none";
    case TransportError::resolve_failed: return "resolve-failed";
    case TransportError::connect_failed: return "connect-failed";
    case TransportError::timeout: return "timeout";
    case TransportError::reset: return "reset";
    case TransportError::malformed: return "malformed";
    case TransportError::too_large: return "too-large";
  }
  return "unknown";
}

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& h : headers)
    if (beast::iequals(h.name, name)) return h.value;
  return {};
}

struct HttpClient::Impl {
  BaseUrl base;
  ClientConfig config;
  net::io_context ioc{1};
  std::optional<tcp::resolver::results_type> endpoints;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point last_used;

  // Starts one async operation and runs the io_context until it completes.
  template <class Start>
  error_code run(Start&& start) {
    error_code result;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  void drop() {
    if (stream) {
      error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream->close();
    }
    stream.reset();
    buffer.clear();
  }

  Exchange fail(Exchange ex, TransportError e, std::string detail,
                std::chrono::steady_clock::time_point t0) {
    drop();
    ex.error = e;
    ex.error_detail = std::move(detail);
    ex.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - t0);
    return ex;
  }
};

HttpClient::HttpClient(BaseUrl base, ClientConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->base = std::move(base);
  impl_->config = config;
}

HttpClient::~HttpClient() { impl_->drop(); }

const BaseUrl& HttpClient::base() const { return impl_->base; }

Exchange HttpClient::send(HttpRequest request) {
  auto& im = *impl_;
  Exchange ex;
  ex.request = std::move(request);
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + im.config.timeout;
  const std::string where = im.base.to_string();

  if (!im.endpoints) {
    tcp::resolver resolver(im.ioc);
    error_code ec;
    auto results = resolver.resolve(im.base.host, im.base.port, ec);
    if (ec || results.empty())
      return im.fail(std::move(ex), TransportError::resolve_failed,
                     "cannot resolve " + im.base.host + ": " + ec.message(), t0);
    im.endpoints = std::move(results);
  }
  if (im.stream && t0 - im.last_used > kMaxIdleReuse) im.drop();
  if (!im.stream) {
    im.stream.emplace(im.ioc);
    im.stream->expires_at(deadline);
    error_code ec = im.run([&](auto handler) { im.stream->async_connect(*im.endpoints, std::move(handler)); });
    if (ec == beast::error::timeout)
      return im.fail(std::move(ex), TransportError::timeout,
                     "no connection to " + where + " within " +
                         std::to_string(im.config.timeout.count()) + " ms", t0);
    if (ec)
      return im.fail(std::move(ex), TransportError::connect_failed,
                     "cannot connect to " + where + ": " + ec.message(), t0);
    error_code ignored;
    im.stream->socket().set_option(tcp::no_delay(true), ignored);
  }

  http::request<http::string_body> req;
  req.method_string(ex.request.method);
  req.target(im.base.path_prefix + ex.request.target);
  req.version(11);
  req.set(http::field::host, im.base.host_header());
  for (const auto& h : ex.request.headers) req.insert(h.name, h.value);
  req.body() = ex.request.body;
  if (!ex.request.body.empty() || ex.request.method == "POST" || ex.request.method == "PUT")
    req.content_length(ex.request.body.size());

  im.stream->expires_at(deadline);
  error_code ec = im.run([&](auto handler) { http::async_write(*im.stream, req, std::move(handler)); });
  if (ec) {
    auto kind = classify(ec);
    return im.fail(std::move(ex), kind,
                   kind == TransportError::timeout ? "could not send the request within " +
                                                         std::to_string(im.config.timeout.count()) + " ms"
                                                   : "sending the request failed: " + ec.message(),
                   t0);
  }

  http::response_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(im.config.header_limit));
  parser.body_limit(im.config.body_limit);
  if (ex.request.method == "HEAD") parser.skip(true);
  im.stream->expires_at(deadline);
  ec = im.run([&](auto handler) { http::async_read(*im.stream, im.buffer, parser, std::move(handler)); });
  if (ec) {
    auto kind = classify(ec);
    std::string detail;
    switch (kind) {
      case TransportError::timeout:
        detail = "no complete answer within " + std::to_string(im.config.timeout.count()) + " ms";
        break;
      case TransportError::too_large:
        detail = ec == http::error::body_limit
                     ? "the answer's body exceeds " + std::to_string(im.config.body_limit) + " bytes"
                     : "the answer's headers exceed " + std::to_string(im.config.header_limit) + " bytes";
        break;
      case TransportError::reset:
        detail = "the connection closed before a complete answer (" + ec.message() + ")";
        break;
      default:
        detail = "the answer is not valid HTTP/1.1: " + ec.message();
    }
    return im.fail(std::move(ex), kind, std::move(detail), t0);
  }

  auto& msg = parser.get();
  HttpResponse res;
  res.status = msg.result_int();
  for (const auto& f : msg) res.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  res.body = std::move(msg.body());
  const bool keep = msg.keep_alive();
  ex.response = std::move(res);
  ex.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  im.last_used = std::chrono::steady_clock::now();
  if (!keep) im.drop();
  return ex;
}

}  // namespace crh::core
