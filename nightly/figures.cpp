// Figures of a night's loads, its fingerprint, and whether it can be trusted.
#include "nightly/figures.hpp"
#include "nightly/median.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <boost/json.hpp>

#include "core/histogram.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "results/keys_trend.hpp"
#include "results/units.hpp"
#include "results/view.hpp"

namespace crh::nightly {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;

namespace {

std::optional<double> error_rate(const DocView& op) {
  const auto count = op.find(k::operation::count).maybe_num(), errors = op.find(k::operation::errors).maybe_num();
  if (!count || !errors || *count <= 0) return std::nullopt;
  return *errors / *count;
}

// A percentile of an operation's latency: its interval when the document has
// one (schema 2), else the point value of older documents.
std::optional<NightFigure> percentile(const DocView& latency, std::string_view name, std::string_view point_key) {
  NightFigure f;
  f.figure = std::string(name);
  f.unit = "ns";
  f.better = Better::lower;
  const auto p = latency.find("percentiles").find(name);
  if (const auto v = p.find("value").maybe_num()) {
    f.estimate.value = *v;
    f.estimate.lower = p.find("lower").maybe_num();
    f.estimate.upper = p.find("upper").maybe_num();
    f.estimate.backed = !p.find("backed").is_bool() || p.find("backed").boolean();
    f.n = p.find("n").count();
    return f;
  }
  const auto v = latency.find(point_key).maybe_num();
  if (!v || latency.find(k::latency::count).num() <= 0) return std::nullopt;
  f.estimate.value = *v;
  f.n = latency.find(k::latency::count).count();
  return f;
}

// One load's figures (without repetitions), in a fixed order.
std::vector<NightFigure> figures_of(const DocView& load, const std::string& scenario) {
  std::vector<NightFigure> out;
  auto add = [&](std::string op, std::string figure, std::string unit, Better better, double value) {
    NightFigure f{scenario, std::move(op), std::move(figure), std::move(unit), better, {}, 0};
    f.estimate.value = value;
    out.push_back(std::move(f));
  };
  const auto totals = load.find(k::load::totals);
  if (const auto v = totals.find(k::totals::achieved_rate).maybe_num())
    add("all", "throughput", "per_second", Better::higher, *v);
  if (const auto v = totals.find(k::totals::error_rate).maybe_num())
    add("all", "error rate", "fraction", Better::lower, *v);
  for (const auto& [op, v] : load.find(k::load::operations).fields()) {
    const auto latency = v.find(k::operation::latency);
    for (auto [name, key] : {std::pair{"p50", k::latency::p50_ns}, std::pair{"p99", k::latency::p99_ns}})
      if (auto f = percentile(latency, name, key)) {
        f->scenario = scenario;
        f->operation = op;
        out.push_back(std::move(*f));
      }
    if (const auto r = v.find(k::operation::rate).maybe_num()) add(op, "throughput", "per_second", Better::higher, *r);
    if (const auto e = error_rate(v)) add(op, "error rate", "fraction", Better::lower, *e);
  }
  return out;
}

// A latency percentile of the load's merged series, seconds [from, to).
std::optional<double> series_p50(const DocView& load, std::size_t from, std::size_t to) {
  const auto series = load.find(k::load::series).items();
  core::Histogram h;
  for (std::size_t i = from; i < to && i < series.size(); ++i)
    if (const auto* v = series[i].find(k::series::histogram).value()) {
      try {
        h.merge(core::Histogram::from_json(*v));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  if (h.count() < 100) return std::nullopt;  // too few to say anything of a half
  return static_cast<double>(h.quantile(0.5));
}

}  // namespace

std::vector<NightFigure> figures_of_loads(const std::vector<json::object>& loads) {
  std::vector<NightFigure> out;
  for (const auto& l : loads) {
    const DocView load(l);
    const std::string scenario = load.find(k::envelope::config).find(k::load_config::scenario).str();
    auto figures = figures_of(load, scenario);
    const auto reps = load.find(k::repetition::repetitions).items();
    if (reps.size() > 1) {
      // Each repetition's figures, matched by name; the night's figure is their median.
      std::vector<std::vector<NightFigure>> per_rep;
      for (const auto& r : reps) per_rep.push_back(figures_of(r, scenario));
      for (auto& f : figures) {
        for (const auto& rep : per_rep)
          for (const auto& g : rep)
            if (g.key() == f.key()) f.estimate.repetitions.push_back(g.estimate.value);
        if (f.estimate.repetitions.size() == reps.size()) {
          // The median, and the repetitions' range as its interval: the
          // merged histogram's interval is of another figure (all runs as one).
          const auto [lo, hi] = std::minmax_element(f.estimate.repetitions.begin(), f.estimate.repetitions.end());
          f.estimate.value = median(f.estimate.repetitions);
          f.estimate.lower = *lo;
          f.estimate.upper = *hi;
        }
      }
    }
    for (auto& f : figures) out.push_back(std::move(f));
  }
  return out;
}

std::vector<NightFigure> ratio_figures(const json::object& comparison) {
  namespace x = k::figure;
  std::vector<NightFigure> out;
  for (const auto& f : DocView(comparison).find(k::comparison::figures).items()) {
    NightFigure n{.scenario = f.find(x::scenario).str(),
                  .operation = f.find(x::operation).str(),
                  .figure = f.find(x::figure).str(),
                  .unit = "ratio",
                  .better = f.find(x::better).str() == "higher" ? Better::higher : Better::lower};
    n.n = f.find(x::pairs).count();
    if (const auto ratio = f.find(x::ratio).maybe_num()) {
      n.estimate.value = *ratio;
      n.estimate.lower = f.find(x::ratio_lower).maybe_num();
      n.estimate.upper = f.find(x::ratio_upper).maybe_num();
    } else {
      n.estimate.value = 1;
      n.estimate.backed = false;
    }
    out.push_back(std::move(n));
  }
  return out;
}

json::object figure_json(const NightFigure& f) {
  namespace nf = k::night_figure;  // the keys the trend page reads them by
  json::object o{{nf::scenario, f.scenario},
                 {nf::operation, f.operation},
                 {nf::figure, f.figure},
                 {nf::unit, f.unit},
                 {"better", f.better == Better::lower ? "lower" : "higher"},
                 {nf::value, f.estimate.value},
                 {nf::backed, f.estimate.backed}};
  if (f.estimate.lower) o[nf::lower] = *f.estimate.lower;
  if (f.estimate.upper) o[nf::upper] = *f.estimate.upper;
  if (f.n) o["n"] = f.n;
  if (!f.estimate.repetitions.empty()) o["repetitions"] = json::value_from(f.estimate.repetitions);
  return o;
}

json::object fingerprint_fields(const json::object& run) {
  const DocView d(run);
  const auto config = d.find(k::envelope::config);
  json::array loads;
  for (const auto& l : d.find(k::run::loads).items()) {
    const auto c = l.find(k::envelope::config);
    json::object load;
    for (auto key : {k::load_config::scenario, k::load_config::connections, k::load_config::rate,
                     k::load_config::threads, k::load_config::duration_s, k::load_config::callers,
                     k::load_config::mix, k::load_config::timeout_ms, k::load_config::path})
      if (const auto* v = c.find(key).value()) load[key] = *v;
    const auto shards = l.find(k::load::shards).items();
    load["shards"] = shards.empty() ? 1.0 : shards.front().find(k::shard::count).num();
    const auto reps = l.find(k::repetition::repetitions).items();
    load["repeat"] = reps.empty() ? 1 : reps.size();
    loads.push_back(std::move(load));
  }
  const auto target = d.find(k::envelope::target);
  // The embedded service listens on a new port each night: it is one target.
  const std::string url = target.find(k::target::embedded).boolean() ? "embedded" : target.find(k::target::base_url).str();
  const auto* driver = config.find(k::run_config::call_driver).value();
  json::object fields{{"loads", std::move(loads)},
                      {"profile_hash", config.find(k::run_config::profile_hash).str()},
                      {"call_driver", driver ? *driver : json::value("http")},
                      {"target", url},
                      {"channel", target.find(k::target::channel).str()}};
  // Nights with a control arm judge ratios to it: another series for each control.
  if (const std::string control = config.find(k::run_config::control).str(); !control.empty()) fields["control"] = control;
  // A/B nights (--against) are their own series: the baseline deployment and
  // how both were loaded. Absent otherwise, so single-target hashes stay as recorded.
  if (const auto against = d.find(k::run::comparison).find(k::comparison::against); against.object()) {
    json::object ab;
    for (auto key : {k::against::base_url, k::against::design, k::against::pairs, k::against::duration_s})
      if (const auto* v = against.find(key).value()) ab[key] = *v;
    fields["against"] = std::move(ab);
  }
  return fields;
}

std::string fingerprint_hash(const json::object& fields) { return hash_text(json::serialize(fields)); }

std::string hash_text(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> unreliable_reasons(const std::vector<json::object>& loads, double limit_pct) {
  std::vector<std::string> out;
  for (const auto& l : loads) {
    const DocView load(l);
    const std::string scenario = load.find(k::envelope::config).find(k::load_config::scenario).str();
    const auto verdict = load.find(k::envelope::verdict);
    if (verdict.find(k::verdict::valid).is_bool() && !verdict.find(k::verdict::valid).boolean())
      out.push_back(scenario + " load INVALID: the generator, not the target, limited its figures");
    const auto n = load.find(k::load::series).items().size();
    const auto first = series_p50(load, 0, n / 2), second = series_p50(load, n / 2, n);
    if (first && second && *first > 0) {
      const double change = (*second - *first) / *first * 100.0;
      if (std::abs(change) > limit_pct)
        out.push_back(scenario + " load: p50 of the second half " + results::fixed(change, 1) + "% against the first (limit " +
                      results::fixed(limit_pct, 1) + "%): a trend or a warm-up inside the load");
    }
  }
  return out;
}

}  // namespace crh::nightly
