#include "flags.hpp"

#include <algorithm>
#include <iostream>
#include <random>

#include <boost/json.hpp>

#include "contracts/runner.hpp"
#include "results/keys_contract.hpp"
#include "results/verdict.hpp"
#include "loadgen/engine.hpp"

namespace crh::runners {

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

int with_output_problems(const std::string& command, const std::vector<std::string>& problems, int exit_code) {
  for (const auto& problem : problems) {
    std::cerr << command << ": " << problem << "\n";
    exit_code = results::worse_exit(exit_code, results::kExitUsage);
  }
  return exit_code;
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
  namespace r = results::keys::rerun;
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

}  // namespace crh::runners
