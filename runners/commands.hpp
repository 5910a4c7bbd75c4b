// The subcommands: what each takes from the command line (main.cpp, the one
// file that includes CLI11, declares the flags) and what runs it once the
// command line has been parsed. Each returns the exit code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "core/api.hpp"
#include "flags.hpp"
#include "nights_session.hpp"

namespace crh::runners {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";
  int threads = 0;
  std::vector<std::string> faults;
  bool list_faults = false;
  std::vector<std::string> mutants;
  bool list_mutants = false;
  long minute_ms = 60'000;
  long delay_us = 0;
  long bind_window_us = 0;  // 0: a correct bind (see reference::ServiceConfig::bind_window)
  unsigned throttle_every = 0;
  int channels = 2;
  int aliases = 4;
  std::string fixtures_file;
  std::string api_key_file;
  std::string sip;     // HOST:PORT for SIP over UDP and TCP; empty: none
  long sip_t1_ms = 500;
};
int run_serve(const ServeOptions& o);  // crh serve (serve_command.cpp)

// "HOST:PORT", "[V6]:PORT" or ":PORT" (all interfaces).
bool split_listen(const std::string& text, std::string& host, unsigned short& port);

struct ContractOptions {
  TargetFlags target;
  ContractFlags contract;
  OutputFlags output;
  CaptureFlags capture;
  std::vector<std::string> checks;
  bool list_checks = false;
};
int run_contract_command(const ContractOptions& o);  // crh contract (contract_command.cpp)

struct LoadOptions {
  TargetFlags target;
  LoadFlags load;
  OutputFlags output;
  CaptureFlags capture;
  AgainstFlags against;
  std::string scenario = "race";
  int threads = 1;
  double duration_s = 10;
  double warmup_s = 0;
  std::string path = core::api::agents_path();
  std::string mix;
  std::uint64_t seed = 1;
  std::string history_file;
  int tag_minutes = 60;
  int aliases = 0;  // 0: embedded_aliases_for(--connections)
};
int run_load_command(const LoadOptions& o);  // crh load (load_command.cpp)

struct RunCommandOptions {
  TargetFlags target;
  ContractFlags contract;
  LoadFlags load;
  BaselineFlags baseline;
  NightsFlags nights;
  OutputFlags output;
  CaptureFlags capture;
  AgainstFlags against;        // its pairs and limit set from --repeat and --max-regression
  bool contract_both = false;  // --against: the contract suites on the baseline deployment too
  std::string control;         // --nights --control URL: the control arm (against.hpp)
  double load_duration_s = 10;
  int repeat = 1;
  std::vector<std::string> scenarios{"race", "mixed"};
};
int run_run_command(const RunCommandOptions& o);  // crh run (run_command.cpp)

struct ReportOptions {
  std::vector<std::string> results;
  BaselineFlags baseline;
  NightsFlags nights;
  OutputFlags output;
};
int run_report_command(const ReportOptions& o);  // crh report (report_command.cpp)

struct PcapOptions {
  std::string file;
  std::string profile_file;
  std::string base_path;
  bool base_path_given = false;
  long minute_ms = 60'000;
  bool strict = false;
  OutputFlags output;
};
int run_pcap_check(const PcapOptions& o);  // crh pcap check (pcap_command.cpp)

// Writes --json, --junit and --html of a pcap check document and prints its
// summary (crh pcap check, and crh report given such a document); returns
// the document's exit code, raised to kExitUsage when an output failed.
int render_pcap_document(const boost::json::object& document, const OutputFlags& output, const std::string& command);

}  // namespace crh::runners
