// Reading a load result document back.
#include "loadgen/readback.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/json.hpp>

#include "results/json_read.hpp"
#include "results/envelope.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "loadgen/outage_result.hpp"

namespace crh::loadgen {
namespace json = boost::json;
namespace k = results::keys;
using results::array_at;
using results::bool_at;
using results::count_at;
using results::integer_at;
using results::number_at;
using results::object_at;
using results::string_at;

namespace {

template <typename Enum, std::size_t N>
Enum enum_named(std::string_view name, std::string_view where) {
  for (std::size_t i = 0; i < N; ++i)
    if (to_string(static_cast<Enum>(i)) == name) return static_cast<Enum>(i);
  throw std::runtime_error(std::string(where) + ": unknown name \"" + std::string(name) + "\"");
}

core::Histogram histogram_at(const json::object& o, std::string_view where) {
  try {
    return core::Histogram::from_json(results::field_at(o, k::latency::histogram, where));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(where) + "." + std::string(k::latency::histogram) + ": " + e.what());
  }
}

oracle::Op op_from_json(const json::object& o, const std::string& where) {
  namespace p = k::proof;
  oracle::Op op;
  op.round = count_at(o, p::round, where);
  auto kind = oracle::op_kind_by_name(string_at(o, p::op, where));
  if (!kind) throw std::runtime_error(where + ".op: unknown operation");
  op.kind = *kind;
  op.alias = string_at(o, p::alias, where);
  if (o.contains(p::caller)) op.caller = string_at(o, p::caller, where);
  op.invoke_ns = integer_at(o, p::invoke_ns, where);
  op.complete_ns = integer_at(o, p::complete_ns, where);
  op.outcome = enum_named<oracle::Outcome, oracle::kOutcomes>(string_at(o, p::outcome, where), where + ".outcome");
  op.status = static_cast<unsigned>(count_at(o, p::status, where));
  if (o.contains(p::error)) op.error = string_at(o, p::error, where);
  op.not_now = o.contains(p::not_now) && bool_at(o, p::not_now, where);
  if (o.contains(p::id)) op.id = string_at(o, p::id, where);
  if (o.contains(p::value)) op.value = string_at(o, p::value, where);
  return op;
}

core::WireOpStats wire_op_from_json(const json::object& o, const std::string& where) {
  namespace x = k::wire;
  core::WireOpStats w;
  w.latency = histogram_at(object_at(o, x::latency, where), where + ".latency");
  w.client = histogram_at(object_at(o, x::client, where), where + ".client");
  w.overhead = histogram_at(object_at(o, x::overhead, where), where + ".overhead");
  w.paired = count_at(o, x::paired, where);
  w.unpaired = count_at(o, x::unpaired, where);
  w.incomplete = count_at(o, x::incomplete, where);
  w.negative_overhead = count_at(o, x::negative_overhead, where);
  return w;
}

// The operation's series (absent in documents of schema_version 1), at the
// load series' step.
void op_series_from_json(const json::object& o, const std::string& where, std::uint32_t step, OpStats& s) {
  if (!o.contains(k::operation::series)) return;
  const std::string w = where + ".series[]";
  for (const auto& v : array_at(o, k::operation::series, where)) {
    const auto& point = results::as_object(v, w);
    const auto start = count_at(point, k::operation_series::t, w);
    if (start % step != 0) throw std::runtime_error(w + ".t: not a multiple of series_step_s");
    const auto i = start / step;
    if (i > 10'000'000) throw std::runtime_error(w + ".t: out of range");
    if (s.seconds.size() <= i) s.seconds.resize(i + 1);
    s.seconds[i] = histogram_at(point, w);
  }
}

OpStats op_stats_from_json(const json::object& o, const std::string& where, std::uint32_t step) {
  namespace p = k::operation;
  OpStats s;
  op_series_from_json(o, where, step, s);
  for (const auto& [name, v] : object_at(o, p::by_outcome, where)) {
    const auto outcome = enum_named<oracle::Outcome, oracle::kOutcomes>(name, where + ".by_outcome");
    s.latency[static_cast<std::size_t>(outcome)] =
        histogram_at(results::as_object(v, where + ".by_outcome"), where + ".by_outcome." + std::string(name));
  }
  s.uncorrected = histogram_at(object_at(o, p::latency_uncorrected, where), where + ".latency_uncorrected");
  for (const auto& [code, v] : object_at(o, p::statuses, where)) {
    std::size_t used = 0;
    const std::string text(code);
    const unsigned long n = std::stoul(text, &used);
    if (used != text.size() || n >= s.statuses.size() || !v.is_number())
      throw std::runtime_error(where + ".statuses: bad entry \"" + text + "\"");
    s.statuses[n] = v.to_number<std::uint64_t>();
  }
  for (const auto& [name, v] : object_at(o, p::failures, where)) {
    const auto f = enum_named<Failure, kFailures>(name, where + ".failures");
    s.failures[static_cast<std::size_t>(f)] = v.to_number<std::uint64_t>();
  }
  s.errors = count_at(o, p::errors, where);
  s.refusals = count_at(o, p::refusals, where);
  s.throttled = count_at(o, p::throttled, where);
  if (const auto* wire = o.if_contains(p::wire))  // only with a capture paired with the run
    s.wire = wire_op_from_json(results::as_object(*wire, where + ".wire"), where + ".wire");
  return s;
}

// ---- read_load_document, by part of the document

void read_envelope(const json::object& doc, LoadRun& run) {
  const auto& target = object_at(doc, k::envelope::target, "");
  std::string why;
  auto base = core::parse_base_url(string_at(target, k::target::base_url, k::envelope::target), why);
  if (!base) throw std::runtime_error("target.base_url: " + why);
  run.config.target.base = *base;
  run.config.target.channel = string_at(target, k::target::channel, k::envelope::target);
  run.info.embedded = bool_at(target, k::target::embedded, k::envelope::target);
  auto started = results::parse_iso8601(string_at(doc, k::envelope::started_at, ""));
  if (!started) throw std::runtime_error("started_at: not an ISO 8601 UTC time");
  run.info.started = *started;
}

void read_config(const json::object& doc, LoadConfig& c) {
  namespace o = k::load_config;
  const auto& config = object_at(doc, k::envelope::config, "");
  const std::string scenario = string_at(config, o::scenario, k::envelope::config);
  c.scenario = scenario == "race" ? Scenario::race : scenario == "mixed" ? Scenario::mixed : Scenario::get;
  if (to_string(c.scenario) != scenario) throw std::runtime_error("config.scenario: unknown \"" + scenario + "\"");
  c.connections = static_cast<int>(integer_at(config, o::connections, k::envelope::config));
  c.rate = number_at(config, o::rate, k::envelope::config);
  c.threads = static_cast<int>(integer_at(config, o::threads, k::envelope::config));
  auto ms = [](double s) { return std::chrono::milliseconds(std::llround(s * 1000)); };
  c.duration = ms(number_at(config, o::duration_s, k::envelope::config));
  c.warmup = ms(number_at(config, o::warmup_s, k::envelope::config));
  c.callers = static_cast<int>(integer_at(config, o::callers, k::envelope::config));
  c.tag_minutes = static_cast<int>(integer_at(config, o::tag_minutes, k::envelope::config));
  c.target.minute = std::chrono::milliseconds(integer_at(config, o::minute_ms, k::envelope::config));
  c.path = string_at(config, o::path, k::envelope::config);
  for (const auto& m : array_at(config, o::mix, k::envelope::config)) {
    const auto& entry = results::as_object(m, "config.mix[]");
    auto op = oracle::op_kind_by_name(string_at(entry, k::mix::op, "config.mix[]"));
    if (!op) throw std::runtime_error("config.mix[].op: unknown operation");
    c.mix.push_back({*op, number_at(entry, k::mix::weight, "config.mix[]")});
  }
  c.seed = count_at(config, o::seed, k::envelope::config);
  c.timeout = std::chrono::milliseconds(integer_at(config, o::timeout_ms, k::envelope::config));
  const std::string encoding = string_at(config, o::encoding, k::envelope::config);
  c.target.dialect.encoding = encoding == "json"    ? core::ParamEncoding::json
                              : encoding == "query" ? core::ParamEncoding::query
                                                    : core::ParamEncoding::form;
  if (core::to_string(c.target.dialect.encoding) != encoding)
    throw std::runtime_error("config.encoding: unknown \"" + encoding + "\"");
}

void read_verdict_and_totals(const json::object& doc, LoadRun& run) {
  auto& r = run.result;
  const auto& verdict = object_at(doc, k::envelope::verdict, "");
  for (const auto& why_invalid : array_at(verdict, k::verdict::invalid_reasons, k::envelope::verdict))
    r.invalid.emplace_back(why_invalid.is_string() ? why_invalid.get_string() : "");
  r.interrupted = bool_at(verdict, k::verdict::interrupted, k::envelope::verdict);

  namespace t = k::totals;
  const auto& totals = object_at(doc, k::load::totals, "");
  r.wall_s = number_at(totals, t::measured_s, k::load::totals);
  r.intended_rate = number_at(totals, t::intended_rate, k::load::totals);
  r.achieved_rate = number_at(totals, t::achieved_rate, k::load::totals);
  r.generator_cpu = number_at(totals, t::generator_cpu, k::load::totals);
  r.stats.late = count_at(totals, t::late, k::load::totals);
  r.stats.lag = histogram_at(object_at(totals, t::lag, k::load::totals), "totals.lag");
  if (totals.contains(t::connections))  // absent in older documents, and when not known
    run.result.connections = static_cast<int>(integer_at(totals, t::connections, k::load::totals));
}

void read_series_step(const json::object& doc, LoadResult& r) {
  // Each point of the series spans series_step_s seconds (absent in documents
  // of older versions: one); `t` is the second it starts at.
  if (doc.if_contains(k::load::series_step_s)) {
    const auto n = count_at(doc, k::load::series_step_s, "");
    if (n == 0 || n > (1u << 20) || (n & (n - 1)) != 0) throw std::runtime_error("series_step_s: not a power of two");
    r.stats.series_step_s = static_cast<std::uint32_t>(n);
  }
}

void read_operations(const json::object& doc, LoadResult& r) {
  for (const auto& [name, v] : object_at(doc, k::load::operations, "")) {
    auto kind = oracle::op_kind_by_name(name);
    if (!kind) throw std::runtime_error("operations: unknown operation \"" + std::string(name) + "\"");
    const std::string where = "operations." + std::string(name);
    r.stats.ops[static_cast<std::size_t>(*kind)] =
        op_stats_from_json(results::as_object(v, where), where, r.stats.series_step_s);
  }
}

void read_series(const json::object& doc, LoadResult& r) {
  for (const auto& v : array_at(doc, k::load::series, "")) {
    const auto& s = results::as_object(v, "series[]");
    const auto start = count_at(s, k::series::t, "series[]");
    if (start % r.stats.series_step_s != 0) throw std::runtime_error("series[].t: not a multiple of series_step_s");
    const auto t = start / r.stats.series_step_s;
    if (t > 10'000'000) throw std::runtime_error("series[].t: out of range");
    if (r.stats.seconds.size() <= t) r.stats.seconds.resize(t + 1);
    auto& second = r.stats.seconds[t];
    second.requests = count_at(s, k::series::requests, "series[]");
    second.errors = count_at(s, k::series::errors, "series[]");
    second.latency = histogram_at(s, "series[" + std::to_string(t) + "]");
  }
}

oracle::Violation violation_from_json(const json::object& o) {
  namespace x = k::violation;
  const std::string where = "race.violations[]";
  oracle::Violation violation{
      enum_named<oracle::ViolationKind, oracle::kViolationKinds>(string_at(o, x::kind, where), where + ".kind"),
      count_at(o, x::round, where),
      string_at(o, x::alias, where),
      string_at(o, x::explanation, where),
      {}};
  for (const auto& p : array_at(o, x::proof, where))
    violation.proof.push_back(op_from_json(results::as_object(p, where + ".proof[]"), where + ".proof[]"));
  if (o.contains(x::id)) violation.id = string_at(o, x::id, where);
  if (o.contains(x::expected)) violation.expected = string_at(o, x::expected, where);
  if (o.contains(x::actual)) violation.actual = string_at(o, x::actual, where);
  if (o.contains(x::reproduce)) violation.reproduce = string_at(o, x::reproduce, where);
  return violation;
}

// The mixed load's history check and the violations at the top of a load
// that is not the race (absent in older documents).
void read_top_violations(const json::object& doc, LoadResult& r) {
  if (const auto* check = doc.if_contains(k::load::history_check)) {
    namespace h = k::history_check;
    const auto& o = results::as_object(*check, k::load::history_check);
    r.judgement.judged = true;
    r.judgement.database_reads = count_at(o, h::database_reads, k::load::history_check);
    r.judgement.agent_reads = count_at(o, h::agent_reads, k::load::history_check);
    r.judgement.tags = count_at(o, h::tags, k::load::history_check);
    for (const auto& why : array_at(o, h::unjudged, k::load::history_check)) {
      if (!why.is_string()) throw std::runtime_error("history_check.unjudged[]: not a string");
      r.judgement.unjudged.emplace_back(why.get_string());
    }
  }
  if (!doc.contains(k::race::violation_count)) return;
  r.violation_count = count_at(doc, k::race::violation_count, "");
  for (const auto& v : array_at(doc, k::race::violations, ""))
    r.violations.push_back(violation_from_json(results::as_object(v, "violations[]")));
}

void read_race(const json::object& doc, LoadRun& run) {
  const auto* race_value = doc.if_contains(k::load::race);
  if (!race_value) return read_top_violations(doc, run.result);
  namespace rc = k::race;
  auto& r = run.result;
  const auto& race = results::as_object(*race_value, k::load::race);
  r.stats.race.rounds = count_at(race, rc::rounds, k::load::race);
  r.stats.race.rounds_without_winner = count_at(race, rc::rounds_without_winner, k::load::race);
  for (const auto& [n, v] : object_at(race, rc::winners, k::load::race)) {
    const auto i = std::stoul(std::string(n));
    if (i > 100'000) throw std::runtime_error("race.winners: out of range");
    if (r.stats.race.winners.size() <= i) r.stats.race.winners.resize(i + 1);
    r.stats.race.winners[i] = v.to_number<std::uint64_t>();
  }
  run.config.callers = static_cast<int>(integer_at(race, rc::callers, k::load::race));
  r.stats.race.skew = histogram_at(object_at(race, rc::skew, k::load::race), "race.skew");
  r.stats.race.tag_busy = count_at(race, rc::tag_busy, k::load::race);
  if (race.contains(rc::release_path)) r.stats.race.release_path = string_at(race, rc::release_path, k::load::race);
  r.violation_count = count_at(race, rc::violation_count, k::load::race);
  for (const auto& v : array_at(race, rc::violations, k::load::race))
    r.violations.push_back(violation_from_json(results::as_object(v, "race.violations[]")));
}

void read_thresholds_and_history(const json::object& doc, LoadRun& run) {
  for (const auto& v : array_at(doc, k::load::thresholds, "")) {
    try {
      const auto& o = results::as_object(v, "thresholds[]");
      run.thresholds.push_back(parse_threshold(string_at(o, k::threshold::expression, "thresholds[]")));
      const auto* implicit = o.if_contains(k::threshold::implicit);  // absent in documents of older versions
      run.thresholds.back().implicit = implicit && implicit->is_bool() && implicit->get_bool();
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("thresholds[]: ") + e.what());
    }
  }
  const auto& history = object_at(doc, k::load::history, "");
  run.config.history_file = string_at(history, k::history::file, k::load::history);
  run.result.history_ops = count_at(history, k::history::operations, k::load::history);
  for (const auto& p : array_at(doc, k::load::restore_problems, ""))
    run.info.restore_problems.emplace_back(p.is_string() ? p.get_string() : "");
}

void read_wire(const json::object& doc, LoadResult& r) {
  const auto* value = doc.if_contains(k::load::wire);
  if (!value) return;  // no capture was paired with the run
  namespace x = k::wire;
  const std::string where(k::load::wire);
  const auto& o = results::as_object(*value, where);
  core::WireSummary w;
  w.file = string_at(o, x::file, where);
  w.exchanges = count_at(o, x::exchanges, where);
  w.paired = count_at(o, x::paired, where);
  w.unpaired_client = count_at(o, x::unpaired_client, where);
  w.unpaired_wire = count_at(o, x::unpaired_wire, where);
  w.incomplete = count_at(o, x::incomplete, where);
  w.unanswered = count_at(o, x::unanswered, where);
  w.negative_overhead = count_at(o, x::negative_overhead, where);
  r.wire = std::move(w);
}

std::vector<ShardRecord> shards_at(const json::object& doc, std::string_view key) {
  std::vector<ShardRecord> out;
  if (!doc.contains(key)) return out;  // not sharded (or an older document)
  namespace s = k::shard;
  namespace c = k::clock_source;
  const std::string where(key);
  for (const auto& v : array_at(doc, key, "")) {
    const auto& o = results::as_object(v, where + "[]");
    const auto w = where + "[]";
    ShardRecord r;
    r.shard.index = static_cast<int>(count_at(o, s::index, w));
    r.shard.count = static_cast<int>(count_at(o, s::count, w));
    if (r.shard.count < 1 || r.shard.index >= r.shard.count)
      throw std::runtime_error(w + ": shard " + std::to_string(r.shard.index) + "/" + std::to_string(r.shard.count) +
                               " is not a shard index below the count");
    r.run_id = string_at(o, s::run_id, w);
    r.host = string_at(o, s::host, w);
    r.planned_unix_ns = integer_at(o, s::planned_unix_ns, w);
    r.started_unix_ns = integer_at(o, s::started_unix_ns, w);
    r.late = bool_at(o, s::late, w);
    const auto& clock = object_at(o, s::clock, w);
    r.clock.name = string_at(clock, c::source, w + ".clock");
    r.clock.synchronized = bool_at(clock, c::synchronized, w + ".clock");
    r.clock.max_error_us = integer_at(clock, c::max_error_us, w + ".clock");
    r.connections = static_cast<int>(count_at(o, s::connections, w));
    r.rate = number_at(o, s::rate, w);
    r.achieved_rate = number_at(o, s::achieved_rate, w);
    r.requests = count_at(o, s::requests, w);
    if (o.contains(s::file)) r.file = string_at(o, s::file, w);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

LoadRun read_load_document(const json::object& doc) {
  const auto* kind = doc.if_contains(k::envelope::kind);
  if (!kind || !kind->is_string() || kind->get_string() != k::kind_load)
    throw std::runtime_error("not a load result document (kind is not \"load\")");
  LoadRun run;
  read_envelope(doc, run);
  read_config(doc, run.config);
  read_verdict_and_totals(doc, run);
  read_series_step(doc, run.result);
  read_operations(doc, run.result);
  read_series(doc, run.result);
  read_race(doc, run);
  read_thresholds_and_history(doc, run);
  read_wire(doc, run.result);
  read_outages(doc, run.result);
  run.result.shards = shards_at(doc, k::load::shards);
  run.result.shards_left_out = shards_at(doc, k::load::shards_left_out);
  return run;
}

json::object result_document(const LoadRun& run) {
  return result_document(run.config, run.result, evaluate(run.thresholds, run.result), run.info);
}

}  // namespace crh::loadgen
