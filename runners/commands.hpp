// Each subcommand registers its flags on the crh application and returns
// what runs it once the command line has been parsed.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace crh::runners {

struct Command {
  CLI::App* app;            // the subcommand, to ask whether it was chosen
  std::function<int()> run; // runs it with the parsed flags; returns the exit code
};

Command add_serve_command(CLI::App& app);
Command add_contract_command(CLI::App& app);
Command add_load_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_report_command(CLI::App& app);

}  // namespace crh::runners
