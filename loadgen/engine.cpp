// The load engine's event loops: the only file of loadgen/ that instantiates
// Asio's async operations. One io_context per thread; each thread owns its
// connections and statistics; timeouts come from one watchdog per thread
// rather than a timer per request, and the reader checks the same deadline
// each time round, so a peer whose bytes never stop cannot outlive it.
#include "loadgen/engine.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <time.h>

#include "loadgen/setup.hpp"
#include "loadgen/wire.hpp"

namespace crh::loadgen {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

std::string_view to_string(Scenario s) {
  switch (s) {
    case Scenario::race: return "race";
    case Scenario::mixed: return "mixed";
    case Scenario::get: return "get";
  }
  return "?";
}

namespace {

std::int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Why a request was ended before its answer came.
enum class Cut : std::uint8_t {
  none,
  timeout,      // it waited longer than the timeout: the target's failure
  interrupted,  // the run was stopped or is over: nobody's failure, not counted
};

// A stopped run (Ctrl-C) gives the answers in flight this long to arrive.
constexpr Clock::duration kStopGrace = std::chrono::milliseconds(500);

// What came back for one request.
struct Answer {
  unsigned status = 0;             // 0: no answer, see failure
  bool interrupted = false;        // no answer because the run ended first (see Cut)
  Failure failure = Failure::reset;
  std::string error;               // why there was no answer, for the history
  std::string body;                // only when asked for
  std::optional<double> retry_after;
  Clock::time_point done;
};

struct Conn {
  explicit Conn(net::io_context& ctx) : socket(ctx), timer(ctx) {}
  tcp::socket socket;
  net::steady_timer timer;       // open-loop pacing and back-off
  std::string in = std::string(64 * 1024, '\0');
  std::size_t in_begin = 0, in_end = 0;
  ResponseReader reader;
  Clock::time_point busy_since{};  // set while a request is under way; the watchdog reads it
  Cut cut = Cut::none;             // set when the request was ended early (the socket is closed)
};

// Shared by every thread: the run's clock, the checker, the history.
struct Run {
  Run(const LoadConfig& c, const Discovery& d, tcp::resolver::results_type e, std::atomic<bool>& s)
      : config(c), discovery(d), endpoints(std::move(e)), stop(s) {}
  const LoadConfig& config;
  const Discovery& discovery;
  tcp::resolver::results_type endpoints;
  Clock::time_point start, measure_from, measure_until;
  Clock::time_point hard_end;  // measure_until + timeout: no request outlives it
  std::atomic<bool>& stop;
  std::atomic<std::uint64_t> round_ids{0};
  std::atomic<std::uint64_t> connected{0};

  std::mutex mutex;  // guards the checker and the violations
  Checker checker;
  std::uint64_t violation_count = 0;
  std::vector<Violation> violations;
  HistoryWriter history;

  std::int64_t ns(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
  }
  bool over() const { return stop.load(std::memory_order_relaxed) || Clock::now() >= measure_until; }
};

struct Worker {
  Worker(Run& r, int i) : run(r), index(i), rng(r.config.seed * 7919 + static_cast<std::uint64_t>(i)) {}
  Run& run;
  int index;
  net::io_context ctx{1};
  std::deque<Conn> conns;  // stable addresses for the watchdog
  int active = 0;          // connection coroutines still running
  Stats stats;
  std::vector<Op> history;  // flushed to the file in batches
  std::mt19937_64 rng;
  alignas(64) std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> rounds{0};
  Clock::time_point stop_seen{};  // when this thread first saw Progress::stop

  Conn& new_conn() { return conns.emplace_back(ctx); }

  // Whether the request under way on `c` must end now, and why: its own
  // timeout, the end of the run, or a stop whose grace has passed.
  Cut due_cut(const Conn& c, Clock::time_point now) {
    if (c.busy_since == Clock::time_point{}) return Cut::none;
    if (now - c.busy_since >= run.config.timeout) return Cut::timeout;
    if (now >= run.hard_end) return Cut::interrupted;
    if (run.stop.load(std::memory_order_relaxed)) {
      if (stop_seen == Clock::time_point{}) stop_seen = now;
      if (now - stop_seen >= kStopGrace) return Cut::interrupted;
    }
    return Cut::none;
  }

  void log(Op op) {
    if (!run.history.is_open()) return;
    history.push_back(std::move(op));
    if (history.size() >= 512) flush_history();
  }
  void flush_history() {
    run.history.write(history);
    history.clear();
  }
};

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
    auto [ec, n] = co_await c.socket.async_read_some(net::buffer(c.in.data() + c.in_end, c.in.size() - c.in_end),
                                                     use_tuple);
    if (ec == net::error::eof) {
      c.reader.eof();
      if (c.reader.state() == ResponseReader::State::done) break;
      co_return no_answer(c, ec, Failure::reset);
    }
    if (ec) co_return no_answer(c, ec, Failure::reset);
    c.in_end += n;
  }
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
net::awaitable<Answer> exchange(Worker& w, Conn& c, std::string_view bytes, bool keep_body,
                                Clock::time_point& sent) {
  if (!c.socket.is_open() && !co_await ensure_open(w, c)) co_return no_answer(c, {}, Failure::connect);
  sent = Clock::now();
  c.busy_since = sent;
  error_code ec;
  std::size_t n = c.socket.write_some(net::buffer(bytes.data(), bytes.size()), ec);
  if (ec == net::error::would_block || ec == net::error::try_again) ec = {}, n = 0;
  if (!ec && n < bytes.size()) {
    auto [wec, rest] = co_await net::async_write(c.socket, net::buffer(bytes.data() + n, bytes.size() - n), use_tuple);
    ec = wec;
  }
  if (ec) co_return no_answer(c, ec, Failure::reset);
  co_return co_await receive(w, c, keep_body);
}

// A count that reaches zero wakes whoever waits for it: how a slot waits for
// all of its callers' answers on its own thread.
struct WaitGroup {
  explicit WaitGroup(net::io_context& ctx, int n) : timer(ctx, Clock::time_point::max()), pending(n) {}
  net::steady_timer timer;
  int pending;
  void done() {
    if (--pending == 0) timer.cancel();
  }
  net::awaitable<void> wait() {
    if (pending > 0) co_await timer.async_wait(use_tuple);
  }
};

net::awaitable<void> receive_into(Worker& w, Conn& c, Answer& out, WaitGroup& wg) {
  out = co_await receive(w, c, false);
  wg.done();
}

// Pacing and back-off: never past the measured time, never once the run is
// over (the watchdog cancels the timers of a stopped run).
net::awaitable<void> sleep_for(const Run& run, Conn& c, Clock::duration d) {
  if (run.over()) co_return;
  c.timer.expires_at(std::min(Clock::now() + d, run.measure_until));
  co_await c.timer.async_wait(use_tuple);
}

Outcome outcome_of(const Answer& a) {
  if (a.status == 0 || a.status >= 500) return Outcome::indeterminate;
  return a.status < 300 ? Outcome::ok : Outcome::fail;
}

// The answers an operation may get that are a "no" by design, not an error.
bool expected_refusal(OpKind op, unsigned status) {
  return (status == 409 && op == OpKind::tag) ||
         (status == 403 && (op == OpKind::call || op == OpKind::recall));
}

bool is_error(OpKind op, const Answer& a) {
  if (a.status == 0 || a.status >= 500) return true;
  if (a.status < 300 || a.status == 429) return false;
  return !expected_refusal(op, a.status);
}

// Counts one operation if `counted_at` is inside the measured window: its due
// time, or for the race the start of its round, so a round counts whole.
void record(Worker& w, OpKind op, const Answer& a, Clock::time_point due, Clock::time_point sent,
            Clock::time_point counted_at) {
  if (a.interrupted) return;  // the run ended first: it says nothing about the target
  const bool error = is_error(op, a);
  w.requests.fetch_add(1, std::memory_order_relaxed);
  if (error) w.errors.fetch_add(1, std::memory_order_relaxed);
  if (counted_at < w.run.measure_from || counted_at >= w.run.measure_until) return;
  OpStats& s = w.stats.ops[static_cast<std::size_t>(op)];
  const std::int64_t latency = std::chrono::duration_cast<std::chrono::nanoseconds>(a.done - due).count();
  s.latency[static_cast<std::size_t>(outcome_of(a))].record(latency);
  s.uncorrected.record(std::chrono::duration_cast<std::chrono::nanoseconds>(a.done - sent).count());
  if (a.status) ++s.statuses[std::min<unsigned>(a.status, 599)];
  else ++s.failures[static_cast<std::size_t>(a.failure)];
  s.errors += error;
  s.refusals += expected_refusal(op, a.status);
  s.throttled += a.status == 429;
  w.stats.record_second(
      std::chrono::duration_cast<std::chrono::nanoseconds>(counted_at - w.run.measure_from).count(), latency, error);
}

Op make_op(const Run& run, std::uint64_t round, OpKind kind, std::string alias, std::string caller,
           Clock::time_point invoke, const Answer& a) {
  Op op;
  op.round = round;
  op.kind = kind;
  op.alias = std::move(alias);
  op.caller = std::move(caller);
  op.invoke_ns = run.ns(invoke);
  op.complete_ns = run.ns(a.done);
  op.outcome = outcome_of(a);
  op.status = a.status;
  op.error = a.error;
  return op;
}

// After a 429 the target asked for a pause; after a failed connect, pause a
// little so a dead target is not hammered in a tight loop.
net::awaitable<void> back_off(const Run& run, Conn& c, const Answer& a) {
  if (a.status == 429) {
    const double s = std::min(a.retry_after.value_or(0.1), 10.0);
    co_await sleep_for(run, c, std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)));
  } else if (a.status == 0 && a.failure == Failure::connect) {
    co_await sleep_for(run, c, std::chrono::milliseconds(50));
  }
}

// ---- get and mixed: a coroutine per connection ------------------------------------------

// A request ready to send, built once.
struct Prepared {
  OpKind op;
  std::string bytes;
  bool keep_body = false;  // tag: its alias is needed to untag it
};

struct Mix {
  std::vector<std::vector<Prepared>> variants;  // per mix entry, e.g. one get-agent per agent
  mutable std::discrete_distribution<std::size_t> pick;  // holds no state between calls
};

// `id`: the agent, database key or alias the operation addresses; `caller`: who calls.
core::HttpRequest request_for(const LoadConfig& c, OpKind op, const std::string& id,
                              const std::string& caller = "+15550000000") {
  using core::percent_encode;
  const std::string ch = "/channels/" + percent_encode(c.target.channel) + "/alias-numbers";
  switch (op) {
    case OpKind::get: return core::build_request("GET", c.path, {}, c.target.encoding);
    case OpKind::list_agents: return core::build_request("GET", "/api/v1/local-agents", {}, c.target.encoding);
    case OpKind::get_agent:
      return core::build_request("GET", "/api/v1/local-agents/" + percent_encode(id), {}, c.target.encoding);
    case OpKind::snooze:
    case OpKind::wake:
      return core::build_request("PUT", "/api/v1/local-agents/" + percent_encode(id) + "/" + std::string(to_string(op)),
                                 {}, c.target.encoding);
    case OpKind::db_get: return core::build_request("GET", "/database/" + percent_encode(id), {}, c.target.encoding);
    case OpKind::db_set:
      return core::build_request("POST", "/database/" + percent_encode(id), {{"value", "crh load"}},
                                 c.target.encoding);
    case OpKind::list_aliases: return core::build_request("GET", ch, {}, c.target.encoding);
    case OpKind::tag:
      return core::build_request("POST", ch + "/tag",
                                 {{"tag", "crh-load"}, {"minutes", std::to_string(c.tag_minutes), true}},
                                 c.target.encoding);
    case OpKind::untag: return core::build_request("DELETE", ch + "/" + percent_encode(id) + "/tag", {}, c.target.encoding);
    case OpKind::call:
    case OpKind::recall:
      return core::build_request(c.target.call_hook.method, c.target.call_hook.path_for(c.target.channel, id),
                                 {{c.target.call_hook.parameter, caller}}, c.target.encoding);
    case OpKind::count_: break;
  }
  return {};
}

std::string bytes_for(const Run& run, const core::HttpRequest& r) {
  return serialize_request(r, run.config.target.base, run.config.target.api_key);
}

Mix prepare_mix(const Run& run) {
  const auto& c = run.config;
  Mix mix;
  std::vector<double> weights;
  auto ids_for = [&](OpKind op) -> std::vector<std::string> {
    switch (op) {
      case OpKind::get_agent:
      case OpKind::snooze:
      case OpKind::wake: return run.discovery.agents;
      case OpKind::call: return run.discovery.aliases;
      case OpKind::db_get:
      case OpKind::db_set: return {std::string(kLoadDatabaseKey)};
      default: return {""};
    }
  };
  for (const auto& e : c.mix) {
    std::vector<Prepared> v;
    for (const auto& id : ids_for(e.op))
      v.push_back({e.op, bytes_for(run, request_for(c, e.op, id)), e.op == OpKind::tag});
    if (v.empty() || e.weight <= 0) continue;
    mix.variants.push_back(std::move(v));
    weights.push_back(e.weight);
  }
  mix.pick = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
  return mix;
}

net::awaitable<void> connection_loop(Worker& w, Conn& c, const Mix* mix, const Prepared* single,
                                     Clock::duration interval, Clock::time_point first_due) {
  Run& run = w.run;
  Clock::time_point due = first_due;
  std::string untag_bytes;
  while (!run.over()) {
    if (interval.count() > 0) {
      if (due >= run.measure_until) break;
      if (Clock::now() < due) co_await sleep_for(run, c, due - Clock::now());
      if (run.over()) break;
      const auto lateness = Clock::now() - due;
      if (due >= run.measure_from) {
        w.stats.lag.record(std::chrono::duration_cast<std::chrono::nanoseconds>(lateness).count());
        if (lateness > interval) ++w.stats.late;
      }
    } else {
      due = Clock::now();
    }
    const Prepared* p = single;
    if (mix) {
      const auto& v = mix->variants[mix->pick(w.rng)];
      p = &v[v.size() == 1 ? 0 : std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(w.rng)];
    }
    Clock::time_point sent = Clock::now();
    Answer a = co_await exchange(w, c, p->bytes, p->keep_body, sent);
    record(w, p->op, a, due, sent, due);
    if (due >= run.measure_from && !a.interrupted) ++w.stats.scheduled;
    w.log(make_op(run, 0, p->op, "", "", sent, a));
    if (p->op == OpKind::tag && outcome_of(a) == Outcome::ok) {
      if (auto alias = tagged_alias_id(a.body)) {
        untag_bytes = bytes_for(run, request_for(run.config, OpKind::untag, *alias));
        Clock::time_point untag_sent = Clock::now();
        Answer u = co_await exchange(w, c, untag_bytes, false, untag_sent);  // a tag in the mix is undone at once
        record(w, OpKind::untag, u, untag_sent, untag_sent, due);
        w.log(make_op(run, 0, OpKind::untag, *alias, "", untag_sent, u));
      }
    }
    co_await back_off(run, c, a);
    if (interval.count() > 0) due += interval;
  }
  --w.active;
}

// ---- race: a coroutine per slot, each with a control connection and K callers ----------

// Sends every caller's request but its last byte, then releases all last
// bytes together at `deadline`; returns each caller's answer and send time.
net::awaitable<void> release_together(Worker& w, std::vector<Conn*>& callers, const std::vector<std::string>& bytes,
                                      std::vector<Answer>& answers, std::vector<Clock::time_point>& sent,
                                      std::vector<bool>& attempted) {
  const std::size_t k = callers.size();
  for (std::size_t i = 0; i < k; ++i) {
    attempted[i] = false;
    Conn& c = *callers[i];
    if (!co_await ensure_open(w, c)) {
      answers[i] = no_answer(c, {}, Failure::connect);
      continue;
    }
    std::string_view head(bytes[i].data(), bytes[i].size() - 1);
    c.busy_since = Clock::now();  // a target that reads nothing must not hold the write forever
    auto [ec, n] = co_await net::async_write(c.socket, net::buffer(head.data(), head.size()), use_tuple);
    if (ec) {
      answers[i] = no_answer(c, ec, Failure::reset);
      continue;
    }
    attempted[i] = true;
  }
  net::steady_timer gate(w.ctx, Clock::now() + std::chrono::microseconds(500));
  co_await gate.async_wait(use_tuple);
  for (std::size_t i = 0; i < k; ++i) {
    if (!attempted[i]) continue;
    Conn& c = *callers[i];
    sent[i] = Clock::now();
    error_code ec;
    net::write(c.socket, net::buffer(&bytes[i].back(), 1), ec);
    c.busy_since = sent[i];
    if (ec) {
      answers[i] = no_answer(c, ec, Failure::reset);
      attempted[i] = false;  // the request never went out whole: it cannot have bound anyone
    }
  }
  WaitGroup wg(w.ctx, static_cast<int>(std::count(attempted.begin(), attempted.end(), true)));
  for (std::size_t i = 0; i < k; ++i)
    if (attempted[i]) net::co_spawn(w.ctx, receive_into(w, *callers[i], answers[i], wg), net::detached);
  co_await wg.wait();
}

std::string caller_number(int worker, int slot, int caller, int callers) {
  // Distinct numbers for every caller of every slot: a binding that outlives its
  // epoch shows up as a refusal of another slot's callers.
  const long n = (static_cast<long>(worker) * 1000 + slot) * callers + caller;
  char buf[32];
  std::snprintf(buf, sizeof buf, "+1555%07ld", n % 10'000'000);
  return buf;
}

net::awaitable<void> race_slot(Worker& w, int slot) {
  Run& run = w.run;
  const auto& cfg = run.config;
  const int k = cfg.callers;
  Conn& control = w.new_conn();
  std::vector<Conn*> callers;
  std::vector<std::string> numbers;
  for (int i = 0; i < k; ++i) {
    callers.push_back(&w.new_conn());
    numbers.push_back(caller_number(w.index, slot, i, k));
  }
  for (auto* c : callers) co_await ensure_open(w, *c);  // pre-open: the race starts warm
  const std::string tag_bytes = bytes_for(run, request_for(cfg, OpKind::tag, ""));
  const std::int64_t lifetime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.target.minute).count() * cfg.tag_minutes;
  std::vector<Answer> answers(static_cast<std::size_t>(k));
  std::vector<Clock::time_point> sent(static_cast<std::size_t>(k));
  std::vector<bool> attempted(static_cast<std::size_t>(k));
  std::vector<std::string> call_bytes(static_cast<std::size_t>(k));

  while (!run.over()) {
    Clock::time_point tag_sent;
    Answer tag = co_await exchange(w, control, tag_bytes, true, tag_sent);
    record(w, OpKind::tag, tag, tag_sent, tag_sent, tag_sent);
    if (tag.status == 409) {  // every alias tagged: wait for a round to end
      ++w.stats.race.tag_busy;
      co_await sleep_for(run, control, std::chrono::milliseconds(2));
      continue;
    }
    auto alias = outcome_of(tag) == Outcome::ok ? tagged_alias_id(tag.body) : std::nullopt;
    if (!alias) {
      w.log(make_op(run, 0, OpKind::tag, "", "", tag_sent, tag));
      co_await back_off(run, control, tag);
      if (tag.status != 429) co_await sleep_for(run, control, std::chrono::milliseconds(10));
      continue;
    }
    Round round;
    round.id = run.round_ids.fetch_add(1, std::memory_order_relaxed) + 1;
    round.lifetime_ns = lifetime_ns;
    round.tag = make_op(run, round.id, OpKind::tag, *alias, "", tag_sent, tag);

    for (int i = 0; i < k; ++i) {
      const auto r = request_for(cfg, OpKind::call, *alias, numbers[static_cast<std::size_t>(i)]);
      call_bytes[static_cast<std::size_t>(i)] = bytes_for(run, r);
    }
    std::size_t winners = 0;
    bool cut_short = false;  // the run ended in the middle of the round: it says nothing of the race
    for (OpKind kind : {OpKind::call, OpKind::recall}) {
      co_await release_together(w, callers, call_bytes, answers, sent, attempted);
      Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
      for (std::size_t i = 0; i < answers.size(); ++i) {
        cut_short |= answers[i].interrupted;
        if (!attempted[i]) {
          record(w, kind, answers[i], answers[i].done, answers[i].done, tag_sent);
          continue;
        }
        first = std::min(first, sent[i]);
        last = std::max(last, sent[i]);
        record(w, kind, answers[i], sent[i], sent[i], tag_sent);
        round.calls.push_back(make_op(run, round.id, kind, *alias, numbers[i], sent[i], answers[i]));
        if (kind == OpKind::call && outcome_of(answers[i]) == Outcome::ok) ++winners;
      }
      if (kind == OpKind::call && !cut_short && last >= first && tag_sent >= run.measure_from &&
          tag_sent < run.measure_until)
        w.stats.race.skew.record(std::chrono::duration_cast<std::chrono::nanoseconds>(last - first).count());
    }

    Clock::time_point untag_sent;
    const std::string untag_bytes = bytes_for(run, request_for(cfg, OpKind::untag, *alias));
    Answer untag = co_await exchange(w, control, untag_bytes, false, untag_sent);
    record(w, OpKind::untag, untag, untag_sent, untag_sent, tag_sent);
    round.untag = make_op(run, round.id, OpKind::untag, *alias, "", untag_sent, untag);

    if (tag_sent >= run.measure_from && tag_sent < run.measure_until && !cut_short) {
      auto& race = w.stats.race;
      ++race.rounds;
      if (race.winners.size() <= winners) race.winners.resize(winners + 1);
      ++race.winners[winners];
      race.rounds_without_winner += winners == 0;
    }
    w.rounds.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(run.mutex);
      for (auto& v : run.checker.add(round)) {
        ++run.violation_count;
        if (run.violations.size() < cfg.max_violations_kept) run.violations.push_back(std::move(v));
      }
    }
    if (run.history.is_open()) {
      w.log(round.tag);
      for (auto& op : round.calls) w.log(op);
      w.log(*round.untag);
    }
  }
  --w.active;
}

// Ends what has waited past its deadline, and the sleeps of a stopped run;
// ends when the connections have. It closes the socket rather than cancel:
// a cancel is lost when no operation is pending (the bytes were ready), a
// close is not, as every later operation on the socket then fails at once.
net::awaitable<void> watchdog(Worker& w) {
  const auto timeout = w.run.config.timeout;
  net::steady_timer timer(w.ctx);
  const auto tick = std::clamp<Clock::duration>(timeout / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
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

int default_connections(const LoadConfig& c, const Discovery& d) {
  if (c.connections > 0) return c.connections;
  switch (c.scenario) {
    case Scenario::race: return std::max(1, std::min<int>(8, static_cast<int>(d.aliases.size()) / 2));
    case Scenario::mixed: return 16;
    case Scenario::get: return 32;
  }
  return 1;
}

}  // namespace

LoadResult run_load(const LoadConfig& config, const Discovery& discovery, Progress& progress) {
  net::io_context resolve_ctx;
  tcp::resolver resolver(resolve_ctx);
  error_code ec;
  auto endpoints = resolver.resolve(config.target.base.host, config.target.base.port, ec);
  if (ec) throw std::runtime_error("cannot resolve " + config.target.base.host + ": " + ec.message());

  Run run(config, discovery, endpoints, progress.stop);
  if (!config.history_file.empty()) run.history.open(config.history_file);
  const int threads = std::max(1, config.threads);
  const int connections = default_connections(config, discovery);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < threads; ++i) workers.push_back(std::make_unique<Worker>(run, i));

  run.start = Clock::now();
  run.measure_from = run.start + config.warmup;
  run.measure_until = run.measure_from + config.duration;
  run.hard_end = run.measure_until + config.timeout;
  const bool open_loop = config.rate > 0 && config.scenario != Scenario::race;
  const Clock::duration interval =
      open_loop ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(connections / config.rate))
                : Clock::duration::zero();

  std::vector<Mix> mixes(static_cast<std::size_t>(threads));
  std::vector<Prepared> singles(static_cast<std::size_t>(threads));
  for (int i = 0; i < connections; ++i) {
    Worker& w = *workers[static_cast<std::size_t>(i % threads)];
    ++w.active;
    if (config.scenario == Scenario::race) {
      net::co_spawn(w.ctx, race_slot(w, i / threads), net::detached);
      continue;
    }
    const Mix* mix = nullptr;
    const Prepared* single = nullptr;
    if (config.scenario == Scenario::mixed) {
      auto& m = mixes[static_cast<std::size_t>(w.index)];
      if (m.variants.empty()) m = prepare_mix(run);
      mix = &m;
    } else {
      auto& s = singles[static_cast<std::size_t>(w.index)];
      if (s.bytes.empty()) s = {OpKind::get, bytes_for(run, request_for(config, OpKind::get, "")), false};
      single = &s;
    }
    // Spread the connections' first due times over one interval.
    const auto first_due = run.start + (open_loop ? interval * i / connections : Clock::duration::zero());
    net::co_spawn(w.ctx, connection_loop(w, w.new_conn(), mix, single, interval, first_due), net::detached);
  }

  std::vector<std::thread> pool;
  for (auto& wp : workers)
    pool.emplace_back([&w = *wp] {
      net::co_spawn(w.ctx, watchdog(w), net::detached);
      const auto cpu_start = thread_cpu_ns();
      w.ctx.run();
      w.stats.cpu_ns = thread_cpu_ns() - cpu_start;
      w.stats.close_seconds();
      w.flush_history();
    });

  // Progress for whoever watches; the workers never wait for it.
  std::atomic<int> finished{0};
  std::thread waiter([&] {
    for (auto& t : pool) t.join();
    finished = 1;
  });
  while (!finished.load()) {
    std::uint64_t req = 0, err = 0, rounds = 0;
    for (auto& w : workers) {
      req += w->requests.load(std::memory_order_relaxed);
      err += w->errors.load(std::memory_order_relaxed);
      rounds += w->rounds.load(std::memory_order_relaxed);
    }
    progress.requests = req;
    progress.errors = err;
    progress.rounds = rounds;
    {
      std::lock_guard lock(run.mutex);
      progress.violations = run.violation_count;
    }
    progress.measuring = Clock::now() >= run.measure_from;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  waiter.join();
  const auto ended = Clock::now();

  LoadResult result;
  std::int64_t busiest_cpu = 0;
  for (auto& w : workers) {
    busiest_cpu = std::max(busiest_cpu, w->stats.cpu_ns);
    result.stats.merge(w->stats);
  }
  result.stats.coarsen(Stats::kMaxSeriesPoints);
  run.history.close();
  result.history_ops = run.history.written();
  result.violation_count = run.violation_count;
  result.violations = std::move(run.violations);
  result.interrupted = progress.stop.load();
  const auto measured_end = std::min(ended, run.measure_until);
  result.wall_s = std::max(0.0, std::chrono::duration<double>(measured_end - run.measure_from).count());
  std::uint64_t completed = 0;
  for (const auto& s : result.stats.ops) completed += s.count();
  // Open loop: the rate of the schedule's own requests, comparable with the asked rate.
  const auto achieved = open_loop ? result.stats.scheduled : completed;
  result.achieved_rate = result.wall_s > 0 ? static_cast<double>(achieved) / result.wall_s : 0;
  result.intended_rate = open_loop ? config.rate : 0;
  const double run_s = std::chrono::duration<double>(ended - run.start).count();
  result.generator_cpu = run_s > 0 ? static_cast<double>(busiest_cpu) / 1e9 / run_s : 0;

  if (run.connected.load() == 0)
    throw std::runtime_error("no connection to " + config.target.base.to_string() + " could be opened");
  if (result.generator_cpu >= 0.95)
    result.invalid.push_back("a generator thread was busy " + std::to_string(static_cast<int>(result.generator_cpu * 100)) +
                             "% of the time: the figures may measure the generator; add --threads or lower the load");
  if (open_loop && completed > 0) {
    const double late_share = static_cast<double>(result.stats.late) / static_cast<double>(std::max<std::uint64_t>(1, achieved));
    if (result.achieved_rate < 0.95 * config.rate && late_share > 0.05)
      result.invalid.push_back("behind schedule: " + std::to_string(static_cast<int>(late_share * 100)) +
                               "% of requests were sent more than one interval late while the rate reached " +
                               std::to_string(static_cast<long>(result.achieved_rate)) + " of " +
                               std::to_string(static_cast<long>(config.rate)) +
                               "/s; add --connections so that slow answers do not hold the schedule back");
  }
  return result;
}

}  // namespace crh::loadgen
