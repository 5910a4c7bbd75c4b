// The run document, the baseline comparison and the environment.
#include "reports/run_document.hpp"

#include <boost/json.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>
#include <sys/utsname.h>
#include <unistd.h>

#include "results/envelope.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "results/view.hpp"
#include "reports/text.hpp"
#include "results/verdict.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
namespace {

// The load of `scenario` among the parts, or nothing.
const json::object* load_of(const RunParts& parts, std::string_view scenario) {
  for (const auto& l : parts.loads)
    if (DocView(l)[k::envelope::config][k::load_config::scenario].str() == scenario) return &l;
  return nullptr;
}

enum class Better { lower, higher };

struct Figure {
  std::string name;  // "p50", "p99", "throughput", "error rate"
  std::string unit;  // "ns", "per_second", "fraction"
  Better better;
  std::optional<double> baseline, current;
};

// An error rate regresses only when it also rose by this much (one error in a
// thousand requests): one stray error against a clean baseline does not.
constexpr double kMinErrorRateRise = 0.001;

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

json::object judge(const std::string& scenario, const std::string& operation, const Figure& f, double limit_pct) {
  const double base = *f.baseline, cur = *f.current;
  // How much worse, in percent of the baseline; negative when better.
  double worse_pct = 0;
  if (base > 0) worse_pct = (f.better == Better::lower ? cur - base : base - cur) / base * 100.0;
  else if (f.better == Better::lower && cur > 0) worse_pct = INFINITY;
  bool regressed = worse_pct > limit_pct;
  std::string note;
  if (f.unit == "fraction" && regressed && cur - base < kMinErrorRateRise) {
    regressed = false;
    note = "up by less than " + fixed(kMinErrorRateRise * 100, 1) + " percentage point: not counted";
  }
  const double change_pct = base > 0 ? (cur - base) / base * 100.0 : (cur > 0 ? INFINITY : 0.0);
  namespace g = k::figure;
  json::object o{{g::scenario, scenario},
                 {g::operation, operation},
                 {g::figure, f.name},
                 {g::unit, f.unit},
                 {g::better, f.better == Better::lower ? "lower" : "higher"},
                 {g::baseline, base},
                 {g::current, cur},
                 {g::change_pct, std::isfinite(change_pct) ? json::value(change_pct) : json::value(nullptr)},
                 {g::worse_pct, std::isfinite(worse_pct) ? json::value(worse_pct) : json::value(nullptr)},
                 {g::limit_pct, limit_pct},
                 {g::regressed, regressed}};
  if (!note.empty()) o[g::note] = note;
  return o;
}

// p50, p99, throughput and error rate of an operation (or, `whole_run`, the throughput and error rate of the totals).
std::vector<Figure> figures_of(const DocView& base_op, const DocView& cur_op, bool whole_run) {
  auto latency = [](const DocView& op, std::string_view key) { return op[k::operation::latency][key].maybe_num(); };
  auto error_rate = [whole_run](const DocView& op) -> std::optional<double> {
    if (whole_run) return op[k::totals::error_rate].maybe_num();
    auto count = op[k::operation::count].maybe_num(), errors = op[k::operation::errors].maybe_num();
    if (!count || !errors || *count <= 0) return std::nullopt;
    return *errors / *count;
  };
  std::vector<Figure> out;
  if (!whole_run) {
    out.push_back(
        {"p50", "ns", Better::lower, latency(base_op, k::latency::p50_ns), latency(cur_op, k::latency::p50_ns)});
    out.push_back(
        {"p99", "ns", Better::lower, latency(base_op, k::latency::p99_ns), latency(cur_op, k::latency::p99_ns)});
  }
  const std::string_view rate_key = whole_run ? k::totals::achieved_rate : k::operation::rate;
  out.push_back(
      {"throughput", "per_second", Better::higher, base_op[rate_key].maybe_num(), cur_op[rate_key].maybe_num()});
  out.push_back({"error rate", "fraction", Better::lower, error_rate(base_op), error_rate(cur_op)});
  return out;
}

// Config fields that make two load results incomparable when they differ.
constexpr std::string_view kComparableConfig[] = {k::load_config::connections, k::load_config::rate,
                                                  k::load_config::threads,     k::load_config::callers,
                                                  k::load_config::path,        k::load_config::mix};

// The figures of one load beside the baseline's load of its scenario, and what makes them incomparable.
void compare_load(const DocView& cur, const DocView& base, const std::string& scenario, double limit_pct,
                  const std::function<void(json::object)>& add, json::array& notes) {
  for (auto key : kComparableConfig) {
    const auto a = base[k::envelope::config].find(key), b = cur[k::envelope::config].find(key);
    if (a && b && *a.value() != *b.value())
      notes.emplace_back(scenario + " load: config." + std::string(key) + " was " + json::serialize(*a.value()) +
                         " in the baseline, " + json::serialize(*b.value()) +
                         " now: the figures may not be comparable");
  }
  for (const auto& f : figures_of(base[k::load::totals], cur[k::load::totals], true))
    if (f.baseline && f.current) add(judge(scenario, "all", f, limit_pct));
  const auto base_ops = base[k::load::operations], cur_ops = cur[k::load::operations];
  if (!base_ops.is_object() || !cur_ops.is_object()) return;
  for (const auto& [op, v] : cur_ops.fields()) {
    const auto b = base_ops.find(op);
    if (!b.is_object()) {
      notes.emplace_back(scenario + " load: " + op + " is not in the baseline");
      continue;
    }
    for (const auto& f : figures_of(b, v, false))
      if (f.baseline && f.current) add(judge(scenario, op, f, limit_pct));
  }
}

// A contract check that held in the baseline and fails now is named too.
void compare_contracts(const RunParts& current, const RunParts& baseline, json::array& notes) {
  if (!current.contract || !baseline.contract) return;
  namespace c = k::check;
  const auto base_checks = DocView(*baseline.contract).find(k::contract::checks).items();
  for (const auto& check : DocView(*current.contract).find(k::contract::checks).items()) {
    if (check.find(c::outcome).str() != "fail") continue;
    for (const auto& b : base_checks)
      if (b.find(c::id).str() == check.find(c::id).str() && b.find(c::outcome).str() == "pass")
        notes.emplace_back("contract check " + check.find(c::id).str() + " passed in the baseline and fails now");
  }
}

}  // namespace

RunParts parts_of(const json::object& doc) {
  const DocView d(doc);
  const std::string kind = d.find(k::envelope::kind).str();
  if (d.find(k::envelope::schema).str() != k::schema_name)
    throw std::runtime_error("not a crh result document (schema is not \"crh.result\")");
  // Version 1 has no percentile intervals and no series per operation: it
  // still reads (a baseline from before them), with point values only.
  constexpr int kOldestReadable = 1;
  if (const auto v = d.find(k::envelope::schema_version).maybe_num();
      !v || *v < kOldestReadable || *v > results::kResultSchemaVersion || *v != std::floor(*v))
    throw std::runtime_error("schema_version " + (v ? std::to_string(static_cast<long>(*v)) : std::string("missing")) +
                             " is not one this crh reads (" + std::to_string(kOldestReadable) + " to " +
                             std::to_string(results::kResultSchemaVersion) + ")");
  RunParts parts;
  if (kind == k::kind_contract) parts.contract = doc;
  else if (kind == k::kind_load) parts.loads.push_back(doc);
  else if (kind == k::kind_run) {
    if (const auto* c = d.find(k::run::contract).object()) parts.contract = *c;
    for (const auto& l : d.find(k::run::loads).items())
      if (const auto* o = l.object()) parts.loads.push_back(*o);
  } else {
    throw std::runtime_error("unknown result kind \"" + kind + "\" (expected contract, load or run)");
  }
  return parts;
}

json::object compare(const RunParts& current, const RunParts& baseline, double limit_pct, const std::string& label,
                     const json::object& baseline_envelope) {
  json::array figures, notes;
  std::size_t regressions = 0;
  auto add = [&](json::object figure) {
    regressions += figure.at(k::figure::regressed).as_bool();
    figures.push_back(std::move(figure));
  };
  for (const auto& cur : current.loads) {
    const std::string scenario = DocView(cur)[k::envelope::config][k::load_config::scenario].str();
    const json::object* base = load_of(baseline, scenario);
    if (!base) notes.emplace_back("the baseline has no " + scenario + " load: nothing to compare it with");
    else compare_load(DocView(cur), DocView(*base), scenario, limit_pct, add, notes);
  }
  compare_contracts(current, baseline, notes);
  const DocView envelope(baseline_envelope);
  json::object base_info{{k::baseline::file, label},
                         {k::baseline::started_at, envelope.find(k::envelope::started_at).str()},
                         {k::baseline::base_url, envelope.find(k::envelope::target).find(k::target::base_url).str()}};
  // Regressions first, the worst first: what a reader looks for.
  std::stable_sort(figures.begin(), figures.end(), [](const json::value& a, const json::value& b) {
    auto rank = [](const json::value& f) {
      constexpr double kInf = std::numeric_limits<double>::infinity();
      if (!f.at(k::figure::regressed).as_bool()) return -kInf;
      const auto& w = f.at(k::figure::worse_pct);
      return w.is_number() ? w.to_number<double>() : kInf;
    };
    return rank(a) > rank(b);
  });
  namespace cmp = k::comparison;
  return json::object{{cmp::baseline, std::move(base_info)}, {cmp::max_regression_pct, limit_pct},
                      {cmp::figures, std::move(figures)},    {cmp::regressions, regressions},
                      {cmp::notes, std::move(notes)},        {cmp::min_error_rate_rise, kMinErrorRateRise}};
}

namespace {

// Why the run failed, part by part: the worst exit code of the parts, and a reason per failing part.
struct Tally {
  int code = results::kExitOk;
  json::array reasons;
  void worst(int c) { code = results::worse_exit(code, c); }  // a failure outranks "could not tell"
};

void tally_parts(const RunParts& parts, Tally& t) {
  namespace v = k::verdict;
  if (parts.contract) {
    const auto verdict = DocView(*parts.contract).find(k::envelope::verdict);
    const int c = static_cast<int>(verdict.find(v::exit_code).maybe_num().value_or(0));
    t.worst(c);
    if (c != 0) t.reasons.emplace_back("contract: " + verdict.find(v::reason).str());
  }
  for (const auto& l : parts.loads) {
    const DocView load(l);
    const auto verdict = load.find(k::envelope::verdict);
    const int c = static_cast<int>(verdict.find(v::exit_code).maybe_num().value_or(0));
    t.worst(c);
    const std::string scenario = load.find(k::envelope::config).find(k::load_config::scenario).str();
    if (c != 0 && c != 4) t.reasons.emplace_back(scenario + " load: " + verdict.find(v::reason).str());
    // An INVALID load measured the generator: the night cannot tell (exit 4).
    if (const auto valid = verdict.find(v::valid); valid.is_bool() && !valid.boolean()) {
      t.worst(results::kExitCouldNotTell);
      t.reasons.emplace_back(scenario + " load: INVALID (the generator, not the target, limited the figures): unreliable");
    }
  }
}

// Change points beyond the limit fail the night and name the night they began;
// inconclusive figures and unreliable loads make it could-not-tell (4).
void tally_record(const DocView& c, Tally& t) {
  namespace cp = k::change_point;
  for (const auto& p : c.find(k::comparison::change_points).items()) {
    const std::string figure =
        p.find(cp::scenario).str() + " " + p.find(cp::operation).str() + " " + p.find(cp::figure).str();
    if (p.find(cp::pending).boolean()) {
      t.worst(results::kExitCouldNotTell);
      t.reasons.emplace_back(figure + " has been beyond the limit since night " + p.find(cp::night).str() +
                             ": could not tell yet (a new level fails once it lasts 3 nights)");
      continue;
    }
    if (!p.find(cp::beyond_limit).boolean()) continue;
    t.worst(results::kExitFailed);
    const auto change = p.find(cp::change_pct).maybe_num();
    t.reasons.emplace_back(figure + " moved " + (change ? percent(*change) : "?") +
                           " in steps since night " + p.find(cp::night).str() +
                           " (a change point beyond the limit; accept it with crh report --nights DIR --accept NIGHT)");
  }
  for (const auto& why : c.find(k::comparison::unreliable).items()) {
    t.worst(results::kExitCouldNotTell);
    t.reasons.emplace_back("unreliable: " + why.str());
  }
  const auto n = static_cast<long>(c.find(k::comparison::inconclusive).maybe_num().value_or(0));
  if (n > 0) {
    t.worst(results::kExitCouldNotTell);
    t.reasons.emplace_back(std::to_string(n) + " figure(s) inconclusive: " +
                           (c.find(k::comparison::mode).str() == "against"
                                ? "worse than the limit on their face, but their interval over the pairs reaches no "
                                  "change"
                                : "the record cannot tell a change beyond the limit from the nights' noise"));
  }
}

void tally_comparison(const json::object& comparison, Tally& t) {
  namespace g = k::figure;
  const DocView c(comparison);
  tally_record(c, t);
  const auto n = static_cast<long>(c.find(k::comparison::regressions).maybe_num().value_or(0));
  if (n <= 0) return;
  t.worst(results::kExitFailed);
  std::string named;
  int listed = 0;
  for (const auto& f : c.find(k::comparison::figures).items())
    if (f.find(g::regressed).boolean() && listed++ < 3) {
      const auto change = f.find(g::change_pct).maybe_num();
      named += std::string(named.empty() ? "" : ", ") + f.find(g::scenario).str() + " " + f.find(g::operation).str() +
               " " + f.find(g::figure).str() + " " + (change ? percent(*change) : "(from 0)");
    }
  const std::string mode = c.find(k::comparison::mode).str();
  t.reasons.emplace_back(std::to_string(n) + " figure(s) regressed beyond " +
                         percent(c.find(k::comparison::max_regression_pct).maybe_num().value_or(0)).substr(1) +
                         (mode == "nights"    ? " and the nights' spread: "
                          : mode == "against" ? " of the baseline deployment, over their whole interval: "
                                              : " of the baseline: ") +
                         named + (n > 3 ? ", ..." : ""));
}

}  // namespace

json::object run_document(RunParts parts, std::optional<json::object> comparison, const RunMeta& meta) {
  std::string why;
  auto base = core::parse_base_url(meta.base_url, why);
  json::object doc = results::result_envelope(k::kind_run, meta.started, meta.duration_ms, base ? *base : core::BaseUrl{},
                                           meta.channel, meta.embedded);
  if (!base) doc[k::envelope::target].as_object()[k::target::base_url] = meta.base_url;

  Tally t;
  for (const auto& p : meta.problems) {
    t.worst(results::kExitUnreachable);
    t.reasons.emplace_back(p);
  }
  tally_parts(parts, t);
  if (comparison) tally_comparison(*comparison, t);
  if (meta.incomplete) {
    t.worst(results::kExitFailed);
    t.reasons.emplace_back("interrupted: the results are incomplete");
  }
  // Exit 3 of a run whose target answered but could not be tested is said so.
  const bool untested =
      meta.problems.empty() && parts.contract &&
      DocView(*parts.contract).find(k::envelope::verdict).find(k::verdict::status).str() == results::to_string(results::Status::untested);
  const bool unreliable = comparison && !DocView(*comparison).find(k::comparison::unreliable).items().empty();
  bool invalid_load = false;
  for (const auto& l : parts.loads)
    if (const auto v = DocView(l).find(k::envelope::verdict).find(k::verdict::valid); v.is_bool() && !v.boolean())
      invalid_load = true;
  using results::Status;
  const Status status = t.code == results::kExitUnreachable     ? (untested ? Status::untested : Status::unreachable)
                        : meta.incomplete                         ? Status::incomplete
                        : t.code == results::kExitCouldNotTell   ? (unreliable || invalid_load ? Status::unreliable
                                                                                               : Status::inconclusive)
                        : t.code != results::kExitOk              ? Status::failed
                                                                  : Status::passed;
  std::string reason;
  for (const auto& r : t.reasons) reason += (reason.empty() ? "" : "; ") + std::string(r.as_string());
  if (reason.empty()) {
    if (parts.contract) reason = "every contract check held";
    if (!parts.loads.empty())
      reason += std::string(reason.empty() ? "" : ", ") + "no invariant broke, every threshold held";
    if (comparison) {
      const DocView c(*comparison);
      const bool nights = c.find(k::comparison::mode).str() == "nights";
      // A first night of its fingerprint compared nothing: its first note says so and why.
      const auto notes = c.find(k::comparison::notes).items();
      const bool compared_nothing = nights && c.find(k::comparison::figures).items().empty() && !notes.empty() &&
                                    notes.front().str().starts_with("no comparable night");
      reason += std::string(reason.empty() ? "" : ", ") +
                (compared_nothing ? notes.front().str()
                 : nights         ? "no figure regressed beyond the nights' spread and the limit"
                                  : "no figure regressed beyond the limit");
    }
    if (reason.empty()) reason = "nothing ran";
  }
  namespace v = k::verdict;
  doc[k::envelope::verdict] = json::object{{v::status, results::to_string(status)},
                                           {v::exit_code, t.code},
                                           {v::reason, reason},
                                           {v::reasons, std::move(t.reasons)},
                                           {v::incomplete, meta.incomplete}};
  doc[k::envelope::config] = meta.config;
  doc[k::run::environment] = meta.environment;
  doc[k::run::skipped] = json::value_from(meta.skipped);
  doc[k::run::problems] = json::value_from(meta.problems);
  doc[k::run::contract] = parts.contract ? json::value(std::move(*parts.contract)) : json::value(nullptr);
  json::array loads;
  for (auto& l : parts.loads) loads.emplace_back(std::move(l));
  doc[k::run::loads] = std::move(loads);
  doc[k::run::comparison] = comparison ? json::value(std::move(*comparison)) : json::value(nullptr);
  return doc;
}

namespace {
// The CPU's model name, as /proc/cpuinfo gives it ("" where it does not).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "";
}
}  // namespace

json::object environment() {
  utsname u{};
  ::uname(&u);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  namespace e = k::environment;
  return json::object{{e::host, host},
                      {e::os, std::string(u.sysname) + " " + u.release},
                      {e::machine, u.machine},
                      {e::cpus, std::thread::hardware_concurrency()},
                      {e::cpu_model, cpu_model()},
                      {e::compiler, __VERSION__},
#ifdef NDEBUG
                      {e::build, "optimized"}};
#else
                      {e::build, "debug (figures are slower than an optimized build's)"}};
#endif
}

}  // namespace crh::reports
