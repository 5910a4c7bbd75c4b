// crh: contract-test and load-test harness for the Call-Routing Service HTTP API.
#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"

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
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  for (const auto& c : commands)
    if (c.app->parsed()) return c.run();
  std::cerr << app.help();
  return kExitUsage;
}
