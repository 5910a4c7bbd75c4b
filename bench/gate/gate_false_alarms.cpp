// The nightly gate on synthetic nights (issue 23's proof of false alarms,
// power and drift): nights drawn from the noise measured on the 2-core
// machine, judged by nightly/gate.hpp exactly as `crh run --nights` does.
//
// The model of one run (a repetition), on log values:
//   throughput: normal, SD 0.125 (CV 12-13%);
//   p50-like (p50, p90): normal, SD 0.07 (typically +-10%), and 1 run in 8 an
//     outlier, x U(1.6, 1.9) (race recall p50 571 us -> 1.07 ms);
//   p99-like (p99, p99.9): normal, SD 0.15, the same outliers.
// A night runs K repetitions; its figure is their median. A night has 30
// figures: 4 throughput, 13 p50-like, 13 p99-like. Independent: each figure its
// own noise and outliers. Correlated: a run's noise shares a common part
// (rho 0.6) and its outlier hits every latency figure of the run. Per-night
// outliers: all K repetitions of an outlier night are slow (a noisy machine
// all night; repetitions cannot help).
// Each night is judged against the 20 nights before it and change points run
// over the 59 before it and tonight, as compare.cpp does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "nightly/gate.hpp"

using namespace crh::nightly;

namespace {

enum Kind { throughput, p50, p99 };
constexpr const char* kKindName[] = {"throughput", "p50", "p99"};
constexpr double kSd[] = {0.125, 0.07, 0.15};
constexpr double kOutlierRate = 1.0 / 8;
constexpr double kRho = 0.6;

struct Model {
  bool correlated = false;
  bool night_outliers = false;  // outliers hit all repetitions of a night
};

std::vector<Kind> figures() {
  std::vector<Kind> f(4, throughput);
  f.insert(f.end(), 13, p50);
  f.insert(f.end(), 13, p99);
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Nights {
  std::mt19937_64 rng;
  std::normal_distribution<double> z{0, 1};
  std::uniform_real_distribution<double> u{0, 1};
  explicit Nights(unsigned long seed) : rng(seed) {}

  // One night of every figure: value and repetitions; `worse` multiplies the
  // latency figures' true level, `fall` the throughput's (1, 1: unchanged).
  std::vector<Estimate> night(const std::vector<Kind>& f, int k, const Model& m, double worse = 1, double fall = 1) {
    std::vector<Estimate> out(f.size());
    const bool night_outlier = m.night_outliers && u(rng) < kOutlierRate;
    const double night_factor = 1.6 + 0.3 * u(rng);
    for (int r = 0; r < k; ++r) {
      const double common = z(rng);
      const bool run_outlier = m.night_outliers ? night_outlier : u(rng) < kOutlierRate;
      const double run_factor = m.night_outliers ? night_factor : 1.6 + 0.3 * u(rng);
      for (std::size_t i = 0; i < f.size(); ++i) {
        const double own = m.correlated ? std::sqrt(kRho) * common + std::sqrt(1 - kRho) * z(rng) : z(rng);
        double v = std::exp(kSd[f[i]] * own);
        if (f[i] != throughput) {
          const bool outlier = m.correlated || m.night_outliers ? run_outlier : u(rng) < kOutlierRate;
          if (outlier) v *= m.correlated || m.night_outliers ? run_factor : 1.6 + 0.3 * u(rng);
          v *= worse;
        } else {
          v *= fall;
        }
        out[i].repetitions.push_back(v);
      }
    }
    for (auto& e : out) e.value = median(e.repetitions);
    if (k == 1) out[0].repetitions.clear(), std::for_each(out.begin(), out.end(), [](Estimate& e) { e.repetitions.clear(); });
    return out;
  }
};

Better better_of(Kind k) { return k == throughput ? Better::higher : Better::lower; }

int g_feedback = 0;  // 0: stationary, 1: exit-0 nights join, 2: not-failed nights join

struct Rates {
  long fig_n[3] = {0, 0, 0}, fig_reg[3] = {0, 0, 0}, fig_inc[3] = {0, 0, 0};
  long nights = 0, regressed = 0, inconclusive = 0, cp_beyond = 0, either = 0;
  double mdc_sum[3] = {0, 0, 0};
  long mdc_n[3] = {0, 0, 0};
};

// Unchanged nights: how many regress (any of 30 figures) or cannot tell.
Rates false_alarms(int k, const Model& m, long n_nights, unsigned long seed) {
  const auto f = figures();
  Nights gen(seed);
  std::vector<std::deque<double>> window(f.size()), series(f.size());
  Rates r;
  for (long night = -static_cast<long>(kWindow); night < n_nights; ++night) {
    const auto tonight = gen.night(f, k, m);
    bool regressed = false, inconclusive = false, beyond = false;
    if (night >= 0) {
      for (std::size_t i = 0; i < f.size(); ++i) {
        GateInput in{.tonight = tonight[i], .nights = {window[i].begin(), window[i].end()}, .better = better_of(f[i])};
        const auto g = judge(in);
        regressed |= g.verdict == Verdict::regressed;
        inconclusive |= g.verdict == Verdict::inconclusive;
        r.mdc_sum[f[i]] += g.min_detectable_pct;
        r.fig_n[f[i]]++;
        r.fig_reg[f[i]] += g.verdict == Verdict::regressed;
        r.fig_inc[f[i]] += g.verdict == Verdict::inconclusive;
        r.mdc_n[f[i]]++;
        std::vector<double> s(series[i].begin(), series[i].end());
        s.push_back(tonight[i].value);
        for (const auto& cp : change_points(s, better_of(f[i]), 20)) beyond |= cp.fails();
      }
      ++r.nights;
      r.regressed += regressed;
      r.inconclusive += !regressed && inconclusive;
      r.cp_beyond += beyond;
      r.either += regressed || beyond;
    }
    // Stationary by default: every unchanged night joins (the rule replayed over
    // every window of unchanged nights). --record-feedback exit0: only exit-0
    // nights join, as nightly/record.cpp keeps them; not-failed: inconclusive
    // (exit 4) nights join too. Keeping only the quiet nights narrows the band.
    if (g_feedback == 1 && (regressed || beyond || inconclusive)) continue;
    if (g_feedback == 2 && (regressed || beyond)) continue;
    for (std::size_t i = 0; i < f.size(); ++i) {
      window[i].push_back(tonight[i].value);
      if (window[i].size() > kWindow) window[i].pop_front();
      series[i].push_back(tonight[i].value);
      if (series[i].size() > 59) series[i].pop_front();
    }
  }
  return r;
}

// A sustained 30% worsening: is each kind flagged regressed on its first night?
void power(int k, long tries, unsigned long seed, double out[3]) {
  const std::vector<Kind> f = {throughput, p50, p99};
  Nights gen(seed);
  long hit[3] = {0, 0, 0};
  for (long t = 0; t < tries; ++t) {
    std::vector<std::vector<double>> w(f.size());
    for (std::size_t n = 0; n < kWindow; ++n) {
      const auto night = gen.night(f, k, Model{});
      for (std::size_t i = 0; i < f.size(); ++i) w[i].push_back(night[i].value);
    }
    const auto tonight = gen.night(f, k, Model{}, 1.3, 0.7);
    for (std::size_t i = 0; i < f.size(); ++i)
      hit[i] += judge(GateInput{.tonight = tonight[i], .nights = w[i], .better = better_of(f[i])}).verdict == Verdict::regressed;
  }
  for (int i = 0; i < 3; ++i) out[i] = 100.0 * static_cast<double>(hit[i]) / static_cast<double>(tries);
}

// A drift of 5% a night after 30 unchanged nights: found by the change points
// (beyond the limit, naming its start within a night) or the gate, within 5 nights.
void drift(int k, long tries, unsigned long seed, double found[3], double exact[3], double gate_or_cp[3]) {
  const std::vector<Kind> f = {throughput, p50, p99};
  Nights gen(seed);
  long nf[3] = {0, 0, 0}, ne[3] = {0, 0, 0}, ng[3] = {0, 0, 0};
  for (long t = 0; t < tries; ++t) {
    std::vector<std::vector<double>> s(f.size());
    for (int n = 0; n < 30; ++n) {
      const auto night = gen.night(f, k, Model{});
      for (std::size_t i = 0; i < f.size(); ++i) s[i].push_back(night[i].value);
    }
    bool got[3] = {false, false, false}, named[3] = {false, false, false}, any[3] = {false, false, false};
    for (int d = 1; d <= 5; ++d) {
      const auto night = gen.night(f, k, Model{}, std::pow(1.05, d), std::pow(0.95, d));
      for (std::size_t i = 0; i < f.size(); ++i) {
        std::vector<double> w(s[i].end() - kWindow, s[i].end());
        any[i] |= judge(GateInput{.tonight = night[i], .nights = w, .better = better_of(f[i])}).verdict == Verdict::regressed;
        s[i].push_back(night[i].value);
        for (const auto& cp : change_points(s[i], better_of(f[i]), 20))
          if (cp.fails() && cp.index + 1 >= 30 && cp.index <= 31 && !got[i]) got[i] = true, named[i] = cp.index == 30;
        any[i] |= got[i];
      }
    }
    for (int i = 0; i < 3; ++i) nf[i] += got[i], ne[i] += named[i], ng[i] += any[i];
  }
  for (int i = 0; i < 3; ++i) {
    found[i] = 100.0 * static_cast<double>(nf[i]) / static_cast<double>(tries);
    exact[i] = 100.0 * static_cast<double>(ne[i]) / static_cast<double>(tries);
    gate_or_cp[i] = 100.0 * static_cast<double>(ng[i]) / static_cast<double>(tries);
  }
}

double pct(long a, long b) { return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0; }

}  // namespace

int main(int argc, char** argv) {
  long nights = 10000, tries = 2000;
  std::vector<int> ks = {1, 3, 5, 7, 9, 11, 15};
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string flag = argv[a];
    if (flag == "--nights") nights = std::atol(argv[a + 1]);
    else if (flag == "--tries") tries = std::atol(argv[a + 1]);
    else if (flag == "--repeat") ks = {std::atoi(argv[a + 1])};
    else if (flag == "--record-feedback") g_feedback = std::string(argv[a + 1]) == "exit0" ? 1 : std::string(argv[a + 1]) == "not-failed" ? 2 : 0;
    else {
      std::fprintf(stderr, "usage: %s [--nights N] [--tries N] [--repeat K] [--record-feedback exit0|not-failed]\n", argv[0]);
      return 2;
    }
  }
  std::printf("synthetic nights: %ld unchanged nights per row (30 figures each, window %zu), %ld tries for power and drift\n",
              nights, kWindow, tries);
  std::printf("%-3s %-22s %10s %13s %10s %10s   %s\n", "K", "model", "regressed", "inconclusive", "cp beyond", "failed",
              "mean min. detectable change (throughput / p50 / p99)");
  const std::pair<const char*, Model> models[] = {{"independent", {false, false}},
                                                  {"correlated", {true, false}},
                                                  {"correlated, night outl.", {true, true}}};
  for (int k : ks) {
    for (const auto& [name, m] : models) {
      const auto r = false_alarms(k, m, nights, 1000 + static_cast<unsigned long>(k));
      std::printf("%-3d %-22s %9.2f%% %12.2f%% %9.2f%% %9.2f%%   %.0f%% / %.0f%% / %.0f%%\n", k, name,
                  pct(r.regressed, r.nights), pct(r.inconclusive, r.nights), pct(r.cp_beyond, r.nights),
                  pct(r.either, r.nights), r.mdc_sum[0] / static_cast<double>(r.mdc_n[0]),
                  r.mdc_sum[1] / static_cast<double>(r.mdc_n[1]), r.mdc_sum[2] / static_cast<double>(r.mdc_n[2]));
      std::printf("%-26s per figure regressed / inconclusive: throughput %.3f%% / %.1f%%, p50 %.3f%% / %.1f%%, p99 %.3f%% / %.1f%%\n", "",
                  pct(r.fig_reg[0], r.fig_n[0]), pct(r.fig_inc[0], r.fig_n[0]), pct(r.fig_reg[1], r.fig_n[1]),
                  pct(r.fig_inc[1], r.fig_n[1]), pct(r.fig_reg[2], r.fig_n[2]), pct(r.fig_inc[2], r.fig_n[2]));
      std::fflush(stdout);
    }
  }
  std::printf("\n%-3s %-36s %-44s %s\n", "K", "30% worse: flagged on its 1st night", "5%/night drift: change point <= 5 nights",
              "gate or change point <= 5 nights");
  std::printf("%-3s %-36s %-44s %s\n", "", "(throughput / p50 / p99)", "(found, start +-1 / named exactly)", "");
  for (int k : ks) {
    double pw[3], fo[3], ex[3], gc[3];
    power(k, tries, 7 + static_cast<unsigned long>(k), pw);
    drift(k, tries, 11 + static_cast<unsigned long>(k), fo, ex, gc);
    std::printf("%-3d %5.1f%% / %5.1f%% / %5.1f%%%12s %4.1f/%4.1f%% %4.1f/%4.1f%% %4.1f/%4.1f%%%6s %4.1f%% / %4.1f%% / %4.1f%%\n", k,
                pw[0], pw[1], pw[2], "", fo[0], ex[0], fo[1], ex[1], fo[2], ex[2], "", gc[0], gc[1], gc[2]);
    std::fflush(stdout);
  }
  return 0;
}
