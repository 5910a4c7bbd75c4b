// The reference service's transport: an acceptor that deals connections out
// to per-thread io_contexts, and one coroutine per connection. The only file
// of the reference service that instantiates Beast's async operations.
#include "server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <future>
#include <iostream>
#include <list>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exchange.hpp"
#include "sip_server.hpp"

namespace crh::reference {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

namespace {

struct Session {
  beast::tcp_stream* stream;
  bool busy = false;  // between reading a request and finishing its answer
};

struct Worker {
  net::io_context ctx{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard{ctx.get_executor()};
  std::list<Session*> sessions;  // touched only on this worker's thread
  bool stopping = false;
  std::thread thread;
  std::promise<void> done;
};

bool is_disconnect(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::operation_aborted ||
         ec == beast::error::timeout || ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::bad_descriptor || ec == http::error::partial_message;
}

}  // namespace

struct Server::Impl {
  ServerConfig config;
  ReadLimits limits{config.header_limit, config.body_limit};
  SystemClock clock;
  Service service;
  std::vector<std::unique_ptr<Worker>> workers;
  std::optional<tcp::acceptor> acceptor;
  tcp::endpoint local;
  std::size_t next_worker = 0;
  bool started = false;
  bool stopped = false;
  std::unique_ptr<SipServer> sip;

  explicit Impl(ServerConfig c) : config(std::move(c)), service(config.service, config.fixtures, clock) {}

  net::awaitable<void> accept_loop() {
    for (;;) {
      Worker& w = *workers[next_worker++ % workers.size()];
      auto [ec, socket] = co_await acceptor->async_accept(w.ctx, use_tuple);
      if (ec == net::error::operation_aborted || !acceptor->is_open()) co_return;
      if (ec) {
        // Out of descriptors or similar: back off briefly instead of spinning.
        net::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(50));
        co_await pause.async_wait(use_tuple);
        continue;
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      net::co_spawn(w.ctx, session(w, std::move(socket)), net::detached);
    }
  }

  // Writes the answer, answer_delay after it was ready; the head is formatted
  // by hand into the session's reused buffer, which costs a fraction of
  // Beast's serializer on small bodies.
  net::awaitable<boost::system::error_code> write(beast::tcp_stream& stream, std::string& out, const Response& r,
                                                  unsigned version, bool keep_alive) {
    if (config.answer_delay.count() > 0) {
      net::steady_timer delay(stream.get_executor(), config.answer_delay);
      co_await delay.async_wait(use_tuple);
    }
    out.clear();
    out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    out += std::to_string(r.status);
    out += ' ';
    out += http::obsolete_reason(static_cast<http::status>(r.status));
    out += "\r\nServer: crh-reference\r\nContent-Type: ";
    out += r.content_type;
    out += "\r\nContent-Length: ";
    out += std::to_string(r.body.size());
    if (!r.allow.empty()) out.append("\r\nAllow: ").append(r.allow);
    if (!r.retry_after.empty()) out.append("\r\nRetry-After: ").append(r.retry_after);
    if (!keep_alive && version >= 11) out += "\r\nConnection: close";
    if (keep_alive && version == 10) out += "\r\nConnection: keep-alive";
    out += "\r\n\r\n";
    out += r.body;
    stream.expires_after(std::chrono::seconds(10));
    auto [ec, n] = co_await net::async_write(stream, net::buffer(out), use_tuple);
    co_return ec;
  }

  // After answering a request that could not be read whole, or whose framing
  // is in doubt, let the peer see the answer: stop sending, then read and drop
  // what it still sends for a while. Nothing read here is taken as a request.
  net::awaitable<void> linger(beast::tcp_stream& stream) {
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    std::array<char, 16 * 1024> sink;
    std::size_t drained = 0;
    stream.expires_after(std::chrono::seconds(1));
    while (drained < (1u << 20)) {
      auto [rec, n] = co_await stream.async_read_some(net::buffer(sink), use_tuple);
      if (rec) break;
      drained += n;
    }
  }

  net::awaitable<void> session(Worker& w, tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    Session self{&stream};
    auto registered = w.sessions.insert(w.sessions.end(), &self);
    beast::flat_buffer buffer;
    std::string out;
    while (!w.stopping) {
      RequestParser parser;
      apply_limits(parser, limits);
      self.busy = false;
      stream.expires_after(config.idle_timeout);
      auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
      if (!ec) {
        // Before any of the body is read (or a 100 Continue invites it): a
        // head whose framing is in doubt ends the connection, so the bytes
        // after it are never read as a request (RFC 9112 §6.3).
        if (auto refusal = refuse_head(service, parser)) {
          self.busy = true;
          co_await write(stream, out, *refusal, parser.get().version(), false);
          co_await linger(stream);
          break;
        }
      }
      if (!ec && expects_continue(parser)) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        auto [wec, wn] = co_await net::async_write(stream, net::buffer(kContinue), use_tuple);
        ec = wec;
      }
      if (!ec && !parser.is_done()) {
        stream.expires_after(config.idle_timeout);
        std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, use_tuple);
      }
      self.busy = true;
      if (ec) {
        if (is_disconnect(ec) || w.stopping) break;
        Response r = read_error_answer(service, ec, limits);
        co_await write(stream, out, r, 11, false);
        co_await linger(stream);
        break;
      }
      auto& req = parser.get();
      Handled handled;
      Response response;
      try {
        handled = handle_request(service, req);
        Reply& reply = handled.reply;
        if (reply.drop) break;  // a fault mode: the connection ends unanswered
        if (reply.wait.count() > 0) {
          net::steady_timer timer(stream.get_executor(), reply.wait);
          co_await timer.async_wait(use_tuple);
        }
        // To the back of this thread's queue: what is already queued runs first.
        if (reply.yield) co_await net::post(stream.get_executor(), net::use_awaitable);
        response = reply.then ? reply.then() : std::move(reply.response);
      } catch (const std::exception& e) {
        // A bug in the service: say so honestly rather than drop the connection.
        std::cerr << "crh serve: internal error on " << req.method_string() << " " << req.target() << ": " << e.what()
                  << "\n";
        response = service.error(500, "internal error in the reference service");
      }
      const bool keep_alive = handled.keep_alive;
      auto wec = co_await write(stream, out, response, req.version(), keep_alive);
      if (wec || !keep_alive) break;
    }
    w.sessions.erase(registered);
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
  }
};

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Server::~Server() { stop(); }

Service& Server::service() { return impl_->service; }

void Server::start() {
  auto& im = *impl_;
  if (im.started) throw std::logic_error("Server::start called twice");
  int threads = im.config.threads > 0 ? im.config.threads : std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < threads; ++i) im.workers.push_back(std::make_unique<Worker>());

  net::io_context& first = im.workers.front()->ctx;
  tcp::endpoint endpoint;
  boost::system::error_code ec;
  auto address = net::ip::make_address(im.config.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, im.config.port);
  } else {
    tcp::resolver resolver(first);
    auto results = resolver.resolve(im.config.host, std::to_string(im.config.port), ec);
    if (ec || results.empty())
      throw std::runtime_error("cannot resolve listen address \"" + im.config.host + "\": " + ec.message());
    endpoint = results.begin()->endpoint();
  }
  im.acceptor.emplace(first);
  auto fail = [&](const char* what) {
    throw std::runtime_error(std::string("cannot ") + what + " " + endpoint.address().to_string() + " port " +
                             std::to_string(endpoint.port()) + ": " + ec.message());
  };
  im.acceptor->open(endpoint.protocol(), ec);
  if (ec) fail("open a socket for");
  im.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  im.acceptor->bind(endpoint, ec);
  if (ec) fail("listen on");
  im.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) fail("listen on");
  im.local = im.acceptor->local_endpoint();
  if (!im.config.sip_listen.empty()) {  // before the threads: a SIP address in use fails start() cleanly
    SipServerConfig sip;
    sip.listen = im.config.sip_listen;
    sip.uas.t1 = im.config.sip_t1;
    sip.uas.answer_delay = im.config.answer_delay;
    im.sip = std::make_unique<SipServer>(std::move(sip), im.service);
    im.sip->start();
  }

  net::co_spawn(first, im.accept_loop(), net::detached);
  for (auto& w : im.workers) {
    w->thread = std::thread([&w = *w] {
      w.ctx.run();
      w.done.set_value();
    });
  }
  im.started = true;
}

unsigned short Server::port() const { return impl_->local.port(); }

std::string Server::base_url() const {
  const auto& ep = impl_->local;
  std::string host = ep.address().to_string();
  if (ep.address().is_v6()) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(ep.port());
}

unsigned short Server::sip_port() const { return impl_->sip ? impl_->sip->port() : 0; }
std::string Server::sip_host() const { return impl_->sip ? impl_->sip->host() : ""; }

void Server::stop() {
  auto& im = *impl_;
  if (!im.started || im.stopped) return;
  im.stopped = true;
  if (im.sip) im.sip->stop();
  net::post(im.workers.front()->ctx, [&im] {
    boost::system::error_code ignored;
    im.acceptor->close(ignored);
  });
  for (auto& w : im.workers) {
    net::post(w->ctx, [&w = *w] {
      w.stopping = true;
      for (Session* s : w.sessions) {
        boost::system::error_code ignored;
        if (!s->busy) s->stream->socket().close(ignored);
      }
      w.guard.reset();
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + im.config.drain_timeout;
  for (auto& w : im.workers) {
    if (w->done.get_future().wait_until(deadline) != std::future_status::ready) w->ctx.stop();
    w->thread.join();
  }
}

int Server::run_until_signal() {
  net::io_context signals_ctx;
  net::signal_set signals(signals_ctx, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (!ec) received = signo;
  });
  signals_ctx.run();
  stop();
  return received;
}

}  // namespace crh::reference
