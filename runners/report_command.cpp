// crh report: renders results written earlier (contract, load or run
// documents; several shards merge exactly), compares them with a baseline,
// and writes --html, --junit and --json. Exits with the verdict's code.
#include <CLI/CLI.hpp>
#include <iostream>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
#include "core/result_envelope.hpp"
#include "documents.hpp"
#include "exit_codes.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace {

struct ReportOptions {
  std::vector<std::string> results;
  std::string baseline;
  double max_regression = 20;
  std::string html_file;
  std::string junit_file;
  std::string json_file;
  bool verbose = false;
  bool quiet = false;
};

std::string string_in(const json::object& o, std::string_view key) {
  const auto* p = o.if_contains(key);
  return p && p->is_string() ? std::string(p->get_string()) : std::string{};
}

int run_report_command(const ReportOptions& o) {
  std::vector<std::pair<std::string, json::object>> documents;
  reports::RunParts parts;
  std::optional<json::object> comparison;
  try {
    for (const auto& file : o.results) documents.emplace_back(file, read_result_file(file));
    parts = merge_documents(documents);
    if (!o.baseline.empty()) {
      auto baseline = read_result_file(o.baseline);
      comparison = reports::compare(parts, reports::parts_of(baseline), o.max_regression, o.baseline, baseline);
    }
  } catch (const std::exception& e) {
    std::cerr << "crh report: " << e.what() << "\n";
    return kExitUsage;
  }

  // The run's own description when one run document is rendered again;
  // otherwise what the inputs say, and the files they came from.
  reports::RunMeta meta;
  const json::object& first = documents.front().second;
  const auto* target = first.if_contains("target");
  if (target && target->is_object()) {
    meta.base_url = string_in(target->get_object(), "base_url");
    meta.channel = string_in(target->get_object(), "channel");
    const auto* embedded = target->get_object().if_contains("embedded");
    meta.embedded = embedded && embedded->is_bool() && embedded->get_bool();
  }
  meta.started = std::chrono::system_clock::time_point::max();
  for (const auto& [file, doc] : documents) {
    if (auto t = core::parse_iso8601(string_in(doc, "started_at"))) meta.started = std::min(meta.started, *t);
    if (const auto* d = doc.if_contains("duration_ms"); d && d->is_number())
      meta.duration_ms = std::max(meta.duration_ms, d->to_number<double>());
  }
  if (meta.started == std::chrono::system_clock::time_point::max()) meta.started = std::chrono::system_clock::now();
  if (documents.size() == 1 && string_in(first, "kind") == "run") {
    auto object_of = [&](std::string_view key) {
      const auto* p = first.if_contains(key);
      return p && p->is_object() ? p->get_object() : json::object{};
    };
    auto strings_of = [&](std::string_view key) {
      std::vector<std::string> out;
      if (const auto* p = first.if_contains(key); p && p->is_array())
        for (const auto& s : p->get_array())
          if (s.is_string()) out.emplace_back(s.get_string());
      return out;
    };
    meta.config = object_of("config");
    meta.environment = object_of("environment");
    meta.skipped = strings_of("skipped");
    meta.problems = strings_of("problems");
    const auto verdict = object_of("verdict");
    const auto* incomplete = verdict.if_contains("incomplete");
    meta.incomplete = incomplete && incomplete->is_bool() && incomplete->get_bool();
  } else {
    meta.environment = reports::environment();
    meta.environment["note"] = "of the machine that ran crh report; contract and load results do not record theirs";
  }
  json::array inputs;
  for (const auto& [file, doc] : documents) inputs.emplace_back(file);
  meta.config["report_inputs"] = std::move(inputs);
  if (!o.baseline.empty()) {
    meta.config["baseline"] = o.baseline;
    meta.config["max_regression_pct"] = o.max_regression;
  }

  const auto doc = reports::run_document(std::move(parts), std::move(comparison), meta);
  int exit_code = static_cast<int>(doc.at("verdict").at("exit_code").to_number<long>());
  for (const auto& problem : write_outputs(doc, {o.json_file, o.html_file, o.junit_file}, "")) {
    std::cerr << "crh report: " << problem << "\n";
    exit_code = std::max(exit_code, static_cast<int>(kExitUsage));
  }
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  std::cout << reports::run_summary(doc, {.color = tty, .verbose = o.verbose, .quiet = o.quiet});
  return exit_code;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Render results written earlier (--json of contract, load or run); several results of one run merge");
  sub->add_option("results", o->results, "result documents; shards of one run merge exactly")->required()->check(CLI::ExistingFile);
  sub->add_option("--baseline", o->baseline, "an earlier result to compare with: a figure worse beyond --max-regression fails (exit 1)")
      ->check(CLI::ExistingFile);
  sub->add_option("--max-regression", o->max_regression, "how much worse a figure may get, in percent of the baseline")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--html", o->html_file, "write the HTML report here");
  sub->add_option("--junit", o->junit_file, "write JUnit XML here");
  sub->add_option("--json", o->json_file, "write the (merged) run document here");
  auto* verbose = sub->add_flag("--verbose", o->verbose, "every check, violation and compared figure");
  sub->add_flag("--quiet", o->quiet, "only failures, regressions and the verdict")->excludes(verbose);
  return {sub, [o] { return run_report_command(*o); }};
}

}  // namespace crh::runners
