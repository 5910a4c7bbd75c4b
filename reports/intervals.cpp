// Percentiles with their intervals, read leniently from a load document.
#include "reports/intervals.hpp"

#include <cctype>

#include "results/keys_load.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace k = results::keys;
namespace ik = results::keys::percentile;
using results::DocView;

namespace {

struct Named {
  std::string_view name;
  double q;
  std::string_view point_key;  // the point value every schema version has
};
constexpr Named kPercentiles[] = {{ik::p50, 0.5, k::latency::p50_ns},
                                  {ik::p90, 0.9, k::latency::p90_ns},
                                  {ik::p99, 0.99, k::latency::p99_ns},
                                  {ik::p999, 0.999, k::latency::p999_ns}};

// The number part and the unit of a formatted figure: "1.24 ms" -> {"1.24", " ms"}.
std::pair<std::string, std::string> split_unit(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == '-' ||
                             text[i] == '+'))
    ++i;
  return {text.substr(0, i), text.substr(i)};
}

}  // namespace

bool has_intervals(const DocView& latency) { return latency.find(k::latency::percentiles).is_object(); }

std::vector<ShownPercentile> percentiles_of(const DocView& latency) {
  std::vector<ShownPercentile> out;
  const auto all = latency.find(k::latency::percentiles);  // absent before intervals existed
  for (const auto& [name, q, point_key] : kPercentiles) {
    ShownPercentile p;
    p.name = std::string(name);
    p.q = q;
    const auto with = all.is_object() ? all.find(name) : DocView();
    if (!with.is_object()) {
      p.value = latency[point_key].num();
      out.push_back(std::move(p));
      continue;
    }
    p.value = with[ik::value].num();
    p.lower = with[ik::lower].maybe_num();
    p.upper = with[ik::upper].maybe_num();
    p.n = with[ik::n].count();
    const auto backed = with.find(ik::backed);
    p.backed = !backed.is_bool() || backed.boolean();
    p.beyond = with.find(ik::beyond).num();
    p.backing_s = with.find(ik::backing_s).maybe_num();
    p.method = with.find(ik::method).str();
    p.blocks_absent = !with.find(ik::blocks).is_object();
    p.note = with.find(ik::note).str();
    out.push_back(std::move(p));
  }
  return out;
}

std::string interval_text(double value, std::optional<double> lower, std::optional<double> upper,
                          const std::function<std::string(double)>& format) {
  if (!lower || !upper) return {};
  const auto unit = split_unit(format(value)).second;
  auto bound = [&](double v) {
    auto [number, u] = split_unit(format(v));
    return u == unit ? number : number + u;
  };
  return "[" + bound(*lower) + ", " + bound(*upper) + "]";
}

std::string not_backed_text(const ShownPercentile& p) {
  std::string out = fixed(static_cast<double>(p.n), 0) + " samples";
  if (p.backing_s)
    out += "; ~" + (*p.backing_s < 100 ? fixed(*p.backing_s, 0) + " s" : fixed(*p.backing_s / 60, 0) + " min") +
           " at this rate would back it";
  return out;
}

std::string percentile_text(const ShownPercentile& p) {
  const std::string value = format_ns(p.value);
  if (!p.backed) return value + " (not backed: " + not_backed_text(p) + ")";
  const std::string interval = interval_text(p.value, p.lower, p.upper, format_ns);
  return interval.empty() ? value : value + " " + interval;
}

}  // namespace crh::reports
