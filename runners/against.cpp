#include "against.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <boost/json.hpp>

#include "api_key.hpp"
#include "commands.hpp"
#include "contracts/runner.hpp"
#include "core/profile.hpp"
#include "interrupt.hpp"
#include "load_session.hpp"
#include "nightly/figures.hpp"
#include "nightly/format.hpp"
#include "nightly/median.hpp"
#include "reports/text.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "results/units.hpp"
#include "results/verdict.hpp"
#include "results/view.hpp"
#include "target_setup.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace {

// One side of the comparison and its figures, per pair (0: not measured).
struct Side {
  std::string name;  // "candidate", "baseline"
  loadgen::LoadConfig config;
  bool embedded = false;
  std::map<std::string, std::vector<double>> values;      // by figure key, one per pair
  std::map<std::string, nightly::NightFigure> figures;    // the first trial's, for the name, unit and direction
  std::vector<json::object> documents;                    // its loads' documents
  std::size_t failed = 0;                                 // loads whose own verdict failed (invariant, threshold)
};

// One trial: a load of one side; its figures go in at `pair`. False, with
// `out.code` and `out.error` set, when the load could not run.
bool run_trial(Side& side, std::size_t pair, std::size_t pairs, const std::vector<loadgen::Threshold>& thresholds,
               SideBySide& out) {
  auto session = run_load_session(side.config, thresholds, side.embedded, false);
  if (!session.document || session.stopped) {
    out.code = session.exit_code ? session.exit_code : results::kExitUnreachable;
    out.error = "the " + side.name + "'s load of pair " + std::to_string(pair + 1) + " could not run: " + session.error;
    return false;
  }
  if (session.exit_code == results::kExitFailed) ++side.failed;
  for (auto& f : nightly::figures_of_loads({*session.document})) {
    if (f.figure == "error rate") continue;  // a ratio of fractions near 0 says nothing; the side's verdict judges errors
    auto& v = side.values[f.key()];
    v.resize(pairs, 0);
    v[pair] = f.estimate.backed ? f.estimate.value : 0;
    side.figures.emplace(f.key(), std::move(f));
  }
  side.documents.push_back(std::move(*session.document));
  return true;
}

// The duet's figures of one side: each step of its series (the same seconds
// on both sides, since both measured from one instant) is a pair.
void take_series(Side& side, const json::object& document, const std::string& scenario) {
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

bool started_late(const json::object& document) {
  namespace k = results::keys;
  for (const auto& s : results::DocView(document).find(k::load::shards).items())
    if (s.find(k::shard::late).is_bool() && s.find(k::shard::late).boolean()) return true;
  return false;
}

// Both sides loaded at once, each with the --connections and --threads
// given, measuring from one instant; out.pairs is the number of series
// steps. False, with `out.code` and `out.error` set, when a side could not
// run or began late.
bool run_duet(Side& candidate, Side& baseline, const std::vector<loadgen::Threshold>& thresholds, SideBySide& out) {
  // Both discoveries are done well before the instant (a side that is not
  // starts late, and its seconds would not be the other's).
  const auto at = std::chrono::system_clock::now() + std::chrono::seconds(3);
  candidate.config.start_at = baseline.config.start_at = at;
  std::optional<LoadSession> theirs;
  std::thread second([&] { theirs = run_load_session(baseline.config, thresholds, false, false); });
  LoadSession mine = run_load_session(candidate.config, thresholds, candidate.embedded, false);
  second.join();
  for (auto [side, session] : {std::pair{&candidate, &mine}, std::pair{&baseline, &*theirs}}) {
    if (!session->document || session->stopped) {
      out.code = session->exit_code ? session->exit_code : results::kExitUnreachable;
      out.error = "the " + side->name + "'s load could not run: " + session->error;
      return false;
    }
    if (started_late(*session->document)) {
      out.code = results::kExitCouldNotTell;
      out.error = "the " + side->name +
                  "'s load began measuring after the common instant (its set-up took over 3 s): the two sides' "
                  "seconds are not the same, so nothing is compared";
      return false;
    }
    if (session->exit_code == results::kExitFailed) ++side->failed;
    take_series(*side, *session->document, out.scenario);
    side->documents.push_back(std::move(*session->document));
    for (const auto& [key, v] : side->values) out.pairs = std::max(out.pairs, v.size());
  }
  return true;
}

// The median of a figure's nonzero values (a second with no answers has
// none to show).
double median_of(std::vector<double> v) {
  v.erase(std::remove(v.begin(), v.end(), 0.0), v.end());
  return nightly::median(std::move(v));
}

std::vector<JudgedFigure> judge(const Side& candidate, const Side& baseline, double limit_pct) {
  std::vector<JudgedFigure> out;
  for (const auto& [key, figure] : candidate.figures) {
    const auto other = baseline.values.find(key);
    if (other == baseline.values.end()) continue;
    const auto& mine = candidate.values.at(key);
    out.push_back({figure, median_of(mine), median_of(other->second),
                   nightly::judge_pairs({mine, other->second, figure.better, limit_pct})});
  }
  return out;
}

struct VerdictCounts {
  std::size_t regressed = 0, inconclusive = 0, noisy = 0, judged = 0, unbacked = 0;
  void add(nightly::Verdict v) {
    regressed += v == nightly::Verdict::regressed;
    inconclusive += v == nightly::Verdict::inconclusive;
    noisy += v == nightly::Verdict::too_noisy;
    (v == nightly::Verdict::not_backed ? unbacked : judged) += 1;
  }
};

// What --against does not do yet in crh load.
std::string unsupported(const LoadOptions& o) {
  std::vector<std::string> extra;
  if (!o.output.json_file.empty() || !o.output.html_file.empty() || !o.output.junit_file.empty())
    extra.push_back("--json, --html and --junit (crh run --against writes them)");
  if (!o.history_file.empty()) extra.push_back("--history");
  return refused_with_against(o.target, o.capture, o.load, std::move(extra));
}
// The table and the reasons of crh load --against; returns its exit code.
int print_judged(const SideBySide& s, const AgainstPlan& plan, bool verbose) {
  VerdictCounts n;
  std::string reasons;
  std::printf("%-28s %11s %11s %7s %17s %7s  %s\n", "figure", "candidate", "baseline", "ratio", "interval", "MDC",
              "verdict");
  for (const auto& f : s.figures) {
    const auto& r = f.result;
    n.add(r.verdict);
    std::string interval = "-", mdc = "-";
    if (r.confidence > 0) {
      interval = nightly::formatted("%.3f", r.ratio_lower) + "-" + nightly::formatted("%.3f", r.ratio_upper);
      mdc = nightly::formatted("%.1f%%", r.min_detectable_pct);
    }
    const std::string key = f.figure.key();
    std::printf("%-28s %11s %11s %7.3f %17s %7s  %s\n", key.c_str(),
                results::format_figure(f.figure.unit, f.candidate).c_str(), results::format_figure(f.figure.unit, f.baseline).c_str(),
                r.ratio, interval.c_str(), mdc.c_str(), std::string(nightly::to_string(r.verdict)).c_str());
    if (verbose || r.verdict != nightly::Verdict::no_change) reasons += "  " + key + ": " + r.reason + "\n";
  }
  std::cout << reasons;
  const std::string lim = nightly::formatted("%g%%", plan.limit_pct);
  const std::string who = plan.command + " --against";
  if (n.regressed) {
    std::cout << who << ": REGRESSED: " << n.regressed << " of " << n.judged << " figures worse than the " << lim
              << " limit, every ratio in their intervals worse than 1\n";
    return results::kExitFailed;
  }
  if (n.inconclusive || (n.judged > 0 && n.noisy == n.judged) || n.judged == 0) {
    std::cout << who << ": COULD NOT TELL: "
              << (n.judged == 0 ? std::string("no figure was measured on both sides")
                                : std::to_string(n.inconclusive) + " figure(s) worse than the " + lim +
                                      " limit on their face but within the trials' noise, " + std::to_string(n.noisy) +
                                      " too noisy")
              << "\n";
    return results::kExitCouldNotTell;
  }
  std::cout << who << ": no figure worse than the " << lim << " limit (" << n.judged << " judged"
            << (n.noisy ? ", " + std::to_string(n.noisy) + " too noisy to tell" : std::string())
            << (n.unbacked ? ", " + std::to_string(n.unbacked) + " not measured in enough pairs" : std::string())
            << ")\n";
  return results::kExitOk;
}

// Why a side's own failed loads matter: the candidate's fail the night; the
// baseline's leave nothing sound to compare with.
std::string failed_side(const std::string& name, std::size_t failed, std::size_t loads, const std::string& base_url,
                        bool duet) {
  return "the " + name + "'s own load failed" +
         (duet ? std::string() : " in " + std::to_string(failed) + " of " + std::to_string(loads) + " trials") +
         " (its invariant, a threshold, or answers that prove nothing; run crh load --base-url " + base_url +
         " alone to see why)";
}

}  // namespace

std::string refused_with_against(const TargetFlags& target, const CaptureFlags& capture, const LoadFlags& load,
                                 std::vector<std::string> extra) {
  std::vector<std::string> flags;
  if (target.call_driver != "http") flags.push_back("--call-driver sip");
  if (!capture.file.empty()) flags.push_back("--capture");
  if (!load.shard.empty() || !load.start_at.empty()) flags.push_back("--shard and --start-at");
  flags.insert(flags.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : ", ") + f;
  return out;
}

int baseline_config(const AgainstFlags& against, const std::string& command, const loadgen::LoadConfig& candidate,
                    loadgen::LoadConfig& baseline, const std::string& flag) {
  baseline = candidate;
  std::string why;
  auto base = core::parse_base_url(against.base_url, why);
  if (!base) {
    std::cerr << command << ": " << flag << ": " << why << "\n";
    return results::kExitUsage;
  }
  auto& target = baseline.target;
  target.base = *base;
  if (!against.channel.empty()) target.channel = against.channel;
  try {
    if (!against.profile_file.empty()) {
      const auto profile = core::load_profile(against.profile_file);
      target.dialect = profile.dialect;
      baseline.statuses = profile.statuses;
    }
    target.api_key = configured_api_key(against.api_key_file, "CRH_AGAINST_API_KEY").value_or(candidate.target.api_key);
  } catch (const std::exception& e) {
    std::cerr << command << ": " << e.what() << "\n";
    return results::kExitUsage;
  }
  return results::kExitOk;
}

int control_target(const std::string& control, const std::string& command, const loadgen::LoadConfig& candidate,
                   loadgen::LoadConfig& out) {
  if (control == "embedded") {
    std::cerr << command << ": --control embedded: the embedded reference service as a control made the nights "
                 "spread 6.6-6.8x more, not less (README: the control arm); give the URL of a control that does "
                 "the target's work on the target's machine\n";
    return results::kExitUsage;
  }
  return baseline_config({.base_url = control}, command, candidate, out, "--control");
}

std::string plan_problem(const AgainstPlan& plan, double duration_s) {
  if (plan.design == "duet" && duration_s < static_cast<double>(nightly::kMinPairs))
    return "--design duet judges each second of a load as a pair: the load's duration must be at least " +
           std::to_string(nightly::kMinPairs) + " s for a " + nightly::formatted("%g", nightly::kJudgingConfidence * 100) +
           "% interval";
  return "";
}

SideBySide load_side_by_side(const AgainstPlan& plan, loadgen::LoadConfig candidate_config,
                             loadgen::LoadConfig baseline_config, bool candidate_embedded,
                             const std::vector<loadgen::Threshold>& thresholds) {
  SideBySide out;
  out.scenario = std::string(loadgen::to_string(candidate_config.scenario));
  Side candidate{.name = "candidate", .config = std::move(candidate_config), .embedded = candidate_embedded};
  Side baseline{.name = "baseline", .config = std::move(baseline_config)};
  if (plan.design == "duet") {
    if (!run_duet(candidate, baseline, thresholds, out)) return out;
  } else {
    std::mt19937_64 order(plan.seed ^ 0x38a6b0c1d2e3f405ULL);
    for (; out.pairs < plan.pairs && !InterruptScope::requested().load(); ++out.pairs) {
      const bool baseline_first = std::bernoulli_distribution(0.5)(order);
      Side* sides[2] = {baseline_first ? &baseline : &candidate, baseline_first ? &candidate : &baseline};
      for (Side* side : sides)
        if (!run_trial(*side, out.pairs, plan.pairs, thresholds, out)) return out;
      if (!plan.quiet)
        std::cout << "  " << out.scenario << " pair " << out.pairs + 1 << "/" << plan.pairs << ": " << sides[0]->name
                  << ", then " << sides[1]->name << "\n"
                  << std::flush;
    }
  }
  out.interrupted = InterruptScope::requested().load();
  for (auto* side : {&candidate, &baseline})
    for (auto& [key, v] : side->values) v.resize(out.pairs);
  out.figures = judge(candidate, baseline, plan.limit_pct);
  out.candidate_failed = candidate.failed;
  out.baseline_failed = baseline.failed;
  out.candidate_loads = std::move(candidate.documents);
  return out;
}

json::object against_comparison(const std::vector<SideBySide>& scenarios, const AgainstPlan& plan,
                                const std::string& baseline_url, double duration_s) {
  namespace k = results::keys;
  namespace x = k::figure;
  namespace a = k::against;
  json::array figures, unreliable, notes;
  VerdictCounts n;
  const bool duet = plan.design == "duet";
  for (const auto& s : scenarios) {
    if (s.code) unreliable.emplace_back(s.scenario + " load: " + s.error);
    if (s.baseline_failed)
      unreliable.emplace_back(s.scenario + " load: " +
                              failed_side(plan.control ? "control" : "baseline", s.baseline_failed, s.pairs,
                                          baseline_url, duet) +
                              ": the comparison with it says nothing of the " + (plan.control ? "target" : "candidate"));
    for (const auto& f : s.figures) {
      const auto& r = f.result;
      const bool lower = f.figure.better == nightly::Better::lower;
      const double change = (r.ratio - 1) * 100;
      n.add(r.verdict);
      json::object o{{x::scenario, f.figure.scenario},
                     {x::operation, f.figure.operation},
                     {x::figure, f.figure.figure},
                     {x::unit, f.figure.unit},
                     {x::better, lower ? "lower" : "higher"},
                     {x::baseline, f.baseline},
                     {x::current, f.candidate},
                     {x::change_pct, nullptr},  // not backed: no ratio to show
                     {x::worse_pct, nullptr},
                     {x::limit_pct, plan.limit_pct},
                     {x::verdict, nightly::to_string(r.verdict)},
                     {x::regressed, r.verdict == nightly::Verdict::regressed},
                     {x::pairs, r.pairs},
                     {x::rule, r.rule},
                     {x::reason, r.reason}};
      if (r.confidence > 0) {
        o[x::change_pct] = change;
        o[x::worse_pct] = lower ? change : -change;
        o[x::ratio] = r.ratio;
        o[x::ratio_lower] = r.ratio_lower;
        o[x::ratio_upper] = r.ratio_upper;
        o[x::confidence] = r.confidence;
        o[x::change_lower_pct] = (r.ratio_lower - 1) * 100;
        o[x::change_upper_pct] = (r.ratio_upper - 1) * 100;
        o[x::min_detectable_pct] = r.min_detectable_pct;
      }
      figures.push_back(std::move(o));
    }
    if (s.interrupted) notes.emplace_back(s.scenario + " load: interrupted after " + std::to_string(s.pairs) + " pairs");
  }
  if (n.judged > 0 && n.noisy == n.judged)
    unreliable.emplace_back("every figure judged was too noisy to tell a worsening of 1.5 x the limit from none "
                            "(more pairs or longer trials narrow it)");
  else if (n.judged == 0 && !scenarios.empty())
    unreliable.emplace_back("no figure was measured on both sides in " + std::to_string(nightly::kMinPairs) + " pairs");
  namespace cmp = k::comparison;
  return json::object{{cmp::mode, "against"},
                      {cmp::against, json::object{{a::base_url, baseline_url},
                                                  {a::design, plan.design},
                                                  {a::pairs, duet ? 0 : plan.pairs},
                                                  {a::duration_s, duration_s},
                                                  {a::seed, plan.seed},
                                                  {a::confidence, nightly::kJudgingConfidence}}},
                      {cmp::max_regression_pct, plan.limit_pct},
                      {cmp::figures, std::move(figures)},
                      {cmp::regressions, n.regressed},
                      {cmp::inconclusive, n.inconclusive},
                      {cmp::unreliable, std::move(unreliable)},
                      {cmp::notes, std::move(notes)}};
}

// --contract-both: the checks whose outcome differs between the deployments.
json::array contract_differences(const contracts::RunReport& candidate, const contracts::RunReport& baseline) {
  json::array notes;
  for (const auto& c : candidate.results)
    for (const auto& b : baseline.results)
      if (c.id == b.id && c.outcome != b.outcome &&
          (c.outcome == contracts::Outcome::fail || b.outcome == contracts::Outcome::fail))
        notes.emplace_back("contract check " + c.id + ": " + std::string(contracts::to_string(c.outcome)) +
                           " on the candidate, " + std::string(contracts::to_string(b.outcome)) +
                           " on the baseline deployment");
  if (notes.empty())
    notes.emplace_back("contract suites on both deployments: no check failed on one and not on the other");
  return notes;
}

int run_load_against(const LoadOptions& o, loadgen::LoadConfig config, const std::vector<loadgen::Threshold>& thresholds) {
  const std::string command = "crh load";
  const AgainstPlan plan{.command = command,
                         .design = o.against.design,
                         .pairs = static_cast<std::size_t>(o.against.pairs),
                         .seed = o.seed,
                         .limit_pct = o.against.max_regression,
                         .quiet = o.output.quiet};
  if (const auto flags = unsupported(o); !flags.empty()) {
    std::cerr << command << ": not with --against (yet): " << flags << "\n";
    return results::kExitUsage;
  }
  if (const auto problem = plan_problem(plan, o.duration_s); !problem.empty()) {
    std::cerr << command << ": " << problem << "\n";
    return results::kExitUsage;
  }
  std::unique_ptr<reference::Server> embedded;
  const int aliases = o.aliases > 0 ? o.aliases : embedded_aliases_for(o.load.connections);
  if (int code = set_up_target({command, o.target.base_url, o.target.api_key_file, aliases}, config.target, embedded))
    return code;
  loadgen::LoadConfig baseline;
  if (int code = baseline_config(o.against, command, config, baseline)) return code;
  const bool duet = plan.design == "duet";
  std::cout << command << " --against: " << o.scenario << ", candidate " << config.target.base.to_string()
            << (embedded ? " (embedded reference service)" : "") << ", baseline " << baseline.target.base.to_string()
            << "; "
            << reports::side_by_side_design(plan.design, plan.pairs, o.duration_s)
            << (duet ? "" : ", the order drawn from seed " + std::to_string(o.seed))
            << "; limit " << plan.limit_pct << "%\n"
            << std::flush;
  InterruptScope interrupt;
  const bool embedded_candidate = embedded != nullptr;
  const std::string candidate_url = config.target.base.to_string(), baseline_url = baseline.target.base.to_string();
  const auto side_by_side = load_side_by_side(plan, std::move(config), std::move(baseline), embedded_candidate, thresholds);
  if (embedded) embedded->stop();
  if (side_by_side.code) {
    std::cerr << command << " --against: " << side_by_side.error << "\n";
    return side_by_side.code;
  }
  int code = print_judged(side_by_side, plan, o.output.verbose);
  if (side_by_side.candidate_failed) {
    std::cout << command << " --against: FAILED: "
              << failed_side("candidate", side_by_side.candidate_failed, side_by_side.pairs, candidate_url, duet) << "\n";
    code = results::worse_exit(code, results::kExitFailed);
  }
  if (side_by_side.baseline_failed) {
    std::cout << command << " --against: COULD NOT TELL: "
              << failed_side("baseline", side_by_side.baseline_failed, side_by_side.pairs, baseline_url, duet)
              << ": the comparison with it says nothing of the candidate\n";
    code = results::worse_exit(code, results::kExitCouldNotTell);
  }
  if (side_by_side.interrupted) {
    std::cout << command << " --against: interrupted after " << side_by_side.pairs
              << (duet ? " seconds" : " of " + std::to_string(plan.pairs) + " pairs") << "\n";
    code = results::worse_exit(code, results::kExitFailed);
  }
  return code;
}

}  // namespace crh::runners
