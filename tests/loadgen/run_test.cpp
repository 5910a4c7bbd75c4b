// Whole load runs against the in-process reference service: the race finds
// no violation on a correct service and finds them on a racy one every run;
// the schedulers, the mix, the history, the thresholds and the document. And
// against hostile targets: every run ends by its deadline whatever they send.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <thread>

#include "core/histogram.hpp"
#include "loadgen/engine.hpp"
#include "loadgen/result.hpp"
#include "loadgen/setup.hpp"
#include "reference/server.hpp"
#include "support/scripted_server.hpp"

namespace crh::loadgen::run_test {
namespace {
using oracle::OpKind;
using oracle::Outcome;
using oracle::ViolationKind;

using namespace std::chrono_literals;
namespace json = boost::json;

constexpr const char* kKey = "load-test-key-5b21";

class LoadRun : public ::testing::Test {
 protected:
  void start(reference::FaultSet faults = {}, std::chrono::milliseconds minute = 60s, int aliases = 32) {
    reference::ServerConfig server;
    server.threads = 2;
    server.service.api_key = kKey;
    server.service.faults = faults;
    server.service.minute = minute;
    server.fixtures = reference::default_fixtures(2, aliases);
    server_ = std::make_unique<reference::Server>(std::move(server));
    server_->start();
    std::string why;
    config_.target.base = *core::parse_base_url(server_->base_url(), why);
    config_.target.api_key = kKey;
    config_.target.minute = minute;
    config_.duration = 500ms;
    config_.connections = 4;
    config_.callers = 6;
  }

  static reference::FaultSet fault(reference::Fault f) {
    reference::FaultSet s;
    s.add(f);
    return s;
  }

  LoadResult run() {
    FoundState found;
    Discovery d = discover(config_, found);
    Progress progress;
    LoadResult r = run_load(config_, d, progress);
    EXPECT_TRUE(restore(config_, found).empty());
    return r;
  }

  const OpStats& op(const LoadResult& r, OpKind k) { return r.stats.ops[static_cast<std::size_t>(k)]; }

  std::unique_ptr<reference::Server> server_;
  LoadConfig config_;
};

TEST_F(LoadRun, RaceOnTheReferenceServiceHasOneWinnerPerRoundAndNoViolation) {
  start();
  auto r = run();
  EXPECT_EQ(r.violation_count, 0u);
  ASSERT_GT(r.stats.race.rounds, 10u);
  ASSERT_GE(r.stats.race.winners.size(), 2u);
  EXPECT_EQ(r.stats.race.winners[1], r.stats.race.rounds) << "every round has exactly one winner";
  EXPECT_EQ(r.stats.race.skew.count(), r.stats.race.rounds);
  const auto& call = op(r, OpKind::call);
  EXPECT_EQ(call.count(), r.stats.race.rounds * 6);
  EXPECT_EQ(call.refusals, r.stats.race.rounds * 5) << "the five losers of each round are refused";
  EXPECT_EQ(call.errors, 0u);
  EXPECT_EQ(op(r, OpKind::recall).statuses[200], r.stats.race.rounds) << "the winner calls again and connects";
  EXPECT_EQ(op(r, OpKind::untag).errors, 0u);
}

TEST_F(LoadRun, RaceCatchesTheRacyBindEveryRun) {
  start(fault(reference::Fault::binding_racy));
  config_.duration = 300ms;
  for (int i = 0; i < 3; ++i) {
    auto r = run();
    EXPECT_GT(r.violation_count, 0u) << "run " << i;
    ASSERT_FALSE(r.violations.empty());
    EXPECT_EQ(r.violations.front().kind, ViolationKind::two_winners);
    EXPECT_EQ(r.violations.front().proof.size(), 2u);
  }
}

TEST_F(LoadRun, RaceCatchesTheLastCallerTakingOverEveryRun) {
  start(fault(reference::Fault::binding_last_caller));
  config_.duration = 300ms;
  for (int i = 0; i < 3; ++i) {
    auto r = run();
    EXPECT_GT(r.violation_count, 0u) << "run " << i;
  }
}

TEST_F(LoadRun, TagsThatNeverExpireAreNotFlaggedWithinTheLifetime) {
  start(fault(reference::Fault::expiry_never));
  EXPECT_EQ(run().violation_count, 0u);
}

TEST_F(LoadRun, TagsExpiringMidRoundAreNotFlagged) {
  // One tag minute of 2 ms: some rounds outlive their tag, and a call after
  // the expiry connects any caller. The checker must not judge those calls.
  start({}, 2ms);
  config_.tag_minutes = 1;
  auto r = run();
  EXPECT_EQ(r.violation_count, 0u);
  EXPECT_GT(r.stats.race.rounds, 0u);
}

TEST_F(LoadRun, ClosedLoopGetCountsEveryAnswer) {
  start();
  config_.scenario = Scenario::get;
  config_.path = "/api/v1/local-agents/101";
  auto r = run();
  const auto& get = op(r, OpKind::get);
  EXPECT_GT(get.count(), 100u);
  EXPECT_EQ(get.statuses[200], get.count());
  EXPECT_EQ(get.errors, 0u);
  EXPECT_GT(r.achieved_rate, 0);
  EXPECT_EQ(r.intended_rate, 0);
  EXPECT_NEAR(r.wall_s, 0.5, 0.2);
}

TEST_F(LoadRun, GetWithoutTheKeyCountsRefusalsAsErrors) {
  start();
  config_.scenario = Scenario::get;
  config_.target.api_key = "";
  auto r = run();
  const auto& get = op(r, OpKind::get);
  EXPECT_GT(get.statuses[401], 0u);
  EXPECT_EQ(get.errors, get.count());
}

TEST_F(LoadRun, OpenLoopKeepsTheAskedRate) {
  start();
  config_.scenario = Scenario::get;
  config_.rate = 1000;
  config_.duration = 1000ms;
  auto r = run();
  EXPECT_EQ(r.intended_rate, 1000);
  EXPECT_NEAR(r.achieved_rate, 1000, 100);
  EXPECT_TRUE(r.invalid.empty()) << r.invalid.front();
}

TEST_F(LoadRun, OpenLoopMeasuresFromTheDueTimeSoAStallCannotHide) {
  // A tag takes 20 ms; one connection asked for 200 tags a second falls
  // behind: latency from the due time grows, latency from the send does not.
  start(fault(reference::Fault::slow_tag));
  config_.scenario = Scenario::mixed;
  config_.mix = {{OpKind::tag, 1}};
  config_.connections = 1;
  config_.rate = 200;
  config_.duration = 600ms;
  auto r = run();
  const auto& tag = op(r, OpKind::tag);
  core::Histogram corrected;
  for (const auto& h : tag.latency) corrected.merge(h);
  ASSERT_GT(tag.count(), 5u);
  EXPECT_GT(corrected.quantile(0.99), 3 * tag.uncorrected.quantile(0.99));
  EXPECT_LT(r.achieved_rate, 100);
  ASSERT_FALSE(r.invalid.empty());
  EXPECT_NE(r.invalid.back().find("behind schedule"), std::string::npos);
}

TEST_F(LoadRun, MixedTouchesEveryEndpointAndPutsTheTargetBack) {
  start();
  config_.scenario = Scenario::mixed;
  config_.mix = {{OpKind::list_agents, 1},  {OpKind::get_agent, 1}, {OpKind::snooze, 1},
                 {OpKind::wake, 1},         {OpKind::db_get, 1},    {OpKind::db_set, 1},
                 {OpKind::list_aliases, 1}, {OpKind::tag, 1},       {OpKind::call, 1}};
  FoundState before;
  discover(config_, before);  // it writes the key the mix reads: undo that first
  ASSERT_TRUE(restore(config_, before).empty());
  auto r = run();
  for (auto k : {OpKind::list_agents, OpKind::get_agent, OpKind::snooze, OpKind::wake, OpKind::db_set,
                 OpKind::list_aliases, OpKind::tag, OpKind::untag, OpKind::call}) {
    EXPECT_GT(op(r, k).count(), 0u) << to_string(k);
    EXPECT_EQ(op(r, k).errors, 0u) << to_string(k);
  }
  FoundState after;
  discover(config_, after);
  EXPECT_EQ(after.agent_states, before.agent_states);
  EXPECT_EQ(after.database_value.value_or(""), before.database_value.value_or(""));
  EXPECT_EQ(op(r, OpKind::db_get).errors, 0u) << "the key the mix reads exists";
}

// A restore it cannot see done is a problem, never silence: here the profile
// names a state field the target does not have, so no agent's state can be
// compared, and the snoozes of the run would otherwise stay unnoticed.
TEST_F(LoadRun, ARestoreThatCannotBeVerifiedIsReportedAsNotDone) {
  start();
  config_.scenario = Scenario::mixed;
  config_.target.dialect.fields.agent_state = "no-such-field";
  FoundState before;
  discover(config_, before);
  const auto problems = restore(config_, before);
  ASSERT_EQ(problems.size(), before.agent_states.size());
  for (const auto& p : problems) EXPECT_NE(p.find("no field \"no-such-field\""), std::string::npos) << p;
}

TEST_F(LoadRun, HistoryHoldsEveryOperationOfTheRaceAsJsonLines) {
  start();
  const std::string path = ::testing::TempDir() + "crh-history-test.jsonl";
  config_.history_file = path;
  config_.duration = 200ms;
  auto r = run();
  std::ifstream in(path);
  std::string line;
  std::uint64_t lines = 0, calls = 0, tags = 0;
  while (std::getline(in, line)) {
    ++lines;
    auto v = json::parse(line).as_object();
    ASSERT_TRUE(v.contains("invoke_ns") && v.contains("complete_ns") && v.contains("outcome")) << line;
    EXPECT_LE(v.at("invoke_ns").as_int64(), v.at("complete_ns").as_int64()) << line;
    calls += v.at("op").as_string() == "call";
    tags += v.at("op").as_string() == "tag";
  }
  EXPECT_EQ(lines, r.history_ops);
  EXPECT_GT(tags, 0u);
  EXPECT_EQ(calls, tags * 6);
  std::remove(path.c_str());
}

TEST_F(LoadRun, ThresholdsGateTheExitCode) {
  start();
  config_.duration = 200ms;
  auto r = run();
  auto verdicts = evaluate(parse_thresholds({"violations==0", "call.p99<1ns", "errors<0.1%", "rounds>0"}), r);
  ASSERT_EQ(verdicts.size(), 6u) << "and the default outage limits";
  EXPECT_TRUE(verdicts[4].held) << verdicts[4].threshold.text;
  EXPECT_TRUE(verdicts[5].held) << verdicts[5].threshold.text;
  EXPECT_TRUE(verdicts[0].held);
  EXPECT_FALSE(verdicts[1].held) << "no call answers in under a nanosecond";
  EXPECT_TRUE(verdicts[2].held);
  EXPECT_TRUE(verdicts[3].held);
  EXPECT_EQ(exit_code_of(r, verdicts), 1);
  verdicts.erase(verdicts.begin() + 1);
  EXPECT_EQ(exit_code_of(r, verdicts), 0);
  EXPECT_THROW(parse_thresholds({"dial.p99<2ms"}), std::invalid_argument) << "no such operation";
}

TEST_F(LoadRun, ResultDocumentHistogramsRebuildTheFigures) {
  start();
  config_.duration = 300ms;
  auto r = run();
  auto doc = result_document(config_, r, {}, {});
  EXPECT_EQ(doc.at("schema").as_string(), "crh.result");
  EXPECT_EQ(doc.at("kind").as_string(), "load");
  const auto& call = doc.at("operations").at("call");
  auto h = core::Histogram::from_json(call.at("latency").at("histogram"));
  EXPECT_EQ(h.count(), op(r, OpKind::call).count());
  EXPECT_EQ(h.quantile(0.99), call.at("latency").at("p99_ns").to_number<std::int64_t>());
  std::uint64_t per_second = 0;
  for (const auto& s : doc.at("series").as_array()) per_second += s.at("requests").to_number<std::uint64_t>();
  std::uint64_t total = 0;
  for (const auto& s : r.stats.ops) total += s.count();
  EXPECT_EQ(per_second, total);
  EXPECT_EQ(doc.at("race").at("violation_count").to_number<int>(), 0);
  EXPECT_EQ(json::serialize(doc).find(kKey), std::string::npos) << "the key never reaches the document";
}

TEST_F(LoadRun, SetupNamesWhatIsMissing) {
  start();
  config_.target.dialect.call_hook.path = "/no/such/hook/{alias}";
  FoundState found;
  try {
    discover(config_, found);
    FAIL() << "a target without the call hook must not race";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("call hook"), std::string::npos) << e.what();
  }
  config_.target.dialect.call_hook = {};
  config_.target.api_key = "wrong";
  EXPECT_THROW(discover(config_, found), SetupError);
  server_->stop();
  config_.target.api_key = kKey;
  EXPECT_THROW(discover(config_, found), SetupError);
}

// Issue 35: an answer set-up cannot use is named with its request, what was
// looked for and the profile field to set, before anything is measured.
TEST_F(LoadRun, SetupNamesTheRequestItCouldNotUseAndTheProfileField) {
  start();
  const std::string base = config_.target.base.to_string();
  auto message = [&]() -> std::string {
    FoundState found;
    try {
      discover(config_, found);
    } catch (const SetupError& e) {
      return e.what();
    }
    return "(no set-up error)";
  };
  config_.target.dialect.call_hook.path = "/no/such/hook/{alias}";
  std::string m = message();
  EXPECT_NE(m.find("POST " + base + "/no/such/hook/"), std::string::npos) << m;
  EXPECT_NE(m.find("call_hook.method, .path and .parameter"), std::string::npos) << m;
  config_.target.dialect.call_hook = {};

  // Alias ids under a name the target does not use: found items, no id.
  config_.target.dialect.fields.alias_id = {"alias_no"};
  m = message();
  EXPECT_NE(m.find("GET " + base + "/channels/1/alias-numbers answered HTTP 200 (body: "), std::string::npos) << m;
  EXPECT_NE(m.find("looked under \"alias_no\" (profile id_fields.alias)"), std::string::npos) << m;
  EXPECT_NE(m.find("set id_fields.alias in a profile"), std::string::npos) << m;
  config_.target.dialect.fields.alias_id = core::FieldNames{}.alias_id;

  // The mix's agent operations would find no agent: said, not dropped.
  config_.scenario = Scenario::mixed;
  config_.mix = {{OpKind::get_agent, 1}, {OpKind::db_get, 1}};
  config_.target.dialect.fields.agent_id = {"agent_no"};
  m = message();
  EXPECT_NE(m.find("GET " + base + "/api/v1/local-agents answered HTTP 200"), std::string::npos) << m;
  EXPECT_NE(m.find("(profile id_fields.agent)"), std::string::npos) << m;
  // A mix without them needs no agent.
  config_.mix = {{OpKind::db_get, 1}};
  EXPECT_EQ(message(), "(no set-up error)");
}

TEST_F(LoadRun, PerSecondSeriesIsPackedOnceTheRunEnds) {
  // A long run keeps one histogram per second: packed, each holds about what
  // its second recorded, not a dense array up to its highest bucket.
  start();
  config_.scenario = Scenario::get;
  config_.duration = 1500ms;
  auto r = run();
  ASSERT_GE(r.stats.seconds.size(), 2u);
  for (std::size_t t = 0; t < r.stats.seconds.size(); ++t) {
    const auto& latency = r.stats.seconds[t].latency;
    EXPECT_TRUE(latency.packed()) << "second " << t;
    const auto buckets = latency.to_json().at("buckets").as_array().size();
    EXPECT_LE(latency.storage_bytes(), 6 * buckets + 16) << "second " << t << " with " << buckets << " buckets";
    EXPECT_EQ(latency.count(), r.stats.seconds[t].requests);
  }
  // The operation's series holds every measured sample, each in a packed second.
  const auto& get = r.stats.ops[static_cast<std::size_t>(OpKind::get)];
  std::uint64_t held = 0;
  for (const auto& second : get.seconds) {
    EXPECT_TRUE(second.packed());
    held += second.count();
  }
  EXPECT_EQ(held, get.count());
  EXPECT_LE(get.seconds.size(), r.stats.seconds.size());
}

// ---------------------------------------------------------------- the per-second series

TEST(LoadSeries, PacksSecondsBehindTheNewestAndTakesLateAnswers) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  Stats stats;
  std::vector<core::Histogram> expected(20), expected_tag(20);  // the load's, the tag operation's
  for (std::int64_t t = 0; t < 20; ++t)
    for (std::int64_t k = 0; k < 200; ++k) {
      const std::int64_t latency = 20'000 + k * k * 37 + t;
      stats.record_second(k % 3 ? OpKind::get : OpKind::tag, t * kSecond + k, latency, k % 10 == 0);
      expected[static_cast<std::size_t>(t)].record(latency);
      if (k % 3 == 0) expected_tag[static_cast<std::size_t>(t)].record(latency);
    }
  ASSERT_EQ(stats.seconds.size(), 20u);
  for (std::size_t t = 0; t < 20; ++t)
    EXPECT_EQ(stats.seconds[t].latency.packed(), t + Stats::kOpenSeconds <= 19) << "second " << t;

  // An answer that took five seconds is counted in the second it was due.
  stats.record_second(OpKind::tag, 2 * kSecond + 5, 5 * kSecond, true);
  expected[2].record(5 * kSecond);
  expected_tag[2].record(5 * kSecond);
  const auto& tag = stats.ops[static_cast<std::size_t>(OpKind::tag)].seconds;
  const auto& get = stats.ops[static_cast<std::size_t>(OpKind::get)].seconds;
  EXPECT_TRUE(tag[2].packed());
  EXPECT_TRUE(stats.seconds[2].latency.packed());
  EXPECT_EQ(stats.seconds[2].requests, 201u);
  EXPECT_EQ(stats.seconds[2].errors, 21u);

  stats.close_seconds();
  for (std::size_t t = 0; t < 20; ++t) {
    const auto& latency = stats.seconds[t].latency;
    EXPECT_TRUE(latency.packed()) << "second " << t;
    EXPECT_EQ(latency.histogram(), expected[t]) << "second " << t;
    EXPECT_EQ(latency.quantile(0.99), expected[t].quantile(0.99)) << "second " << t;
    EXPECT_EQ(json::serialize(latency.to_json()), json::serialize(expected[t].to_json())) << "second " << t;
    // Each operation's series: its own samples, packed alike, adding up to the load's.
    EXPECT_TRUE(tag[t].packed()) << "second " << t;
    EXPECT_EQ(tag[t].histogram(), expected_tag[t]) << "second " << t;
    EXPECT_EQ(get[t].count() + tag[t].count(), latency.count()) << "second " << t;
  }

  // A thread's statistics merged while its newest seconds are still open.
  Stats open;
  for (std::int64_t t = 0; t < 3; ++t) open.record_second(OpKind::tag, t * kSecond, 1'000 + t, false);
  Stats into;
  into.merge(open);
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(into.ops[static_cast<std::size_t>(OpKind::tag)].seconds[t].count(), 1u) << "second " << t;
    EXPECT_EQ(into.seconds[t].latency.count(), 1u) << "second " << t;
  }

  // Shards merge bucket by bucket, and the merged series stays packed.
  Stats merged;
  merged.merge(stats);
  merged.merge(stats);
  for (std::size_t t = 0; t < 20; ++t) {
    core::Histogram twice = expected[t];
    twice.merge(expected[t]);
    EXPECT_TRUE(merged.seconds[t].latency.packed());
    EXPECT_EQ(merged.seconds[t].latency.histogram(), twice) << "second " << t;
    EXPECT_EQ(merged.seconds[t].requests, 2 * stats.seconds[t].requests);
    core::Histogram tag_twice = expected_tag[t];
    tag_twice.merge(expected_tag[t]);
    EXPECT_EQ(merged.ops[static_cast<std::size_t>(OpKind::tag)].seconds[t].histogram(), tag_twice) << "second " << t;
  }
}

// ---------------------------------------------------------------- hostile targets

using test::ScriptedServer;

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

LoadConfig hostile_config(unsigned short port) {
  LoadConfig c;
  c.target.base = core::BaseUrl{"127.0.0.1", std::to_string(port), ""};
  c.target.api_key = kKey;
  c.scenario = Scenario::get;
  c.path = "/anything";
  c.connections = 1;  // the scripted server serves one connection at a time
  c.duration = 1s;
  c.timeout = 300ms;
  return c;
}

// Waits while the peer keeps its side open, reading and dropping what comes.
void hold_until_closed(int fd, const std::atomic<bool>& stopping) {
  while (!stopping) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    if (::recv(fd, buf, sizeof buf, 0) <= 0) return;
  }
}

struct Timed {
  LoadResult result;
  std::chrono::steady_clock::duration took;
};

// Runs the load on a thread of its own and waits at most `bound`: a hang
// fails at once with a message instead of at ctest's timeout.
Timed run_guarded(const LoadConfig& config, Progress& progress, std::chrono::seconds bound) {
  const auto started = std::chrono::steady_clock::now();
  std::packaged_task<LoadResult()> task([&] { return run_load(config, Discovery{}, progress); });
  auto result = task.get_future();
  std::thread runner(std::move(task));
  if (result.wait_for(bound) != std::future_status::ready) {
    std::fprintf(stderr, "run_load did not return within %lld s: it hangs\n", static_cast<long long>(bound.count()));
    std::_Exit(1);  // the thread cannot be ended, and it holds this frame's references
  }
  runner.join();
  return {result.get(), std::chrono::steady_clock::now() - started};
}

const OpStats& get_stats(const LoadResult& r) { return r.stats.ops[static_cast<std::size_t>(OpKind::get)]; }

TEST(LoadHostile, InterimAnswersBeforeEachAnswerCostNoErrors) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    for (int n = 0; !stopping; ++n) {
      const std::string interim =
          n % 2 ? "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" : std::string(kContinue);
      if (!ScriptedServer::write_all(fd, interim + std::string(kOk))) return;
      if (ScriptedServer::read_head(fd, stopping).empty()) return;
    }
  });
  auto config = hostile_config(server.port());
  config.duration = 500ms;
  config.timeout = 2s;
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 10s);
  const auto& get = get_stats(r);
  EXPECT_GT(get.count(), 10u);
  EXPECT_EQ(get.statuses[200], get.count());
  EXPECT_EQ(get.errors, 0u);
}

TEST(LoadHostile, EndlessContinueStreamFailsEachRequestAndTheRunEnds) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    std::string flood;
    for (int i = 0; i < 64; ++i) flood += kContinue;
    while (!stopping && ScriptedServer::write_all(fd, flood)) {
    }
  });
  auto config = hostile_config(server.port());
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 30s);
  EXPECT_LT(took, config.duration + config.timeout + 5s);
  const auto& get = get_stats(r);
  EXPECT_GT(get.count(), 0u);
  EXPECT_EQ(get.errors, get.count());
  EXPECT_EQ(get.statuses[200], 0u);
  EXPECT_EQ(get.failures[static_cast<std::size_t>(Failure::malformed)] +
                get.failures[static_cast<std::size_t>(Failure::timeout)],
            get.count());
}

TEST(LoadHostile, EndlessChunkedBodyTimesOutAndTheRunEnds) {
  // Within every limit of the reader for gigabytes (one byte of body per
  // 4 KB chunk line), and always ready to read: only the request's own
  // deadline, checked as the bytes come, ends it.
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    if (!ScriptedServer::write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
    const std::string chunk = "1;" + std::string(4000, 'x') + "\r\nx\r\n";
    std::string block;
    while (block.size() < 64 * 1024) block += chunk;
    while (!stopping && ScriptedServer::write_all(fd, block)) {
    }
  });
  auto config = hostile_config(server.port());
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 60s);
  EXPECT_LT(took, config.duration + config.timeout + 5s);
  const auto& get = get_stats(r);
  EXPECT_GT(get.count(), 0u);
  EXPECT_EQ(get.failures[static_cast<std::size_t>(Failure::timeout)], get.count());
}

TEST(LoadHostile, ContinueEvery50msTimesOutEachRequestAndTheRunEnds) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    while (!stopping && ScriptedServer::write_all(fd, kContinue)) std::this_thread::sleep_for(50ms);
  });
  auto config = hostile_config(server.port());
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 30s);
  EXPECT_LT(took, config.duration + config.timeout + 5s);
  const auto& get = get_stats(r);
  EXPECT_GT(get.count(), 0u);
  EXPECT_EQ(get.errors, get.count());
  EXPECT_EQ(get.failures[static_cast<std::size_t>(Failure::timeout)], get.count())
      << "six interim answers in 300 ms are no final answer";
}

TEST(LoadHostile, StopEndsRequestsInFlightWithinAboutASecond) {
  ScriptedServer server(hold_until_closed);
  auto config = hostile_config(server.port());
  config.duration = 30s;
  config.timeout = 10s;
  Progress progress;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    progress.stop = true;
  });
  auto [r, took] = run_guarded(config, progress, 60s);
  stopper.join();
  EXPECT_LT(took, 5s) << "the request in flight must not hold a stopped run for its 10 s timeout";
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(get_stats(r).errors, 0u) << "a request cut by the stop says nothing about the target";
}

TEST(LoadHostile, RetryAfterDoesNotOutliveTheRun) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    do {
      if (!ScriptedServer::write_all(fd,
                                     "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 10\r\nContent-Length: 0\r\n\r\n"))
        return;
    } while (!ScriptedServer::read_head(fd, stopping).empty());
  });
  auto config = hostile_config(server.port());
  config.duration = 500ms;
  config.timeout = 1s;
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 30s);
  EXPECT_LT(took, 4s) << "a 10 s back-off must end with the measured time";
  EXPECT_GT(get_stats(r).statuses[429], 0u);
}

// Issue 22, item 6: a peer that answers every request with a 204 and at once
// an unsolicited 200. Before, half the "answers" were 204s counted as ok and
// half were the unsolicited 200s taken as the next request's answer: 0 errors.
TEST(LoadHostile, AnAnswerNobodyAskedForClosesTheConnectionAndCountsAsAnError) {
  ScriptedServer server([](int fd, const std::atomic<bool>& stopping) {
    do {
      if (!ScriptedServer::write_all(fd, "HTTP/1.1 204 No Content\r\n\r\n"
                                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2"
                                         "\r\n\r\n{}"))
        return;
    } while (!ScriptedServer::read_head(fd, stopping).empty());
  });
  auto config = hostile_config(server.port());
  config.duration = 500ms;
  config.timeout = 2s;  // a slow reconnect under a sanitizer must not turn into a timeout
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 30s);
  const auto& get = get_stats(r);
  ASSERT_GT(get.count(), 0u);
  EXPECT_EQ(get.errors, get.count()) << "every exchange got a 204 and bytes nobody asked for";
  EXPECT_EQ(get.statuses[200], 0u) << "an unsolicited 200 was taken as an answer";
  EXPECT_EQ(get.failures[static_cast<std::size_t>(Failure::unsolicited)], get.count());
  EXPECT_EQ(get.latency[static_cast<std::size_t>(Outcome::ok)].count(), 0u);
  EXPECT_TRUE(proved_nothing(r).has_value());
}

// The unsolicited bytes come while the connection is idle (open loop, one
// request every 100 ms): the next request is not written on it. A request
// already waiting when the stray bytes are due was sent before them (the open
// loop catching up after a slow start, as under a sanitizer on a loaded
// machine): the connection was not idle, so the script answers it instead,
// and only connections that really were idle are judged.
TEST(LoadHostile, BytesOnAnIdleConnectionFailTheNextRequestUnsent) {
  std::atomic<int> sent_while_idle{0};
  std::atomic<int> requests_after_unsolicited{0};
  ScriptedServer server([&](int fd, const std::atomic<bool>& stopping) {
    for (;;) {
      if (!ScriptedServer::write_all(fd, kOk)) return;
      std::this_thread::sleep_for(20ms);
      char byte;
      if (::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 1) break;  // idle
      if (ScriptedServer::read_head(fd, stopping).empty()) return;
    }
    if (!ScriptedServer::write_all(fd, kOk)) return;
    ++sent_while_idle;
    if (!ScriptedServer::read_head(fd, stopping).empty()) ++requests_after_unsolicited;
  });
  auto config = hostile_config(server.port());
  config.duration = 1s;
  config.rate = 10;
  config.timeout = 2s;  // an answer is never late here; a sanitizer on a loaded machine can be
  Progress progress;
  auto [r, took] = run_guarded(config, progress, 30s);
  const auto& get = get_stats(r);
  const auto unsolicited = get.failures[static_cast<std::size_t>(Failure::unsolicited)];
  ASSERT_GE(sent_while_idle.load(), 2) << "the script never found the connection idle: nothing was tried";
  // The run may end before the request that would have found the last stray bytes.
  EXPECT_GE(unsolicited + 1, static_cast<std::uint64_t>(sent_while_idle.load()));
  EXPECT_LE(unsolicited, static_cast<std::uint64_t>(sent_while_idle.load()));
  EXPECT_EQ(get.statuses[200] + unsolicited, get.count());
  EXPECT_EQ(requests_after_unsolicited.load(), 0);
}

// Success is exactly 200 (rule C2): a 204 or a 201 is an error, not an ok.
TEST(LoadHostile, AnyStatusButTwoHundredIsAnError) {
  for (std::string_view status : {"204 No Content", "201 Created"}) {
    ScriptedServer server([status](int fd, const std::atomic<bool>& stopping) {
      do {
        if (!ScriptedServer::write_all(fd, "HTTP/1.1 " + std::string(status) + "\r\nContent-Length: 0\r\n\r\n"))
          return;
      } while (!ScriptedServer::read_head(fd, stopping).empty());
    });
    auto config = hostile_config(server.port());
    config.duration = 300ms;
    Progress progress;
    auto [r, took] = run_guarded(config, progress, 30s);
    const auto& get = get_stats(r);
    ASSERT_GT(get.count(), 0u) << status;
    EXPECT_EQ(get.errors, get.count()) << status;
    EXPECT_EQ(get.latency[static_cast<std::size_t>(Outcome::ok)].count(), 0u) << status;
    EXPECT_TRUE(proved_nothing(r).has_value()) << status;
  }
}

}  // namespace
}  // namespace crh::loadgen::run_test
