// The blocking HTTP/1.1 client: Beast's async operations driven to
// completion on a private io_context, so every step shares one deadline.
// The only file of core/ that instantiates Beast's async operations.
#include "core/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
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

// Interim (1xx) answers skipped before one request's final answer. Real
// servers send one or two; more than this is a target stuck in a loop.
constexpr std::size_t kMaxInterim = 32;

// How often an exchange with a cancellation flag looks at it, so a cancel
// ends the exchange in flight within about two of these.
constexpr auto kCancelPoll = std::chrono::milliseconds(50);

// The error_detail of an exchange ended (or refused) by ClientConfig::cancel.
constexpr const char* kCancelled = "cancelled: the run was interrupted";

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
  bool interrupted = false;  // config.cancel closed the stream during this send()

  bool cancel_requested() const { return config.cancel && config.cancel->load(std::memory_order_relaxed); }

  // Starts one async operation and runs the io_context until it completes.
  // With a cancellation flag it runs in slices of kCancelPoll and, once the
  // flag is set, closes the stream: the operation then completes at once
  // (with an error) and `interrupted` tells send() why.
  template <class Start>
  error_code run(Start&& start) {
    error_code result;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    if (!config.cancel) {
      ioc.run();
      return result;
    }
    while (!ioc.stopped()) {
      if (!interrupted && cancel_requested()) {
        interrupted = true;
        if (stream) stream->close();  // also cancels the deadline timer
      }
      ioc.run_for(kCancelPoll);
    }
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

  // A cancelled exchange is reported as a timeout: it ran out of the time the
  // run was willing to give it.
  Exchange cancelled(Exchange ex, std::chrono::steady_clock::time_point t0) {
    return fail(std::move(ex), TransportError::timeout, kCancelled, t0);
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

  // Cancelled before it began: no connection, no bytes.
  im.interrupted = false;
  if (im.cancel_requested()) return im.cancelled(std::move(ex), t0);

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
    if (im.interrupted) return im.cancelled(std::move(ex), t0);
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
  if (im.interrupted) return im.cancelled(std::move(ex), t0);
  if (ec) {
    auto kind = classify(ec);
    return im.fail(std::move(ex), kind,
                   kind == TransportError::timeout ? "could not send the request within " +
                                                         std::to_string(im.config.timeout.count()) + " ms"
                                                   : "sending the request failed: " + ec.message(),
                   t0);
  }

  // Interim 1xx answers the request did not ask for are read and skipped
  // (RFC 9110 §15.2); taking one as the answer would pin every later answer
  // on the wrong request of this connection. They share the exchange's
  // deadline and header budget, and their number is capped, so a target that
  // sends nothing but 100s ends in an error, not a hang.
  const bool asked_upgrade = std::any_of(ex.request.headers.begin(), ex.request.headers.end(),
                                         [](const Header& h) { return beast::iequals(h.name, "upgrade"); });
  std::size_t interim = 0;        // 1xx answers skipped so far
  std::size_t interim_bytes = 0;  // their heads' bytes, counted against header_limit
  const auto after_interim = [&] {
    if (interim == 0) return std::string();
    return " (after " + std::to_string(interim) + (interim == 1 ? " interim 1xx answer)" : " interim 1xx answers)");
  };
  std::optional<http::response_parser<http::string_body>> parser;
  for (;;) {
    parser.emplace();  // a 1xx head is a whole message: the next answer needs a fresh parser
    parser->header_limit(static_cast<std::uint32_t>(im.config.header_limit - interim_bytes));
    parser->body_limit(im.config.body_limit);
    if (ex.request.method == "HEAD") parser->skip(true);
    im.stream->expires_at(deadline);
    std::size_t consumed = 0;
    // The same buffer throughout: bytes read past a 1xx head belong to the next answer.
    ec = im.run([&](auto handler) {
      http::async_read(*im.stream, im.buffer, *parser,
                       [h = std::move(handler), &consumed](error_code e, std::size_t n) mutable {
                         consumed = n;
                         h(e);
                       });
    });
    if (im.interrupted) return im.cancelled(std::move(ex), t0);
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
      return im.fail(std::move(ex), kind, detail + after_interim(), t0);
    }
    const unsigned status = parser->get().result_int();
    if (status < 100 || status > 199) break;
    if (status == 101) {
      if (asked_upgrade) break;  // the caller's business; the connection is no longer HTTP
      return im.fail(std::move(ex), TransportError::malformed,
                     "101 Switching Protocols without an Upgrade request", t0);
    }
    interim_bytes += consumed;
    if (++interim > kMaxInterim)
      return im.fail(std::move(ex), TransportError::malformed,
                     "more than " + std::to_string(kMaxInterim) + " interim 1xx answers before the final one", t0);
    if (interim_bytes >= im.config.header_limit)
      return im.fail(std::move(ex), TransportError::too_large,
                     "the answer's headers exceed " + std::to_string(im.config.header_limit) + " bytes" +
                         after_interim(),
                     t0);
    // Buffered 1xx heads parse without touching the socket, so the timer
    // alone would not stop them.
    if (std::chrono::steady_clock::now() >= deadline)
      return im.fail(std::move(ex), TransportError::timeout,
                     "no complete answer within " + std::to_string(im.config.timeout.count()) + " ms" +
                         after_interim(),
                     t0);
  }

  auto& msg = parser->get();
  HttpResponse res;
  res.status = msg.result_int();
  for (const auto& f : msg) res.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  res.body = std::move(msg.body());
  const bool keep = msg.keep_alive() && res.status != 101;
  ex.response = std::move(res);
  ex.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  im.last_used = std::chrono::steady_clock::now();
  if (!keep) im.drop();
  return ex;
}

}  // namespace crh::core
