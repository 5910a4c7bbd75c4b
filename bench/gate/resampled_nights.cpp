// The nightly gate on nights drawn from a record of real nights (issue 23's
// "10,000 synthetic nights drawn from the measured spread"). Each synthetic
// night is a recorded night drawn at random with replacement, all its figures
// together (value, interval, repetitions): the measured spread and the
// measured correlation between figures, without the order of the record (a
// slow spell of the machine that lasted three recorded nights in a row is three
// draws apart here, as nights a day apart would be).
//
// Each night is judged as `crh run --nights` judges it (compare_with_nights:
// the gate per figure, change points, the window of the last 20 comparable
// nights) against the synthetic record before it, and joins that record as
// record.cpp keeps it: passed and could-not-tell nights are compared against,
// failed ones never.
//
// The same draws are judged by the rules other tools give a team (as
// bench/nightly/other_rules.py replays them over a record, every earlier
// draw in their window): tonight against last night, worse by more than the
// limit; Bencher's t-test threshold (mean + t(0.99, n-1) x SD of the last
// nights, up to 64, from 5); that t-test and the limit. A night is flagged
// when any backed figure is.
//
// Then power from the same draws: a night slowed by 30% (every latency figure
// x1.3, every throughput /1.3) after 20 unchanged ones, flagged on that first
// night; and a drift of 5% a night after 30 unchanged ones: the first night
// that fails, and the night its change point names.
//
//   crh_resampled_nights DIR [--nights N] [--tries N] [--seed S] [--limit PCT]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "nightly/compare.hpp"
#include "nightly/record.hpp"

using namespace crh::nightly;
namespace json = boost::json;

namespace {

constexpr std::size_t kKeep = 60;  // the change points look at up to 60 nights

// A recorded night's figures, every latency x `slower` and throughput / `slower`.
std::vector<NightFigure> slowed(const std::vector<NightFigure>& figures, double slower) {
  auto out = figures;
  for (auto& f : out) {
    if (f.figure == "error rate") continue;
    const double m = f.better == Better::lower ? slower : 1 / slower;
    auto& e = f.estimate;
    e.value *= m;
    if (e.lower) *e.lower *= m;
    if (e.upper) *e.upper *= m;
    if (e.lower && e.upper && *e.lower > *e.upper) std::swap(*e.lower, *e.upper);
    for (auto& r : e.repetitions) r *= m;
  }
  return out;
}

struct Outcome {
  int exit_code = 0;           // 1 failed, 4 could not tell, 0 passed
  bool by_change_point = false;
  std::string change_point_night;  // the night a failing change point names
  std::vector<std::string> why;    // the figures that failed it ("change point: ..." for change points)
};

Outcome outcome_of(const json::object& c) {
  Outcome o;
  for (const auto& cp : c.at("change_points").as_array()) {
    const auto& p = cp.as_object();
    if (p.at("beyond_limit").as_bool()) {
      o.exit_code = 1;
      o.why.push_back("change point: " + std::string(p.at("scenario").as_string()) + " " +
                      std::string(p.at("operation").as_string()) + " " + std::string(p.at("figure").as_string()));
      o.by_change_point = true;
      o.change_point_night = std::string(p.at("night").as_string());
    } else if (p.at("pending").as_bool() && o.exit_code == 0) {
      o.exit_code = 4;
    }
  }
  for (const auto& f : c.at("figures").as_array())
    if (f.at("verdict").as_string() == "regressed")
      o.why.push_back(std::string(f.at("scenario").as_string()) + " " + std::string(f.at("operation").as_string()) +
                      " " + std::string(f.at("figure").as_string()));
  if (c.at("regressions").to_number<long>() > 0) o.exit_code = 1;
  else if (o.exit_code == 0 && c.at("inconclusive").to_number<long>() > 0) o.exit_code = 4;
  return o;
}

// The rules other tools give a team, over the draws so far (oldest first).
struct OtherRules {
  std::vector<const Night*> before;
  long last_night = 0, bencher = 0, bencher_limit = 0, judged = 0;
  double limit = 0.20;

  static double worse_by(double v, double base, Better b) {
    if (base == 0) return v == 0 ? 0 : INFINITY;
    const double change = (v - base) / std::fabs(base);
    return b == Better::lower ? change : -change;
  }
  void judge(const Night* tonight) {
    bool a = false, b = false, c = false;
    if (!before.empty()) {
      ++judged;
      for (const auto& f : tonight->figures) {
        if (!f.estimate.backed) continue;
        const auto* last = before.back()->find(f.key());
        if (last && last->estimate.backed && worse_by(f.estimate.value, last->estimate.value, f.better) > limit) a = true;
        std::vector<double> v;
        for (std::size_t i = before.size() > 64 ? before.size() - 64 : 0; i < before.size(); ++i)
          if (const auto* g = before[i]->find(f.key()); g && g->estimate.backed) v.push_back(g->estimate.value);
        if (v.size() < 5) continue;
        double m = 0, ss = 0;
        for (double x : v) m += x;
        m /= static_cast<double>(v.size());
        for (double x : v) ss += (x - m) * (x - m);
        const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
        const double t = boost::math::quantile(boost::math::students_t(static_cast<double>(v.size() - 1)), 0.99);
        const bool beyond = f.better == Better::lower ? f.estimate.value > m + t * sd : f.estimate.value < m - t * sd;
        b = b || beyond;
        c = c || (beyond && worse_by(f.estimate.value, m, f.better) > limit);
      }
    }
    last_night += a;
    bencher += b;
    bencher_limit += c;
    before.push_back(tonight);
    if (before.size() > 64) before.erase(before.begin());
  }
};

// The synthetic record: nights named night-000001... in order.
struct Record {
  std::vector<Night> nights;
  long counter = 0;
  double limit_pct = 20;

  std::string next_time() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-01-01T00:00:00Z+%08ld", counter);  // sorts as the nights' order
    return buf;
  }

  Outcome judge_and_add(const std::vector<NightFigure>& figures) {
    Tonight t;
    t.figures = figures;
    t.fingerprint = "resampled";
    t.started_at = next_time();
    const auto c = compare_with_nights(t, nights, {}, "", limit_pct);
    const Outcome o = outcome_of(c);
    add(figures, o.exit_code != 1);
    return o;
  }

  void add(const std::vector<NightFigure>& figures, bool comparable) {
    Night n;
    n.id = "night-" + std::to_string(counter);
    n.started_at = next_time();
    n.fingerprint = "resampled";
    n.comparable = comparable;
    n.figures = figures;
    nights.push_back(std::move(n));
    ++counter;
    if (nights.size() > kKeep) nights.erase(nights.begin());
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s DIR [--nights N] [--tries N] [--seed S] [--limit PCT]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  long n_nights = 10000, tries = 200;
  unsigned long seed = 1;
  double limit = 20;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string flag = argv[a];
    if (flag == "--nights") n_nights = std::atol(argv[a + 1]);
    else if (flag == "--tries") tries = std::atol(argv[a + 1]);
    else if (flag == "--seed") seed = std::strtoul(argv[a + 1], nullptr, 10);
    else if (flag == "--limit") limit = std::atof(argv[a + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  std::vector<std::string> problems;
  const auto recorded = read_nights(dir, problems);
  for (const auto& p : problems) std::fprintf(stderr, "skipped: %s\n", p.c_str());
  std::vector<const Night*> pool;
  for (const auto& n : recorded)
    if (!n.figures.empty() && n.fingerprint == recorded.back().fingerprint) pool.push_back(&n);
  if (pool.size() < 10) {
    std::fprintf(stderr, "%s: %zu night(s) of the last night's fingerprint; at least 10 are needed\n", dir.c_str(),
                 pool.size());
    return 2;
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
  auto draw = [&] { return pool[pick(rng)]; };
  std::printf("resampled nights: %zu recorded nights of %s (%zu figures a night), limit %.0f%%, seed %lu\n",
              pool.size(), dir.c_str(), pool.front()->figures.size(), limit, seed);

  // Unchanged nights.
  Record record{.limit_pct = limit};
  OtherRules others{.limit = limit / 100};
  for (std::size_t i = 0; i < kWindow; ++i) {
    const auto* n = draw();
    record.add(n->figures, true);
    others.before.push_back(n);
  }
  long failed = 0, by_cp = 0, cannot_tell = 0;
  std::map<std::string, long> why;  // figure -> failed nights it failed
  for (long i = 0; i < n_nights; ++i) {
    const auto* n = draw();
    others.judge(n);
    const auto o = record.judge_and_add(n->figures);
    for (const auto& w : o.why) ++why[w];
    failed += o.exit_code == 1;
    by_cp += o.by_change_point;
    cannot_tell += o.exit_code == 4;
  }
  std::printf("unchanged: %ld nights: failed %ld (%.2f%%; %ld by a change point), could not tell %ld (%.2f%%), "
              "passed %.2f%%\n",
              n_nights, failed, 100.0 * failed / n_nights, by_cp, cannot_tell, 100.0 * cannot_tell / n_nights,
              100.0 * (n_nights - failed - cannot_tell) / n_nights);
  std::printf("the same draws under other tools' rules (every earlier draw in their window): last night +%.0f%% "
              "flags %.2f%%, Bencher's t-test (0.99) %.2f%%, Bencher's t-test and the limit %.2f%% of nights\n",
              limit, 100.0 * others.last_night / others.judged, 100.0 * others.bencher / others.judged,
              100.0 * others.bencher_limit / others.judged);
  std::vector<std::pair<long, std::string>> top;
  for (const auto& [w, n] : why) top.emplace_back(n, w);
  std::sort(top.rbegin(), top.rend());
  for (std::size_t i = 0; i < top.size() && i < 8; ++i)
    std::printf("  failed by %-40s %ld night(s)\n", top[i].second.c_str(), top[i].first);

  // 30% slower on its first night, after 20 unchanged nights.
  long caught = 0;
  for (long t = 0; t < tries; ++t) {
    Record r{.limit_pct = limit};
    for (std::size_t i = 0; i < kWindow; ++i) r.add(draw()->figures, true);
    caught += r.judge_and_add(slowed(draw()->figures, 1.3)).exit_code == 1;
  }
  std::printf("30%% slower: flagged on its first night in %ld of %ld tries (%.1f%%)\n", caught, tries,
              100.0 * caught / tries);

  // A drift of 5% a night from night 31 on: the first night that fails.
  long within5 = 0, named_exactly = 0, named_within1 = 0, never = 0;
  std::vector<long> first_at(9, 0);
  for (long t = 0; t < tries; ++t) {
    Record r{.limit_pct = limit};
    for (int i = 0; i < 30; ++i) r.add(draw()->figures, true);
    const std::string start = "night-30";  // the drift's first night
    int at = 0;
    for (int d = 1; d <= 8 && !at; ++d) {
      const auto o = r.judge_and_add(slowed(draw()->figures, std::pow(1.05, d)));
      if (o.exit_code != 1) continue;
      at = d;
      if (o.by_change_point) {
        const long named = o.change_point_night == "tonight" ? 30 + d - 1 : std::atol(o.change_point_night.c_str() + 6);
        named_exactly += named == 30;
        named_within1 += std::labs(named - 30) <= 1;
      }
    }
    if (at) ++first_at[at];
    else ++never;
    within5 += at && at <= 5;
  }
  std::printf("5%% a night: failed within 5 nights of its start in %ld of %ld tries (%.1f%%); first failing night:",
              within5, tries, 100.0 * within5 / tries);
  for (int d = 1; d <= 8; ++d) std::printf(" %d:%ld", d, first_at[d]);
  std::printf(", never in 8: %ld; a change point named its first night in %ld (within one night in %ld)\n", never,
              named_exactly, named_within1);
  return 0;
}
