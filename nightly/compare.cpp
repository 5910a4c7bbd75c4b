// Tonight against the record of nights: the gate per figure, change points,
// machine and version changes.
#include "nightly/compare.hpp"
#include "nightly/figures.hpp"
#include "nightly/median.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include <boost/json.hpp>

#include "results/keys_run.hpp"
#include "results/units.hpp"

namespace crh::nightly {
namespace json = boost::json;
namespace k = results::keys;

namespace {

// An error rate regresses only when it also rose by this much (one error in a
// thousand requests), as in the baseline comparison: rates near zero have no
// spread a ratio could be judged on.
constexpr double kMinErrorRateRise = 0.001;
// Change points look back this far over the level in force.
constexpr std::size_t kChangePointNights = 60;

json::value number_or_null(std::optional<double> v) {
  return v && std::isfinite(*v) ? json::value(*v) : json::value(nullptr);
}

// Error rates: against the median of the window (or the last night), worse
// by more than the limit and by at least kMinErrorRateRise.
GateResult judge_error_rate(const GateInput& in) {
  GateResult r;
  r.nights_used = in.nights.size() >= kMinNights ? std::min(in.nights.size(), kWindow) : 0;
  std::vector<double> window(in.nights.end() - static_cast<std::ptrdiff_t>(std::min(in.nights.size(), kWindow)),
                             in.nights.end());
  r.reference = r.nights_used ? median(window) : in.last_night ? in.last_night->value : 0;
  const double cur = in.tonight.value, rise = cur - r.reference;
  r.change_pct = r.reference > 0 ? rise / r.reference * 100 : (cur > 0 ? std::numeric_limits<double>::infinity() : 0);
  r.change_lower_pct = r.change_upper_pct = r.change_pct;
  r.min_detectable_pct = in.limit_pct;
  r.rule = "error rate: worse than the limit and up by at least 0.1 percentage point";
  const bool worse = r.change_pct > in.limit_pct && rise >= kMinErrorRateRise;
  const bool better = -r.change_pct > in.limit_pct && -rise >= kMinErrorRateRise;
  r.verdict = worse ? Verdict::regressed : better ? Verdict::improved : Verdict::no_change;
  r.reason = worse ? "up by " + std::to_string(rise * 100).substr(0, 5) + " percentage point(s)"
                   : "within the limit or up by less than 0.1 percentage point";
  return r;
}

json::object figure_comparison(const NightFigure& f, const GateResult& g, double limit_pct) {
  namespace x = k::figure;
  const double worse = f.better == Better::lower ? g.change_pct : -g.change_pct;
  json::object o{{x::scenario, f.scenario},
                 {x::operation, f.operation},
                 {x::figure, f.figure},
                 {x::unit, f.unit},
                 {x::better, f.better == Better::lower ? "lower" : "higher"},
                 {x::baseline, g.reference},
                 {x::current, f.estimate.value},
                 {x::current_lower, number_or_null(f.estimate.lower)},
                 {x::current_upper, number_or_null(f.estimate.upper)},
                 {x::backed, f.estimate.backed},
                 {x::band_lower, number_or_null(g.band_lower)},
                 {x::band_upper, number_or_null(g.band_upper)},
                 {x::change_pct, number_or_null(g.change_pct)},
                 {x::change_lower_pct, number_or_null(g.change_lower_pct)},
                 {x::change_upper_pct, number_or_null(g.change_upper_pct)},
                 {x::worse_pct, number_or_null(worse)},
                 {x::limit_pct, limit_pct},
                 {x::verdict, to_string(g.verdict)},
                 {x::regressed, g.verdict == Verdict::regressed},
                 {x::min_detectable_pct, number_or_null(g.min_detectable_pct)},
                 {x::nights_used, g.nights_used},
                 {x::rule, g.rule},
                 {x::reason, g.reason}};
  if (f.n) o[x::n] = f.n;
  if (!f.estimate.repetitions.empty()) o[x::repetitions] = json::value_from(f.estimate.repetitions);
  return o;
}

// Machine and version changes between consecutive nights of the window and tonight.
json::array changes_of(const std::vector<const Night*>& window, const Tonight& tonight) {
  json::array out;
  auto mark = [&](const std::string& night, std::string_view what, const std::string& from, const std::string& to) {
    if (from != to && !from.empty() && !to.empty())
      out.push_back(json::object{{k::change::night, night}, {k::change::what, what}, {k::change::from, from},
                                 {k::change::to, to}});
  };
  for (std::size_t i = 0; i < window.size(); ++i) {
    const std::string cpu = i + 1 < window.size() ? window[i + 1]->cpu : tonight.cpu;
    const std::string version = i + 1 < window.size() ? window[i + 1]->tool_version : tonight.tool_version;
    const std::string night = i + 1 < window.size() ? window[i + 1]->id : "tonight";
    mark(night, "machine", window[i]->cpu, cpu);
    mark(night, "version", window[i]->tool_version, version);
  }
  return out;
}

// Every scalar of a fingerprint by its path ("loads[0].connections").
std::map<std::string, std::string> flatten(const json::object& fields) {
  std::map<std::string, std::string> out;
  auto walk = [&](auto& self, const json::value& v, const std::string& path) -> void {
    if (const auto* o = v.if_object()) {
      for (const auto& [key, value] : *o) self(self, value, path.empty() ? std::string(key) : path + "." + std::string(key));
    } else if (const auto* a = v.if_array()) {
      for (std::size_t i = 0; i < a->size(); ++i) self(self, (*a)[i], path + "[" + std::to_string(i) + "]");
    } else {
      out[path] = json::serialize(v);
    }
  };
  walk(walk, json::value(fields), "");
  return out;
}

// "no comparable night in the record: ...", naming the fields in which
// tonight's fingerprint differs from the nearest recorded night's (the one
// differing in fewest fields, the latest of those): a changed port or
// connection count splits the record, and the reader must see which.
std::string no_comparable_night(const Tonight& tonight, const std::vector<Night>& record) {
  std::string out = "no comparable night in the record: nothing was compared, so tonight can neither regress nor "
                    "show a change";
  const Night* nearest = nullptr;
  std::vector<std::string> nearest_diffs;
  const auto mine = flatten(tonight.fingerprint_fields);
  for (const auto& n : record) {
    if (n.started_at >= tonight.started_at) continue;
    const auto theirs = flatten(n.fingerprint_fields);
    std::vector<std::string> diffs;
    for (const auto& [path, value] : mine)
      if (auto it = theirs.find(path); it == theirs.end() || it->second != value)
        diffs.push_back(path + " " + (it == theirs.end() ? "(none)" : it->second) + " -> " + value);
    for (const auto& [path, value] : theirs)
      if (!mine.contains(path)) diffs.push_back(path + " " + value + " -> (none)");
    if (diffs.empty()) continue;  // the same fingerprint: not comparable for another reason (failed, unreliable)
    if (!nearest || diffs.size() <= nearest_diffs.size()) {
      nearest = &n;
      nearest_diffs = std::move(diffs);
    }
  }
  if (!nearest) return out + (record.empty() ? " (the record is empty: tonight starts it)"
                                             : " (the nights of tonight's fingerprint did not pass, or were unreliable)");
  out += "; the nearest recorded night, " + nearest->id + ", differs in";
  for (std::size_t i = 0; i < nearest_diffs.size(); ++i) out += (i ? ", " : " ") + nearest_diffs[i];
  return out + " (the record is kept per fingerprint: a change of these starts a new one)";
}

}  // namespace

json::object compare_with_nights(const Tonight& tonight, const std::vector<Night>& record,
                                 const std::vector<std::string>& accepted, const std::string& dir, double limit_pct) {
  const auto window = comparison_window(record, tonight.fingerprint, accepted, tonight.started_at);
  std::string accepted_from;
  for (const auto* n : window)
    if (std::find(accepted.begin(), accepted.end(), n->id) != accepted.end()) accepted_from = n->id;

  json::array figures, shifts, notes;
  std::size_t regressions = 0, inconclusive = 0;
  for (const auto& f : tonight.figures) {
    GateInput in{.tonight = f.estimate,
                 .better = f.better,
                 .limit_pct = limit_pct,
                 .format = [unit = f.unit](double v) { return results::format_figure(unit, v); }};
    std::vector<const Night*> had;  // the window's nights that measured this figure
    for (const auto* n : window)
      if (const auto* g = n->find(f.key())) {
        in.nights.push_back(g->estimate.value);
        had.push_back(n);
      }
    if (had.empty()) {
      notes.emplace_back(f.key() + ": no comparable night measured it");
      continue;
    }
    in.last_night = had.back()->find(f.key())->estimate;
    const auto g = f.figure == "error rate" ? judge_error_rate(in) : judge(in);
    regressions += g.verdict == Verdict::regressed;
    inconclusive += g.verdict == Verdict::inconclusive;
    figures.push_back(figure_comparison(f, g, limit_pct));

    // A drift no single night shows: change points over the level in force and tonight.
    if (f.figure == "error rate") continue;
    const std::size_t from = had.size() > kChangePointNights ? had.size() - kChangePointNights : 0;
    std::vector<double> series(in.nights.begin() + static_cast<std::ptrdiff_t>(from), in.nights.end());
    series.push_back(f.estimate.value);
    for (const auto& cp : change_points(series, f.better, limit_pct)) {
      if (!cp.beyond_limit) continue;  // a level that moved within the limit or for the better
      const std::size_t at = from + cp.index;
      const bool tonight_began = at >= had.size();
      namespace c = k::change_point;
      shifts.push_back(json::object{{c::scenario, f.scenario},
                                           {c::operation, f.operation},
                                           {c::figure, f.figure},
                                           {c::night, tonight_began ? "tonight" : had[at]->id},
                                           {c::started_at, tonight_began ? tonight.started_at : had[at]->started_at},
                                           {c::before, cp.before},
                                           {c::after, cp.after},
                                           {c::change_pct, cp.change_pct},
                                           {c::beyond_limit, cp.fails()},
                                           {c::pending, !cp.fails()},
                                           {c::nights_at_level, cp.nights_at_level}});
    }
  }
  if (window.empty()) notes.emplace(notes.begin(), no_comparable_night(tonight, record));
  else if (window.size() < kMinNights)
    notes.emplace_back(std::to_string(window.size()) + " comparable night(s) in the record (fewer than " +
                       std::to_string(kMinNights) + "): judged against the last one with its interval");
  // Regressions first, the worst first: what a reader looks for; then could-not-tell.
  auto rank = [](const json::value& f) {
    const auto v = f.at(k::figure::verdict).as_string();
    return v == "regressed" ? 0 : v == "inconclusive" ? 1 : v == "improved" ? 2 : 3;
  };
  std::stable_sort(figures.begin(), figures.end(),
                   [&](const json::value& a, const json::value& b) { return rank(a) < rank(b); });
  namespace cmp = k::comparison;
  namespace w = k::nights_window;
  return json::object{
      {cmp::mode, "nights"},
      {cmp::nights, json::object{{w::dir, dir},
                                 {w::recorded, record.size()},
                                 {w::window, std::min(window.size(), kWindow)},
                                 {w::fingerprint, tonight.fingerprint},
                                 {w::accepted_from, accepted_from.empty() ? json::value(nullptr) : json::value(accepted_from)}}},
      {cmp::max_regression_pct, limit_pct},
      {cmp::figures, std::move(figures)},
      {cmp::regressions, regressions},
      {cmp::inconclusive, inconclusive},
      {cmp::change_points, std::move(shifts)},
      {cmp::changes, changes_of(window, tonight)},
      {cmp::unreliable, json::value_from(tonight.unreliable)},
      {cmp::notes, std::move(notes)},
      {cmp::min_error_rate_rise, kMinErrorRateRise}};
}

}  // namespace crh::nightly
