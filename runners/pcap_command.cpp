// crh pcap check FILE: the contract judged on a capture made by anyone
// (tcpdump, tshark, dumpcap, crh), without sending a request; writes --json,
// --junit and --html like crh contract. Exit 1 on a MUST violation (with
// --strict a SHOULD finding too), 2 when the file cannot be read.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include <boost/json.hpp>

#include "capture/pcap_check.hpp"
#include "commands.hpp"
#include "core/output_file.hpp"
#include "core/outside.hpp"
#include "core/profile.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"
#include "reports/junit.hpp"
#include "reports/pcap_report.hpp"

namespace crh::runners {
namespace json = boost::json;
int run_pcap_check(const PcapOptions& o) {
  capture::CheckConfig config;
  config.strict = o.strict;
  config.minute_ns = static_cast<std::int64_t>(o.minute_ms) * 1'000'000;
  if (o.base_path_given) config.base_path = o.base_path;
  try {
    if (!o.profile_file.empty()) config.profile = core::load_profile(o.profile_file);
  } catch (const std::exception& e) {
    std::cerr << "crh pcap check: " << e.what() << "\n";
    return results::kExitUsage;
  }
  // The key the user holds is hidden too, wherever a target echoed it; every
  // Apikey value the capture holds is hidden by the check itself.
  if (const char* key = std::getenv("CRH_API_KEY"); key && *key) core::register_run_key(key);

  const auto started = std::chrono::system_clock::now();
  const auto clock = std::chrono::steady_clock::now();
  capture::CheckReport report;
  try {
    report = capture::check_capture(o.file, config);
  } catch (const capture::CaptureFileError& e) {
    std::cerr << "crh pcap check: " << e.what() << "\n";
    return results::kExitUsage;
  }
  report.file = o.file;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clock).count();
  auto doc = capture::result_document(report, config, started, ms);
  core::redact_values(doc);
  return render_pcap_document(doc.as_object(), o.output, "crh pcap check");
}

int render_pcap_document(const json::object& doc, const OutputFlags& output, const std::string& command) {
  std::vector<std::string> problems;
  auto write = [&](const std::string& path, const auto& render) {
    if (path.empty()) return;
    try {
      core::write_file_atomically(path, render());
    } catch (const std::exception& e) {
      problems.emplace_back(std::string(e.what()).find(path) == std::string::npos ? path + ": " + e.what() : e.what());
    }
  };
  const json::value value(doc);
  write(output.json_file, [&] { return json::serialize(doc) + "\n"; });
  write(output.junit_file, [&] { return reports::junit_xml(value); });
  write(output.html_file, [&] { return reports::pcap_html(value); });
  const auto* verdict = doc.if_contains("verdict");
  int exit_code = results::kExitUsage;
  if (verdict && verdict->is_object())
    if (const auto* code = verdict->get_object().if_contains("exit_code"); code && code->is_int64())
      exit_code = static_cast<int>(code->get_int64());
  exit_code = with_output_problems(command, problems, exit_code);
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  std::cout << reports::pcap_summary(value, {.color = tty, .verbose = output.verbose, .quiet = output.quiet});
  return exit_code;
}

}  // namespace crh::runners
