#include "documents.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <boost/json.hpp>

#include "contracts/readback.hpp"
#include "core/curl.hpp"
#include "core/output_file.hpp"
#include "loadgen/readback.hpp"
#include "reports/html.hpp"
#include "reports/junit.hpp"

namespace crh::runners {
namespace json = boost::json;

json::object read_result_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  auto value = json::parse(text.str(), ec);
  if (ec) throw std::runtime_error(path + ": not JSON (" + ec.message() + "); was it written completely?");
  if (!value.is_object()) throw std::runtime_error(path + ": not a crh result document (not a JSON object)");
  try {
    (void)reports::parts_of(value.get_object());  // checks the schema and kind
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return std::move(value.get_object());
}

reports::RunParts merge_documents(const std::vector<std::pair<std::string, json::object>>& documents) {
  // Each part with the files it came from; merged only when there are several.
  std::vector<std::pair<std::string, json::object>> contracts;
  std::map<std::string, std::vector<std::pair<std::string, json::object>>> loads;  // by scenario
  std::vector<std::string> scenario_order;
  for (const auto& [file, doc] : documents) {
    auto parts = reports::parts_of(doc);
    if (parts.contract) contracts.emplace_back(file, std::move(*parts.contract));
    for (auto& l : parts.loads) {
      const auto* config = l.if_contains("config");
      const auto* scenario = config && config->is_object() ? config->get_object().if_contains("scenario") : nullptr;
      if (!scenario || !scenario->is_string()) throw std::runtime_error(file + ": a load result without config.scenario");
      const std::string name(scenario->get_string());
      if (!loads.count(name)) scenario_order.push_back(name);
      loads[name].emplace_back(file, std::move(l));
    }
  }
  reports::RunParts out;
  if (contracts.size() == 1) out.contract = std::move(contracts.front().second);
  else if (contracts.size() > 1) {
    std::optional<contracts::ContractRun> merged;
    for (const auto& [file, doc] : contracts) {
      try {
        auto run = contracts::read_contract_document(doc);
        merged = merged ? contracts::merge_contract_runs(std::move(*merged), run) : std::move(run);
      } catch (const std::exception& e) {
        throw std::runtime_error(file + ": contract result: " + e.what());
      }
    }
    out.contract = contracts::result_document(*merged).as_object();
  }
  for (const auto& scenario : scenario_order) {
    auto& shards = loads[scenario];
    if (shards.size() == 1) {
      out.loads.push_back(std::move(shards.front().second));
      continue;
    }
    std::optional<loadgen::LoadRun> merged;
    for (const auto& [file, doc] : shards) {
      try {
        auto run = loadgen::read_load_document(doc);
        merged = merged ? loadgen::merge_load_runs(std::move(*merged), run) : std::move(run);
      } catch (const std::exception& e) {
        throw std::runtime_error(file + ": " + scenario + " load result: " + e.what());
      }
    }
    out.loads.push_back(loadgen::result_document(*merged));
  }
  return out;
}

std::vector<std::string> write_outputs(const json::object& doc, const OutputFiles& files, const std::string& key) {
  std::vector<std::string> problems;
  auto write = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    try {
      core::write_file_atomically(path, key.empty() ? text : core::redact(text, key));
    } catch (const std::exception& e) {
      problems.emplace_back(e.what());
    }
  };
  write(files.json, json::serialize(doc) + "\n");
  write(files.html, reports::html_report(doc));
  write(files.junit, reports::junit_xml(doc));
  return problems;
}

}  // namespace crh::runners
