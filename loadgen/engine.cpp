// The load run (DESIGN.md §6): one io_context per thread, each thread with
// its own connections and statistics, merged at the end; progress for
// whoever watches; and the validity verdict of the figures. The scenarios
// and the I/O are in the files engine_parts.hpp lists.
#include "loadgen/engine.hpp"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <time.h>

#include "calls/call_drivers.hpp"
#include "loadgen/engine_parts.hpp"

namespace crh::loadgen {

std::string_view to_string(Scenario s) {
  switch (s) {
    case Scenario::race: return "race";
    case Scenario::mixed: return "mixed";
    case Scenario::get: return "get";
  }
  return "?";
}

namespace {
using namespace engine;

std::int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
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

using Workers = std::vector<std::unique_ptr<Worker>>;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("?");
}

std::int64_t unix_ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Sleeps until `t` on the wall clock (the one shards on several hosts share):
// in steps of at most 100 ms (so Ctrl-C is heard), then an absolute sleep on
// CLOCK_REALTIME to 200 µs before it, then spinning. The spin is short so that
// shards sharing a core do not hold each other back. Returns false when `t`
// had already passed; stops early when asked.
bool wait_until(std::chrono::system_clock::time_point t, const std::atomic<bool>& stop) {
  using std::chrono::system_clock;
  if (system_clock::now() >= t) return false;
  const auto spin = std::chrono::microseconds(200);
  while (!stop.load() && system_clock::now() < t - spin) {
    const auto until = std::min(t - spin, system_clock::now() + std::chrono::milliseconds(100));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count();
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    ::clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr);
  }
  while (!stop.load() && system_clock::now() < t) {
  }
  return true;
}

// The schedule of an open-loop run: each connection sends one request per
// interval, so that all of them together reach the asked rate.
struct Schedule {
  bool open_loop = false;
  Clock::duration interval = Clock::duration::zero();
};

// A coroutine per connection (or race slot), spread over the threads; each
// thread builds its own requests once.
void spawn_connections(Run& run, Workers& workers, int connections, const Schedule& schedule, std::vector<Mix>& mixes,
                       std::vector<Prepared>& singles) {
  const int threads = static_cast<int>(workers.size());
  for (int i = 0; i < connections; ++i) {
    Worker& w = *workers[static_cast<std::size_t>(i % threads)];
    ++w.active;
    if (run.config.scenario == Scenario::race) {
      net::co_spawn(w.ctx, race_slot(w, run.first_slot + i), net::detached);
      continue;
    }
    const Mix* mix = nullptr;
    const Prepared* single = nullptr;
    if (run.config.scenario == Scenario::mixed) {
      auto& m = mixes[static_cast<std::size_t>(w.index)];
      if (m.variants.empty()) m = prepare_mix(run);
      mix = &m;
    } else {
      auto& s = singles[static_cast<std::size_t>(w.index)];
      if (s.bytes.empty()) s = {OpKind::get, bytes_for(run, request_for(run.config, OpKind::get, "")), false};
      single = &s;
    }
    // Spread the connections' first due times over one interval.
    const auto first_due =
        run.start + (schedule.open_loop ? schedule.interval * i / connections : Clock::duration::zero());
    net::co_spawn(w.ctx, connection_loop(w, w.new_conn(), mix, single, schedule.interval, first_due), net::detached);
  }
}

// Runs every thread to its end, updating `progress` meanwhile; the workers
// never wait for it.
void run_threads(Run& run, Workers& workers, Progress& progress) {
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
  std::atomic<int> finished{0};
  std::thread waiter([&] {
    for (auto& t : pool) t.join();
    finished = 1;
  });
  Clock::time_point stop_seen{};
  bool settled = false;
  while (!finished.load()) {
    // Calls without a wire (SIP) have no connection the watchdog can cut: a
    // stop's grace over, the driver ends those still pending (CANCEL), so
    // Ctrl-C does not wait out Timer B and the target is left as found.
    if (!settled && run.stop.load()) {
      if (stop_seen == Clock::time_point{}) stop_seen = Clock::now();
      if (Clock::now() - stop_seen >= kStopGrace) {
        run.calls.settle();
        settled = true;
      }
    }
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
}

// Why the figures may measure the generator rather than the target.
void judge_validity(LoadResult& result, double rate, const Schedule& schedule, std::uint64_t completed,
                    std::uint64_t achieved) {
  if (result.generator_cpu >= 0.95)
    result.invalid.push_back("a generator thread was busy " +
                             std::to_string(static_cast<int>(result.generator_cpu * 100)) +
                             "% of the time: the figures may measure the generator; add --threads or lower the load");
  if (schedule.open_loop && completed > 0) {
    const double late_share =
        static_cast<double>(result.stats.late) / static_cast<double>(std::max<std::uint64_t>(1, achieved));
    if (result.achieved_rate < 0.95 * rate && late_share > 0.05)
      result.invalid.push_back("behind schedule: " + std::to_string(static_cast<int>(late_share * 100)) +
                               "% of requests were sent more than one interval late while the rate reached " +
                               std::to_string(static_cast<long>(result.achieved_rate)) + " of " +
                               std::to_string(static_cast<long>(rate)) +
                               "/s; add --connections so that slow answers do not hold the schedule back");
  }
}

// The threads' statistics merged, the rates and the validity verdict.
LoadResult collect(Run& run, Workers& workers, const Schedule& schedule, Clock::time_point ended, bool interrupted,
                   double rate) {
  const auto& config = run.config;
  LoadResult result;
  std::int64_t busiest_cpu = 0;
  for (auto& w : workers) {
    busiest_cpu = std::max(busiest_cpu, w->stats.cpu_ns);
    result.stats.merge(w->stats);
    result.outages.timeline.merge(w->outages.timeline);  // up anywhere is up: see outage.hpp
    result.outages.back_offs += w->outages.back_offs;
    result.outages.back_off_s += w->outages.back_off_s;
    if (config.keep_client_exchanges) {
      auto& conns = result.client_connections;
      conns.insert(conns.end(), w->client_connections.begin(), w->client_connections.end());
      auto& exchanges = result.client_exchanges;
      exchanges.insert(exchanges.end(), w->client_exchanges.begin(), w->client_exchanges.end());
    }
  }
  result.stats.coarsen(Stats::kMaxSeriesPoints);
  run.history.close();
  result.history_ops = run.history.written();
  result.violation_count = run.violation_count;
  result.violations = std::move(run.violations);
  result.interrupted = interrupted;
  const auto measured_end = std::min(ended, run.measure_until);
  result.wall_s = std::max(0.0, std::chrono::duration<double>(measured_end - run.measure_from).count());
  std::uint64_t completed = 0;
  for (const auto& s : result.stats.ops) completed += s.count();
  // Open loop: the rate of the schedule's own requests, comparable with the asked rate.
  const auto achieved = schedule.open_loop ? result.stats.scheduled : completed;
  result.achieved_rate = result.wall_s > 0 ? static_cast<double>(achieved) / result.wall_s : 0;
  result.intended_rate = schedule.open_loop ? rate : 0;
  const double run_s = std::chrono::duration<double>(ended - run.start).count();
  result.generator_cpu = run_s > 0 ? static_cast<double>(busiest_cpu) / 1e9 / run_s : 0;

  result.connections_opened = run.connected.load();
  if (run.connected.load() == 0)
    throw std::runtime_error("no connection to " + config.target.base.to_string() + " could be opened");
  judge_validity(result, rate, schedule, completed, achieved);
  return result;
}

}  // namespace

LoadResult run_load(const LoadConfig& config, const Discovery& discovery, Progress& progress) {
  net::io_context resolve_ctx;
  tcp::resolver resolver(resolve_ctx);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(config.target.base.host, config.target.base.port, ec);
  if (ec) throw std::runtime_error("cannot resolve " + config.target.base.host + ": " + ec.message());

  auto calls = calls::make_call_driver(config.target, config.statuses, core::ClientConfig{.timeout = config.timeout});
  Run run(config, discovery, endpoints, progress.stop, *calls);
  if (!config.history_file.empty()) run.history.open(config.history_file);
  const int threads = std::max(1, config.threads);
  const int whole = default_connections(config, discovery);
  const Share share = share_of(whole, config.shard);
  if (share.count == 0)
    throw std::runtime_error("shard " + std::to_string(config.shard.index) + "/" + std::to_string(config.shard.count) +
                             " has no part of the load's " + std::to_string(whole) +
                             (config.scenario == Scenario::race ? " rounds in flight" : " connections") +
                             ": give --connections at least the number of shards");
  const int connections = share.count;
  run.first_slot = share.first;
  const double rate = rate_share(config.rate, whole, config.shard);
  Workers workers;
  for (int i = 0; i < threads; ++i) workers.push_back(std::make_unique<Worker>(run, i));

  ShardRecord record{.shard = config.shard, .run_id = config.run_id, .host = host_name(), .clock = read_clock_source()};
  if (config.start_at) {
    record.planned_unix_ns = unix_ns(*config.start_at);
    // Warm-up, if any, runs just before the instant, so measuring starts at it.
    record.late = !wait_until(*config.start_at - config.warmup, progress.stop);
  }
  run.start = Clock::now();
  record.started_unix_ns = unix_ns(std::chrono::system_clock::now() + config.warmup);
  run.measure_from = run.start + config.warmup;
  run.measure_until = run.measure_from + config.duration;
  run.hard_end = run.measure_until + config.timeout;
  Schedule schedule;
  schedule.open_loop = rate > 0 && config.scenario != Scenario::race;
  if (schedule.open_loop)
    schedule.interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(connections / rate));

  std::vector<Mix> mixes(static_cast<std::size_t>(threads));
  std::vector<Prepared> singles(static_cast<std::size_t>(threads));
  spawn_connections(run, workers, connections, schedule, mixes, singles);
  run_threads(run, workers, progress);
  calls->settle();  // calls still pending ended, late answers closed: the target left as found
  const auto ended = Clock::now();
  HistoryJudgement judgement;
  if (config.scenario == Scenario::mixed) judge_mixed(run, workers, judgement);
  auto result = collect(run, workers, schedule, ended, progress.stop.load(), rate);
  result.judgement = std::move(judgement);
  result.connections = connections;
  if (config.shard.sharded() || config.start_at) {
    record.connections = connections;
    record.rate = schedule.open_loop ? rate : 0;
    record.achieved_rate = result.achieved_rate;
    for (const auto& s : result.stats.ops) record.requests += s.count();
    result.shards.push_back(std::move(record));
  }
  return result;
}

}  // namespace crh::loadgen
