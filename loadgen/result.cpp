// Thresholds against a load result, and the result document.
#include "loadgen/result.hpp"

#include <cstdio>
#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>

#include "core/output_file.hpp"
#include "core/percentile_interval.hpp"
#include "results/envelope.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/percentiles.hpp"
#include "loadgen/outage_result.hpp"
#include "results/verdict.hpp"

namespace crh::loadgen {
namespace json = boost::json;
namespace k = results::keys;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

core::Histogram all_outcomes(const OpStats& s) {
  core::Histogram h;
  for (const auto& o : s.latency) h.merge(o);
  return h;
}

std::uint64_t total_requests(const LoadResult& r) {
  std::uint64_t n = 0;
  for (const auto& s : r.stats.ops) n += s.count();
  return n;
}

std::uint64_t total_errors(const LoadResult& r) {
  std::uint64_t n = 0;
  for (const auto& s : r.stats.ops) n += s.errors;
  return n;
}

double latency_stat(const core::Histogram& h, const std::string& stat) {
  if (h.count() == 0) return kNaN;
  if (stat == "max") return static_cast<double>(h.max());
  if (stat == "min") return static_cast<double>(h.min());
  if (stat == "mean") return h.mean();
  const double q = stat == "p99.9" ? 0.999 : std::stod(stat.substr(1)) / 100.0;
  return static_cast<double>(h.quantile(q));
}

// `rate`: samples per second, for how long a run would back a percentile;
// `series`: the same samples per step of the load's series (the operations'
// latency only), for the block intervals.
json::object latency_json(const core::Histogram& h, double rate,
                          std::optional<std::span<const core::PackedHistogram>> series = std::nullopt) {
  namespace l = k::latency;
  return json::object{{l::count, h.count()},           {l::p50_ns, h.quantile(0.5)},
                      {l::p90_ns, h.quantile(0.9)},    {l::p99_ns, h.quantile(0.99)},
                      {l::p999_ns, h.quantile(0.999)}, {l::max_ns, h.max()},
                      {l::mean_ns, h.mean()},          {l::percentiles, results::percentiles_json(h, rate, series)},
                      {l::histogram, h.to_json()}};
}

double per_second(std::uint64_t n, double wall_s) { return wall_s > 0 ? static_cast<double>(n) / wall_s : 0.0; }

// Only the steps that hold samples of the operation: most hold none of a rare one.
json::array op_series_json(const OpStats& s, std::uint32_t step) {
  namespace x = k::operation_series;
  json::array out;
  for (std::size_t i = 0; i < s.seconds.size(); ++i)
    if (s.seconds[i].count()) out.push_back(json::object{{x::t, i * step}, {x::histogram, s.seconds[i].to_json()}});
  return out;
}

json::object wire_op_json(const core::WireOpStats& w, double wall_s) {
  namespace x = k::wire;
  return json::object{{x::latency, latency_json(w.latency, per_second(w.latency.count(), wall_s))},
                      {x::client, latency_json(w.client, per_second(w.client.count(), wall_s))},
                      {x::overhead, latency_json(w.overhead, per_second(w.overhead.count(), wall_s))},
                      {x::paired, w.paired},
                      {x::unpaired, w.unpaired},
                      {x::incomplete, w.incomplete},
                      {x::negative_overhead, w.negative_overhead}};
}

json::object wire_json(const core::WireSummary& w) {
  namespace x = k::wire;
  return json::object{{x::file, core::valid_utf8(w.file)},
                      {x::exchanges, w.exchanges},
                      {x::paired, w.paired},
                      {x::unpaired_client, w.unpaired_client},
                      {x::unpaired_wire, w.unpaired_wire},
                      {x::incomplete, w.incomplete},
                      {x::unanswered, w.unanswered},
                      {x::negative_overhead, w.negative_overhead}};
}

// `points`: the length of the load's series, which the operation's blocks span
// whenever in it the operation's samples came.
json::object op_json(const OpStats& s, double wall_s, std::uint32_t step, std::size_t points) {
  namespace o = k::operation;
  json::object by_outcome;
  for (std::size_t i = 0; i < oracle::kOutcomes; ++i)
    if (s.latency[i].count())
      by_outcome[to_string(static_cast<oracle::Outcome>(i))] =
          latency_json(s.latency[i], per_second(s.latency[i].count(), wall_s));
  json::object statuses, failures;
  for (std::size_t code = 0; code < s.statuses.size(); ++code)
    if (s.statuses[code]) statuses[std::to_string(code)] = s.statuses[code];
  for (std::size_t i = 0; i < kFailures; ++i)
    if (s.failures[i]) failures[to_string(static_cast<Failure>(i))] = s.failures[i];
  const auto n = s.count();
  // Documents read back from schema_version 1 have no series: binomial intervals only.
  std::vector<core::PackedHistogram> padded;
  std::optional<std::span<const core::PackedHistogram>> series;
  if (!s.seconds.empty()) {
    padded = s.seconds;
    padded.resize(std::max(points, s.seconds.size()));
    series = std::span<const core::PackedHistogram>(padded);
  }
  json::object op{{o::count, n},
                  {o::rate, per_second(n, wall_s)},
                  {o::errors, s.errors},
                  {o::refusals, s.refusals},
                  {o::throttled, s.throttled},
                  {o::statuses, std::move(statuses)},
                  {o::failures, std::move(failures)},
                  {o::latency, latency_json(all_outcomes(s), per_second(n, wall_s), series)},
                  {o::latency_uncorrected, latency_json(s.uncorrected, per_second(n, wall_s))},
                  {o::by_outcome, std::move(by_outcome)},
                  {o::series, op_series_json(s, step)}};
  if (!s.wire.empty()) op[o::wire] = wire_op_json(s.wire, wall_s);
  return op;
}

json::object op_json_line(const oracle::Op& op) {
  boost::system::error_code ec;
  auto v = json::parse(oracle::to_json_line(op), ec);
  return ec ? json::object{} : v.get_object();
}

}  // namespace

// parse_thresholds: in outage_result.cpp, which adds the outage limits beside the error limit.

std::optional<std::string> proved_nothing(const LoadResult& r) {
  std::uint64_t ok = 0;
  std::map<unsigned, std::uint64_t> statuses;
  std::uint64_t unanswered = 0;
  for (const auto& s : r.stats.ops) {
    ok += s.latency[static_cast<std::size_t>(oracle::Outcome::ok)].count();
    for (std::size_t code = 0; code < s.statuses.size(); ++code)
      if (s.statuses[code]) statuses[static_cast<unsigned>(code)] += s.statuses[code];
    for (auto n : s.failures) unanswered += n;
  }
  if (ok > 0) return std::nullopt;
  const auto requests = total_requests(r);
  if (requests == 0) {
    // Read from what happened: connects that did not finish in time leave
    // nothing to measure, and fewer connections at once is what helps.
    std::string why = "no request was measured";
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.1f", r.wall_s);
    if (r.connections_opened > 0)
      why += " in " + std::string(wall) + " s, though " + std::to_string(r.connections_opened) +
             " connection(s) opened: no answer was complete within the load; a service slow to accept or to answer (a short listen " +
             "queue, one busy) leaves nothing to measure: try fewer --connections, a longer --duration or --timeout";
    return why;
  }
  std::string got;
  for (const auto& [code, n] : statuses)
    got += (got.empty() ? "" : ", ") + std::to_string(n) + "x HTTP " + std::to_string(code);
  if (unanswered) got += (got.empty() ? "" : ", ") + std::to_string(unanswered) + " without an answer";
  return "no request succeeded: " + std::to_string(requests) + " requests got " + got;
}

double measured(const Threshold& t, const LoadResult& r) {
  if (const auto outage = outage_measured(t, r)) return *outage;
  const OpStats* op = nullptr;
  if (!t.subject.empty()) op = &r.stats.ops[static_cast<std::size_t>(*oracle::op_kind_by_name(t.subject))];
  const double requests = static_cast<double>(op ? op->count() : total_requests(r));
  if (t.statistic == "violations") return static_cast<double>(r.violation_count);
  if (t.statistic == "rounds") return static_cast<double>(r.stats.race.rounds);
  if (t.statistic == "requests") return requests;
  if (t.statistic == "rps") return r.wall_s > 0 ? requests / r.wall_s : kNaN;
  if (t.statistic == "errors" || t.statistic == "indeterminate") {
    double n = 0;
    if (t.statistic == "errors") n = static_cast<double>(op ? op->errors : total_errors(r));
    else if (op) n = static_cast<double>(op->latency[static_cast<std::size_t>(oracle::Outcome::indeterminate)].count());
    else
      for (const auto& s : r.stats.ops)
        n += static_cast<double>(s.latency[static_cast<std::size_t>(oracle::Outcome::indeterminate)].count());
    if (t.quantity == Quantity::count) return n;
    return requests > 0 ? n / requests : kNaN;
  }
  return op ? latency_stat(all_outcomes(*op), t.statistic) : kNaN;
}

std::vector<ThresholdVerdict> evaluate(const std::vector<Threshold>& thresholds, const LoadResult& r) {
  std::vector<ThresholdVerdict> out;
  for (const auto& t : thresholds) {
    const double actual = measured(t, r);
    out.push_back({t, actual, holds(t, actual)});
  }
  return out;
}

int exit_code_of(const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts) {
  if (r.violation_count > 0 || proved_nothing(r)) return results::kExitFailed;
  for (const auto& v : verdicts)
    if (!v.held && !v.deferred) return results::kExitFailed;
  if (r.interrupted) return results::kExitFailed;  // a load cut short never passes, as an interrupted contract or run
  return r.invalid.empty() ? results::kExitOk : results::kExitCouldNotTell;
}

int connections_run(const LoadConfig& config, const LoadResult& result) {
  return result.connections > 0 ? result.connections : std::max(0, config.connections);
}

namespace {

// A shard's result says what the shard ran (its share), so that the shards'
// configurations add up to the whole load when merged.
json::object config_json(const LoadConfig& c, const LoadResult& r) {
  namespace o = k::load_config;
  const bool one_shard = c.shard.sharded() && r.shards.size() == 1;
  json::array mix;
  for (const auto& m : c.mix) mix.push_back(json::object{{k::mix::op, to_string(m.op)}, {k::mix::weight, m.weight}});
  return json::object{{o::scenario, to_string(c.scenario)},
                      {o::connections, one_shard ? r.shards.front().connections : c.connections},
                      {o::rate, one_shard ? r.shards.front().rate : c.rate},
                      {o::threads, c.threads},
                      {o::duration_s, std::chrono::duration<double>(c.duration).count()},
                      {o::warmup_s, std::chrono::duration<double>(c.warmup).count()},
                      {o::callers, c.callers},
                      {o::tag_minutes, c.tag_minutes},
                      {o::minute_ms, c.target.minute.count()},
                      {o::path, c.path},
                      {o::mix, std::move(mix)},
                      {o::seed, c.seed},
                      {o::timeout_ms, c.timeout.count()},
                      {o::call_driver, c.target.calls.name()},
                      {o::sip_target, c.target.calls.sip ? json::value(c.target.calls.sip_target.text()) : nullptr},
                      {o::encoding, core::to_string(c.target.dialect.encoding)}};
}

json::object verdict_json(const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts) {
  const auto incomplete = incomplete_shards(r);  // shards missing from a merge: never a pass
  const int measured = exit_code_of(r, verdicts);
  const auto status = incomplete || r.interrupted          ? results::Status::incomplete
                      : measured == results::kExitCouldNotTell ? results::Status::unreliable
                      : measured != results::kExitOk           ? results::Status::failed
                                                               : results::Status::passed;
  const int code = results::exit_code_of(status);
  std::string reason;
  auto add = [&reason](const std::string& why) { reason += (reason.empty() ? "" : "; ") + why; };
  if (r.violation_count) add(std::to_string(r.violation_count) + " invariant violation(s)");
  std::size_t breached = 0, deferred = 0;
  for (const auto& v : verdicts) {
    breached += !v.held && !v.deferred;
    deferred += v.deferred;
  }
  if (breached) add(std::to_string(breached) + " threshold(s) breached");
  if (auto outage = outage_reason(r, verdicts)) add(*outage);
  if (auto why = proved_nothing(r)) add(*why);
  if (incomplete) add(*incomplete);
  if (r.interrupted) add("interrupted (Ctrl-C or SIGTERM): the figures cover only the time until then");
  if (reason.empty())
    reason = deferred ? "no invariant broke; the thresholds are judged on the merged shards (crh report)"
                      : "no invariant broke and every threshold held";
  if (code == results::kExitCouldNotTell) reason += "; but the load is INVALID (the generator, not the target, limited its figures)";
  namespace v = k::verdict;
  return json::object{{v::status, results::to_string(status)},
                      {v::exit_code, code},
                      {v::reason, reason},
                      {v::valid, r.invalid.empty()},
                      {v::invalid_reasons, json::value_from(r.invalid)},
                      {v::interrupted, r.interrupted}};
}

json::object totals_json(const LoadResult& r, int connections) {
  namespace t = k::totals;
  const auto requests = total_requests(r);
  const auto errors = total_errors(r);
  json::object totals{{t::requests, requests},
                      {t::errors, errors},
                      {t::error_rate, requests ? static_cast<double>(errors) / static_cast<double>(requests) : 0.0},
                      {t::measured_s, r.wall_s},
                      {t::intended_rate, r.intended_rate},
                      {t::achieved_rate, r.achieved_rate},
                      {t::generator_cpu, r.generator_cpu},
                      {t::late, r.stats.late},
                      {t::lag, latency_json(r.stats.lag, per_second(r.stats.lag.count(), r.wall_s))}};
  // What the reports say the run used (race: rounds in flight), not a guess of the default.
  if (connections > 0) totals[t::connections] = connections;
  return totals;
}

json::array series_json(const LoadResult& r) {
  namespace s = k::series;
  json::array series;
  const auto step = r.stats.series_step_s;
  for (std::size_t i = 0; i < r.stats.seconds.size(); ++i) {
    const auto& second = r.stats.seconds[i];
    series.push_back(json::object{{s::t, i * step},
                                  {s::requests, second.requests},
                                  {s::errors, second.errors},
                                  {s::p50_ns, second.latency.quantile(0.5)},
                                  {s::p99_ns, second.latency.quantile(0.99)},
                                  {s::histogram, second.latency.to_json()}});
  }
  return series;
}

json::array violations_json(const LoadResult& r) {
  json::array violations;
  for (const auto& v : r.violations) {
    json::array proof;
    for (const auto& op : v.proof) proof.push_back(op_json_line(op));
    namespace x = k::violation;
    json::object o{{x::kind, to_string(v.kind)},
                   {x::round, v.round},
                   {x::alias, core::valid_utf8(v.alias)},
                   {x::explanation, core::valid_utf8(v.explanation)},
                   {x::proof, std::move(proof)}};
    // The mixed load's reads: the key or agent, expected and actual, and the command again.
    if (!v.id.empty()) o[x::id] = core::valid_utf8(v.id);
    if (!v.expected.empty()) o[x::expected] = core::valid_utf8(v.expected);
    if (!v.actual.empty()) o[x::actual] = core::valid_utf8(v.actual);
    if (!v.reproduce.empty()) o[x::reproduce] = core::valid_utf8(v.reproduce);
    violations.push_back(std::move(o));
  }
  return violations;
}

json::object race_json(const LoadConfig& c, const LoadResult& r) {
  json::object winners;
  for (std::size_t n = 0; n < r.stats.race.winners.size(); ++n)
    if (r.stats.race.winners[n]) winners[std::to_string(n)] = r.stats.race.winners[n];
  auto violations = violations_json(r);
  namespace rc = k::race;
  return json::object{{rc::rounds, r.stats.race.rounds},
                      {rc::rounds_without_winner, r.stats.race.rounds_without_winner},
                      {rc::winners, std::move(winners)},
                      {rc::callers, c.callers},
                      {rc::skew, latency_json(r.stats.race.skew, per_second(r.stats.race.skew.count(), r.wall_s))},
                      {rc::release_path, r.stats.race.release_path},
                      {rc::tag_busy, r.stats.race.tag_busy},
                      {rc::violation_count, r.violation_count},
                      {rc::violations, std::move(violations)}};
}

std::string_view unit_of(Quantity q) {
  return q == Quantity::latency_ns   ? "ns"
         : q == Quantity::fraction   ? "fraction"
         : q == Quantity::per_second ? "per_second"
                                     : "count";
}

json::array thresholds_json(const std::vector<ThresholdVerdict>& verdicts) {
  namespace t = k::threshold;
  json::array thresholds;
  for (const auto& v : verdicts)
    thresholds.push_back(
        json::object{{t::expression, v.threshold.text},
                     {t::held, v.held},
                     {t::actual, std::isfinite(v.actual) ? json::value(v.actual) : json::value(nullptr)},
                     {t::limit, v.threshold.limit},
                     {t::unit, unit_of(v.threshold.quantity)},
                     {t::description, v.deferred ? "this shard alone: " + describe(v.threshold, v.actual, v.held) +
                                                       " (judged on the merged shards)"
                                                 : describe(v.threshold, v.actual, v.held)},
                     {t::implicit, v.threshold.implicit},
                     {t::deferred, v.deferred}});
  return thresholds;
}

std::string iso8601_ns(std::int64_t unix_ns) {
  const auto seconds = unix_ns >= 0 ? unix_ns / 1'000'000'000 : (unix_ns - 999'999'999) / 1'000'000'000;
  const auto text = results::iso8601(std::chrono::system_clock::time_point(std::chrono::seconds(seconds)));
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(unix_ns - seconds * 1'000'000'000));
  return text.substr(0, text.size() - 1) + frac + "Z";
}

json::array shards_json(const std::vector<ShardRecord>& shards, std::int64_t first_start_unix_ns) {
  namespace s = k::shard;
  namespace c = k::clock_source;
  json::array out;
  for (const auto& r : shards) {
    json::object o{{s::index, r.shard.index},
                   {s::count, r.shard.count},
                   {s::run_id, r.run_id},
                   {s::host, core::valid_utf8(r.host)},
                   {s::planned_unix_ns, r.planned_unix_ns},
                   {s::started_unix_ns, r.started_unix_ns},
                   {s::started_at, iso8601_ns(r.started_unix_ns)},
                   {s::start_offset_ns, r.started_unix_ns - first_start_unix_ns},
                   {s::late, r.late},
                   {s::clock, json::object{{c::source, r.clock.name},
                                           {c::synchronized, r.clock.synchronized},
                                           {c::max_error_us, r.clock.max_error_us}}},
                   {s::connections, r.connections},
                   {s::rate, r.rate},
                   {s::achieved_rate, r.achieved_rate},
                   {s::requests, r.requests}};
    if (r.planned_unix_ns != 0) o[s::planned_at] = iso8601_ns(r.planned_unix_ns);
    if (!r.file.empty()) o[s::file] = core::valid_utf8(r.file);
    out.push_back(std::move(o));
  }
  return out;
}

json::object shard_set_json(const ShardSet& set) {
  namespace s = k::shard_set;
  return json::object{{s::run_id, set.run_id},
                      {s::count, set.count},
                      {s::present, json::value_from(set.present)},
                      {s::missing, json::value_from(set.missing)},
                      {s::duplicated, json::value_from(set.duplicated)},
                      {s::complete, set.complete()},
                      {s::start_skew_ns, set.start_skew_ns},
                      {s::first_start_unix_ns, set.first_start_unix_ns},
                      {s::late, json::value_from(set.late)}};
}

}  // namespace

std::optional<std::string> incomplete_shards(const LoadResult& r) {
  if (!r.shards_merged || r.shards.empty()) return std::nullopt;
  const auto set = shard_set_of(r.shards, r.shards_left_out);
  auto list = [](const std::vector<int>& v) {
    std::string out;
    for (int i : v) out += (out.empty() ? "" : ", ") + std::to_string(i);
    return out;
  };
  std::string why;
  if (!set.missing.empty())
    why = "shard(s) " + list(set.missing) + " of " + std::to_string(set.count) +
          " missing: the merged figures are not the whole load";
  if (!set.duplicated.empty())
    why += (why.empty() ? "" : "; ") + std::string("shard(s) ") + list(set.duplicated) +
           " given more than once (only the first of each is merged)";
  if (why.empty()) return std::nullopt;
  return why;
}

json::object result_document(const LoadConfig& c, const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts,
                             const RunInfo& info) {
  namespace l = k::load;
  json::object doc = results::result_envelope(k::kind_load, info.started, r.wall_s * 1000.0, c.target.base,
                                           c.target.channel, info.embedded);
  doc[k::envelope::config] = config_json(c, r);
  doc[k::envelope::verdict] = verdict_json(r, verdicts);
  doc[l::totals] = totals_json(r, connections_run(c, r));
  json::object ops;
  for (std::size_t i = 0; i < oracle::kOpKinds; ++i)
    if (r.stats.ops[i].count())
      ops[to_string(static_cast<oracle::OpKind>(i))] =
          op_json(r.stats.ops[i], r.wall_s, r.stats.series_step_s, r.stats.seconds.size());
  doc[l::operations] = std::move(ops);
  // Seconds per point of the series: 1, or more for runs longer than kMaxSeriesPoints s.
  doc[l::series_step_s] = r.stats.series_step_s;
  doc[l::series] = series_json(r);
  if (c.scenario == Scenario::race) doc[l::race] = race_json(c, r);
  // The mixed load's history (mixed_history.cpp) and the get load's refused
  // tags (tag_ledger.hpp) break invariants at the top of the document, under
  // the race's names; the mixed load says its count even when it is 0.
  else if (r.violation_count || r.judgement.judged) {
    doc[k::race::violation_count] = r.violation_count;
    doc[k::race::violations] = violations_json(r);
  }
  if (r.judgement.judged) {
    namespace h = k::history_check;
    doc[l::history_check] = json::object{{h::database_reads, r.judgement.database_reads},
                                         {h::agent_reads, r.judgement.agent_reads},
                                         {h::tags, r.judgement.tags},
                                         {h::unjudged, json::value_from(r.judgement.unjudged)}};
  }
  doc[l::outages] = outages_json(r, connections_run(c, r));
  doc[l::thresholds] = thresholds_json(verdicts);
  doc[l::history] = json::object{{k::history::file, c.history_file}, {k::history::operations, r.history_ops}};
  doc[l::restore_problems] = json::value_from(info.restore_problems);
  if (r.wire) doc[l::wire] = wire_json(*r.wire);
  if (!r.shards.empty()) {
    const auto set = shard_set_of(r.shards, r.shards_left_out);
    doc[l::shards] = shards_json(r.shards, set.first_start_unix_ns);
    if (!r.shards_left_out.empty()) doc[l::shards_left_out] = shards_json(r.shards_left_out, set.first_start_unix_ns);
    if (r.shards_merged) doc[l::shard_set] = shard_set_json(set);  // a set is what crh report merged
  }
  return doc;
}

}  // namespace crh::loadgen
