// Connections and I/O of the load engine: connect, send, read an answer by a
// deadline, and the watchdog. Timeouts come from one watchdog per thread
// rather than a timer per request, and the reader checks the same deadline
// each time round, so a peer whose bytes never stop cannot outlive it.
#include "loadgen/engine_parts.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>

namespace crh::loadgen::engine {
using boost::system::error_code;
void close(Conn& c) {
  error_code ignored;
  c.socket.shutdown(tcp::socket::shutdown_both, ignored);
  c.socket.close(ignored);
  c.in_begin = c.in_end = 0;
}

net::awaitable<bool> ensure_open(Worker& w, Conn& c) {
  if (c.socket.is_open()) co_return true;
  c.cut = Cut::none;
  c.busy_since = Clock::now();
  // The wall clock, not the steady one: it is the clock a capture stamps
  // packets with, and read before the SYN, so that it precedes every packet
  // of this connection and follows every packet of an earlier one on the port.
  std::int64_t connect_wall_ns = 0;
  if (w.run.config.keep_client_exchanges)
    connect_wall_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
  auto [ec, endpoint] = co_await net::async_connect(c.socket, w.run.endpoints, use_tuple);
  c.busy_since = {};
  if (ec) {
    close(c);
    co_return false;
  }
  error_code ignored;
  c.socket.set_option(tcp::no_delay(true), ignored);
  c.socket.non_blocking(true, ignored);
  w.run.connected.fetch_add(1, std::memory_order_relaxed);
  c.serial = w.run.connection_serials.fetch_add(1, std::memory_order_relaxed) + 1;
  c.next_order = c.request_order = 0;
  c.written = c.request_offset = 0;
  if (w.run.config.keep_client_exchanges)
    w.client_connections.push_back({c.serial, c.socket.local_endpoint(ignored).port(), connect_wall_ns});
  co_return true;
}

// `why` unless the request was cut short: then the cut says why.
Answer no_answer(Conn& c, const error_code& ec, Failure why) {
  Answer a;
  a.interrupted = c.cut == Cut::interrupted;
  a.failure = c.cut == Cut::timeout ? Failure::timeout : why;
  a.error = c.cut == Cut::timeout       ? "timeout"
            : c.cut == Cut::interrupted ? "interrupted: the run ended before the answer"
            : ec                        ? ec.message()
            : why == Failure::malformed ? c.reader.error()
                                        : std::string(to_string(why));
  a.done = Clock::now();
  close(c);
  c.busy_since = {};
  c.cut = Cut::none;
  return a;
}

namespace {

// "HTTP/1.x 408": a server closing an idle connection may say so first (RFC
// 9110 §15.5.9); that is a goodbye, not an answer to anything.
bool is_idle_goodbye(std::string_view bytes) {
  return bytes.size() >= 12 && bytes.starts_with("HTTP/1.") && bytes.substr(8, 4) == " 408";
}

}  // namespace

Answer unsolicited(Conn& c, std::size_t bytes, bool after_answer) {
  const bool http = std::string_view(c.in).substr(c.in_begin, std::min<std::size_t>(5, bytes)) == "HTTP/";
  Answer a = no_answer(c, {}, Failure::unsolicited);
  if (a.failure != Failure::unsolicited) return a;  // cut short first: the cut says why
  a.error = std::to_string(bytes) + " byte(s)" + (http ? " of an HTTP answer" : "") +
            (after_answer ? " followed the whole answer" : " arrived while no request was waiting") +
            ": nothing asked for them, so the connection was closed";
  return a;
}

std::optional<Answer> check_idle(Conn& c) {
  if (!c.socket.is_open()) return std::nullopt;
  error_code ec;
  const std::size_t waiting = c.socket.available(ec);
  if (ec || waiting == 0) return std::nullopt;
  c.in_begin = 0;
  c.in_end = c.socket.read_some(net::buffer(c.in.data(), c.in.size()), ec);
  if (ec) c.in_end = 0;
  if (is_idle_goodbye(std::string_view(c.in).substr(0, c.in_end))) {
    close(c);  // reconnect as for any connection the server closed
    return std::nullopt;
  }
  return unsolicited(c, std::max(waiting, c.in_end), false);
}

// Reads one answer; the request has been sent. The deadline is checked each
// time round as well as by the watchdog: when bytes are always ready no read
// is ever pending, so there would be nothing for the watchdog to cancel.
net::awaitable<Answer> receive(Worker& w, Conn& c, bool keep_body) {
  c.reader.reset(keep_body);
  if (c.busy_since == Clock::time_point{}) c.busy_since = Clock::now();
  for (;;) {
    if (c.in_begin < c.in_end) {
      c.in_begin += c.reader.feed(std::string_view(c.in).substr(c.in_begin, c.in_end - c.in_begin));
      if (c.in_begin == c.in_end) c.in_begin = c.in_end = 0;
    }
    if (c.reader.state() == ResponseReader::State::error) co_return no_answer(c, {}, Failure::malformed);
    if (c.reader.state() == ResponseReader::State::done) break;
    if (c.cut == Cut::none) c.cut = w.due_cut(c, Clock::now());
    if (c.cut != Cut::none) co_return no_answer(c, {}, Failure::timeout);
    if (c.in_end == c.in.size()) {  // room for more: move what is left to the front
      std::copy(c.in.begin() + static_cast<long>(c.in_begin), c.in.begin() + static_cast<long>(c.in_end), c.in.begin());
      c.in_end -= c.in_begin;
      c.in_begin = 0;
    }
    auto [ec, n] =
        co_await c.socket.async_read_some(net::buffer(c.in.data() + c.in_end, c.in.size() - c.in_end), use_tuple);
    if (ec == net::error::eof) {
      c.reader.eof();
      if (c.reader.state() == ResponseReader::State::done) break;
      co_return no_answer(c, ec, Failure::reset);
    }
    if (ec) co_return no_answer(c, ec, Failure::reset);
    c.in_end += n;
  }
  // Bytes after the whole answer: the engine never pipelines, so nothing
  // asked for them. A second answer to one request (or one that runs past its
  // framing) would be taken as the next request's answer: close, and count
  // this exchange as an error whatever its status said.
  if (c.in_begin < c.in_end) co_return unsolicited(c, c.in_end - c.in_begin, true);
  Answer a;
  a.done = Clock::now();
  a.status = c.reader.status();
  a.retry_after = c.reader.retry_after();
  if (keep_body) a.body = c.reader.body();
  c.busy_since = {};
  if (!c.reader.keep_alive()) close(c);
  co_return a;
}

// Connects if needed, sends `bytes` whole and reads the answer. The write is
// tried at once on the non-blocking socket (a small request fits the send
// buffer), so the common case costs no async operation besides the read.
net::awaitable<Answer> exchange(Worker& w, Conn& c, std::string_view bytes, bool keep_body, Clock::time_point& sent) {
  if (auto idle = check_idle(c)) {
    sent = idle->done;
    co_return *idle;  // not sent: the connection is closed, and the next request opens another
  }
  if (!c.socket.is_open() && !co_await ensure_open(w, c)) co_return no_answer(c, {}, Failure::connect);
  c.begin_request(bytes.size());
  sent = Clock::now();
  c.busy_since = sent;
  error_code ec;
  std::size_t n = c.socket.write_some(net::buffer(bytes.data(), bytes.size()), ec);
  if (ec == net::error::would_block || ec == net::error::try_again) ec = {}, n = 0;
  if (!ec && n < bytes.size()) {
    auto [wec, rest] = co_await net::async_write(c.socket, net::buffer(bytes.data() + n, bytes.size() - n), use_tuple);
    ec = wec;
  }
  Answer a;
  if (ec) a = no_answer(c, ec, Failure::reset);
  else a = co_await receive(w, c, keep_body);
  c.stamp(a);
  co_return a;
}

// Pacing and back-off: never past the measured time, never once the run is
// over (the watchdog cancels the timers of a stopped run).
net::awaitable<void> sleep_for(const Run& run, Conn& c, Clock::duration d) {
  if (run.over()) co_return;
  c.timer.expires_at(std::min(Clock::now() + d, run.measure_until));
  co_await c.timer.async_wait(use_tuple);
}

// After a 429 the target asked for a pause; after a failed connect, pause a
// little so a dead target is not hammered in a tight loop. The latter are
// counted: the requests a closed loop does not send meanwhile are why its
// error rate understates an outage.
net::awaitable<void> back_off(Worker& w, Conn& c, const Answer& a) {
  const Run& run = w.run;
  if (core::throttled(a.status, run.config.statuses)) {
    const double s = std::min(a.retry_after.value_or(0.1), 10.0);
    co_await sleep_for(run, c, std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)));
  } else if (a.status == 0 && a.failure == Failure::connect) {
    const auto from = Clock::now();
    co_await sleep_for(run, c, std::chrono::milliseconds(50));
    if (from >= run.measure_from && from < run.measure_until) {
      ++w.outages.back_offs;
      w.outages.back_off_s += std::chrono::duration<double>(Clock::now() - from).count();
    }
  }
}

// Ends what has waited past its deadline, and the sleeps of a stopped run;
// ends when the connections have. It closes the socket rather than cancel:
// a cancel is lost when no operation is pending (the bytes were ready), a
// close is not, as every later operation on the socket then fails at once.
net::awaitable<void> watchdog(Worker& w) {
  const auto timeout = w.run.config.timeout;
  net::steady_timer timer(w.ctx);
  const auto tick =
      std::clamp<Clock::duration>(timeout / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
  bool stopping = false;
  while (w.active > 0) {
    timer.expires_after(tick);
    co_await timer.async_wait(use_tuple);
    const auto now = Clock::now();
    if (!stopping && w.run.stop.load(std::memory_order_relaxed)) {
      stopping = true;
      if (w.stop_seen == Clock::time_point{}) w.stop_seen = now;
      for (auto& c : w.conns) c.timer.cancel();
    }
    for (auto& c : w.conns) {
      if (c.cut != Cut::none) continue;
      c.cut = w.due_cut(c, now);
      if (c.cut == Cut::none) continue;
      error_code ignored;
      c.socket.close(ignored);
    }
  }
}

}  // namespace crh::loadgen::engine
