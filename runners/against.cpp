#include "against.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "api_key.hpp"
#include "commands.hpp"
#include "core/profile.hpp"
#include "interrupt.hpp"
#include "load_session.hpp"
#include "nightly/figures.hpp"
#include "nightly/median.hpp"
#include "nightly/paired.hpp"
#include "results/keys_load.hpp"
#include "results/verdict.hpp"
#include "results/view.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace {

constexpr const char* kCommand = "crh load --against";

// One side of the comparison and its figures, per pair (0: not measured).
struct Side {
  std::string name;  // "candidate", "baseline"
  loadgen::LoadConfig config;
  bool embedded = false;
  std::map<std::string, std::vector<double>> values;      // by figure key, one per pair
  std::map<std::string, nightly::NightFigure> figures;    // the first trial's, for the name, unit and direction
  std::size_t failed_trials = 0;                          // its own load failed (invariant, threshold)
};

// What --against does not do yet: refused by name rather than ignored.
std::string unsupported(const LoadOptions& o) {
  std::vector<std::string> flags;
  if (o.target.call_driver != "http") flags.push_back("--call-driver sip");
  if (!o.capture.file.empty()) flags.push_back("--capture");
  if (!o.output.json_file.empty() || !o.output.html_file.empty() || !o.output.junit_file.empty())
    flags.push_back("--json, --html and --junit");
  if (!o.history_file.empty()) flags.push_back("--history");
  if (!o.load.shard.empty() || !o.load.start_at.empty()) flags.push_back("--shard and --start-at");
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// The baseline: the candidate's load with --against's base URL, channel,
// profile and key.
int set_up_baseline(const LoadOptions& o, const core::Target& candidate, Side& baseline) {
  std::string why;
  auto base = core::parse_base_url(o.against.base_url, why);
  if (!base) {
    std::cerr << kCommand << ": --against: " << why << "\n";
    return results::kExitUsage;
  }
  auto& target = baseline.config.target;
  target.base = *base;
  if (!o.against.channel.empty()) target.channel = o.against.channel;
  try {
    if (!o.against.profile_file.empty()) {
      const auto profile = core::load_profile(o.against.profile_file);
      target.dialect = profile.dialect;
      baseline.config.statuses = profile.statuses;
    }
    target.api_key = configured_api_key(o.against.api_key_file, "CRH_AGAINST_API_KEY").value_or(candidate.api_key);
  } catch (const std::exception& e) {
    std::cerr << kCommand << ": " << e.what() << "\n";
    return results::kExitUsage;
  }
  return results::kExitOk;
}

// One trial: a load of one side; its figures go in at `pair`. Returns the
// exit code when the load could not run (nothing to compare), else 0.
int run_trial(Side& side, std::size_t pair, std::size_t pairs, const std::vector<loadgen::Threshold>& thresholds) {
  auto session = run_load_session(side.config, thresholds, side.embedded, false);
  if (!session.document) {
    std::cerr << kCommand << ": the " << side.name << "'s load of pair " << pair + 1 << " could not run: "
              << session.error << "\n";
    return session.exit_code ? session.exit_code : results::kExitUnreachable;
  }
  if (session.exit_code == results::kExitFailed) ++side.failed_trials;
  for (auto& f : nightly::figures_of_loads({*session.document})) {
    if (f.figure == "error rate") continue;  // a ratio of fractions near 0 says nothing; reported apart
    auto& v = side.values[f.key()];
    v.resize(pairs, 0);
    v[pair] = f.estimate.backed ? f.estimate.value : 0;
    side.figures.emplace(f.key(), std::move(f));
  }
  return results::kExitOk;
}

// The duet's figures of one side: each step of its series (the same seconds
// on both sides, since both measured from one instant) is a pair.
void take_series(Side& side, const boost::json::object& document, const std::string& scenario) {
  namespace k = results::keys;
  const results::DocView doc(document);
  const double step = std::max(1.0, doc.find(k::load::series_step_s).maybe_num().value_or(1));
  const auto put = [&](const std::string& figure, std::string unit, nightly::Better better, std::size_t t, double v) {
    const std::string key = scenario + " all " + figure;
    auto& values = side.values[key];
    if (values.size() <= t) values.resize(t + 1, 0);
    values[t] = v;
    side.figures.emplace(key, nightly::NightFigure{.scenario = scenario, .operation = "all", .figure = figure,
                                                   .unit = std::move(unit), .better = better});
  };
  for (const auto& point : doc.find(k::load::series).items()) {
    const auto t = static_cast<std::size_t>(point[k::series::t].num() / step);
    put("throughput", "per_second", nightly::Better::higher, t, point[k::series::requests].num() / step);
    put("p50", "ns", nightly::Better::lower, t, point.find(k::series::p50_ns).maybe_num().value_or(0));
    put("p99", "ns", nightly::Better::lower, t, point.find(k::series::p99_ns).maybe_num().value_or(0));
  }
}

bool started_late(const boost::json::object& document) {
  namespace k = results::keys;
  for (const auto& s : results::DocView(document).find(k::load::shards).items())
    if (s.find(k::shard::late).is_bool() && s.find(k::shard::late).boolean()) return true;
  return false;
}

// Both sides loaded at once, each with the --connections and --threads
// given, measuring from one instant. Returns the number of series steps
// (pairs), or nothing after printing why, with `code` set.
std::optional<std::size_t> run_duet(const LoadOptions& o, Side& candidate, Side& baseline,
                                    const std::vector<loadgen::Threshold>& thresholds, int& code) {
  // Both discoveries are done well before the instant (a side that is not
  // starts late, and its seconds would not be the other's).
  const auto at = std::chrono::system_clock::now() + std::chrono::seconds(3);
  candidate.config.start_at = baseline.config.start_at = at;
  std::optional<LoadSession> theirs;
  std::thread second([&] { theirs = run_load_session(baseline.config, thresholds, false, false); });
  LoadSession mine = run_load_session(candidate.config, thresholds, candidate.embedded, false);
  second.join();
  std::size_t steps = 0;
  for (auto [side, session] : {std::pair{&candidate, &mine}, std::pair{&baseline, &*theirs}}) {
    if (!session->document) {
      std::cerr << kCommand << ": the " << side->name << "'s load could not run: " << session->error << "\n";
      code = session->exit_code ? session->exit_code : results::kExitUnreachable;
      return std::nullopt;
    }
    if (started_late(*session->document)) {
      std::cerr << kCommand << ": the " << side->name
                << "'s load began measuring after the common instant (its set-up took over 3 s): the two sides' "
                   "seconds are not the same, so nothing is compared\n";
      code = results::kExitCouldNotTell;
      return std::nullopt;
    }
    if (session->exit_code == results::kExitFailed) ++side->failed_trials;
    take_series(*side, *session->document, o.scenario);
    for (const auto& [key, v] : side->values) steps = std::max(steps, v.size());
  }
  return steps;
}

// The median of a figure's nonzero values (a second with no answers has
// none to show).
double median_of(std::vector<double> v) {
  v.erase(std::remove(v.begin(), v.end(), 0.0), v.end());
  return nightly::median(std::move(v));
}

// Prints the table and the reasons; returns the comparison's exit code.
int judge_and_print(const Side& candidate, const Side& baseline, double limit_pct, bool verbose) {
  std::size_t regressed = 0, unclear = 0, noisy = 0, judged = 0, unbacked = 0;
  std::string reasons;
  std::printf("%-28s %11s %11s %7s %17s %7s  %s\n", "figure", "candidate", "baseline", "ratio", "interval", "MDC",
              "verdict");
  for (const auto& [key, figure] : candidate.figures) {
    const auto other = baseline.values.find(key);
    if (other == baseline.values.end()) continue;
    const auto r = nightly::judge_pairs(
        {candidate.values.at(key), other->second, figure.better, limit_pct});
    if (r.verdict == nightly::Verdict::not_backed) ++unbacked;
    else ++judged;
    regressed += r.verdict == nightly::Verdict::regressed;
    unclear += r.verdict == nightly::Verdict::inconclusive;
    noisy += r.verdict == nightly::Verdict::too_noisy;
    char interval[40] = "-", mdc[16] = "-";
    if (r.confidence > 0) {
      std::snprintf(interval, sizeof interval, "%.3f-%.3f", r.ratio_lower, r.ratio_upper);
      std::snprintf(mdc, sizeof mdc, "%.1f%%", r.min_detectable_pct);
    }
    std::printf("%-28s %11s %11s %7.3f %17s %7s  %s\n", key.c_str(),
                nightly::in_unit(median_of(candidate.values.at(key)), figure.unit).c_str(),
                nightly::in_unit(median_of(other->second), figure.unit).c_str(), r.ratio, interval, mdc,
                std::string(nightly::to_string(r.verdict)).c_str());
    if (verbose || r.verdict != nightly::Verdict::no_change) reasons += "  " + key + ": " + r.reason + "\n";
  }
  std::cout << reasons;
  char lim[32];
  std::snprintf(lim, sizeof lim, "%g%%", limit_pct);
  if (regressed) {
    std::cout << kCommand << ": REGRESSED: " << regressed << " of " << judged << " figures worse than the " << lim
              << " limit, every ratio in their intervals worse than 1\n";
    return results::kExitFailed;
  }
  if (unclear || (judged > 0 && noisy == judged) || judged == 0) {
    std::cout << kCommand << ": COULD NOT TELL: "
              << (judged == 0 ? std::string("no figure was measured on both sides")
                              : std::to_string(unclear) + " figure(s) worse than the " + lim +
                                    " limit on their face but within the trials' noise, " + std::to_string(noisy) +
                                    " too noisy")
              << "\n";
    return results::kExitCouldNotTell;
  }
  std::cout << kCommand << ": no figure worse than the " << lim << " limit (" << judged << " judged"
            << (noisy ? ", " + std::to_string(noisy) + " too noisy to tell" : std::string())
            << (unbacked ? ", " + std::to_string(unbacked) + " not measured in enough pairs" : std::string()) << ")\n";
  return results::kExitOk;
}

}  // namespace

int run_load_against(const LoadOptions& o, loadgen::LoadConfig config, const std::vector<loadgen::Threshold>& thresholds) {
  if (const auto flags = unsupported(o); !flags.empty()) {
    std::cerr << kCommand << ": not with --against (yet): " << flags << "\n";
    return results::kExitUsage;
  }
  Side candidate{.name = "candidate", .config = config};
  Side baseline{.name = "baseline", .config = config};
  std::unique_ptr<reference::Server> embedded;
  const int aliases = o.aliases > 0 ? o.aliases : embedded_aliases_for(o.load.connections);
  if (int code = set_up_target({kCommand, o.target.base_url, o.target.api_key_file, aliases}, candidate.config.target,
                               embedded))
    return code;
  candidate.embedded = embedded != nullptr;
  if (int code = set_up_baseline(o, candidate.config.target, baseline)) return code;

  const bool duet = o.against.design == "duet";
  const auto pairs = static_cast<std::size_t>(o.against.pairs);
  std::cout << kCommand << ": " << o.scenario << ", candidate " << candidate.config.target.base.to_string()
            << (candidate.embedded ? " (embedded reference service)" : "") << ", baseline "
            << baseline.config.target.base.to_string() << "; "
            << (duet ? "both loaded at once for " + std::to_string(o.duration_s).substr(0, 4) +
                           " s, judged per second of the series"
                     : std::to_string(pairs) + " pairs of " + std::to_string(o.duration_s).substr(0, 4) +
                           " s trials, the order within each pair drawn from seed " + std::to_string(o.seed))
            << "; limit " << o.against.max_regression << "%\n"
            << std::flush;
  InterruptScope interrupt;
  std::size_t done = 0;
  if (duet) {
    int code = 0;
    const auto steps = run_duet(o, candidate, baseline, thresholds, code);
    if (embedded) embedded->stop();
    if (!steps) return code;
    done = *steps;
  } else {
    std::mt19937_64 order(o.seed ^ 0x38a6b0c1d2e3f405ULL);
    for (; done < pairs && !InterruptScope::requested().load(); ++done) {
      const bool baseline_first = std::bernoulli_distribution(0.5)(order);
      Side* sides[2] = {baseline_first ? &baseline : &candidate, baseline_first ? &candidate : &baseline};
      for (Side* side : sides)
        if (int code = run_trial(*side, done, pairs, thresholds)) {
          if (embedded) embedded->stop();
          return code;
        }
      if (!o.output.quiet)
        std::cout << "  pair " << done + 1 << "/" << pairs << ": " << sides[0]->name << ", then " << sides[1]->name
                  << "\n"
                  << std::flush;
    }
    if (embedded) embedded->stop();
  }
  for (auto* side : {&candidate, &baseline})
    for (auto& [key, v] : side->values) v.resize(done);
  int code = judge_and_print(candidate, baseline, o.against.max_regression, o.output.verbose);
  // A side whose own load failed (its invariant, a threshold, or answers
  // that prove nothing, such as a key it refuses) was not measured doing its
  // work: the candidate's failure fails the night; the baseline's leaves
  // nothing sound to compare with.
  for (const Side* side : {&candidate, &baseline})
    if (side->failed_trials) {
      const bool mine = side == &candidate;
      std::cout << kCommand << ": " << (mine ? "FAILED" : "COULD NOT TELL") << ": the " << side->name
                << "'s own load failed"
                << (duet ? std::string() : " in " + std::to_string(side->failed_trials) + " of " + std::to_string(done) + " trials")
                << " (its invariant, a threshold, or answers that prove nothing; run crh load --base-url "
                << side->config.target.base.to_string() << " alone to see why)"
                << (mine ? "" : ": the comparison with it says nothing of the candidate") << "\n";
      code = results::worse_exit(code, mine ? results::kExitFailed : results::kExitCouldNotTell);
    }
  if (InterruptScope::requested().load()) {
    std::cout << kCommand << ": interrupted after " << done << (duet ? " seconds" : " of " + std::to_string(pairs) + " pairs") << "\n";
    code = results::worse_exit(code, results::kExitFailed);
  }
  return code;
}

}  // namespace crh::runners
