// Outages: see outage.hpp.
#include "loadgen/outage.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace crh::loadgen {

void DownAnswers::add(unsigned status, Failure failure, std::uint64_t n) {
  if (status == 0) {
    failures[static_cast<std::size_t>(failure)] += n;
    return;
  }
  for (auto& [s, count] : statuses)
    if (s == status) {
      count += n;
      return;
    }
  statuses.emplace_back(status, n);
}

void DownAnswers::merge(const DownAnswers& other) {
  for (std::size_t i = 0; i < kFailures; ++i) failures[i] += other.failures[i];
  for (const auto& [s, n] : other.statuses) add(s, Failure::reset, n);
}

std::uint64_t DownAnswers::total() const {
  std::uint64_t n = 0;
  for (auto f : failures) n += f;
  for (const auto& [s, count] : statuses) n += count;
  return n;
}

std::string DownAnswers::text() const {
  std::string out;
  auto item = [&out](const std::string& what, std::uint64_t n) {
    out += (out.empty() ? "" : ", ") + what + "×" + std::to_string(n);
  };
  for (std::size_t i = 0; i < kFailures; ++i)
    if (failures[i]) item(std::string(to_string(static_cast<Failure>(i))), failures[i]);
  auto sorted = statuses;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [s, n] : sorted) item("HTTP " + std::to_string(s), n);
  return out;
}

namespace {

bool covered(const LitSpan& s, const DownRun& d) { return d.from_ns >= s.from_ns && d.to_ns <= s.to_ns; }

// The first time of a down run outside every lit span (its start, unless a
// lit span covers that): which dark gap it belongs to.
std::int64_t dark_time(const std::vector<LitSpan>& lit, const DownRun& d) {
  auto after = std::upper_bound(lit.begin(), lit.end(), d.from_ns,
                                [](std::int64_t t, const LitSpan& s) { return t < s.from_ns; });
  if (after != lit.begin() && std::prev(after)->to_ns >= d.from_ns) return d.to_ns;
  return d.from_ns;
}

// The index of the gap before lit[i] (lit.size(): after the last) that holds `t`.
std::size_t gap_of(const std::vector<LitSpan>& lit, std::int64_t t) {
  return static_cast<std::size_t>(std::upper_bound(lit.begin(), lit.end(), t,
                                                   [](std::int64_t x, const LitSpan& s) { return x < s.from_ns; }) -
                                  lit.begin());
}

// Down runs are cut on a grid of kGapNs, so that every way of splitting the
// same answers (threads, shards) merges into the same runs.
std::int64_t bucket(std::int64_t t) { return t >= 0 ? t / Timeline::kGapNs : -((-t - 1) / Timeline::kGapNs) - 1; }

}  // namespace

void Timeline::up(std::int64_t t) {
  up_since_down_ = true;
  if (!lit_.empty()) {
    auto& last = lit_.back();
    if (t >= last.from_ns && t <= last.to_ns + kGapNs) {
      last.to_ns = std::max(last.to_ns, t);
      while (!downs_.empty() && covered(last, downs_.back())) downs_.pop_back();
      return;
    }
    if (t < last.from_ns) sorted_ = false;
  }
  lit_.push_back({t, t});
  if (!sorted_ && lit_.size() % 4096 == 0) normalize();  // answers out of order: kept bounded
}

void Timeline::down(std::int64_t t, unsigned status, Failure failure) {
  if (!lit_.empty() && t >= lit_.back().from_ns && t <= lit_.back().to_ns) return;  // seen up around it
  if (!downs_.empty() && !up_since_down_ && t >= downs_.back().from_ns && bucket(t) == bucket(downs_.back().from_ns)) {
    auto& run = downs_.back();
    run.to_ns = std::max(run.to_ns, t);
    run.answers.add(status, failure);
    return;
  }
  if (!downs_.empty() && t < downs_.back().from_ns) sorted_ = false;
  up_since_down_ = false;
  DownRun run{t, t, {}};
  run.answers.add(status, failure);
  downs_.push_back(std::move(run));
  if (!sorted_ && downs_.size() % 4096 == 0) normalize();
}

void Timeline::add_lit(LitSpan s) {
  lit_.push_back(s);
  sorted_ = false;
}

void Timeline::add_down(DownRun d) {
  downs_.push_back(std::move(d));
  sorted_ = false;
}

void Timeline::merge(const Timeline& other, std::int64_t offset_ns) {
  for (auto s : other.lit_) lit_.push_back({s.from_ns + offset_ns, s.to_ns + offset_ns});
  for (auto d : other.downs_) {
    d.from_ns += offset_ns;
    d.to_ns += offset_ns;
    downs_.push_back(std::move(d));
  }
  sorted_ = false;
  normalize();
}

void Timeline::normalize() {
  std::sort(lit_.begin(), lit_.end(), [](const LitSpan& a, const LitSpan& b) { return a.from_ns < b.from_ns; });
  std::vector<LitSpan> lit;
  for (const auto& s : lit_) {
    if (!lit.empty() && s.from_ns <= lit.back().to_ns + kGapNs) lit.back().to_ns = std::max(lit.back().to_ns, s.to_ns);
    else lit.push_back(s);
  }
  lit_ = std::move(lit);
  std::sort(downs_.begin(), downs_.end(), [](const DownRun& a, const DownRun& b) { return a.from_ns < b.from_ns; });
  std::erase_if(downs_, [this](const DownRun& d) {
    const std::size_t g = gap_of(lit_, d.from_ns);
    return g > 0 && covered(lit_[g - 1], d);
  });
  // One run per step of the grid and dark gap.
  std::vector<DownRun> runs;
  std::size_t last_gap = 0;
  for (auto& d : downs_) {
    const std::size_t g = gap_of(lit_, dark_time(lit_, d));
    if (!runs.empty() && g == last_gap && bucket(d.from_ns) == bucket(runs.back().from_ns)) {
      runs.back().to_ns = std::max(runs.back().to_ns, d.to_ns);
      runs.back().answers.merge(d.answers);
    } else {
      runs.push_back(std::move(d));
      last_gap = g;
    }
  }
  downs_ = std::move(runs);
  sorted_ = true;
  up_since_down_ = true;  // whatever comes next starts its own run
}

bool Timeline::bound(std::size_t max) {
  normalize();
  if (lit_.size() > max && max > 0) {
    // The gaps without a down answer, shortest first, are coalesced.
    std::vector<bool> has_down(lit_.size() + 1, false);
    for (const auto& d : downs_) has_down[gap_of(lit_, dark_time(lit_, d))] = true;
    std::vector<std::int64_t> quiet;
    for (std::size_t i = 1; i < lit_.size(); ++i)
      if (!has_down[i]) quiet.push_back(lit_[i].from_ns - lit_[i - 1].to_ns);
    const std::size_t excess = lit_.size() - max;
    std::int64_t limit = -1;
    if (!quiet.empty()) {
      const std::size_t k = std::min(excess, quiet.size()) - 1;
      std::nth_element(quiet.begin(), quiet.begin() + static_cast<long>(k), quiet.end());
      limit = quiet[k];
    }
    std::vector<LitSpan> lit{lit_.front()};
    for (std::size_t i = 1; i < lit_.size(); ++i) {
      if (!has_down[i] && lit_[i].from_ns - lit_[i - 1].to_ns <= limit) lit.back().to_ns = lit_[i].to_ns;
      else lit.push_back(lit_[i]);
    }
    lit_ = std::move(lit);
  }
  if (downs_.size() > max) {  // one run per dark gap: the gap's answers together
    std::vector<DownRun> joined;
    std::size_t last_gap = std::numeric_limits<std::size_t>::max();
    for (auto& d : downs_) {
      const std::size_t g = gap_of(lit_, dark_time(lit_, d));
      if (g == last_gap) {
        joined.back().to_ns = std::max(joined.back().to_ns, d.to_ns);
        joined.back().answers.merge(d.answers);
      } else {
        joined.push_back(std::move(d));
        last_gap = g;
      }
    }
    downs_ = std::move(joined);
  }
  return lit_.size() <= max && downs_.size() <= max;
}

std::vector<Outage> outages_of(const Timeline& t, std::int64_t measured_ns) {
  const auto& lit = t.lit();
  std::vector<Outage> out;
  std::size_t current = std::numeric_limits<std::size_t>::max();
  for (const auto& d : t.downs()) {
    if (d.to_ns < 0) continue;  // before measuring began
    const std::size_t g = gap_of(lit, dark_time(lit, d));
    if (g != current) {
      current = g;
      Outage o;
      const std::int64_t before = g > 0 ? lit[g - 1].to_ns : std::numeric_limits<std::int64_t>::min();
      const std::int64_t after = g < lit.size() ? lit[g].from_ns : std::numeric_limits<std::int64_t>::max();
      o.from_start = before < 0;
      o.to_end = after > measured_ns;
      o.start_ns = std::max<std::int64_t>(before, 0);
      o.end_ns = std::min(after, measured_ns);
      o.first_down_ns = std::clamp<std::int64_t>(d.from_ns, 0, measured_ns);
      o.last_down_ns = o.first_down_ns;
      out.push_back(std::move(o));
    }
    auto& o = out.back();
    o.last_down_ns = std::clamp<std::int64_t>(std::max(o.last_down_ns, d.to_ns), 0, measured_ns);
    o.answers.merge(d.answers);
  }
  std::erase_if(out, [](const Outage& o) { return o.end_ns <= o.start_ns; });
  return out;
}

const Outage* OutageSummary::longest() const {
  const Outage* best = nullptr;
  for (const auto& o : stretches)
    if (!best || o.duration_ns() > best->duration_ns()) best = &o;
  return best;
}

OutageSummary summarize(const OutageReport& r, double measured_s) {
  OutageSummary s;
  const auto measured_ns = static_cast<std::int64_t>(measured_s * 1e9);
  s.stretches = outages_of(r.timeline, measured_ns);
  for (const auto& o : s.stretches) {
    s.down_ns += o.duration_ns();
    s.longest_ns = std::max(s.longest_ns, o.duration_ns());
  }
  s.unavailable = measured_ns > 0 ? static_cast<double>(s.down_ns) / static_cast<double>(measured_ns) : 0;
  return s;
}

std::string describe(const Outage& o) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3f s to %.3f s (%.2f s", static_cast<double>(o.start_ns) / 1e9,
                static_cast<double>(o.end_ns) / 1e9, static_cast<double>(o.duration_ns()) / 1e9);
  std::string out = buf;
  if (o.from_start) out += ", from the start";
  if (o.to_end) out += ", to the end";
  return out + "): " + o.answers.text();
}

double attempts_lost(const OutageReport& r, std::uint64_t requests, int connections, double measured_s) {
  const double active = connections * measured_s - r.back_off_s;  // connection-seconds not backing off
  if (r.back_off_s <= 0 || active <= 0 || requests == 0) return 0;
  return r.back_off_s * static_cast<double>(requests) / active;
}

}  // namespace crh::loadgen
