// The blocking HTTP/1.1 client: Asio's async operations driven to completion
// on a private io_context, so every step shares one deadline; answers are
// read by core/http1's ResponseReader. The only file of core/ that
// instantiates Asio's async operations.
#include "core/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <sys/socket.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>

#include "core/http1.hpp"

namespace crh::core {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

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

// Bytes asked of the socket per read.
constexpr std::size_t kReadSize = 16 * 1024;

// Why an exchange has no response.
struct Failure {
  TransportError kind;
  std::string detail;
};

// A cancelled exchange is reported as a timeout: it ran out of the time the
// run was willing to give it.
Failure cancelled() { return {TransportError::timeout, kCancelled}; }

http1::ReaderLimits limits_for(const ClientConfig& config) {
  http1::ReaderLimits limits;
  limits.header_bytes = config.header_limit;
  limits.body_bytes = config.body_limit;
  limits.interim_answers = kMaxInterim;
  return limits;
}

// "HTTP/1.x 408": a server closing an idle connection may say so first (RFC
// 9110 §15.5.9); a goodbye, not an answer to anything.
bool is_idle_goodbye(std::string_view bytes) {
  return bytes.size() >= 12 && bytes.starts_with("HTTP/1.") && bytes.substr(8, 4) == " 408";
}

// Says what unsolicited bytes look like without quoting them (they may hold
// anything the target chose to send, the key included).
std::string unsolicited_text(std::string_view bytes, std::size_t count) {
  return std::to_string(count) + " byte(s)" + (bytes.starts_with("HTTP/") ? " of an HTTP answer" : "");
}

bool asks_upgrade(const HttpRequest& request) {
  return std::any_of(request.headers.begin(), request.headers.end(),
                     [](const Header& h) { return http1::iequals(h.name, "upgrade"); });
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
    if (http1::iequals(h.name, name)) return h.value;
  return {};
}

struct HttpClient::Impl {
  Impl(BaseUrl b, ClientConfig c)
      : base(std::move(b)), config(c), reader(limits_for(config), http1::HeaderCapture::on) {}

  BaseUrl base;
  ClientConfig config;
  net::io_context ioc{1};
  net::steady_timer timer{ioc};  // the exchange's deadline
  std::optional<tcp::resolver::results_type> endpoints;
  std::optional<tcp::socket> socket;
  // Bytes read but not yet given to the reader: what follows one answer on
  // the connection belongs to the next.
  std::string in;
  http1::ResponseReader reader;
  Clock::time_point last_used;
  bool interrupted = false;  // config.cancel closed the socket during this send()
  // The exchange in progress (HttpClient::hold, release, answer): its
  // request, the bytes still to write, why it already failed, if it did, and
  // the clock its deadline and elapsed time run from.
  Exchange held;
  std::string tail;
  std::optional<Failure> failure;
  Clock::time_point exchange_start;
  Clock::time_point exchange_deadline;
  bool timed_out = false;  // the deadline closed the socket during the last run()

  bool cancel_requested() const { return config.cancel && config.cancel->load(std::memory_order_relaxed); }
  std::string timeout_text() const { return std::to_string(config.timeout.count()) + " ms"; }

  // Starts one async operation (`start` gets a handler taking an error_code)
  // and runs the io_context until it completes. The deadline closes the
  // socket, which ends the operation at once; so does a cancel, looked at
  // every kCancelPoll when there is a flag. `timed_out` and `interrupted`
  // then say why.
  template <class Start>
  error_code run(Start&& start, Clock::time_point deadline) {
    error_code result;
    timed_out = false;
    timer.expires_at(deadline);
    timer.async_wait([this](error_code ec) {
      if (ec) return;  // cancelled: the operation ended first
      timed_out = true;
      close_socket();
    });
    start([this, &result](error_code ec) {
      result = ec;
      timer.cancel();
    });
    ioc.restart();
    if (!config.cancel) {
      ioc.run();
      return result;
    }
    while (!ioc.stopped()) {
      if (!interrupted && cancel_requested()) {
        interrupted = true;
        close_socket();
        timer.cancel();
      }
      ioc.run_for(kCancelPoll);
    }
    return result;
  }

  void close_socket() {
    error_code ignored;
    if (socket) socket->close(ignored);
  }

  void drop() {
    if (socket) {
      error_code ignored;
      socket->shutdown(tcp::socket::shutdown_both, ignored);
      socket->close(ignored);
    }
    socket.reset();
    in.clear();
  }

  std::optional<Failure> unsolicited_before(Clock::time_point t0);
  std::optional<Failure> resolve();
  std::optional<Failure> connect(Clock::time_point t0, Clock::time_point deadline);
  std::optional<Failure> write(std::string_view bytes, Clock::time_point deadline);
  std::optional<Failure> read_answer(const HttpRequest& request, Clock::time_point deadline);
  void start(HttpRequest request, std::size_t held_back);
  void release();
  Exchange answer();
  std::optional<Failure> read_some(Clock::time_point deadline);
  Failure answer_failure() const;
  std::string after_interim() const;
};

std::optional<Failure> HttpClient::Impl::resolve() {
  if (endpoints) return std::nullopt;
  tcp::resolver resolver(ioc);
  error_code ec;
  auto results = resolver.resolve(base.host, base.port, ec);
  if (ec || results.empty())
    return Failure{TransportError::resolve_failed, "cannot resolve " + base.host + ": " + ec.message()};
  endpoints = std::move(results);
  return std::nullopt;
}

// Bytes waiting on the kept connection before a request is written arrived
// while no request was waiting: they answer nothing, so the connection is
// closed and this exchange fails without being sent (taking them as its
// answer would pin every later answer on the wrong request). A 408 before an
// idle close is the exception: the next request just opens a new connection.
std::optional<Failure> HttpClient::Impl::unsolicited_before(Clock::time_point t0) {
  if (!socket || t0 - last_used > kMaxIdleReuse) return std::nullopt;  // connect() replaces it
  error_code ec;
  const std::size_t waiting = socket->available(ec);
  if (ec || waiting == 0) {
    // Nothing to read, but a server that closed the idle connection has sent
    // its FIN: a request written there would be lost unanswered and look like
    // a crash (X0). A peek sees the end of the stream; the request then goes
    // on a new connection.
    char probe;
    if (ec || ::recv(socket->native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) drop();
    return std::nullopt;
  }
  std::string bytes(std::min(waiting, kReadSize), '\0');
  bytes.resize(socket->read_some(net::buffer(bytes), ec));
  drop();
  if (is_idle_goodbye(bytes)) return std::nullopt;
  return Failure{TransportError::malformed,
                 unsolicited_text(bytes, waiting) +
                     " arrived on the connection while no request was waiting (after the previous answer was "
                     "complete); the connection was closed and this request was not sent"};
}

std::optional<Failure> HttpClient::Impl::connect(Clock::time_point t0, Clock::time_point deadline) {
  if (socket && t0 - last_used > kMaxIdleReuse) drop();
  if (socket) return std::nullopt;
  socket.emplace(ioc);
  const error_code ec = run(
      [&](auto done) {
        net::async_connect(*socket, *endpoints,
                           [done = std::move(done)](error_code e, const tcp::endpoint&) mutable { done(e); });
      },
      deadline);
  if (interrupted) return cancelled();
  if (timed_out)
    return Failure{TransportError::timeout, "no connection to " + base.to_string() + " within " + timeout_text()};
  if (ec) return Failure{TransportError::connect_failed, "cannot connect to " + base.to_string() + ": " + ec.message()};
  error_code ignored;
  socket->set_option(tcp::no_delay(true), ignored);
  return std::nullopt;
}

std::optional<Failure> HttpClient::Impl::write(std::string_view bytes, Clock::time_point deadline) {
  if (bytes.empty()) return std::nullopt;
  const error_code ec = run(
      [&](auto done) {
        net::async_write(*socket, net::buffer(bytes),
                         [done = std::move(done)](error_code e, std::size_t) mutable { done(e); });
      },
      deadline);
  if (interrupted) return cancelled();
  if (timed_out) return Failure{TransportError::timeout, "could not send the request within " + timeout_text()};
  if (ec) return Failure{TransportError::reset, "sending the request failed: " + ec.message()};
  return std::nullopt;
}

// Interim 1xx answers the request did not ask for are skipped by the reader
// (RFC 9110 §15.2); taking one as the answer would pin every later answer on
// the wrong request of this connection. They share the exchange's deadline
// and header budget, and their number is capped, so a target that sends
// nothing but 100s ends in an error, not a hang.
std::optional<Failure> HttpClient::Impl::read_answer(const HttpRequest& request, Clock::time_point deadline) {
  reader.reset(true, {.head = request.method == "HEAD", .upgrade = asks_upgrade(request)});
  for (;;) {
    if (!in.empty()) in.erase(0, reader.feed(in));
    // Bytes after the whole answer: one request is in flight at a time, so
    // nothing asked for them, and kept they would be the next request's
    // "answer". (After a 101 they belong to the protocol asked for.)
    if (reader.state() == http1::State::done && !in.empty() && reader.status() != 101)
      return Failure{TransportError::malformed,
                     "the answer (HTTP " + std::to_string(reader.status()) + ") was followed by " +
                         unsolicited_text(in, in.size()) +
                         " that no request asked for; the connection was closed"};
    if (reader.state() == http1::State::done) return std::nullopt;
    if (reader.state() == http1::State::error) return answer_failure();
    if (auto failed = read_some(deadline)) return failed;
  }
}

// One read into `in`, which the reader has emptied (it wants more). At the
// end of the stream the reader decides: a close-delimited body ends there.
std::optional<Failure> HttpClient::Impl::read_some(Clock::time_point deadline) {
  const auto too_late = [&] {
    return Failure{TransportError::timeout, "no complete answer within " + timeout_text() + after_interim()};
  };
  if (Clock::now() >= deadline) return too_late();
  in.resize(kReadSize);
  std::size_t got = 0;
  const error_code ec = run(
      [&](auto done) {
        socket->async_read_some(net::buffer(in), [&got, done = std::move(done)](error_code e, std::size_t n) mutable {
          got = n;
          done(e);
        });
      },
      deadline);
  in.resize(got);
  if (interrupted) return cancelled();
  if (timed_out) return too_late();
  if (ec == net::error::eof) reader.eof();
  else if (ec)
    return Failure{TransportError::reset,
                   "the connection closed before a complete answer (" + ec.message() + ")" + after_interim()};
  return std::nullopt;
}

Failure HttpClient::Impl::answer_failure() const {
  switch (reader.fault()) {
    case http1::Fault::body_too_large:
      return {TransportError::too_large,
              "the answer's body exceeds " + std::to_string(config.body_limit) + " bytes (" + reader.error() + ")"};
    case http1::Fault::head_too_large:
      return {TransportError::too_large,
              "the answer's head exceeds its caps (" + reader.error() + ")" + after_interim()};
    case http1::Fault::too_many_interim:
      return {TransportError::malformed,
              "more than " + std::to_string(kMaxInterim) + " interim 1xx answers before the final one"};
    case http1::Fault::unasked_upgrade:
      return {TransportError::malformed, "101 Switching Protocols without an Upgrade request"};
    case http1::Fault::closed:
      return {TransportError::reset,
              "the connection closed before a complete answer (" + reader.error() + ")" + after_interim()};
    default:
      return {TransportError::malformed, "the answer is not valid HTTP/1.1: " + reader.error() + after_interim()};
  }
}

std::string HttpClient::Impl::after_interim() const {
  const std::size_t n = reader.interim_answers();
  if (n == 0) return {};
  return " (after " + std::to_string(n) + (n == 1 ? " interim 1xx answer)" : " interim 1xx answers)");
}

HttpClient::HttpClient(BaseUrl base, ClientConfig config) : impl_(std::make_unique<Impl>(std::move(base), config)) {}

HttpClient::~HttpClient() { impl_->drop(); }

const BaseUrl& HttpClient::base() const { return impl_->base; }

std::chrono::milliseconds not_now_wait(int again, std::string_view retry_after) {
  const bool seconds = !retry_after.empty() && retry_after.size() <= 4 &&
                       std::all_of(retry_after.begin(), retry_after.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (seconds) return std::chrono::milliseconds(std::min(2000, std::stoi(std::string(retry_after)) * 1000));
  return std::chrono::milliseconds(100 << std::min(again, 4));
}

bool wait_out_not_now(int again, int retries, std::string_view retry_after, const std::atomic<bool>* cancel) {
  if (again >= retries) return false;
  const auto until = std::chrono::steady_clock::now() + not_now_wait(again, retry_after);
  for (auto now = std::chrono::steady_clock::now(); now < until; now = std::chrono::steady_clock::now()) {
    if (cancel && cancel->load()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(20), until - now));
  }
  return true;
}

Exchange HttpClient::send(HttpRequest request) {
  const auto& c = impl_->config;
  for (int again = 0;; ++again) {
    // The request is kept for another try only while one may follow.
    impl_->start(again < c.not_now_retries ? request : std::move(request), 0);
    impl_->release();
    Exchange e = impl_->answer();
    if (!e.answered() || e.response->status != 429 ||
        !wait_out_not_now(again, c.not_now_retries, e.response->header("Retry-After"), c.cancel))
      return e;
  }
}

void HttpClient::hold(HttpRequest request) { impl_->start(std::move(request), 1); }

void HttpClient::release() { impl_->release(); }

Exchange HttpClient::answer() { return impl_->answer(); }

// Connects and writes `request` but its last `held_back` bytes, which stay in
// `tail` for release().
void HttpClient::Impl::start(HttpRequest request, std::size_t held_back) {
  held = {};
  held.request = std::move(request);
  failure.reset();
  interrupted = false;
  exchange_start = Clock::now();
  exchange_deadline = exchange_start + config.timeout;
  std::string bytes = http1::serialize_request(held.request, base, "", "");
  held_back = std::min(held_back, bytes.size());
  tail = bytes.substr(bytes.size() - held_back);
  bytes.resize(bytes.size() - held_back);
  if (cancel_requested()) failure = cancelled();  // before it began: no connection, no bytes
  if (!failure) failure = resolve();
  if (!failure) failure = unsolicited_before(exchange_start);
  if (!failure) failure = connect(exchange_start, exchange_deadline);
  if (!failure) failure = write(bytes, exchange_deadline);
}

// Writes the held request's tail; the exchange's time counts from here when
// the request was held back (send() counts from its start).
void HttpClient::Impl::release() {
  if (!tail.empty()) {
    exchange_start = Clock::now();
    exchange_deadline = exchange_start + config.timeout;
  }
  if (!failure && cancel_requested()) failure = cancelled();
  if (!failure) failure = write(tail, exchange_deadline);
  tail.clear();
}

Exchange HttpClient::Impl::answer() {
  Exchange ex = std::move(held);
  held = {};
  if (!failure) failure = read_answer(ex.request, exchange_deadline);
  if (failure) {
    drop();  // after an error the connection's state is unknown
    ex.error = failure->kind;
    ex.error_detail = std::move(failure->detail);
  } else {
    ex.response = HttpResponse{reader.status(), reader.headers(), reader.body()};
  }
  ex.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - exchange_start);
  if (!failure) {
    last_used = Clock::now();
    if (!reader.keep_alive()) drop();  // closed by the answer, or a 101: no longer HTTP
  }
  failure.reset();
  return ex;
}

}  // namespace crh::core
