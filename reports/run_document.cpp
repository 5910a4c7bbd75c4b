// The run document, the baseline comparison and the environment.
#include "reports/run_document.hpp"

#include <boost/json.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/result_envelope.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace {

const json::object* object_in(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_object() ? &p->get_object() : nullptr;
}

std::optional<double> number_in(const json::object* o, std::string_view key) {
  if (!o) return std::nullopt;
  const auto* p = o->if_contains(key);
  if (!p || !p->is_number()) return std::nullopt;
  return p->to_number<double>();
}

std::string string_in(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_string() ? std::string(p->get_string()) : std::string{};
}

const json::object* load_of(const RunParts& parts, std::string_view scenario) {
  for (const auto& l : parts.loads)
    if (const auto* c = object_in(l, "config"); c && string_in(*c, "scenario") == scenario) return &l;
  return nullptr;
}

enum class Better { lower, higher };

struct Figure {
  std::string name;  // "p50", "p99", "throughput", "error rate"
  std::string unit;  // "ns", "per_second", "fraction"
  Better better;
  std::optional<double> baseline, current;
};

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

json::object judge(const std::string& scenario, const std::string& operation, const Figure& f, double limit_pct) {
  const double base = *f.baseline, cur = *f.current;
  // How much worse, in percent of the baseline; negative when better.
  double worse_pct = 0;
  if (base > 0) worse_pct = (f.better == Better::lower ? cur - base : base - cur) / base * 100.0;
  else if (f.better == Better::lower && cur > 0) worse_pct = INFINITY;
  bool regressed = worse_pct > limit_pct;
  std::string note;
  if (f.unit == "fraction" && regressed && cur - base < 0.001) {
    regressed = false;
    note = "up by less than 0.1 percentage point: not counted";
  }
  const double change_pct = base > 0 ? (cur - base) / base * 100.0 : (cur > 0 ? INFINITY : 0.0);
  json::object o{{"scenario", scenario},
                 {"operation", operation},
                 {"figure", f.name},
                 {"unit", f.unit},
                 {"better", f.better == Better::lower ? "lower" : "higher"},
                 {"baseline", base},
                 {"current", cur},
                 {"change_pct", std::isfinite(change_pct) ? json::value(change_pct) : json::value(nullptr)},
                 {"worse_pct", std::isfinite(worse_pct) ? json::value(worse_pct) : json::value(nullptr)},
                 {"limit_pct", limit_pct},
                 {"regressed", regressed}};
  if (!note.empty()) o["note"] = note;
  return o;
}

std::vector<Figure> figures_of(const json::object* base_op, const json::object* cur_op, bool whole_run) {
  auto latency = [](const json::object* op, std::string_view key) {
    return op ? number_in(object_in(*op, "latency"), key) : std::nullopt;
  };
  auto error_rate = [whole_run](const json::object* op) -> std::optional<double> {
    if (!op) return std::nullopt;
    if (whole_run) return number_in(op, "error_rate");
    auto count = number_in(op, "count"), errors = number_in(op, "errors");
    if (!count || !errors || *count <= 0) return std::nullopt;
    return *errors / *count;
  };
  std::vector<Figure> out;
  if (!whole_run) {
    out.push_back({"p50", "ns", Better::lower, latency(base_op, "p50_ns"), latency(cur_op, "p50_ns")});
    out.push_back({"p99", "ns", Better::lower, latency(base_op, "p99_ns"), latency(cur_op, "p99_ns")});
  }
  const std::string_view rate_key = whole_run ? "achieved_rate" : "rate";
  out.push_back({"throughput", "per_second", Better::higher, base_op ? number_in(base_op, rate_key) : std::nullopt,
                 cur_op ? number_in(cur_op, rate_key) : std::nullopt});
  out.push_back({"error rate", "fraction", Better::lower, error_rate(base_op), error_rate(cur_op)});
  return out;
}

// Config fields that make two load results incomparable when they differ.
constexpr std::string_view kComparableConfig[] = {"connections", "rate", "threads", "callers", "path", "mix"};

}  // namespace

RunParts parts_of(const json::object& doc) {
  const std::string kind = string_in(doc, "kind");
  if (string_in(doc, "schema") != "crh.result")
    throw std::runtime_error("not a crh result document (schema is not \"crh.result\")");
  if (const auto v = number_in(&doc, "schema_version"); !v || *v != core::kResultSchemaVersion)
    throw std::runtime_error("schema_version " + (v ? std::to_string(static_cast<long>(*v)) : std::string("missing")) +
                             " is not the one this crh reads (" + std::to_string(core::kResultSchemaVersion) + ")");
  RunParts parts;
  if (kind == "contract") parts.contract = doc;
  else if (kind == "load") parts.loads.push_back(doc);
  else if (kind == "run") {
    if (const auto* c = object_in(doc, "contract")) parts.contract = *c;
    if (const auto* loads = doc.if_contains("loads"); loads && loads->is_array())
      for (const auto& l : loads->get_array())
        if (l.is_object()) parts.loads.push_back(l.get_object());
  } else {
    throw std::runtime_error("unknown result kind \"" + kind + "\" (expected contract, load or run)");
  }
  return parts;
}

json::object compare(const RunParts& current, const RunParts& baseline, double limit_pct, const std::string& label,
                     const json::object& baseline_envelope) {
  json::array figures, notes;
  std::size_t regressions = 0;
  auto add = [&](json::object figure) {
    regressions += figure.at("regressed").as_bool();
    figures.push_back(std::move(figure));
  };
  for (const auto& cur : current.loads) {
    const std::string scenario = string_in(*object_in(cur, "config"), "scenario");
    const json::object* base = load_of(baseline, scenario);
    if (!base) {
      notes.emplace_back("the baseline has no " + scenario + " load: nothing to compare it with");
      continue;
    }
    for (auto key : kComparableConfig) {
      const auto* a = object_in(*base, "config")->if_contains(key);
      const auto* b = object_in(cur, "config")->if_contains(key);
      if (a && b && *a != *b)
        notes.emplace_back(scenario + " load: config." + std::string(key) + " was " + json::serialize(*a) + " in the baseline, " +
                           json::serialize(*b) + " now: the figures may not be comparable");
    }
    for (const auto& f : figures_of(object_in(*base, "totals"), object_in(cur, "totals"), true))
      if (f.baseline && f.current) add(judge(scenario, "all", f, limit_pct));
    const auto* base_ops = object_in(*base, "operations");
    const auto* cur_ops = object_in(cur, "operations");
    if (!base_ops || !cur_ops) continue;
    for (const auto& [op, v] : *cur_ops) {
      const auto* b = object_in(*base_ops, op);
      if (!b) {
        notes.emplace_back(scenario + " load: " + std::string(op) + " is not in the baseline");
        continue;
      }
      for (const auto& f : figures_of(b, &v.get_object(), false))
        if (f.baseline && f.current) add(judge(scenario, std::string(op), f, limit_pct));
    }
  }
  if (current.contract && baseline.contract) {
    // A contract check that held in the baseline and fails now is named too.
    const auto* base_checks = baseline.contract->if_contains("checks");
    const auto* cur_checks = current.contract->if_contains("checks");
    if (base_checks && cur_checks && base_checks->is_array() && cur_checks->is_array())
      for (const auto& c : cur_checks->get_array()) {
        if (!c.is_object() || string_in(c.get_object(), "outcome") != "fail") continue;
        for (const auto& b : base_checks->get_array())
          if (b.is_object() && string_in(b.get_object(), "id") == string_in(c.get_object(), "id") &&
              string_in(b.get_object(), "outcome") == "pass")
            notes.emplace_back("contract check " + string_in(c.get_object(), "id") + " passed in the baseline and fails now");
      }
  }
  json::object base_info{{"file", label},
                         {"started_at", string_in(baseline_envelope, "started_at")},
                         {"base_url", object_in(baseline_envelope, "target")
                                          ? string_in(*object_in(baseline_envelope, "target"), "base_url")
                                          : std::string{}}};
  // Regressions first, the worst first: what a reader looks for.
  std::stable_sort(figures.begin(), figures.end(), [](const json::value& a, const json::value& b) {
    auto rank = [](const json::value& f) {
      constexpr double kInf = std::numeric_limits<double>::infinity();
      if (!f.at("regressed").as_bool()) return -kInf;
      const auto& w = f.at("worse_pct");
      return w.is_number() ? w.to_number<double>() : kInf;
    };
    return rank(a) > rank(b);
  });
  return json::object{{"baseline", std::move(base_info)},
                      {"max_regression_pct", limit_pct},
                      {"figures", std::move(figures)},
                      {"regressions", regressions},
                      {"notes", std::move(notes)}};
}

json::object run_document(RunParts parts, std::optional<json::object> comparison, const RunMeta& meta) {
  std::string why;
  auto base = core::parse_base_url(meta.base_url, why);
  json::object doc = core::result_envelope("run", meta.started, meta.duration_ms, base ? *base : core::BaseUrl{},
                                           meta.channel, meta.embedded);
  if (!base) doc["target"].as_object()["base_url"] = meta.base_url;

  int code = 0;
  json::array reasons;
  auto worst = [&code](int c) { code = (c == 3 || code == 3) ? 3 : std::max(code, c); };
  for (const auto& p : meta.problems) {
    worst(3);
    reasons.emplace_back(p);
  }
  if (parts.contract) {
    const auto* v = object_in(*parts.contract, "verdict");
    const int c = static_cast<int>(number_in(v, "exit_code").value_or(0));
    worst(c);
    if (c != 0) reasons.emplace_back("contract: " + string_in(*v, "reason"));
  }
  for (const auto& l : parts.loads) {
    const auto* v = object_in(l, "verdict");
    const int c = static_cast<int>(number_in(v, "exit_code").value_or(0));
    worst(c);
    const std::string scenario = string_in(*object_in(l, "config"), "scenario");
    if (c != 0) reasons.emplace_back(scenario + " load: " + string_in(*v, "reason"));
    if (const auto* valid = v ? v->if_contains("valid") : nullptr; valid && valid->is_bool() && !valid->get_bool())
      reasons.emplace_back(scenario + " load: INVALID (the generator, not the target, limited the figures)");
  }
  if (comparison) {
    const auto n = static_cast<long>(number_in(&*comparison, "regressions").value_or(0));
    if (n > 0) {
      worst(1);
      std::string named;
      int listed = 0;
      for (const auto& f : comparison->at("figures").as_array())
        if (f.at("regressed").as_bool() && listed++ < 3)
          named += std::string(named.empty() ? "" : ", ") + string_in(f.get_object(), "scenario") + " " +
                   string_in(f.get_object(), "operation") + " " + string_in(f.get_object(), "figure") + " " +
                   (number_in(&f.get_object(), "change_pct") ? percent(*number_in(&f.get_object(), "change_pct")) : "(from 0)");
      reasons.emplace_back(std::to_string(n) + " figure(s) regressed beyond " +
                           percent(number_in(&*comparison, "max_regression_pct").value_or(0)).substr(1) +
                           " of the baseline: " + named + (n > 3 ? ", ..." : ""));
    }
  }
  if (meta.incomplete) {
    worst(1);
    reasons.emplace_back("interrupted: the results are incomplete");
  }
  // Exit 3 of a run whose target answered but could not be tested is said so.
  const auto* contract_verdict = parts.contract ? object_in(*parts.contract, "verdict") : nullptr;
  const bool untested = meta.problems.empty() && contract_verdict && string_in(*contract_verdict, "status") == "untested";
  const std::string status = code == 3 ? (untested ? "untested" : "unreachable")
                             : meta.incomplete ? "incomplete" : code ? "failed" : "passed";
  std::string reason;
  for (const auto& r : reasons) reason += (reason.empty() ? "" : "; ") + std::string(r.as_string());
  if (reason.empty()) {
    if (parts.contract) reason = "every contract check held";
    if (!parts.loads.empty()) reason += std::string(reason.empty() ? "" : ", ") + "no invariant broke, every threshold held";
    if (comparison) reason += std::string(reason.empty() ? "" : ", ") + "no figure regressed beyond the limit";
    if (reason.empty()) reason = "nothing ran";
  }
  doc["verdict"] = json::object{{"status", status}, {"exit_code", code}, {"reason", reason},
                                {"reasons", std::move(reasons)}, {"incomplete", meta.incomplete}};
  doc["config"] = meta.config;
  doc["environment"] = meta.environment;
  doc["skipped"] = json::value_from(meta.skipped);
  doc["problems"] = json::value_from(meta.problems);
  doc["contract"] = parts.contract ? json::value(std::move(*parts.contract)) : json::value(nullptr);
  json::array loads;
  for (auto& l : parts.loads) loads.emplace_back(std::move(l));
  doc["loads"] = std::move(loads);
  doc["comparison"] = comparison ? json::value(std::move(*comparison)) : json::value(nullptr);
  return doc;
}

json::object environment() {
  utsname u{};
  ::uname(&u);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return json::object{{"host", host},
                      {"os", std::string(u.sysname) + " " + u.release},
                      {"machine", u.machine},
                      {"cpus", std::thread::hardware_concurrency()},
                      {"compiler", __VERSION__},
#ifdef NDEBUG
                      {"build", "optimized"}};
#else
                      {"build", "debug (figures are slower than an optimized build's)"}};
#endif
}

}  // namespace crh::reports
