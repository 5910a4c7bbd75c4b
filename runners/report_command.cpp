// crh report: renders results written earlier (contract, load or run
// documents; several shards merge exactly), compares them with a baseline,
// and writes --html, --junit and --json. Exits with the verdict's code.
#include <CLI/CLI.hpp>
#include <iostream>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
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

  reports::RunMeta meta = meta_of(documents, true);
  json::array inputs;
  for (const auto& [file, doc] : documents) inputs.emplace_back(file);
  meta.config["report_inputs"] = std::move(inputs);
  if (!o.baseline.empty()) {
    meta.config["baseline"] = o.baseline;
    meta.config["max_regression_pct"] = o.max_regression;
  }

  const auto doc = reports::run_document(std::move(parts), std::move(comparison), meta);
  int exit_code = static_cast<int>(doc.at("verdict").at("exit_code").to_number<long>());
  for (const auto& problem : write_outputs(doc, {o.json_file, o.html_file, o.junit_file})) {
    std::cerr << "crh report: " << problem << "\n";
    exit_code = std::max(exit_code, static_cast<int>(kExitUsage));
  }
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  try {
    std::cout << reports::run_summary(doc, {.color = tty, .verbose = o.verbose, .quiet = o.quiet});
  } catch (const std::exception& e) {
    std::cerr << "crh report: a result lacks what its kind must hold (" << e.what() << "); was it written by this crh?\n";
    return kExitUsage;
  }
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
