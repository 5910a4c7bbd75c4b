// --nights: reading the record, judging tonight, writing tonight.
#include "nights_session.hpp"

#include <filesystem>
#include <iostream>

#include <boost/json.hpp>

#include "core/output_file.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_run.hpp"
#include "results/view.hpp"
#include "nightly/compare.hpp"
#include "nightly/figures.hpp"
#include "nightly/trend.hpp"
#include "reports/trend_html.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace k = results::keys;

json::object compare_with_record(const NightsFlags& flags, const reports::RunParts& parts,
                                 const json::object& provisional, double max_regression_pct,
                                 const json::object* control) {
  std::vector<std::string> problems;
  const auto record = nightly::read_nights(flags.dir, problems);
  for (const auto& p : problems) std::cerr << "crh: --nights: " << p << "\n";
  const results::DocView d(provisional);
  nightly::Tonight tonight;
  tonight.figures = nightly::figures_of_loads(parts.loads);
  tonight.fingerprint_fields = nightly::fingerprint_fields(provisional);
  tonight.fingerprint = nightly::fingerprint_hash(tonight.fingerprint_fields);
  tonight.started_at = d.find(k::envelope::started_at).str();
  tonight.tool_version = d.find(k::envelope::tool).find(k::tool::version).str();
  tonight.cpu = d.find(k::run::environment).find(k::environment::cpu_model).str();
  tonight.unreliable = nightly::unreliable_reasons(parts.loads, max_regression_pct);
  if (!control)
    return nightly::compare_with_nights(tonight, record, nightly::accepted_nights(flags.dir), flags.dir,
                                        max_regression_pct);
  tonight.figures = nightly::ratio_figures(*control);
  // The side-by-side verdicts (target against control at the limit) mean
  // nothing here: two services. What counts is a side that could not be
  // loaded, or a control whose own loads failed.
  const results::DocView c(*control);
  for (const auto& u : c.find(k::comparison::unreliable).items())
    if (const std::string why = u.str(); why.find(" load: ") != std::string::npos)
      tonight.unreliable.push_back(why);
  auto out = nightly::compare_with_nights(tonight, record, nightly::accepted_nights(flags.dir), flags.dir,
                                          max_regression_pct);
  const auto how = c.find(k::comparison::against);
  out[k::comparison::notes].as_array().emplace(
      out[k::comparison::notes].as_array().begin(),
      "control arm: every figure is the ratio target / control " + how.find(k::against::base_url).str() + " (" +
          std::to_string(how.find(k::against::pairs).count()) +
          " interleaved trial pairs), judged against the same ratio on the recorded nights");
  out[k::comparison::control] = *control;
  return out;
}

std::optional<std::string> record_night(const NightsFlags& flags, const json::object& run_document,
                                        const std::string& html_report) {
  try {
    // The report as a path from the record, so the trend page's links work where the record is kept.
    std::string report;
    if (!html_report.empty()) {
      std::error_code ec;
      const auto rel = std::filesystem::relative(std::filesystem::absolute(html_report), std::filesystem::absolute(flags.dir), ec);
      report = ec || rel.empty() ? html_report : rel.string();
    }
    const auto file = nightly::write_night(flags.dir, nightly::night_document(run_document, report), flags.keep);
    std::cout << "night recorded: " << file << "\n";
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("--nights ") + flags.dir + ": tonight could not be recorded (" + e.what() + ")";
  }
}

int write_trend_page(const std::string& dir, const std::string& html_file, double max_regression_pct,
                     const std::string& command) {
  try {
    std::vector<std::string> problems;
    const auto record = nightly::read_nights(dir, problems);
    for (const auto& p : problems) std::cerr << command << ": --nights: " << p << "\n";
    if (record.empty()) {
      std::cerr << command << ": --nights " << dir << ": no night recorded there: nothing to draw\n";
      return 2;
    }
    core::write_file_atomically(html_file, reports::trend_html(nightly::trend_document(
                                               record, nightly::accepted_nights(dir), dir, max_regression_pct)));
    std::cout << "trend page: " << html_file << " (" << record.size() << " night(s))\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << command << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace crh::runners
