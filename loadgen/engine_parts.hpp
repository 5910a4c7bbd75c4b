// The load engine's parts, private to loadgen/ (DESIGN.md §6): the types a
// run shares between its files, and the steps each file defines.
//   connections.cpp  connections and I/O: connect, send, read by a deadline, the watchdog
//   recording.cpp    what an answer counts as, in the statistics and the history
//   traffic.cpp      the get and mixed scenarios: a coroutine per connection
//   mixed_history.cpp  the mixed load's reads and writes, judged after the run
//   race.cpp         the race: a coroutine per slot, callers released together
//   engine.cpp       the run: threads, progress, the result and its validity
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "calls/call_driver.hpp"
#include "core/http.hpp"
#include "core/http1.hpp"
#include "loadgen/batch_send.hpp"
#include "loadgen/engine.hpp"
#include "loadgen/history.hpp"
#include "loadgen/tag_ledger.hpp"

namespace crh::loadgen::engine {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
// Every awaited operation of the engine answers (error, result) instead of throwing.
inline constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
using core::http1::ResponseReader;
// The history's vocabulary, which every step of the engine speaks.
using oracle::Op;
using oracle::OpKind;
using oracle::Outcome;

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
  unsigned status = 0;       // 0: no answer, see failure
  bool interrupted = false;  // no answer because the run ended first (see Cut)
  Failure failure = Failure::reset;
  std::string error;  // why there was no answer, for the history
  std::string body;   // only when asked for
  std::optional<double> retry_after;
  Clock::time_point done;
  // The request's connection (Conn::serial; 0: never written) and its place
  // on it, for pairing with a capture (LoadConfig::keep_client_exchanges).
  std::uint64_t conn = 0;
  std::uint32_t order = 0;
  std::uint64_t offset = 0;  // bytes written on the connection before this request
};

struct Conn {
  explicit Conn(net::io_context& ctx) : socket(ctx), timer(ctx) {}
  tcp::socket socket;
  net::steady_timer timer;  // open-loop pacing and back-off
  std::string in = std::string(64 * 1024, '\0');
  std::size_t in_begin = 0, in_end = 0;
  ResponseReader reader;
  Clock::time_point busy_since{};  // set while a request is under way; the watchdog reads it
  Cut cut = Cut::none;             // set when the request was ended early (the socket is closed)
  // For pairing with a capture: the open connection's run-unique serial (a
  // reconnect takes a new one), and the order of requests written on it.
  std::uint64_t serial = 0;
  std::uint32_t next_order = 0;     // the order the next request written gets
  std::uint32_t request_order = 0;  // the order of the request under way
  std::uint64_t written = 0;         // request bytes written on the connection so far
  std::uint64_t request_offset = 0;  // where the request under way starts in them

  // A request of `size` bytes starts being written: it takes the next place
  // on the connection, and the next `size` bytes of its client-to-server stream.
  void begin_request(std::size_t size) {
    request_order = next_order++;
    request_offset = written;
    written += size;
  }
  // Names the connection and place of the request `a` answers.
  void stamp(Answer& a) const {
    a.conn = serial;
    a.order = request_order;
    a.offset = request_offset;
  }
};

// Shared by every thread: the run's clock, the checker, the history.
struct Run {
  Run(const LoadConfig& c, const Discovery& d, tcp::resolver::results_type e, std::atomic<bool>& s,
      calls::CallDriver& k)
      : config(c), discovery(d), endpoints(std::move(e)), stop(s), calls(k) {}
  const LoadConfig& config;
  const Discovery& discovery;
  tcp::resolver::results_type endpoints;
  Clock::time_point start, measure_from, measure_until;
  Clock::time_point hard_end;  // measure_until + timeout: no request outlives it
  int first_slot = 0;          // the shard's first race slot (connection) of the whole load
  std::atomic<bool>& stop;
  calls::CallDriver& calls;  // the race's calls: their bytes (HTTP) or armed calls (SIP), what an answer means
  std::atomic<std::uint64_t> round_ids{0};
  std::atomic<std::uint64_t> connected{0};
  std::atomic<std::uint64_t> connection_serials{0};
  // mixed: operations kept to judge (Worker::judged) and, once there are
  // LoadConfig::max_judged_ops, the time from which reads are not judged.
  std::atomic<std::uint64_t> judged_ops{0};
  std::atomic<std::int64_t> judge_until{std::numeric_limits<std::int64_t>::max()};

  std::mutex mutex;  // guards the checker, the ledger and the violations
  oracle::Checker checker;
  TagLedger ledger;  // tags refused as "every alias tagged", against the load's own tags
  std::uint64_t violation_count = 0;
  std::vector<oracle::Violation> violations;
  HistoryWriter history;

  // Whether the ledger judges refused tags: only when the load can take itself
  // for the channel's only tagging client (Discovery::all_tagged_unjudged).
  bool judges_refusals() const { return discovery.all_tagged_unjudged.empty(); }
  // Counts and keeps violations; the mutex is held.
  void add_violations(std::vector<oracle::Violation> found) {
    for (auto& v : found) {
      ++violation_count;
      if (violations.size() < config.max_violations_kept) violations.push_back(std::move(v));
    }
  }

  std::int64_t ns(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start).count();
  }
  std::int64_t since_measuring(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - measure_from).count();
  }
  bool over() const { return stop.load(std::memory_order_relaxed) || Clock::now() >= measure_until; }
};

struct Worker {
  // Unsharded, shard 0's sequences: a shard's own seed keeps the shards' mixes apart.
  Worker(Run& r, int i)
      : run(r),
        index(i),
        rng(r.config.seed * 7919 + static_cast<std::uint64_t>(r.config.shard.index) * 65'537 +
            static_cast<std::uint64_t>(i)) {}
  Run& run;
  int index;
  net::io_context ctx{1};
  std::deque<Conn> conns;  // stable addresses for the watchdog
  int active = 0;          // connection coroutines still running
  Stats stats;
  OutageReport outages;     // this thread's answers as up and down, its back-off
  std::vector<Op> history;  // flushed to the file in batches
  std::vector<Op> judged;   // mixed: reads and writes of the key and agents, judged after the run
  std::uint64_t value_serial = 0;  // mixed: makes each database value this thread writes its own
  std::mt19937_64 rng;
  alignas(64) std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> rounds{0};
  Clock::time_point stop_seen{};  // when this thread first saw Progress::stop
  // LoadConfig::keep_client_exchanges: this thread's connections and requests.
  std::vector<core::ClientConnection> client_connections;
  std::vector<core::ClientExchange> client_exchanges;
  std::unique_ptr<BatchSend> batch;  // the race: a round's last bytes in one submission, made at the first round

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

// ---- connections.cpp: connections and I/O

void close(Conn& c);
// Opens the connection if it is not; false when that failed.
net::awaitable<bool> ensure_open(Worker& w, Conn& c);
// `why` unless the request was cut short: then the cut says why.
Answer no_answer(Conn& c, const boost::system::error_code& ec, Failure why);
// Bytes nobody asked for: `bytes` of them, after a whole answer or on an
// idle connection. Closes the connection; an error of the target.
Answer unsolicited(Conn& c, std::size_t bytes, bool after_answer);
// Before a request is written on an open connection: bytes already waiting
// are unsolicited (their Answer, the connection closed). A 408 before an idle
// close is not: the connection is just closed. Nothing when it is quiet.
std::optional<Answer> check_idle(Conn& c);
// Reads one answer; the request has been sent.
net::awaitable<Answer> receive(Worker& w, Conn& c, bool keep_body);
// Connects if needed, sends `bytes` whole and reads the answer.
net::awaitable<Answer> exchange(Worker& w, Conn& c, std::string_view bytes, bool keep_body, Clock::time_point& sent);
// Pacing and back-off: never past the measured time, never once the run is over.
net::awaitable<void> sleep_for(const Run& run, Conn& c, Clock::duration d);
// After a 429 the pause the target asked for; after a failed connect, a short one.
// The pauses after a failed connect are counted in the worker's OutageReport.
net::awaitable<void> back_off(Worker& w, Conn& c, const Answer& a);
// Ends requests past their deadline and the sleeps of a stopped run.
net::awaitable<void> watchdog(Worker& w);

// ---- recording.cpp: what an answer counts as

Outcome outcome_of(const Answer& a);
// A "not now": an HTTP 429 the profile gives no other meaning
// (core::throttled), or a SIP 503 that said when to come back. Counted on its
// own, never an error; the HTTP one took no effect (Op::not_now).
bool throttled(const LoadConfig& c, OpKind op, const Answer& a);
// An error of the target: no answer, a 5xx, any status but 200 (rule C2) that
// is not a refusal the profile expects for `op` (a throttled 429 is not one).
bool is_error(const LoadConfig& c, OpKind op, const Answer& a);
// Whether an answer shows the target up or down, for outages (outage.hpp says which is which).
enum class Liveness : std::uint8_t { up, down, neither };
Liveness liveness(const LoadConfig& c, OpKind op, const Answer& a);
// The answer to a tag that says every alias is tagged (the profile's statuses).
bool all_tagged(const LoadConfig& c, unsigned status);
// Counts one operation if `counted_at` is inside the measured window (and,
// when asked, keeps its client record for pairing with a capture).
void record(Worker& w, OpKind op, const Answer& a, Clock::time_point due, Clock::time_point sent,
            Clock::time_point counted_at);
Op make_op(const Run& run, std::uint64_t round, OpKind kind, std::string alias, std::string caller,
           Clock::time_point invoke, const Answer& a);
// The ledger's side of a tag (loadgen/tag_ledger.hpp): a ticket before it is
// sent (0 when refusals are not judged), then its answer and the alias it
// returned (nothing when none could be read), and an untag's answer.
std::uint64_t ledger_tag_sent(Run& run);
void ledger_tag_done(Run& run, std::uint64_t ticket, const Answer& a, const std::optional<std::string>& alias,
                     Clock::time_point sent);
void ledger_untag_done(Run& run, const Op& untag);

// ---- race.cpp: calls through a driver without a wire (SIP)

// Places one call through the driver and waits for it without blocking the
// thread; `sent` and `done` are when it was fired and when its outcome came.
net::awaitable<calls::CallResult> place_armed(Worker& w, const std::string& alias, const std::string& caller,
                                             Clock::time_point& sent, Clock::time_point& done);
// What a driver's call result counts as in the statistics (its reading in the
// history is oracle::read_call_outcome).
Answer answer_of(const calls::CallResult& r, Clock::time_point done);

// ---- traffic.cpp: requests, and the get and mixed scenarios

// The request of `op` through the API model; `id` is what it addresses.
inline constexpr std::string_view kMixedCaller = "+15550000000";  // who places the mixed load's calls
core::HttpRequest request_for(const LoadConfig& c, OpKind op, const std::string& id,
                              const std::string& caller = std::string(kMixedCaller),
                              std::string_view value = kLoadDatabaseValue);
std::string bytes_for(const Run& run, const core::HttpRequest& r);

// A request ready to send, built once.
struct Prepared {
  OpKind op;
  std::string bytes;
  bool keep_body = false;  // tag: its alias is needed to untag it; mixed reads and writes: judged
  std::string id;          // the agent, key or alias addressed
};

struct Mix {
  std::vector<std::vector<Prepared>> variants;           // per mix entry, e.g. one get-agent per agent
  mutable std::discrete_distribution<std::size_t> pick;  // holds no state between calls
};

Mix prepare_mix(const Run& run);
// One connection's loop: `single` (get) or a pick from `mix`, closed loop or
// one request per `interval` from `first_due`.
net::awaitable<void> connection_loop(Worker& w, Conn& c, const Mix* mix, const Prepared* single,
                                     Clock::duration interval, Clock::time_point first_due);

// ---- mixed_history.cpp: the mixed load's history judged

// A database write's bytes with a value of its own (so a read names the write
// that left it): built per write, the one request the mix does not reuse.
std::string unique_write(Worker& w, const Prepared& p, std::string& value);
// Names in `op` the key or agent of a read or write and the value written
// (`written`) or read, and keeps it for judging unless the recording has stopped.
void note_mixed(Worker& w, const Prepared& p, const Answer& a, const std::string& written, Op& op);
// A tag of the mix and its untag, judged at once against the mix's other
// tags (alias tagged twice).
void note_mixed_tag(Run& run, const Op& tag, const Op& untag);
// After the threads: judges the reads of every register, adds the violations.
void judge_mixed(Run& run, const std::vector<std::unique_ptr<Worker>>& workers, HistoryJudgement& out);

// ---- race.cpp

// One race slot: a control connection tags, `config.callers` callers race.
// `slot`: its place in the whole load (all threads, all shards), which makes
// its callers' numbers distinct from every other slot's.
net::awaitable<void> race_slot(Worker& w, int slot);

}  // namespace crh::loadgen::engine
