// A load's outages in its result: see outage_result.hpp. Also the parsing of
// a load's thresholds, which adds the default outage limits.
#include "loadgen/outage_result.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <stdexcept>

#include "results/json_read.hpp"
#include "results/keys_load.hpp"

namespace crh::loadgen {
namespace json = boost::json;
namespace k = results::keys;

namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

json::object answers_json(const DownAnswers& a) {
  json::object out;
  for (std::size_t i = 0; i < kFailures; ++i)
    if (a.failures[i]) out[to_string(static_cast<Failure>(i))] = a.failures[i];
  auto sorted = a.statuses;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [status, n] : sorted) out[std::to_string(status)] = n;
  return out;
}

DownAnswers answers_from_json(const json::object& o, const std::string& where) {
  DownAnswers a;
  for (const auto& [name, v] : o) {
    if (!v.is_number()) throw std::runtime_error(where + "." + std::string(name) + ": not a count");
    const auto n = v.to_number<std::uint64_t>();
    bool failure = false;
    for (std::size_t i = 0; i < kFailures && !failure; ++i)
      if (to_string(static_cast<Failure>(i)) == name) {
        a.add(0, static_cast<Failure>(i), n);
        failure = true;
      }
    if (failure) continue;
    const std::string text(name);
    std::size_t used = 0;
    unsigned long status = 0;
    try {
      status = std::stoul(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || status < 100 || status > 999)
      throw std::runtime_error(where + ": \"" + text + "\" is neither a failure nor a status");
    a.add(static_cast<unsigned>(status), Failure::reset, n);
  }
  return a;
}

json::object stretch_json(const Outage& o) {
  namespace x = k::outage;
  return json::object{{x::start_s, seconds(o.start_ns)},
                      {x::end_s, seconds(o.end_ns)},
                      {x::duration_s, seconds(o.duration_ns())},
                      {x::first_down_s, seconds(o.first_down_ns)},
                      {x::last_down_s, seconds(o.last_down_ns)},
                      {x::from_start, o.from_start},
                      {x::to_end, o.to_end},
                      {x::answers, answers_json(o.answers)}};
}

}  // namespace

json::object outages_json(const LoadResult& r, int connections) {
  namespace o = k::outages;
  namespace t = k::outage_timeline;
  const auto summary = summarize(r.outages, r.wall_s);
  json::array stretches;
  for (const auto& s : summary.stretches)
    if (stretches.size() < kMaxStretches) stretches.push_back(stretch_json(s));
  Timeline bounded = r.outages.timeline;
  const bool complete = bounded.bound(kMaxTimelineEntries) && r.outages.timeline_complete;
  json::array lit, down;
  for (const auto& s : bounded.lit()) lit.push_back(json::array{s.from_ns, s.to_ns});
  for (const auto& d : bounded.downs())
    down.push_back(json::object{{t::from_ns, d.from_ns}, {t::to_ns, d.to_ns}, {t::answers, answers_json(d.answers)}});
  std::uint64_t requests = 0;
  for (const auto& s : r.stats.ops) requests += s.count();
  namespace b = k::back_off;
  return json::object{
      {o::count, summary.stretches.size()},
      {o::down_s, seconds(summary.down_ns)},
      {o::longest_s, seconds(summary.longest_ns)},
      {o::unavailable, summary.unavailable},
      {o::gap_ms, Timeline::kGapNs / 1'000'000},
      {o::stretches, std::move(stretches)},
      {o::back_off, json::object{{b::count, r.outages.back_offs},
                                 {b::seconds, r.outages.back_off_s},
                                 {b::attempts_lost, std::round(attempts_lost(r.outages, requests, connections, r.wall_s))}}},
      {o::timeline, json::object{{t::lit, std::move(lit)}, {t::down, std::move(down)}, {t::complete, complete}}}};
}

void read_outages(const json::object& doc, LoadResult& r) {
  const auto* value = doc.if_contains(k::load::outages);
  if (!value) return;  // an older document
  namespace o = k::outages;
  namespace t = k::outage_timeline;
  const std::string where(k::load::outages);
  const auto& outages = results::as_object(*value, where);
  const auto& back_off = results::object_at(outages, o::back_off, where);
  r.outages.back_offs = results::count_at(back_off, k::back_off::count, where + ".back_off");
  r.outages.back_off_s = results::number_at(back_off, k::back_off::seconds, where + ".back_off");
  const auto& timeline = results::object_at(outages, o::timeline, where);
  const std::string tw = where + ".timeline";
  r.outages.timeline_complete = results::bool_at(timeline, t::complete, tw);
  for (const auto& v : results::array_at(timeline, t::lit, tw)) {
    const auto* span = v.if_array();
    if (!span || span->size() != 2 || !(*span)[0].is_int64() || !(*span)[1].is_int64())
      throw std::runtime_error(tw + ".lit[]: expected [from_ns, to_ns]");
    r.outages.timeline.add_lit({(*span)[0].as_int64(), (*span)[1].as_int64()});
  }
  for (const auto& v : results::array_at(timeline, t::down, tw)) {
    const auto& d = results::as_object(v, tw + ".down[]");
    r.outages.timeline.add_down({results::integer_at(d, t::from_ns, tw + ".down[]"),
                                 results::integer_at(d, t::to_ns, tw + ".down[]"),
                                 answers_from_json(results::object_at(d, t::answers, tw + ".down[]"), tw + ".down[].answers")});
  }
  r.outages.timeline.normalize();
}

std::optional<double> outage_measured(const Threshold& t, const LoadResult& r) {
  if (!t.is_outage_max() && !t.is_unavailable()) return std::nullopt;
  const auto summary = summarize(r.outages, r.wall_s);
  return t.is_outage_max() ? static_cast<double>(summary.longest_ns) : summary.unavailable;
}

std::optional<std::string> outage_reason(const LoadResult& r, const std::vector<ThresholdVerdict>& verdicts) {
  const bool breached = std::any_of(verdicts.begin(), verdicts.end(), [](const ThresholdVerdict& v) {
    return !v.held && !v.deferred && (v.threshold.is_outage_max() || v.threshold.is_unavailable());
  });
  if (!breached) return std::nullopt;
  const auto summary = summarize(r.outages, r.wall_s);
  const Outage* longest = summary.longest();
  if (!longest) return std::nullopt;
  return "the target was down (requests sent, none succeeded) " + std::to_string(summary.stretches.size()) +
         " time(s); the longest from " + describe(*longest);
}

std::vector<Threshold> parse_thresholds(const std::vector<std::string>& texts) {
  std::vector<Threshold> out;
  for (const auto& text : texts) {
    Threshold t = parse_threshold(text);
    if (!t.subject.empty() && !t.is_outage_max() && !oracle::op_kind_by_name(t.subject)) {
      std::string known;
      for (std::size_t i = 0; i < oracle::kOpKinds; ++i)
        known += (i ? ", " : "") + std::string(to_string(static_cast<oracle::OpKind>(i)));
      throw std::invalid_argument("threshold \"" + t.text + "\": unknown operation \"" + t.subject +
                                  "\" (expected one of " + known + ", or outage.max)");
    }
    out.push_back(std::move(t));
  }
  // The defaults, each unless the user limited the same figure of the whole run.
  auto add_default = [&out](std::string_view text, auto same) {
    if (std::any_of(out.begin(), out.end(), same)) return;
    out.push_back(parse_threshold(text));
    out.back().implicit = true;
  };
  add_default(kDefaultErrorLimit, [](const Threshold& t) { return t.subject.empty() && t.statistic == "errors"; });
  add_default(kDefaultOutageLimit, [](const Threshold& t) { return t.is_outage_max(); });
  add_default(kDefaultUnavailableLimit, [](const Threshold& t) { return t.is_unavailable(); });
  return out;
}

}  // namespace crh::loadgen
