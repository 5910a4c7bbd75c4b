// The race: a coroutine per slot, each with a control connection and K callers.
// The control connection tags an alias; every caller's call is armed (all
// but its release written), then all are released together, twice (call and
// recall); the round goes to the checker.
#include "loadgen/engine_parts.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>

#include "loadgen/setup.hpp"

namespace crh::loadgen::engine {
using boost::system::error_code;
namespace {

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
  c.stamp(out);
  wg.done();
}

// The worker's batch sender, made at its first round for `callers` sockets
// or calls (a round never has more than the first).
BatchSend& batch_for(Worker& w, std::size_t callers) {
  if (!w.batch) w.batch = std::make_unique<BatchSend>(static_cast<unsigned>(std::max<std::size_t>(callers, 1)));
  return *w.batch;
}

// Sends every caller's request but its last byte, then releases all last
// bytes together (BatchSend); returns each caller's answer and send time,
// and the span of the release.
net::awaitable<void> release_together(Worker& w, std::vector<Conn*>& callers, const std::vector<calls::CallWire>& calls,
                                      std::vector<Answer>& answers, std::vector<Clock::time_point>& sent,
                                      std::vector<bool>& attempted, Clock::duration& release_span) {
  const std::size_t k = callers.size();
  for (std::size_t i = 0; i < k; ++i) {
    attempted[i] = false;
    Conn& c = *callers[i];
    if (auto idle = check_idle(c)) {  // not sent: it cannot have bound anyone
      answers[i] = std::move(*idle);
      continue;
    }
    if (!co_await ensure_open(w, c)) {
      answers[i] = no_answer(c, {}, Failure::connect);
      continue;
    }
    const std::string& armed = calls[i].armed;
    c.begin_request(armed.size() + calls[i].release.size());
    c.busy_since = Clock::now();  // a target that reads nothing must not hold the write forever
    auto [ec, n] = co_await net::async_write(c.socket, net::buffer(armed.data(), armed.size()), use_tuple);
    if (ec) {
      answers[i] = no_answer(c, ec, Failure::reset);
      c.stamp(answers[i]);
      continue;
    }
    attempted[i] = true;
  }
  net::steady_timer gate(w.ctx, Clock::now() + std::chrono::microseconds(500));
  co_await gate.async_wait(use_tuple);
  std::vector<int> fds;
  std::vector<std::string_view> bytes;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < k; ++i)
    if (attempted[i]) {
      fds.push_back(callers[i]->socket.native_handle());
      bytes.push_back(calls[i].release);
      which.push_back(i);
    }
  BatchSend& batch = batch_for(w, k);
  std::vector<long> written(fds.size());
  // Every send stamped with the instant before the release; the skew
  // recorded is the span of the sends (release_span), which every send lies within.
  const auto release_start = Clock::now();
  release_span = batch.send_all(fds, bytes, written);
  if (w.stats.race.release_path.empty()) w.stats.race.release_path = batch.path();
  for (std::size_t j = 0; j < which.size(); ++j) {
    const std::size_t i = which[j];
    Conn& c = *callers[i];
    sent[i] = release_start;
    c.busy_since = release_start;
    error_code ec;
    const std::size_t size = calls[i].release.size();
    const bool unfinished = written[j] >= 0 && static_cast<std::size_t>(written[j]) < size;
    if (written[j] == -EAGAIN || written[j] == -EINTR || unfinished) {
      const std::size_t done = written[j] > 0 ? static_cast<std::size_t>(written[j]) : 0;  // no room: block for the rest
      net::write(c.socket, net::buffer(calls[i].release.data() + done, size - done), ec);
    } else if (written[j] < 0) {
      ec = error_code(static_cast<int>(-written[j]), boost::system::system_category());
    }
    if (ec) {
      answers[i] = no_answer(c, ec, Failure::reset);
      c.stamp(answers[i]);
      attempted[i] = false;  // the request never went out whole: it cannot have bound anyone
    }
  }
  WaitGroup wg(w.ctx, static_cast<int>(std::count(attempted.begin(), attempted.end(), true)));
  for (std::size_t i = 0; i < k; ++i)
    if (attempted[i]) net::co_spawn(w.ctx, receive_into(w, *callers[i], answers[i], wg), net::detached);
  co_await wg.wait();
}

// Wakes this slot on its thread when every armed call has its outcome (the
// driver's own thread reports each); `done` is when each came.
net::awaitable<void> wait_all(Worker& w, std::vector<std::unique_ptr<calls::ArmedCall>>& armed,
                              std::vector<Clock::time_point>& done) {
  WaitGroup wg(w.ctx, static_cast<int>(armed.size()));
  for (std::size_t i = 0; i < armed.size(); ++i)
    armed[i]->when_done([&w, &wg, &done, i] {
      done[i] = Clock::now();
      net::post(w.ctx, [&wg] { wg.done(); });
    });
  co_await wg.wait();
}

// A driver without a wire (SIP): every caller's call is armed (its INVITE
// built), then all are fired together by the driver. `span`: how long the
// release took.
net::awaitable<void> fire_together(Worker& w, std::vector<std::unique_ptr<calls::ArmedCall>>& armed,
                                   std::vector<Clock::time_point>& sent, std::vector<Clock::time_point>& done,
                                   Clock::duration& span) {
  std::vector<calls::ArmedCall*> calls;
  for (auto& a : armed) calls.push_back(a.get());
  BatchSend& batch = batch_for(w, calls.size());
  const auto start = Clock::now();
  std::string how;
  span = batch.at_priority([&] { how = w.run.calls.fire_together(calls); });
  if (w.stats.race.release_path.empty()) w.stats.race.release_path = how + batch.priority();
  std::fill(sent.begin(), sent.end(), start);
  co_await wait_all(w, armed, done);
}

std::string caller_number(int slot, int caller, int callers) {
  // Distinct numbers for every caller of every slot of every shard: a binding
  // that outlives its epoch shows up as a refusal of another slot's callers.
  const long n = static_cast<long>(slot) * callers + caller;
  char buf[32];
  std::snprintf(buf, sizeof buf, "+1555%07ld", n % 10'000'000);
  return buf;
}

// One slot's connections and the buffers its rounds reuse.
struct Slot {
  Conn* control = nullptr;
  std::vector<Conn*> callers;
  std::vector<std::string> numbers;
  std::string tag_bytes;
  std::vector<calls::CallWire> calls;
  std::vector<Answer> answers;
  std::vector<Clock::time_point> sent;
  std::vector<bool> attempted;
};

Slot open_slot(Worker& w, int slot) {
  const int k = w.run.config.callers;
  Slot s;
  s.control = &w.new_conn();
  for (int i = 0; i < k; ++i) {
    if (w.run.calls.has_wire()) s.callers.push_back(&w.new_conn());  // a driver without one owns its sockets
    s.numbers.push_back(caller_number(slot, i, k));
  }
  s.tag_bytes = bytes_for(w.run, request_for(w.run.config, OpKind::tag, ""));
  const auto n = static_cast<std::size_t>(k);
  s.calls.resize(n);
  s.answers.resize(n);
  s.sent.resize(n);
  s.attempted.resize(n);
  return s;
}

// Tags an alias on the control connection: its id, or nothing after the
// pause the answer called for (every alias tagged, throttled, an error).
net::awaitable<std::optional<std::string>> tag_alias(Worker& w, Slot& s, Clock::time_point& tag_sent, Answer& tag) {
  Run& run = w.run;
  const std::uint64_t ticket = ledger_tag_sent(run);
  tag = co_await exchange(w, *s.control, s.tag_bytes, true, tag_sent);
  record(w, OpKind::tag, tag, tag_sent, tag_sent, tag_sent);
  auto alias =
      outcome_of(tag) == Outcome::ok ? tagged_alias_id(run.config.target.dialect.fields, tag.body) : std::nullopt;
  ledger_tag_done(run, ticket, tag, alias, tag_sent);
  if (all_tagged(run.config, tag.status)) {  // every alias tagged: wait for a round to end
    ++w.stats.race.tag_busy;
    co_await sleep_for(run, *s.control, std::chrono::milliseconds(2));
    co_return std::nullopt;
  }
  if (!alias) {
    w.log(make_op(run, 0, OpKind::tag, "", "", tag_sent, tag));
    co_await back_off(w, *s.control, tag);
    if (tag.status != 429) co_await sleep_for(run, *s.control, std::chrono::milliseconds(10));
  }
  co_return alias;
}

// The SIP race: the call and the recall, each fired together through the
// driver; as race_callers, with the operations sip-call and sip-recall.
net::awaitable<std::size_t> race_armed_callers(Worker& w, Slot& s, oracle::Round& round, const std::string& alias,
                                               Clock::time_point tag_sent, bool& cut_short) {
  Run& run = w.run;
  const std::size_t k = s.numbers.size();
  std::vector<Clock::time_point> done(k);
  std::size_t winners = 0;
  for (OpKind kind : {OpKind::sip_call, OpKind::sip_recall}) {
    if (kind == OpKind::sip_recall && cut_short) break;  // stopped: no new INVITE after Ctrl-C
    std::vector<std::unique_ptr<calls::ArmedCall>> armed;
    for (std::size_t i = 0; i < k; ++i) armed.push_back(run.calls.arm(alias, s.numbers[i]));
    Clock::duration span{};
    co_await fire_together(w, armed, s.sent, done, span);
    cut_short |= run.stop.load();
    for (std::size_t i = 0; i < k; ++i) {
      const auto r = armed[i]->result();
      const Answer a = answer_of(r, done[i]);
      record(w, kind, a, s.sent[i], s.sent[i], tag_sent);
      Op op = make_op(run, round.id, kind, alias, s.numbers[i], s.sent[i], a);
      oracle::read_call_outcome(op, r.outcome);  // the driver's reading of SIP statuses, not HTTP's
      round.calls.push_back(std::move(op));
      if (kind == OpKind::sip_call && r.outcome == core::CallOutcome::connected) ++winners;
    }
    if (kind == OpKind::sip_call && !cut_short && k > 0 && tag_sent >= run.measure_from && tag_sent < run.measure_until)
      w.stats.race.skew.record(std::chrono::duration_cast<std::chrono::nanoseconds>(span).count());
  }
  co_return winners;
}

// The call and the recall, each released together; returns the call's
// winners. `cut_short`: the run ended in the middle of the round.
net::awaitable<std::size_t> race_callers(Worker& w, Slot& s, oracle::Round& round, const std::string& alias,
                                         Clock::time_point tag_sent, bool& cut_short) {
  Run& run = w.run;
  for (std::size_t i = 0; i < s.calls.size(); ++i) s.calls[i] = run.calls.wire(alias, s.numbers[i]);
  std::size_t winners = 0;
  for (OpKind kind : {OpKind::call, OpKind::recall}) {
    Clock::duration span{};
    co_await release_together(w, s.callers, s.calls, s.answers, s.sent, s.attempted, span);
    bool any = false;
    for (std::size_t i = 0; i < s.answers.size(); ++i) {
      const Answer& a = s.answers[i];
      cut_short |= a.interrupted;
      if (!s.attempted[i]) {
        record(w, kind, a, a.done, a.done, tag_sent);
        continue;
      }
      any = true;
      record(w, kind, a, s.sent[i], s.sent[i], tag_sent);
      round.calls.push_back(make_op(run, round.id, kind, alias, s.numbers[i], s.sent[i], a));
      if (kind == OpKind::call && run.calls.outcome_of(a.status) == core::CallOutcome::connected) ++winners;
    }
    if (kind == OpKind::call && !cut_short && any && tag_sent >= run.measure_from && tag_sent < run.measure_until)
      w.stats.race.skew.record(std::chrono::duration_cast<std::chrono::nanoseconds>(span).count());
  }
  co_return winners;
}

// Counts a whole round (when it began in the measured window and was not cut
// short), hands it to the checker and writes it to the history.
void close_round(Worker& w, oracle::Round& round, std::size_t winners, Clock::time_point tag_sent, bool cut_short) {
  Run& run = w.run;
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
    run.add_violations(run.checker.add(round));
  }
  if (run.history.is_open()) {
    w.log(round.tag);
    for (auto& op : round.calls) w.log(op);
    w.log(*round.untag);
  }
}

}  // namespace

Answer answer_of(const calls::CallResult& r, Clock::time_point done) {
  Answer a;
  a.status = r.status;
  a.done = done;
  if (r.status == 0) {
    a.failure = Failure::timeout;
    a.error = r.evidence;
  } else if (r.outcome != core::CallOutcome::connected && r.outcome != core::CallOutcome::refused) {
    a.error = r.evidence;  // why the answer says nothing of the binding
  }
  if (r.not_now) a.retry_after = 0.0;
  return a;
}

net::awaitable<calls::CallResult> place_armed(Worker& w, const std::string& alias, const std::string& caller,
                                             Clock::time_point& sent, Clock::time_point& done) {
  std::vector<std::unique_ptr<calls::ArmedCall>> armed;
  armed.push_back(w.run.calls.arm(alias, caller));
  std::vector<Clock::time_point> dones(1);
  sent = Clock::now();
  armed[0]->fire();
  co_await wait_all(w, armed, dones);
  done = dones[0];
  co_return armed[0]->result();
}

net::awaitable<void> race_slot(Worker& w, int slot) {
  Run& run = w.run;
  const auto& cfg = run.config;
  Slot s = open_slot(w, slot);
  for (auto* c : s.callers) co_await ensure_open(w, *c);  // pre-open: the race starts warm
  const std::int64_t lifetime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.target.minute).count() * cfg.effective_tag_minutes();
  while (!run.over()) {
    Clock::time_point tag_sent;
    Answer tag;
    auto alias = co_await tag_alias(w, s, tag_sent, tag);
    if (!alias) continue;
    oracle::Round round;
    round.id = run.round_ids.fetch_add(1, std::memory_order_relaxed) + 1;
    round.lifetime_ns = lifetime_ns;
    round.tag = make_op(run, round.id, OpKind::tag, *alias, "", tag_sent, tag);
    bool cut_short = false;  // the run ended in the middle of the round: it says nothing of the race
    const std::size_t winners = run.calls.has_wire()
                                    ? co_await race_callers(w, s, round, *alias, tag_sent, cut_short)
                                    : co_await race_armed_callers(w, s, round, *alias, tag_sent, cut_short);

    Clock::time_point untag_sent;
    const std::string untag_bytes = bytes_for(run, request_for(cfg, OpKind::untag, *alias));
    Answer untag = co_await exchange(w, *s.control, untag_bytes, false, untag_sent);
    record(w, OpKind::untag, untag, untag_sent, untag_sent, tag_sent);
    round.untag = make_op(run, round.id, OpKind::untag, *alias, "", untag_sent, untag);
    ledger_untag_done(run, *round.untag);
    close_round(w, round, winners, tag_sent, cut_short);
  }
  --w.active;
}

}  // namespace crh::loadgen::engine
