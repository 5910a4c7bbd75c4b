// crh: contract-test and load-test harness for the Call-Routing Service HTTP API.
// The whole command line is declared here, the only file that includes CLI11:
// its header costs about 10 s of compile time in every file that includes it.
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "results/verdict.hpp"
#include "flags.hpp"
#include "loadgen/options.hpp"
#include "nights_session.hpp"

namespace crh::runners {

// --- the flags several subcommands share (flags.hpp, nights_session.hpp) ---

void TargetFlags::add_to(CLI::App* sub, const TargetHelp& help) {
  sub->add_option("--base-url", base_url, "the target, e.g. http://127.0.0.1:8080 (key from CRH_API_KEY)");
  sub->add_option("--api-key-file", api_key_file, "file holding the API key (else CRH_API_KEY)")
      ->check(CLI::ExistingFile);
  sub->add_option("--channel", channel, help.channel)
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& v) { return v.empty() ? std::string("the channel's id must not be empty") : std::string(); },
          "CHANNEL"));
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

void OutputFlags::add_to(CLI::App* sub, const OutputHelp& help) {
  sub->add_option("--json", json_file, help.json);
  sub->add_option("--html", html_file, "write the HTML report here");
  sub->add_option("--junit", junit_file, help.junit);
  if (help.reproducers)
    sub->add_option("--reproducers", reproducers_dir,
                    "write each failed check's reproducer into this directory: CHECK.sh, a POSIX sh script (curl) "
                    "that exits 1 while the service still fails that way");
  auto* verbose_flag = sub->add_flag("--verbose", verbose, help.verbose);
  sub->add_flag("--quiet", quiet, help.quiet)->excludes(verbose_flag);
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

CLI::Option* BaselineFlags::add_to(CLI::App* sub, const BaselineHelp& help) {
  auto* baseline = sub->add_option("--baseline", file, help.baseline)->check(CLI::ExistingFile);
  sub->add_option("--max-regression", max_regression, "how much worse a figure may get, in percent of the baseline")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  return baseline;
}

CLI::Option* AgainstFlags::add_to(CLI::App* sub, bool own_counts) {
  auto* against = sub->add_option("--against", base_url,
                                  "compare with this baseline deployment (the last release) side by side: "
                                  "--base-url is the candidate; every ratio is candidate / baseline");
  sub->add_option("--against-channel", channel, "the baseline's channel (default: --channel)")->needs(against);
  sub->add_option("--against-profile", profile_file, "the baseline's profile JSON (default: --profile)")
      ->check(CLI::ExistingFile)
      ->needs(against);
  sub->add_option("--against-api-key-file", api_key_file,
                  "the baseline's API key file (default: CRH_AGAINST_API_KEY, else the candidate's key)")
      ->needs(against);
  sub->add_option("--design", design,
                  "trials: pairs of short loads, one target after the other in a random order; duet: both loaded at "
                  "once for --duration, judged per second")
      ->capture_default_str()
      ->check(CLI::IsMember({"trials", "duet"}))
      ->needs(against);
  if (!own_counts) return against;
  sub->add_option("--pairs", pairs, "trials: pairs, each a --duration load of each target in a random order")
      ->capture_default_str()
      ->check(CLI::Range(8, 1000))  // nightly::kMinPairs: fewer reach no 99% interval
      ->needs(against);
  sub->add_option("--max-regression", max_regression, "how much worse a figure may get, in percent of the baseline")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 99.0))
      ->needs(against);
  return against;
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

void NightsFlags::add_to(CLI::App* sub, bool with_accept) {
  sub->add_option("--nights", dir,
                  "a directory of nights: tonight is judged against the comparable passed nights in it "
                  "(not one baseline) and recorded there; with --against, judged side by side and recorded "
                  "(its ratios over the nights on the trend page)");
  sub->add_option("--keep-nights", keep, "nights the record keeps (the oldest are removed)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  if (with_accept)
    sub->add_option("--accept", accept,
                    "NIGHT (its id, as the trend page and the night files name it) starts a new level: "
                    "comparisons use only nights from it on");
}

namespace {

struct Command {
  CLI::App* app;            // the subcommand, to ask whether it was chosen
  std::function<int()> run; // runs it with the parsed flags; returns the exit code
};

// --- each subcommand's own flags ---

Command add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand("serve", "Run the reference Call-Routing Service");
  sub->add_option("--listen", o->listen, "HOST:PORT to listen on; port 0 picks a free one")
      ->capture_default_str();
  sub->add_option("--threads", o->threads, "worker threads (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--fault", o->faults, "break one documented behaviour on purpose (repeatable)");
  sub->add_flag("--list-faults", o->list_faults, "print every fault mode with one line and exit");
  sub->add_option("--mutant", o->mutants, "run a wrong version of the service (repeatable)");
  sub->add_flag("--list-mutants", o->list_mutants,
                "print every mutant (name, class, what is wrong, rule broken) and exit");
  sub->add_option("--minute-ms", o->minute_ms, "length of one tag minute in ms (tests shorten it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 3'600'000L));
  sub->add_option("--delay-us", o->delay_us,
                  "send every answer N microseconds later (a timer; threads stay free): a known slowdown; SIP final answers too")
      ->capture_default_str()
      ->check(CLI::Range(0L, 10'000'000L));
  sub->add_option("--bind-window-us", o->bind_window_us,
                  "a broken service of known power to catch: a call that passes the check binds its caller N "
                  "microseconds later, and every call checked in between connects too")
      ->check(CLI::Range(1L, 10'000'000L));
  sub->add_option("--throttle-every", o->throttle_every,
                  "answer every Nth request 429 with Retry-After: 0, doing nothing (a rate-limited service)")
      ->check(CLI::Range(2u, 1'000'000u));
  sub->add_option("--channels", o->channels, "generated fixtures: number of channels")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  sub->add_option("--aliases", o->aliases, "generated fixtures: aliases per channel")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000));
  auto* fixtures = sub->add_option("--fixtures", o->fixtures_file,
                                   "fixtures JSON file (agents, channels, database)")
                       ->check(CLI::ExistingFile);
  sub->get_option("--channels")->excludes(fixtures);
  sub->get_option("--aliases")->excludes(fixtures);
  sub->add_option("--api-key-file", o->api_key_file,
                  "file holding the API key (else CRH_API_KEY, else a random key)")
      ->check(CLI::ExistingFile);
  sub->add_option("--sip", o->sip,
                  "also answer SIP (UDP and TCP) on HOST:PORT; port 0 picks one free for both")
      ->check([](const std::string& text) {
        std::string host;
        unsigned short port = 0;
        return split_listen(text, host, port) ? std::string() : "expects HOST:PORT, got \"" + text + "\"";
      });
  sub->add_option("--sip-t1-ms", o->sip_t1_ms, "RFC 3261 T1 in ms for the SIP timers (tests shorten it)")
      ->capture_default_str()
      ->check(CLI::Range(1L, 60'000L));
  return {sub, [o] { return run_serve(*o); }};
}

Command add_contract_command(CLI::App& app) {
  auto o = std::make_shared<ContractOptions>();
  CLI::App* sub = app.add_subcommand(
      "contract",
      "Check a Call-Routing Service against its contract (with no --base-url: the embedded reference service)");
  o->target.add_to(sub, {.channel = "the channel whose aliases the checks use"});
  o->contract.add_to(sub);
  sub->add_option("--check", o->checks,
                  "run only this check id, or ids starting with a prefix ending in * (repeatable)");
  sub->add_flag("--list-checks", o->list_checks, "print every check with its rules and exit");
  o->capture.add_to(sub);
  o->output.add_to(sub, {.verbose = "list every check with its exchanges",
                         .quiet = "print only failures and the verdict",
                         .reproducers = true});
  return {sub, [o] { return run_contract_command(*o); }};
}

Command add_load_command(CLI::App& app) {
  auto o = std::make_shared<LoadOptions>();
  CLI::App* sub = app.add_subcommand(
      "load",
      "Run a load scenario against a Call-Routing Service (with no --base-url: the embedded reference service)");
  o->target.add_to(
      sub, {.profile = "profile JSON: parameter encoding and call hook", .timeout = "deadline of one request in ms"});
  sub->add_option("--scenario", o->scenario,
                  "race: callers race for freshly tagged aliases; mixed: every endpoint, weighted; "
                  "get: one path, as wrk")
      ->capture_default_str();
  o->load.add_to(sub);
  sub->add_option("--threads", o->threads, "generator threads, each with its own event loop")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--duration", o->duration_s, "seconds measured")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--warmup", o->warmup_s, "seconds run before measuring, not counted")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--path", o->path, "get: the path requested, under the base URL")->capture_default_str();
  sub->add_option("--mix", o->mix, "mixed: op=weight,... (default " + std::string(loadgen::kDefaultMix) + ")");
  sub->add_option("--seed", o->seed, "seed of the mixed scenario's operation sequence")->capture_default_str();
  sub->add_option("--history", o->history_file, "write every operation here as JSON lines");
  sub->add_option("--tag-minutes", o->tag_minutes, "race and mixed: the minutes asked for each tag")
      ->capture_default_str()
      ->check(CLI::Range(1, 1440));
  sub->add_option("--aliases", o->aliases,
                  "embedded service: aliases per channel (default: enough for the rounds in flight)")
      ->check(CLI::Range(1, 100000));
  o->capture.add_to(sub);
  o->against.add_to(sub);
  o->output.add_to(sub, {.junit = "write JUnit XML here (a testcase per threshold, and the race's invariant)",
                         .verbose = "list every violation",
                         .quiet = "print only the race, thresholds and verdict"});
  return {sub, [o] { return run_load_command(*o); }};
}

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunCommandOptions>();
  CLI::App* sub = app.add_subcommand("run",
                                     "The nightly job: contract suites, a race and a mixed load, the report "
                                     "(with no --base-url: the embedded reference service)");
  o->target.add_to(sub);
  o->contract.add_to(sub,
                     {.suite = "only these contract suites (repeatable)", .strict = "SHOULD findings fail the run"});
  auto* duration = sub->add_option("--load-duration", o->load_duration_s,
                                   "seconds each load is measured (0: no load; with --nights: " +
                                       std::to_string(static_cast<int>(kNightLoadDuration)) + ")")
                       ->capture_default_str()
                       ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--scenario", o->scenarios, "the loads, in order (repeatable): race, mixed, get")
      ->capture_default_str();
  o->load.add_to(sub, {.connections = "race: rounds in flight; mixed, get: connections",
                       .callers = "race: callers per round",
                       .rate = "mixed and get: open loop at this many requests per second (default: closed loop)",
                       .threshold = "a load limit, e.g. 'race:call.p99<20ms' or 'errors<0.1%' "
                                    "(no scenario: every load) (repeatable)"});
  auto* repeat = sub->add_option("--repeat", o->repeat,
                                 "run each load this many times, interleaved (race, mixed, race, mixed...): a figure "
                                 "is the median of the repetitions, thresholds are judged on their merged histograms "
                                 "(with --nights: " + std::to_string(kNightRepeat) + ")")
                     ->capture_default_str()
                     ->check(CLI::Range(1, 1000));
  auto* baseline = o->baseline.add_to(
      sub, {.baseline = "an earlier --json result: a figure worse beyond --max-regression fails the run (exit 1)"});
  o->nights.add_to(sub, false);
  sub->get_option("--nights")->excludes(baseline);
  o->capture.add_to(sub);
  auto* against = o->against.add_to(sub, false);
  against->excludes(baseline);
  sub->add_option("--control", o->control,
                  "with --nights: the URL of a control arm, a service doing the target's work on the target's "
                  "machine, loaded in trials interleaved with the target's; the record then judges each figure "
                  "as the ratio target / control, so a slow spell of the machine touches both (README: the "
                  "control arm)")
      ->needs(sub->get_option("--nights"))
      ->excludes(baseline)
      ->excludes(against);
  sub->add_flag("--contract-both", o->contract_both,
                "--against: run the contract suites on the baseline deployment too, and say which checks differ")
      ->needs(against);
  o->output.add_to(sub, {.json = "write the run document here (the next run's --baseline)", .reproducers = true});
  auto* limit = sub->get_option("--max-regression");
  return {sub, [o, duration, repeat, limit] {
            if (!o->against.base_url.empty()) {
              // Side by side, the pairs are --repeat's, the limit --max-regression's; the
              // defaults those that measured best (README, Two deployments side by side).
              const bool duet = o->against.design == "duet";
              if (duration->count() == 0) o->load_duration_s = duet ? kDuetLoadDuration : kTrialLoadDuration;
              o->against.pairs = repeat->count() ? o->repeat : kTrialPairs;
              o->against.max_regression = limit->count() ? o->baseline.max_regression : kAgainstLimit;
              std::cout << "crh run: --against: --design " << o->against.design << " --load-duration "
                        << o->load_duration_s;
              if (!duet) std::cout << " --repeat " << o->against.pairs << " (pairs)";
              std::cout << " --max-regression " << o->against.max_regression << "\n";
            }
            if (!o->control.empty()) {
              // The control arm runs trial pairs as --against does, with the settings measured for it.
              o->against.design = "trials";
              if (duration->count() == 0) o->load_duration_s = kTrialLoadDuration;
              o->against.pairs = repeat->count() ? o->repeat : kTrialPairs;
              o->against.max_regression = o->baseline.max_regression;
              std::cout << "crh run: --control: --load-duration " << o->load_duration_s << " --repeat "
                        << o->against.pairs << " (pairs of trials, target and control)\n";
            }
            // A night judged against its record needs repetitions to tell (README, The nightly gate):
            // with --nights the settings that measured best are the defaults, and said.
            if (!o->nights.dir.empty() && o->against.base_url.empty() && o->control.empty() &&
                (duration->count() == 0 || repeat->count() == 0)) {
              if (duration->count() == 0) o->load_duration_s = kNightLoadDuration;
              if (repeat->count() == 0) o->repeat = kNightRepeat;
              std::cout << "crh run: --nights: --repeat " << o->repeat << " --load-duration " << o->load_duration_s
                        << " (the nightly settings; give either flag to choose)\n";
            }
            return run_run_command(*o);
          }};
}

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Render results written earlier (--json of contract, load or run); several results of one run merge");
  sub->add_option("results", o->results,
                  "result documents; shards of one run merge exactly (none with --nights: the trend page)")
      ->check(CLI::ExistingFile);
  auto* baseline = o->baseline.add_to(sub);
  o->nights.add_to(sub, true);
  sub->get_option("--nights")->excludes(baseline);
  sub->get_option("--accept")->needs(sub->get_option("--nights"));
  o->output.add_to(sub, {.json = "write the (merged) run document here"});
  return {sub, [o] { return run_report_command(*o); }};
}

Command add_pcap_command(CLI::App& app) {
  auto o = std::make_shared<PcapOptions>();
  CLI::App* pcap = app.add_subcommand("pcap", "Check wire traffic captured by anyone (pcap or pcapng)");
  pcap->require_subcommand(1);
  CLI::App* check = pcap->add_subcommand(
      "check", "Judge the contract on a capture without sending a request (exit 1 on a MUST violation)");
  check->add_option("file", o->file, "the capture (tcpdump -w, dumpcap, tshark -w, crh --capture)")->required();
  check->add_option("--profile", o->profile_file, "profile JSON: the target's dialect where the spec is silent");
  auto* base = check->add_option("--base-path", o->base_path,
                                 "the base URL's path on the target (e.g. /svc); default: detected from the traffic");
  check->add_option("--minute-ms", o->minute_ms, "one tag minute on the target in ms (crh serve --minute-ms)")
      ->check(CLI::Range(1L, 86'400'000L));
  check->add_flag("--strict", o->strict, "SHOULD findings fail the check too");
  o->output.add_to(check, {.verbose = "every check with its evidence, every unparsed stream",
                           .quiet = "only failures and the verdict"});
  return {pcap, [o, base] {
    o->base_path_given = base->count() > 0;
    return run_pcap_check(*o);
  }};
}

}  // namespace
}  // namespace crh::runners

int main(int argc, char** argv) {
  using namespace crh::runners;
  CLI::App app{"crh: contract and load tests for the Call-Routing Service HTTP API.\n"
               "The API key comes from CRH_API_KEY or --api-key-file, never from a flag value."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "crh 0.1.0");
  const std::vector<Command> commands{add_serve_command(app), add_contract_command(app), add_load_command(app), add_run_command(app),
                                     add_report_command(app), add_pcap_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? crh::results::kExitOk : crh::results::kExitUsage;
  }
  for (const auto& c : commands)
    if (c.app->parsed()) return c.run();
  std::cerr << app.help();
  return crh::results::kExitUsage;
}
