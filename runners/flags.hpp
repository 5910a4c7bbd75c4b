// The flags several subcommands share, each declared once with its name,
// default and validator: the target (contract, load, run), the outputs
// (contract, load, run, report), the contract suites (contract, run), the
// load knobs (load, run) and the baseline (run, report). Where a flag means
// something a little different to a subcommand, that subcommand passes its
// own help text; the *Help defaults are the texts the others share.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/target.hpp"
#include "documents.hpp"

namespace CLI {
class App;
class Option;
}
namespace crh::contracts {
struct RunOptions;
}
namespace crh::loadgen {
struct LoadConfig;
}

namespace crh::runners {

struct TargetHelp {
  std::string channel = "the channel whose aliases are tagged and called";
  std::string profile = "profile JSON: what to expect where the spec is silent";
  std::string timeout = "deadline of one exchange in ms";
};

// --base-url, --api-key-file, --channel, --minute-ms, --profile, --timeout.
struct TargetFlags {
  std::string base_url;      // empty: the embedded reference service
  std::string api_key_file;  // empty: CRH_API_KEY
  std::string channel = "1";
  long minute_ms = 60'000;
  std::string profile_file;  // empty: the design's defaults
  long timeout_ms = 5000;
  std::string call_driver = "http";  // http | sip
  std::string sip_target;            // HOST:PORT[;transport=tcp]; empty: the embedded service's
  long sip_t1_ms = 500;

  void add_to(CLI::App* sub, const TargetHelp& help = {});
  // Checks the call-driver flags (a usage error's message, else empty).
  std::string call_driver_problem() const;
  // The target before set_up_target fills in its base and key.
  core::Target target() const;
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms); }
};

struct OutputHelp {
  std::string json = "write the result document here";
  std::string junit = "write JUnit XML here";
  std::string verbose = "every check, violation and compared figure";
  std::string quiet = "only failures, regressions and the verdict";
  bool reproducers = false;  // --reproducers DIR (the commands that run the contract)
};

// --json, --html, --junit, --verbose, --quiet (these two exclude each other).
struct OutputFlags {
  std::string json_file;
  std::string html_file;
  std::string junit_file;
  std::string reproducers_dir;
  bool verbose = false;
  bool quiet = false;

  void add_to(CLI::App* sub, const OutputHelp& help = {});
  OutputFiles files() const { return {json_file, html_file, junit_file, reproducers_dir}; }
};

// Prints what could not be written, prefixed by `command` ("crh run"); an
// output that cannot be written is a usage error. Returns the exit code,
// raised to kExitUsage when there was a problem.
int with_output_problems(const std::string& command, const std::vector<std::string>& problems, int exit_code);

struct ContractHelp {
  std::string suite =
      "run only this suite (repeatable): endpoints, auth, errors, agents, database, aliases, binding, expiry, explore";
  std::string strict = "SHOULD findings (profile defaults) fail the run";
};

// Operations the explore suite sends by default: the quick contract run
// against `crh serve` stays under 2 s (DESIGN.md §8; README, Exploration).
inline constexpr std::size_t kDefaultExplore = 600;

// --suite, --slow, --strict, --explore, --seed.
struct ContractFlags {
  std::vector<std::string> suites;  // empty: every suite
  bool slow = false;
  bool strict = false;
  std::size_t explore = kDefaultExplore;
  // Drawn by apply_to when not given, so each night explores something new
  // and the drawn seed is printed, written and rerun.
  mutable std::optional<std::uint64_t> seed;

  void add_to(CLI::App* sub, const ContractHelp& help = {});
  // Sets the suites, --slow and --strict of a contract run.
  void apply_to(contracts::RunOptions& run) const;
};

// What reruns one check of this contract run as it ran (issue 22): the
// `crh contract` options that shaped the checks (--base-url unless embedded,
// --channel, --profile, --api-key-file as its path, --slow, --strict, and
// --minute-ms and --timeout where not the defaults), never the key nor
// --suite (a rerun names its --check), and where the rerun's key comes from.
// The contract document's config.rerun (results/keys_contract.hpp).
boost::json::object contract_rerun(const TargetFlags& target, const ContractFlags& contract, bool embedded);

struct LoadHelp {
  std::string connections = "connections (get, mixed) or rounds in flight (race; each uses --callers + 1 connections)";
  std::string callers = "race: callers per round, distinct numbers";
  std::string rate = "open loop: requests per second over all connections (e.g. 2000 or 2000/s)";
  std::string threshold = "a limit in the k6 manner, e.g. 'call.p99<20ms', 'errors<0.1%', 'violations==0' (repeatable)";
};

// --connections, --callers, --rate, --threshold.
struct LoadFlags {
  int connections = 0;  // 0: the scenario's default
  int callers = 8;
  std::string rate;  // empty: closed loop
  std::vector<std::string> thresholds;
  // Scale-out (issue 15): --shard I/N, --start-at TIME, --run-id ID.
  std::string shard, start_at, run_id;

  void add_to(CLI::App* sub, const LoadHelp& help = {});
  // Sets the connections and callers of a load; the rate and thresholds
  // are read where the scenario is known.
  void apply_to(loadgen::LoadConfig& config) const;
  // Sets the shard, the start instant and the run id: --run-id, else one
  // derived from `describing` (the texts that make the whole load, the same
  // on every shard) and the start instant and shard count. Throws
  // std::invalid_argument naming the flag.
  void apply_scale_out(loadgen::LoadConfig& config, std::vector<std::string> describing) const;
};

struct BaselineHelp {
  std::string baseline = "an earlier result to compare with: a figure worse beyond --max-regression fails (exit 1)";
};

// --baseline, --max-regression.
struct BaselineFlags {
  std::string file;  // an earlier result; empty: no comparison
  double max_regression = 20;

  // Returns --baseline, for options that exclude it.
  CLI::Option* add_to(CLI::App* sub, const BaselineHelp& help = {});
};

// --against, --against-channel, --against-profile, --against-api-key-file,
// --design, --pairs, --max-regression: the baseline deployment a load is compared with
// side by side (against.hpp).
// The side-by-side defaults that measured best on the 2-core machine
// (README, Two deployments side by side); crh run --against says them.
inline constexpr int kTrialPairs = 10;
inline constexpr double kTrialLoadDuration = 2;  // s, each trial
inline constexpr double kDuetLoadDuration = 12;  // s, the duet
inline constexpr double kAgainstLimit = 5;       // %, --max-regression

struct AgainstFlags {
  std::string base_url;      // empty: no comparison
  std::string channel;       // empty: the candidate's
  std::string profile_file;  // empty: the candidate's
  std::string api_key_file;  // empty: CRH_AGAINST_API_KEY, else the candidate's key
  std::string design = "trials";  // trials | duet
  int pairs = kTrialPairs;
  double max_regression = kAgainstLimit;

  // crh run takes the pairs from --repeat and the limit from --max-regression: `own_counts` false.
  CLI::Option* add_to(CLI::App* sub, bool own_counts = true);
};

// --capture, --capture-interface, --capture-buffer, --capture-limit,
// --capture-required (issue 14 §1; see capture_session.hpp).
struct CaptureFlags {
  std::string file;        // empty: no capture
  std::string interface;   // empty: the interface of the route to the target
  long buffer_bytes = 32L * 1024 * 1024;
  std::uint64_t limit_bytes = 0;  // 0: unbounded
  bool required = false;

  void add_to(CLI::App* sub);
};

}  // namespace crh::runners
