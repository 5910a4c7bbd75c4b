// Thresholds against a load result, and the result document.
#include "loadgen/result.hpp"

#include <boost/json.hpp>
#include <cmath>
#include <map>
#include <limits>
#include <stdexcept>

#include "core/output_file.hpp"
#include "core/result_envelope.hpp"

namespace crh::loadgen {
namespace json = boost::json;
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

json::object latency_json(const core::Histogram& h) {
  return json::object{{"count", h.count()},
                      {"p50_ns", h.quantile(0.5)},
                      {"p90_ns", h.quantile(0.9)},
                      {"p99_ns", h.quantile(0.99)},
                      {"p999_ns", h.quantile(0.999)},
                      {"max_ns", h.max()},
                      {"mean_ns", h.mean()},
                      {"histogram", h.to_json()}};
}

json::object op_json(const OpStats& s, double wall_s) {
  json::object by_outcome;
  for (std::size_t i = 0; i < kOutcomes; ++i)
    if (s.latency[i].count()) by_outcome[to_string(static_cast<Outcome>(i))] = latency_json(s.latency[i]);
  json::object statuses, failures;
  for (std::size_t code = 0; code < s.statuses.size(); ++code)
    if (s.statuses[code]) statuses[std::to_string(code)] = s.statuses[code];
  for (std::size_t i = 0; i < kFailures; ++i)
    if (s.failures[i]) failures[to_string(static_cast<Failure>(i))] = s.failures[i];
  const auto n = s.count();
  return json::object{{"count", n},
                      {"rate", wall_s > 0 ? static_cast<double>(n) / wall_s : 0.0},
                      {"errors", s.errors},
                      {"refusals", s.refusals},
                      {"throttled", s.throttled},
                      {"statuses", std::move(statuses)},
                      {"failures", std::move(failures)},
                      {"latency", latency_json(all_outcomes(s))},
                      {"latency_uncorrected", latency_json(s.uncorrected)},
                      {"by_outcome", std::move(by_outcome)}};
}

json::object op_json_line(const Op& op) {
  boost::system::error_code ec;
  auto v = json::parse(to_json_line(op), ec);
  return ec ? json::object{} : v.get_object();
}

}  // namespace

std::vector<Threshold> parse_thresholds(const std::vector<std::string>& texts) {
  std::vector<Threshold> out;
  for (const auto& text : texts) {
    Threshold t = parse_threshold(text);
    if (!t.subject.empty() && !op_kind_by_name(t.subject)) {
      std::string known;
      for (std::size_t i = 0; i < kOpKinds; ++i)
        known += (i ? ", " : "") + std::string(to_string(static_cast<OpKind>(i)));
      throw std::invalid_argument("threshold \"" + t.text + "\": unknown operation \"" + t.subject +
                                  "\" (expected one of " + known + ")");
    }
    out.push_back(std::move(t));
  }
  if (std::none_of(out.begin(), out.end(), [](const Threshold& t) { return t.subject.empty() && t.statistic == "errors"; })) {
    out.push_back(parse_threshold(kDefaultErrorLimit));
    out.back().implicit = true;
  }
  return out;
}

std::optional<std::string> proved_nothing(const LoadResult& r) {
  std::uint64_t ok = 0;
  std::map<unsigned, std::uint64_t> statuses;
  std::uint64_t unanswered = 0;
  for (const auto& s : r.stats.ops) {
    ok += s.latency[static_cast<std::size_t>(Outcome::ok)].count();
    for (std::size_t code = 0; code < s.statuses.size(); ++code)
      if (s.statuses[code]) statuses[static_cast<unsigned>(code)] += s.statuses[code];
    for (auto n : s.failures) unanswered += n;
  }
  if (ok > 0) return std::nullopt;
  const auto requests = total_requests(r);
  if (requests == 0) return "no request was measured";
  std::string got;
  for (const auto& [code, n] : statuses) got += (got.empty() ? "" : ", ") + std::to_string(n) + "x HTTP " + std::to_string(code);
  if (unanswered) got += (got.empty() ? "" : ", ") + std::to_string(unanswered) + " without an answer";
  return "no request succeeded: " + std::to_string(requests) + " requests got " + got;
}

double measured(const Threshold& t, const LoadResult& r) {
  const OpStats* op = nullptr;
  if (!t.subject.empty()) op = &r.stats.ops[static_cast<std::size_t>(*op_kind_by_name(t.subject))];
  const double requests = static_cast<double>(op ? op->count() : total_requests(r));
  if (t.statistic == "violations") return static_cast<double>(r.violation_count);
  if (t.statistic == "rounds") return static_cast<double>(r.stats.race.rounds);
  if (t.statistic == "requests") return requests;
  if (t.statistic == "rps") return r.wall_s > 0 ? requests / r.wall_s : kNaN;
  if (t.statistic == "errors" || t.statistic == "indeterminate") {
    double n = 0;
    if (t.statistic == "errors") n = static_cast<double>(op ? op->errors : total_errors(r));
    else if (op) n = static_cast<double>(op->latency[static_cast<std::size_t>(Outcome::indeterminate)].count());
    else
      for (const auto& s : r.stats.ops) n += static_cast<double>(s.latency[static_cast<std::size_t>(Outcome::indeterminate)].count());
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
  if (r.violation_count > 0 || proved_nothing(r)) return 1;
  for (const auto& v : verdicts)
    if (!v.held) return 1;
  return 0;
}

json::object result_document(const LoadConfig& c, const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts,
                             const RunInfo& info) {
  json::object doc = core::result_envelope("load", info.started, r.wall_s * 1000.0, c.target.base,
                                           c.target.channel, info.embedded);
  json::array mix;
  for (const auto& m : c.mix) mix.push_back(json::object{{"op", to_string(m.op)}, {"weight", m.weight}});
  doc["config"] = json::object{{"scenario", to_string(c.scenario)},
                               {"connections", c.connections},
                               {"rate", c.rate},
                               {"threads", c.threads},
                               {"duration_s", std::chrono::duration<double>(c.duration).count()},
                               {"warmup_s", std::chrono::duration<double>(c.warmup).count()},
                               {"callers", c.callers},
                               {"tag_minutes", c.tag_minutes},
                               {"minute_ms", c.target.minute.count()},
                               {"path", c.path},
                               {"mix", std::move(mix)},
                               {"seed", c.seed},
                               {"timeout_ms", c.timeout.count()},
                               {"encoding", core::to_string(c.target.encoding)}};

  const int code = exit_code_of(r, verdicts);
  std::string reason;
  if (r.violation_count) reason = std::to_string(r.violation_count) + " invariant violation(s)";
  std::size_t breached = 0;
  for (const auto& v : verdicts) breached += !v.held;
  if (breached) reason += (reason.empty() ? "" : "; ") + std::to_string(breached) + " threshold(s) breached";
  if (auto why = proved_nothing(r)) reason += (reason.empty() ? "" : "; ") + *why;
  if (reason.empty()) reason = "no invariant broke and every threshold held";
  doc["verdict"] = json::object{{"status", code ? "failed" : "passed"},
                                {"exit_code", code},
                                {"reason", reason},
                                {"valid", r.invalid.empty()},
                                {"invalid_reasons", json::value_from(r.invalid)},
                                {"interrupted", r.interrupted}};

  const auto requests = total_requests(r);
  const auto errors = total_errors(r);
  doc["totals"] = json::object{{"requests", requests},
                               {"errors", errors},
                               {"error_rate", requests ? static_cast<double>(errors) / static_cast<double>(requests) : 0.0},
                               {"measured_s", r.wall_s},
                               {"intended_rate", r.intended_rate},
                               {"achieved_rate", r.achieved_rate},
                               {"generator_cpu", r.generator_cpu},
                               {"late", r.stats.late},
                               {"lag", latency_json(r.stats.lag)}};

  json::object ops;
  for (std::size_t i = 0; i < kOpKinds; ++i)
    if (r.stats.ops[i].count()) ops[to_string(static_cast<OpKind>(i))] = op_json(r.stats.ops[i], r.wall_s);
  doc["operations"] = std::move(ops);

  json::array series;
  const auto step = r.stats.series_step_s;
  for (std::size_t i = 0; i < r.stats.seconds.size(); ++i) {
    const auto& s = r.stats.seconds[i];
    series.push_back(json::object{{"t", i * step},
                                  {"requests", s.requests},
                                  {"errors", s.errors},
                                  {"p50_ns", s.latency.quantile(0.5)},
                                  {"p99_ns", s.latency.quantile(0.99)},
                                  {"histogram", s.latency.to_json()}});
  }
  doc["series_step_s"] = step;  // seconds per point: 1, or more for runs longer than kMaxSeriesPoints s
  doc["series"] = std::move(series);

  if (c.scenario == Scenario::race) {
    json::object winners;
    for (std::size_t n = 0; n < r.stats.race.winners.size(); ++n)
      if (r.stats.race.winners[n]) winners[std::to_string(n)] = r.stats.race.winners[n];
    json::array violations;
    for (const auto& v : r.violations) {
      json::array proof;
      for (const auto& op : v.proof) proof.push_back(op_json_line(op));
      violations.push_back(json::object{{"kind", to_string(v.kind)},
                                        {"round", v.round},
                                        {"alias", core::valid_utf8(v.alias)},
                                        {"explanation", core::valid_utf8(v.explanation)},
                                        {"proof", std::move(proof)}});
    }
    doc["race"] = json::object{{"rounds", r.stats.race.rounds},
                               {"rounds_without_winner", r.stats.race.rounds_without_winner},
                               {"winners", std::move(winners)},
                               {"callers", c.callers},
                               {"skew", latency_json(r.stats.race.skew)},
                               {"tag_busy", r.stats.race.tag_busy},
                               {"violation_count", r.violation_count},
                               {"violations", std::move(violations)}};
  }

  json::array thresholds;
  for (const auto& v : verdicts)
    thresholds.push_back(json::object{{"expression", v.threshold.text},
                                      {"held", v.held},
                                      {"actual", std::isfinite(v.actual) ? json::value(v.actual) : json::value(nullptr)},
                                      {"limit", v.threshold.limit},
                                      {"unit", v.threshold.quantity == Quantity::latency_ns ? "ns"
                                               : v.threshold.quantity == Quantity::fraction ? "fraction"
                                               : v.threshold.quantity == Quantity::per_second ? "per_second"
                                                                                              : "count"},
                                      {"description", describe(v.threshold, v.actual, v.held)},
                                      {"default", v.threshold.implicit}});
  doc["thresholds"] = std::move(thresholds);
  doc["history"] = json::object{{"file", c.history_file}, {"operations", r.history_ops}};
  doc["restore_problems"] = json::value_from(info.restore_problems);
  return doc;
}

}  // namespace crh::loadgen
