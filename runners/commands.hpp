// Each subcommand registers its flags on the crh application and returns
// what runs it once the command line has been parsed.
#pragma once

#include <functional>
#include <string>

#include <boost/json/object.hpp>

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
Command add_pcap_command(CLI::App& app);

// Writes --json, --junit and --html of a pcap check document and prints its
// summary (crh pcap check, and crh report given such a document); returns
// the document's exit code, raised to kExitUsage when an output failed.
struct OutputFlags;
int render_pcap_document(const boost::json::object& document, const OutputFlags& output, const std::string& command);

}  // namespace crh::runners
