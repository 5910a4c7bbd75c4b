// Shards and repetitions of a load merged: what adds up however they ran, then
// what their timing makes differ.
#include "loadgen/merge.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include <boost/json.hpp>

#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"

namespace crh::loadgen {
namespace json = boost::json;
namespace k = results::keys;

namespace {

void require_same_scenario(const LoadRun& a, const LoadRun& b) {
  if (a.config.scenario != b.config.scenario)
    throw std::invalid_argument("cannot merge a " + std::string(to_string(a.config.scenario)) + " result with a " +
                                std::string(to_string(b.config.scenario)) + " result");
}

template <typename T>
void add_missing(std::vector<T>& to, const std::vector<T>& from) {
  for (const auto& x : from)
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

// What adds up whether a and b ran side by side or one after the other:
// histograms, violations, the history's judgement, the problems met. The
// per-second series merge index by index (second i of each), in both cases:
// the nightly gate reads a trend inside a load from its halves.
void add_measured(LoadRun& a, const LoadRun& b) {
  auto& r = a.result;
  const auto& o = b.result;
  r.stats.merge(o.stats);
  r.stats.coarsen(Stats::kMaxSeriesPoints);
  r.violation_count += o.violation_count;
  for (const auto& v : o.violations)
    if (r.violations.size() < a.config.max_violations_kept) r.violations.push_back(v);
  auto& j = r.judgement;  // each shard judged its own key and agents; each repetition its own history
  j.judged = j.judged || o.judgement.judged;
  j.database_reads += o.judgement.database_reads;
  j.agent_reads += o.judgement.agent_reads;
  j.tags += o.judgement.tags;
  add_missing(j.unjudged, o.judgement.unjudged);
  r.history_ops += o.history_ops;
  r.generator_cpu = std::max(r.generator_cpu, o.generator_cpu);
  add_missing(r.invalid, o.invalid);
  r.interrupted = r.interrupted || o.interrupted;
  r.outages.back_offs += o.outages.back_offs;
  r.outages.back_off_s += o.outages.back_off_s;
  r.outages.timeline_complete = r.outages.timeline_complete && o.outages.timeline_complete;
  if (o.wire) {  // per operation, the wire figures merged with the rest of stats
    if (r.wire) r.wire->merge(*o.wire);
    else r.wire = o.wire;
  }
  for (const auto& t : b.thresholds)
    if (std::none_of(a.thresholds.begin(), a.thresholds.end(),
                     [&](const Threshold& mine) { return mine.text == t.text; }))
      a.thresholds.push_back(t);
  a.info.started = std::min(a.info.started, b.info.started);
  a.info.embedded = a.info.embedded && b.info.embedded;
  a.info.restore_problems.insert(a.info.restore_problems.end(), b.info.restore_problems.begin(),
                                 b.info.restore_problems.end());
}

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

}  // namespace

LoadRun merge_load_runs(LoadRun a, const LoadRun& b) {
  require_same_scenario(a, b);
  auto& c = a.config;
  c.connections += b.config.connections;
  c.threads += b.config.threads;
  c.rate += b.config.rate;
  c.duration = std::max(c.duration, b.config.duration);
  c.warmup = std::max(c.warmup, b.config.warmup);
  if (c.history_file != b.config.history_file)
    c.history_file += (c.history_file.empty() ? "" : ", ") + b.config.history_file;
  add_measured(a, b);
  auto& r = a.result;
  r.wall_s = std::max(r.wall_s, b.result.wall_s);
  r.intended_rate += b.result.intended_rate;
  r.achieved_rate += b.result.achieved_rate;
  r.outages.timeline.merge(b.result.outages.timeline);  // up on any shard is up
  // The shards ran side by side: their connections add, when both are known.
  r.connections = r.connections > 0 && b.result.connections > 0 ? r.connections + b.result.connections : 0;
  r.shards.insert(r.shards.end(), b.result.shards.begin(), b.result.shards.end());
  r.shards_left_out.insert(r.shards_left_out.end(), b.result.shards_left_out.begin(), b.result.shards_left_out.end());
  r.shards_merged = r.shards_merged || b.result.shards_merged;
  return a;
}

LoadRun append_load_run(LoadRun a, const LoadRun& b) {
  require_same_scenario(a, b);
  auto& r = a.result;
  const double completed = r.achieved_rate * r.wall_s + b.result.achieved_rate * b.result.wall_s;
  // b's outages after a's measured time (an outage of a later repetition must
  // not hide under an earlier one's successes).
  r.outages.timeline.merge(b.result.outages.timeline, static_cast<std::int64_t>(r.wall_s * 1e9));
  add_measured(a, b);
  r.wall_s += b.result.wall_s;
  r.achieved_rate = r.wall_s > 0 ? completed / r.wall_s : 0;
  return a;
}

json::object merge_repetitions(const std::vector<json::object>& documents) {
  if (documents.size() == 1) return documents.front();
  std::optional<LoadRun> merged;
  json::array repetitions;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    auto run = read_load_document(documents[i]);
    merged = merged ? append_load_run(std::move(*merged), run) : std::move(run);
    repetitions.push_back(repetition_figures(i + 1, documents[i]));
  }
  auto doc = result_document(*merged);
  doc[k::repetition::repetitions] = std::move(repetitions);
  return doc;
}

}  // namespace crh::loadgen
