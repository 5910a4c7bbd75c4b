// crh report: renders results written earlier (contract, load or run
// documents; several shards merge exactly), compares them with a baseline,
// and writes --html, --junit and --json. Exits with the verdict's code.
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <boost/json.hpp>

#include "commands.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_run.hpp"
#include "documents.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"
#include "nights_session.hpp"
#include "nightly/record.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"

namespace crh::runners {
namespace keys = results::keys;
namespace json = boost::json;
namespace {

// A `crh pcap check` document renders alone, with its own sections; it does
// not merge with contract or load results, nor compare with a baseline.
std::optional<json::object> pcap_document(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  auto value = json::parse(text.str(), ec);
  if (ec || !value.is_object()) return std::nullopt;
  const auto* kind = value.get_object().if_contains(keys::envelope::kind);
  if (!kind || !kind->is_string() || kind->get_string() != keys::kind_pcap) return std::nullopt;
  return std::move(value.get_object());
}

// crh report --nights DIR without results: --accept a night, and/or the trend page (--html).
int run_nights_command(const ReportOptions& o) {
  try {
    if (!o.nights.accept.empty()) {
      nightly::accept_night(o.nights.dir, o.nights.accept);
      std::cout << "crh report: from night " << o.nights.accept << " on, comparisons in " << o.nights.dir
                << " use only nights from it (a new level accepted)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "crh report: " << e.what() << "\n";
    return results::kExitUsage;
  }
  if (o.output.html_file.empty()) return results::kExitOk;
  return write_trend_page(o.nights.dir, o.output.html_file, o.baseline.max_regression, "crh report");
}

}  // namespace

int run_report_command(const ReportOptions& o) {
  if (o.results.empty()) {
    if (o.nights.dir.empty()) {
      std::cerr << "crh report: no result given (RESULT.json..., or --nights DIR for the trend page)\n";
      return results::kExitUsage;
    }
    return run_nights_command(o);
  }
  if (!o.nights.accept.empty()) {
    std::cerr << "crh report: --accept takes no result: crh report --nights DIR --accept NIGHT\n";
    return results::kExitUsage;
  }
  for (const auto& file : o.results)
    if (auto pcap = pcap_document(file)) {
      if (o.results.size() > 1 || !o.baseline.file.empty()) {
        std::cerr << "crh report: " << file
                  << " is a crh pcap check result: it renders alone (no other results, no --baseline)\n";
        return results::kExitUsage;
      }
      return render_pcap_document(*pcap, o.output, "crh report");
    }
  std::vector<std::pair<std::string, json::object>> documents;
  reports::RunParts parts;
  std::optional<json::object> comparison;
  try {
    for (const auto& file : o.results) documents.emplace_back(file, read_result_file(file));
    parts = merge_documents(documents);
    if (!o.baseline.file.empty()) {
      auto baseline = read_result_file(o.baseline.file);
      comparison =
          reports::compare(parts, reports::parts_of(baseline), o.baseline.max_regression, o.baseline.file, baseline);
    }
  } catch (const std::exception& e) {
    std::cerr << "crh report: " << e.what() << "\n";
    return results::kExitUsage;
  }

  reports::RunMeta meta = meta_of(documents, true);
  json::array inputs;
  for (const auto& [file, doc] : documents) inputs.emplace_back(file);
  meta.config[keys::run_config::report_inputs] = std::move(inputs);
  if (!o.baseline.file.empty() || !o.nights.dir.empty())
    meta.config[keys::run_config::max_regression_pct] = o.baseline.max_regression;
  if (!o.baseline.file.empty()) meta.config[keys::run_config::baseline] = o.baseline.file;
  if (!o.nights.dir.empty()) {
    meta.config[keys::run_config::nights] = o.nights.dir;
    try {
      comparison = compare_with_record(o.nights, parts, reports::run_document(parts, std::nullopt, meta),
                                       o.baseline.max_regression);
    } catch (const std::exception& e) {
      std::cerr << "crh report: --nights " << o.nights.dir << ": cannot be compared (" << e.what() << ")\n";
      return results::kExitUsage;
    }
  }

  const auto doc = reports::run_document(std::move(parts), std::move(comparison), meta);
  int exit_code = static_cast<int>(doc.at(keys::envelope::verdict).at(keys::verdict::exit_code).to_number<long>());
  exit_code = with_output_problems("crh report", write_outputs(doc, o.output.files()), exit_code);
  // Shards merged here are one night: the merge is recorded, never each shard.
  if (!o.nights.dir.empty())
    if (auto problem = record_night(o.nights, doc, o.output.html_file)) {
      std::cerr << "crh report: " << *problem << "\n";
      exit_code = results::worse_exit(exit_code, results::kExitUsage);
    }
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  try {
    std::cout << reports::run_summary(doc, {.color = tty, .verbose = o.output.verbose, .quiet = o.output.quiet});
  } catch (const std::exception& e) {
    std::cerr << "crh report: a result lacks what its kind must hold (" << e.what()
              << "); was it written by this crh?\n";
    return results::kExitUsage;
  }
  return exit_code;
}

}  // namespace crh::runners
