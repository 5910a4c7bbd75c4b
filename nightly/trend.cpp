#include "nightly/trend.hpp"

#include <boost/json.hpp>

#include "results/keys_run.hpp"
#include "results/keys_trend.hpp"
#include "results/view.hpp"
#include "nightly/compare.hpp"
#include "nightly/figures.hpp"

namespace crh::nightly {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;

namespace {

// Tonight's side of the gate, as the last night measured it.
Tonight tonight_of(const Night& last) {
  Tonight t;
  t.figures = last.figures;
  t.fingerprint = last.fingerprint;
  t.started_at = last.started_at;
  t.tool_version = last.tool_version;
  t.cpu = last.cpu;
  return t;
}

json::object night_json(const Night& n) {
  namespace t = k::trend_night;
  json::array figures;
  for (const auto& f : n.figures) figures.push_back(figure_json(f));
  return json::object{{t::night, n.id},
                      {t::started_at, n.started_at},
                      {t::status, n.status},
                      {t::exit_code, n.exit_code},
                      {t::reason, n.reason},
                      {t::comparable, n.comparable},
                      {t::fingerprint, n.fingerprint},
                      {t::tool_version, n.tool_version},
                      {t::cpu, n.cpu},
                      {t::cores, n.cores},
                      {t::report, n.report},
                      {t::figures, std::move(figures)}};
}

}  // namespace

json::object trend_document(const std::vector<Night>& record, const std::vector<std::string>& accepted,
                            const std::string& dir, double limit_pct) {
  json::array nights;
  for (const auto& n : record) nights.push_back(night_json(n));
  json::object doc{{k::trend::schema, k::schema_trend},
                   {k::trend::dir, dir},
                   {k::trend::nights, std::move(nights)},
                   {k::trend::accepted, json::value_from(accepted)},
                   {k::trend::window_first, nullptr}};
  if (record.empty()) return doc;
  const auto& last = record.back();
  // A side-by-side night was judged against its baseline deployment, not the record: shown as it was.
  if (DocView(last.gate).find(k::comparison::mode).str() == "against") {
    doc[k::trend::comparison] = last.gate;
    return doc;
  }
  auto comparison = compare_with_nights(tonight_of(last), record, accepted, dir, limit_pct);
  // A control-arm night's figures are ratios to its control: the page says which, and how sure each is.
  if (const auto* control = last.gate.if_contains(k::comparison::control)) comparison[k::comparison::control] = *control;
  doc[k::trend::comparison] = std::move(comparison);
  // The band is drawn from the first night the gate used: the last kWindow of the window.
  const auto window = comparison_window(record, last.fingerprint, accepted, last.started_at);
  if (!window.empty()) doc[k::trend::window_first] = window[window.size() > kWindow ? window.size() - kWindow : 0]->id;
  return doc;
}

}  // namespace crh::nightly
