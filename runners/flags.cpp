#include "flags.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <random>

#include <boost/json.hpp>

#include "contracts/runner.hpp"
#include "core/result_keys_contract.hpp"
#include "exit_codes.hpp"
#include "loadgen/engine.hpp"

namespace crh::runners {

void TargetFlags::add_to(CLI::App* sub, const TargetHelp& help) {
  sub->add_option("--base-url", base_url, "the target, e.g. http://127.0.0.1:8080 (key from CRH_API_KEY)");
  sub->add_option("--api-key-file", api_key_file, "file holding the API key (else CRH_API_KEY)")
      ->check(CLI::ExistingFile);
  sub->add_option("--channel", channel, help.channel)->capture_default_str();
  sub->add_option("--minute-ms", minute_ms,
                  "length of one tag minute on the target in ms (the embedded service is started with it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 3'600'000L));
  sub->add_option("--profile", profile_file, help.profile)->check(CLI::ExistingFile);
  sub->add_option("--timeout", timeout_ms, help.timeout)->capture_default_str()->check(CLI::Range(10L, 600'000L));
  sub->add_option("--call-driver", call_driver,
                  "how callers' calls are placed: http (the call hook) or sip (INVITEs to --sip-target; "
                  "--timeout is then the INVITE transaction's deadline, Timer B)")
      ->capture_default_str()
      ->check(CLI::IsMember({"http", "sip"}));
  sub->add_option("--sip-target", sip_target,
                  "with --call-driver sip: HOST:PORT[;transport=tcp] the INVITEs go to (default: the embedded "
                  "service's SIP port)");
  sub->add_option("--sip-t1-ms", sip_t1_ms, "with --call-driver sip: RFC 3261 T1, the first UDP retransmission interval")
      ->capture_default_str()
      ->check(CLI::Range(1L, 60'000L));
}

std::string TargetFlags::call_driver_problem() const {
  if (call_driver != "sip" && !sip_target.empty()) return "--sip-target needs --call-driver sip";
  if (call_driver == "sip" && sip_target.empty() && !base_url.empty())
    return "--call-driver sip with --base-url needs --sip-target HOST:PORT[;transport=tcp]: where the target "
           "takes SIP calls";
  std::string why;
  if (!sip_target.empty() && !core::parse_sip_target(sip_target, why)) return "--sip-target: " + why;
  return {};
}

core::Target TargetFlags::target() const {
  core::Target target;
  target.channel = channel;
  target.minute = std::chrono::milliseconds(minute_ms);
  target.calls.sip = call_driver == "sip";
  target.calls.sip_t1 = std::chrono::milliseconds(sip_t1_ms);
  std::string why;
  if (auto t = core::parse_sip_target(sip_target, why)) target.calls.sip_target = *t;
  return target;
}

void OutputFlags::add_to(CLI::App* sub, const OutputHelp& help) {
  sub->add_option("--json", json_file, help.json);
  sub->add_option("--html", html_file, "write the HTML report here");
  sub->add_option("--junit", junit_file, help.junit);
  auto* verbose_flag = sub->add_flag("--verbose", verbose, help.verbose);
  sub->add_flag("--quiet", quiet, help.quiet)->excludes(verbose_flag);
}

int with_output_problems(const std::string& command, const std::vector<std::string>& problems, int exit_code) {
  for (const auto& problem : problems) {
    std::cerr << command << ": " << problem << "\n";
    exit_code = worse_exit(exit_code, kExitUsage);
  }
  return exit_code;
}

void ContractFlags::add_to(CLI::App* sub, const ContractHelp& help) {
  sub->add_option("--suite", suites, help.suite);
  sub->add_flag("--slow", slow, "also run the expiry checks (they wait one tag lifetime)");
  sub->add_flag("--strict", strict, help.strict);
  sub->add_option("--explore", explore,
                  "operations of random sequences judged by the model of the spec, shrunk to a reproducer on a "
                  "failure (the explore suite; 0: off)")
      ->capture_default_str();
  sub->add_option("--seed", seed, "the exploration's seed: the same seed explores the same way (default: drawn, printed)");
}

void ContractFlags::apply_to(contracts::RunOptions& run) const {
  run.suites = suites;
  run.slow = slow;
  run.strict = strict;
  if (!seed) {
    std::random_device device;
    seed = std::uniform_int_distribution<std::uint64_t>(1, 999'999'999)(device);
  }
  run.explore = {explore, *seed, slow};
  // --explore 0 takes the suite out of the run rather than skipping it.
  if (explore == 0 && run.suites.empty())
    for (const auto& s : contracts::all_suites())
      if (s != "explore") run.suites.push_back(s);
}

boost::json::object contract_rerun(const TargetFlags& target, const ContractFlags& contract, bool embedded) {
  namespace r = core::keys::rerun;
  const TargetFlags defaults;
  std::vector<std::string> options;
  auto add = [&](const char* flag, const std::string& value) {
    options.emplace_back(flag);
    options.push_back(value);
  };
  if (!embedded) add("--base-url", target.base_url);
  add("--channel", target.channel);
  if (!target.profile_file.empty()) add("--profile", target.profile_file);
  if (!embedded && !target.api_key_file.empty()) add("--api-key-file", target.api_key_file);  // the path only
  if (target.minute_ms != defaults.minute_ms) add("--minute-ms", std::to_string(target.minute_ms));
  if (target.timeout_ms != defaults.timeout_ms) add("--timeout", std::to_string(target.timeout_ms));
  if (target.call_driver != defaults.call_driver) add("--call-driver", target.call_driver);
  if (!target.sip_target.empty()) add("--sip-target", target.sip_target);
  if (target.sip_t1_ms != defaults.sip_t1_ms) add("--sip-t1-ms", std::to_string(target.sip_t1_ms));
  if (contract.explore != kDefaultExplore) add("--explore", std::to_string(contract.explore));
  if (contract.seed) add("--seed", std::to_string(*contract.seed));  // the explore check replays
  if (contract.slow) options.emplace_back("--slow");  // a slow check is skipped without it
  if (contract.strict) options.emplace_back("--strict");
  const auto source = embedded                         ? r::key_embedded
                      : !target.api_key_file.empty() ? r::key_from_file
                                                     : r::key_from_environment;
  return boost::json::object{{r::options, boost::json::value_from(options)}, {r::key_source, source}};
}

void LoadFlags::add_to(CLI::App* sub, const LoadHelp& help) {
  sub->add_option("--connections", connections, help.connections)->check(CLI::Range(1, 100000));
  sub->add_option("--callers", callers, help.callers)->capture_default_str()->check(CLI::Range(2, 1000));
  sub->add_option("--rate", rate, help.rate);
  sub->add_option("--threshold", thresholds, help.threshold);
  sub->add_option("--shard", shard,
                  "run shard I of N (from 0) of the load the flags describe: connections, rate, race rounds, "
                  "aliases, agents, caller numbers and probe keys are split, never multiplied");
  sub->add_option("--start-at", start_at,
                  "start measuring at this instant (RFC 3339 such as 2026-11-23T10:00:00Z, or Unix seconds), "
                  "so that every shard starts together");
  sub->add_option("--run-id", run_id, "names the run the shards belong to (default: derived from the load's flags)");
}

void LoadFlags::apply_scale_out(loadgen::LoadConfig& config, std::vector<std::string> describing) const {
  if (!shard.empty()) config.shard = loadgen::parse_shard(shard);
  if (config.shard.sharded() && connections > 0 && connections < config.shard.count)
    throw std::invalid_argument("--shard " + shard + ": " + std::to_string(connections) + " connection(s) over " +
                                std::to_string(config.shard.count) +
                                " shards leave some shards nothing to run; give --connections at least " +
                                std::to_string(config.shard.count));
  if (!start_at.empty()) config.start_at = loadgen::parse_start_at(start_at);
  if (!run_id.empty()) {
    config.run_id = run_id;
    return;
  }
  describing.push_back("shards " + std::to_string(config.shard.count));
  describing.push_back("start " + start_at);
  describing.push_back("connections " + std::to_string(connections));
  describing.push_back("callers " + std::to_string(callers));
  describing.push_back("rate " + rate);
  for (const auto& t : thresholds) describing.push_back("threshold " + t);
  config.run_id = loadgen::derived_run_id(describing);
}

void LoadFlags::apply_to(loadgen::LoadConfig& config) const {
  config.connections = connections;
  config.callers = callers;
}

CLI::Option* BaselineFlags::add_to(CLI::App* sub, const BaselineHelp& help) {
  auto* baseline = sub->add_option("--baseline", file, help.baseline)->check(CLI::ExistingFile);
  sub->add_option("--max-regression", max_regression, "how much worse a figure may get, in percent of the baseline")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  return baseline;
}

void CaptureFlags::add_to(CLI::App* sub) {
  auto* capture = sub->add_option("--capture", file,
                                  "capture the run's packets to this pcap file with libpcap (the key overwritten; "
                                  "needs root or CAP_NET_RAW, else the run goes on without)");
  sub->add_option("--capture-interface", interface,
                  "capture on this interface (default: the one the route to the target leaves by, lo for loopback)")
      ->needs(capture);
  sub->add_option("--capture-buffer", buffer_bytes, "the capture's kernel buffer in bytes (too small drops packets)")
      ->capture_default_str()
      ->check(CLI::Range(65536L, 2147483647L))
      ->needs(capture);
  sub->add_option("--capture-limit", limit_bytes, "stop capturing once the file would pass this many bytes")
      ->check(CLI::Range(std::uint64_t{1024}, std::uint64_t{1} << 50))
      ->needs(capture);
  sub->add_flag("--capture-required", required, "no capture (no permission, no interface) is an error: exit 3")
      ->needs(capture);
}

}  // namespace crh::runners
