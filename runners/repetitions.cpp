// Repetitions of a load merged into one document.
#include "repetitions.hpp"

#include <algorithm>
#include <stdexcept>

#include <boost/json.hpp>

#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "loadgen/readback.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace k = results::keys;

namespace {

// What one repetition measured, without its histograms (the merged document has them).
json::object repetition_figures(std::size_t index, const json::object& doc) {
  json::object totals = doc.at(k::load::totals).as_object();
  totals.erase(k::totals::lag);
  json::object ops;
  if (const auto* all = doc.if_contains(k::load::operations); all && all->is_object())
    for (const auto& [name, v] : all->as_object()) {
      const auto& op = v.as_object();
      json::object latency;
      if (const auto* l = op.if_contains(k::operation::latency); l && l->is_object())
        for (const auto& [key, value] : l->as_object())
          if (key != k::latency::histogram) latency[key] = value;
      json::object figures{{k::operation::latency, std::move(latency)}};
      for (auto key : {k::operation::count, k::operation::rate, k::operation::errors})
        if (const auto* x = op.if_contains(key)) figures[key] = *x;
      ops[name] = std::move(figures);
    }
  const auto& verdict = doc.at(k::envelope::verdict).as_object();
  return json::object{{k::repetition::index, index},
                      {k::envelope::verdict, verdict},
                      {k::repetition::totals, std::move(totals)},
                      {k::repetition::operations, std::move(ops)}};
}

// b after a: what adds, adds; the measured time is the sum, so rates are the whole time's.
void append(loadgen::LoadRun& a, const loadgen::LoadRun& b) {
  auto& r = a.result;
  const double completed = r.achieved_rate * r.wall_s + b.result.achieved_rate * b.result.wall_s;
  r.stats.merge(b.result.stats);
  r.stats.coarsen(loadgen::Stats::kMaxSeriesPoints);
  r.violation_count += b.result.violation_count;
  for (const auto& v : b.result.violations)
    if (r.violations.size() < a.config.max_violations_kept) r.violations.push_back(v);
  r.history_ops += b.result.history_ops;
  // Outages: b's after a's measured time, as the summed time says (an outage
  // of a later repetition must not hide under an earlier one's successes).
  r.outages.timeline.merge(b.result.outages.timeline, static_cast<std::int64_t>(r.wall_s * 1e9));
  r.outages.back_offs += b.result.outages.back_offs;
  r.outages.back_off_s += b.result.outages.back_off_s;
  r.outages.timeline_complete = r.outages.timeline_complete && b.result.outages.timeline_complete;
  r.wall_s += b.result.wall_s;
  r.achieved_rate = r.wall_s > 0 ? completed / r.wall_s : 0;
  r.generator_cpu = std::max(r.generator_cpu, b.result.generator_cpu);
  for (const auto& why : b.result.invalid)
    if (std::find(r.invalid.begin(), r.invalid.end(), why) == r.invalid.end()) r.invalid.push_back(why);
  r.interrupted = r.interrupted || b.result.interrupted;
  if (b.result.wire) {
    if (r.wire) r.wire->merge(*b.result.wire);
    else r.wire = b.result.wire;
  }
  a.info.restore_problems.insert(a.info.restore_problems.end(), b.info.restore_problems.begin(),
                                 b.info.restore_problems.end());
}

}  // namespace

json::object merge_repetitions(const std::vector<json::object>& documents) {
  if (documents.size() == 1) return documents.front();
  std::optional<loadgen::LoadRun> merged;
  json::array repetitions;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    auto run = loadgen::read_load_document(documents[i]);
    if (merged) append(*merged, run);
    else merged = std::move(run);
    repetitions.push_back(repetition_figures(i + 1, documents[i]));
  }
  auto doc = loadgen::result_document(*merged);
  doc[k::repetition::repetitions] = std::move(repetitions);
  return doc;
}

}  // namespace crh::runners
