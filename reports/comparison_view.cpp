// The comparison read once for the terminal, HTML and JUnit renderings.
#include "reports/comparison_view.hpp"

#include <algorithm>

#include "results/keys_run.hpp"
#include "reports/intervals.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace k = results::keys;
using results::DocView;

namespace {

ShownFigure read_figure(const DocView& f) {
  namespace g = k::figure;
  ShownFigure s;
  s.scenario = clean(f[g::scenario]);
  s.operation = clean(f[g::operation]);
  s.figure = clean(f[g::figure]);
  s.unit = clean(f[g::unit]);
  s.current = f[g::current].num();
  s.reference = f[g::baseline].num();
  s.change_pct = f[g::change_pct].maybe_num();  // null: the reference was 0
  s.worse_pct = f[g::worse_pct].maybe_num();
  s.note = clean(f.find(g::note));
  // Older comparisons say only whether it regressed beyond the limit.
  const auto verdict = f.find(g::verdict);
  s.verdict = verdict.is_string() ? clean(verdict) : f[g::regressed].boolean() ? "regressed" : "no change";
  s.current_lower = f.find(g::current_lower).maybe_num();
  s.current_upper = f.find(g::current_upper).maybe_num();
  s.band_lower = f.find(g::band_lower).maybe_num();
  s.band_upper = f.find(g::band_upper).maybe_num();
  s.change_lower_pct = f.find(g::change_lower_pct).maybe_num();
  s.change_upper_pct = f.find(g::change_upper_pct).maybe_num();
  s.min_detectable_pct = f.find(g::min_detectable_pct).maybe_num();
  s.n = f.find(g::n).count();
  const auto backed = f.find(g::backed);
  s.backed = !backed.is_bool() || backed.boolean();
  for (const auto& r : f.find(g::repetitions).items()) s.repetitions.push_back(r.num());
  s.nights_used = f.find(g::nights_used).count();
  s.pairs = f.find(g::pairs).count();
  s.rule = clean(f.find(g::rule));
  s.reason = clean(f.find(g::reason));
  return s;
}

}  // namespace

int verdict_rank(std::string_view verdict) {
  constexpr std::string_view order[] = {"regressed", "inconclusive", "not backed", "too noisy", "improved"};
  for (int i = 0; i < 5; ++i)
    if (verdict == order[i]) return i;
  return 5;
}

std::string ShownFigure::format(double v) const { return format_figure(unit, v); }

std::string ShownFigure::current_text() const {
  const std::string interval =
      interval_text(current, current_lower, current_upper, [this](double v) { return format(v); });
  return format(current) + (interval.empty() ? "" : " " + interval);
}

std::string ShownFigure::band_text() const {
  if (!band_lower || !band_upper) return {};
  return interval_text(*band_lower, band_lower, band_upper, [this](double v) { return format(v); });
}

std::string ShownFigure::change_text() const {
  if (!change_pct) return "new";
  std::string out = signed_percent(*change_pct);
  if (change_lower_pct && change_upper_pct)
    out += " [" + signed_percent(*change_lower_pct).substr(0, signed_percent(*change_lower_pct).size() - 1) + ", " +
           signed_percent(*change_upper_pct) + "]";  // "+26.7% [+22.1, +31.0%]"
  return out;
}

std::string ShownFigure::paired_change_text() const {
  return change_pct ? change_text() : "not measured on both sides";
}

std::string ShownFigure::shown_or_unmeasured(double v) const { return v > 0 ? format(v) : "not measured"; }

ShownComparison read_comparison(const DocView& c) {
  namespace cmp = k::comparison;
  namespace w = k::nights_window;
  namespace cp = k::change_point;
  ShownComparison s;
  s.limit_pct = c[cmp::max_regression_pct].num();
  s.regressions = c[cmp::regressions].count();
  s.min_error_rate_rise = c.find(cmp::min_error_rate_rise).maybe_num();
  s.nights = c.find(cmp::mode).str() == "nights";
  s.against = c.find(cmp::mode).str() == "against";
  if (s.against) {
    namespace a = k::against;
    const auto how = c[cmp::against];
    s.baseline_url = clean(how[a::base_url]);
    s.design = clean(how[a::design]);
    s.pairs = how[a::pairs].count();
    s.duration_s = how[a::duration_s].num();
    s.confidence = how[a::confidence].num();
  } else if (s.nights) {
    const auto n = c[cmp::nights];
    s.dir = clean(n[w::dir]);
    s.recorded = n[w::recorded].count();
    s.window = n[w::window].count();
    s.fingerprint = clean(n[w::fingerprint]);
    if (const auto from = n.find(w::accepted_from); from.is_string()) s.accepted_from = clean(from);  // null: none
    if (const auto control = c.find(cmp::control); control.is_object()) {
      const auto how = control[cmp::against];
      s.control_url = clean(how[k::against::base_url]);
      s.confidence = how[k::against::confidence].num();
    }
  } else {
    const auto base = c[cmp::baseline];
    s.baseline_file = clean(base[k::baseline::file]);
    s.baseline_started_at = clean(base[k::baseline::started_at]);
    s.baseline_url = clean(base[k::baseline::base_url]);
  }
  for (const auto& f : c[cmp::figures].items()) s.figures.push_back(read_figure(f));
  std::stable_sort(s.figures.begin(), s.figures.end(), [](const ShownFigure& a, const ShownFigure& b) {
    return verdict_rank(a.verdict) < verdict_rank(b.verdict);
  });
  const auto inconclusive = c.find(cmp::inconclusive).maybe_num();
  s.inconclusive = inconclusive ? static_cast<std::uint64_t>(*inconclusive)
                                : static_cast<std::uint64_t>(std::count_if(
                                      s.figures.begin(), s.figures.end(),
                                      [](const ShownFigure& f) { return f.verdict == "inconclusive"; }));
  for (const auto& p : c.find(cmp::change_points).items())
    s.change_points.push_back({clean(p[cp::scenario]), clean(p[cp::operation]), clean(p[cp::figure]),
                               clean(p[cp::night]), clean(p.find(cp::started_at)),
                               {}, p[cp::before].num(), p[cp::after].num(), p[cp::change_pct].maybe_num(),
                               p[cp::beyond_limit].boolean(), p.find(cp::pending).boolean(),
                               static_cast<std::uint64_t>(p.find(cp::nights_at_level).maybe_num().value_or(0))});
  for (auto& p : s.change_points)
    for (const auto& f : s.figures)
      if (f.scenario == p.scenario && f.operation == p.operation && f.figure == p.figure) p.unit = f.unit;
  for (const auto& ch : c.find(cmp::changes).items())
    s.changes.push_back({clean(ch[k::change::night]), clean(ch[k::change::what]), clean(ch[k::change::from]), clean(ch[k::change::to])});
  for (const auto& n : c[cmp::notes].items()) s.notes.push_back(clean(n));
  for (const auto& u : c.find(cmp::unreliable).items()) s.unreliable.push_back(clean(u));
  return s;
}

std::string ShownChangePoint::status() const {
  if (beyond_limit) return "beyond the limit";
  if (pending)
    return "beyond the limit for " + std::to_string(nights_at_level) +
           " night(s): could not tell yet (a level fails once it lasts 3 nights)";
  return "within the limit";
}

std::string comparison_heading(const ShownComparison& c) {
  const std::string limit = "limit " + fixed(c.limit_pct, 1) + "% worse";
  if (c.against)
    return "comparison with the baseline deployment " + c.baseline_url + " (" + side_by_side_design(c.design, c.pairs, c.duration_s) + "), " + limit;
  if (!c.nights)
    return "comparison with the baseline " + c.baseline_file + " (" + c.baseline_started_at + "), " + limit;
  return "comparison with the record of nights " + c.dir + " (" + std::to_string(c.recorded) + " recorded, " +
         std::to_string(c.window) + " comparable in the window" +
         (c.accepted_from.empty() ? "" : ", accepted from " + c.accepted_from) + "; settings " + c.fingerprint + "), " +
         limit;
}

}  // namespace crh::reports
