// Writes the pages reports.browser opens in a real browser, from synthetic
// data through the same code as crh: night files of a record (the format of
// nightly/record.hpp, written and read back by nightly/), the trend page of
// that record, and a run report judged against it.
//   crh_report_samples OUTDIR  ->  OUTDIR/nights/, trend.html, run.html, run.json, run.txt
#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "load_fixture.hpp"
#include "nightly/compare.hpp"
#include "nightly/figures.hpp"
#include "nightly/trend.hpp"
#include "reports/html.hpp"
#include "reports/run_document.hpp"
#include "reports/run_terminal.hpp"
#include "reports/trend_html.hpp"

namespace json = boost::json;
using namespace crh;

namespace {

constexpr const char* kFingerprint = "sample-settings";

std::vector<json::object> loads(double scale) {
  return {loadgen::result_document(test::synthetic_load_run(loadgen::Scenario::race, 0, scale)),
          loadgen::result_document(test::synthetic_load_run(loadgen::Scenario::mixed, 0, scale))};
}

// Night i: its loads `scale` times the latency; a new machine from night 6, crh 0.9.1 from night 11.
json::object night_file(int i, double scale, const std::string& status) {
  char id[64], at[64];
  std::snprintf(id, sizeof id, "202611%02dT010000Z-%08x", i + 1, 0x5a00 + i);
  std::snprintf(at, sizeof at, "2026-11-%02dT01:00:00Z", i + 1);
  json::array figures;
  for (const auto& f : nightly::figures_of_loads(loads(scale))) figures.push_back(nightly::figure_json(f));
  const int exit_code = status == "passed" ? 0 : 1;
  return json::object{
      {"schema", "crh.night"}, {"schema_version", 1}, {"night", id}, {"started_at", at},
      {"verdict", {{"status", status}, {"exit_code", exit_code}, {"reason", status == "passed" ? "" : "a check failed"},
                   {"comparable", exit_code == 0}}},
      {"fingerprint", {{"hash", kFingerprint}, {"fields", json::object{}}}},
      {"tool_version", i < 11 ? "0.9.0" : "0.9.1"},
      {"machine", {{"cpu", i < 6 ? "Xeon E5-2690" : "EPYC 7B13"}, {"cores", 2}, {"host", "ci"}}},
      {"report", "night-" + std::to_string(i) + ".html"},
      {"figures", std::move(figures)}, {"histograms", json::object{}}, {"gate", nullptr}};
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: crh_report_samples OUTDIR\n";
    return 2;
  }
  try {
    const std::filesystem::path out = argv[1];
    const auto dir = (out / "nights").string();
    std::filesystem::remove_all(dir);
    for (int i = 0; i < 14; ++i) {
      // Night 9 failed a check; the last night, 40% slower, failed on its figures.
      const double scale = (i == 13 ? 1.4 : 1.0) * (1 + 0.02 * ((i * 7) % 5 - 2));
      nightly::write_night(dir, night_file(i, scale, i == 9 || i == 13 ? "failed" : "passed"));
    }
    nightly::accept_night(dir, "20261104T010000Z-00005a03");
    std::vector<std::string> problems;
    const auto record = nightly::read_nights(dir, problems);
    for (const auto& p : problems) std::cerr << "crh_report_samples: " << p << "\n";
    const auto accepted = nightly::accepted_nights(dir);
    write(out / "trend.html", reports::trend_html(nightly::trend_document(record, accepted, dir, 20)));

    // Tonight: 40% slower than the record, judged against it.
    reports::RunParts parts;
    parts.loads = loads(1.45);
    nightly::Tonight tonight{nightly::figures_of_loads(parts.loads), kFingerprint, "2026-11-15T01:00:00Z", "0.9.1",
                             "EPYC 7B13", {}};
    reports::RunMeta meta;
    meta.started = std::chrono::system_clock::from_time_t(1'700'000'000);
    meta.base_url = "http://127.0.0.1:18080";
    meta.channel = "1";
    meta.environment = reports::environment();
    const auto comparison = nightly::compare_with_nights(tonight, record, accepted, dir, 20);
    const auto run = reports::run_document(parts, comparison, meta);
    write(out / "run.html", reports::html_report(run));
    write(out / "run.json", json::serialize(run));
    write(out / "run.txt", reports::run_summary(run, {}));
    std::cout << "crh_report_samples: " << record.size() << " nights, trend.html and run.html in " << out.string()
              << "\n";
  } catch (const std::exception& e) {
    std::cerr << "crh_report_samples: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
