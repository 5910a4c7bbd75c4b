#include "load_fixture.hpp"

namespace crh::test {

loadgen::LoadRun synthetic_load_run(loadgen::Scenario scenario, int part, double latency_scale) {
  using namespace loadgen;
  using oracle::Op;
  using oracle::OpKind;
  using oracle::Outcome;
  using oracle::Violation;
  using oracle::ViolationKind;
  LoadRun run;
  std::string why;
  run.config.target.base = *core::parse_base_url("http://127.0.0.1:18080", why);
  run.config.target.channel = "1";
  run.config.scenario = scenario;
  run.config.connections = part == 0 ? 5 : part == 1 ? 2 : 3;
  run.config.threads = part == 0 ? 2 : 1;
  run.config.duration = std::chrono::milliseconds(8000);
  run.config.mix = {{OpKind::tag, 1}, {OpKind::call, 2}};
  run.info.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  run.thresholds = {parse_threshold("call.p99<1s"), parse_threshold("errors<1%")};

  auto& r = run.result;
  r.wall_s = 8;  // a power of two: rates divide exactly, so shards' rates add up to the whole's
  r.generator_cpu = 0.25;
  const OpKind ops[] = {OpKind::tag, OpKind::call, OpKind::recall, OpKind::untag};
  std::uint64_t n = 0;
  for (int i = 0; i < 4000; ++i) {
    if (part == 1 && i % 2 == 1) continue;
    if (part == 2 && i % 2 == 0) continue;
    ++n;
    auto& s = r.stats.ops[static_cast<std::size_t>(ops[i % 4])];
    const auto ns = static_cast<std::int64_t>((20'000 + (i * 7919) % 3'000'000) * latency_scale);
    const auto outcome = i % 50 == 0 ? Outcome::fail : i % 333 == 0 ? Outcome::indeterminate : Outcome::ok;
    s.latency[static_cast<std::size_t>(outcome)].record(ns);
    s.uncorrected.record(ns / 2);
    s.statuses[outcome == Outcome::fail ? 403 : outcome == Outcome::indeterminate ? 0 : 200]++;
    if (outcome == Outcome::indeterminate) {
      s.failures[static_cast<std::size_t>(Failure::timeout)]++;
      s.errors++;
    }
    if (outcome == Outcome::fail) s.refusals++;
    auto& second = r.stats.second(static_cast<std::int64_t>(i % 8) * 1'000'000'000);
    // An outage from 3 s to 4.5 s (answers 2 ms apart): connect failures and 503s.
    const std::int64_t at = static_cast<std::int64_t>(i) * 2'000'000;
    if (i >= 1500 && i < 2250) {
      r.outages.timeline.down(at, i % 2 ? 503 : 0, Failure::connect);
      if (i % 2 == 0) ++r.outages.back_offs, r.outages.back_off_s += 0.0625;
    } else {
      r.outages.timeline.up(at);
    }
    second.requests++;
    second.errors += outcome == Outcome::indeterminate;
    second.latency.record(ns);
    if (scenario == Scenario::race && i % 4 == 0) {
      r.stats.race.rounds++;
      if (r.stats.race.winners.size() < 3) r.stats.race.winners.resize(3);
      r.stats.race.winners[i % 400 == 0 ? 2 : 1]++;
      r.stats.race.skew.record(5'000 + i);
    }
  }
  r.achieved_rate = static_cast<double>(n) / r.wall_s;
  r.history_ops = n;
  if (scenario == Scenario::race) {
    auto violation = [](std::uint64_t round) {
      Op a{round, OpKind::call, "3", "+1999001", 1000, 2000, Outcome::ok, 200, ""};
      Op b{round, OpKind::call, "3", "+1999002", 1100, 2100, Outcome::ok, 200, ""};
      return Violation{ViolationKind::two_winners, round, "3", "both +1999001 and +1999002 connected", {a, b}};
    };
    if (part != 2) r.violations.push_back(violation(0));
    if (part != 1) r.violations.push_back(violation(400));
    r.violation_count = r.violations.size();
  }
  return run;
}

}  // namespace crh::test
