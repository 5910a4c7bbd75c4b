#include "documents.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <boost/json.hpp>

#include "contracts/readback.hpp"
#include "core/curl.hpp"
#include "core/output_file.hpp"
#include "results/envelope.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "results/view.hpp"
#include "loadgen/merge.hpp"
#include "loadgen/readback.hpp"
#include "reports/html.hpp"
#include "reports/rerun.hpp"
#include "reports/junit.hpp"

namespace crh::runners {
namespace json = boost::json;
namespace k = results::keys;

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

namespace {

using Documents = std::vector<std::pair<std::string, json::object>>;

// The load results of one scenario merged into one. Shards of a sharded run
// (their documents name their shard) must all be of one run; an index given
// twice is merged once, and the set says so, as it says which are missing.
json::object merge_loads(const std::string& scenario, const Documents& docs) {
  std::vector<std::pair<std::string, loadgen::LoadRun>> runs;
  bool any_shard = false, all_shards = true;
  for (const auto& [file, doc] : docs) {
    try {
      runs.emplace_back(file, loadgen::read_load_document(doc));
    } catch (const std::exception& e) {
      throw std::runtime_error(file + ": " + scenario + " load result: " + e.what());
    }
    auto& shards = runs.back().second.result.shards;
    const bool sharded = !shards.empty() && shards.front().shard.count > 1;
    any_shard = any_shard || sharded;
    all_shards = all_shards && sharded;
    for (auto& s : shards)
      if (s.file.empty()) s.file = file;
  }
  if (!any_shard) {
    if (runs.size() == 1) return docs.front().second;  // rendered again as it was
  } else if (!all_shards) {
    throw std::runtime_error("the " + scenario + " results mix shards (--shard) with unsharded runs: " +
                             "merge the shards of one run only");
  }
  std::optional<loadgen::LoadRun> merged;
  std::map<int, std::string> merged_index;  // shard index -> the file merged for it
  for (auto& [file, run] : runs) {
    if (any_shard) {  // all of one run (refuse_other_runs)
      const auto& mine = run.result.shards.front();
      bool duplicate = false;
      for (const auto& s : run.result.shards)
        duplicate = duplicate || merged_index.count(s.shard.index) > 0;
      if (duplicate) {
        std::cerr << "crh report: " << file << ": shard " << mine.shard.index << "/" << mine.shard.count
                  << " was already merged from " << merged_index[mine.shard.index]
                  << ": left out (the merged result is marked incomplete)\n";
        if (merged) {
          auto& out = merged->result.shards_left_out;
          out.insert(out.end(), run.result.shards.begin(), run.result.shards.end());
        }
        continue;
      }
      for (const auto& s : run.result.shards) merged_index[s.shard.index] = file;
      run.result.shards_merged = true;
    }
    try {
      merged = merged ? loadgen::merge_load_runs(std::move(*merged), run) : std::move(run);
    } catch (const std::exception& e) {
      throw std::runtime_error(file + ": " + scenario + " load result: " + e.what());
    }
  }
  return loadgen::result_document(*merged);
}

}  // namespace

namespace {

// Shards of different runs never merge, whatever their scenarios: the run id
// (and shard count) of every sharded load must be the first one's.
void refuse_other_runs(const Documents& documents) {
  std::optional<std::pair<std::string, loadgen::ShardRecord>> first;
  for (const auto& [file, doc] : documents)
    for (const auto& load : reports::parts_of(doc).loads) {
      const results::DocView shards = results::DocView(load)[k::load::shards];
      for (const auto& s : shards.items()) {
        loadgen::ShardRecord r;
        r.run_id = s[k::shard::run_id].str();
        r.shard = {static_cast<int>(s[k::shard::index].num()), static_cast<int>(s[k::shard::count].num())};
        if (r.shard.count <= 1) continue;
        if (!first) {
          first.emplace(file, r);
        } else if (r.run_id != first->second.run_id || r.shard.count != first->second.shard.count) {
          throw std::runtime_error(file + " holds shard " + std::to_string(r.shard.index) + "/" +
                                   std::to_string(r.shard.count) + " of run " + r.run_id + ", " + first->first +
                                   " shard " + std::to_string(first->second.shard.index) + "/" +
                                   std::to_string(first->second.shard.count) + " of run " + first->second.run_id +
                                   ": shards of different runs do not merge (the run id comes from the load's flags "
                                   "and --start-at, or from --run-id)");
        }
      }
    }
}

// Merged contract results keep their rerun options when every input ran with
// the same ones (shards of one run); otherwise none is right for all, and the
// renderings fall back to the target's base URL and channel.
void keep_common_rerun(const Documents& contracts, json::object& merged) {
  const json::value* common = nullptr;
  for (const auto& [file, doc] : contracts) {
    const auto* rerun = results::DocView(doc).find(k::envelope::config).find(k::contract_config::rerun).value();
    if (!rerun || (common && *common != *rerun)) return;
    common = rerun;
  }
  if (auto* config = merged.if_contains(k::envelope::config); common && config && config->is_object())
    config->as_object()[k::contract_config::rerun] = *common;
}

}  // namespace

reports::RunParts merge_documents(const std::vector<std::pair<std::string, json::object>>& documents) {
  refuse_other_runs(documents);
  // Each part with the files it came from; merged only when there are several.
  std::vector<std::pair<std::string, json::object>> contracts;
  std::map<std::string, std::vector<std::pair<std::string, json::object>>> loads;  // by scenario
  std::vector<std::string> scenario_order;
  for (const auto& [file, doc] : documents) {
    auto parts = reports::parts_of(doc);
    if (parts.contract) contracts.emplace_back(file, std::move(*parts.contract));
    for (auto& l : parts.loads) {
      const auto scenario = results::DocView(l)[k::envelope::config][k::load_config::scenario];
      if (!scenario.is_string()) throw std::runtime_error(file + ": a load result without config.scenario");
      const std::string name = scenario.str();
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
    keep_common_rerun(contracts, *out.contract);
  }
  for (const auto& scenario : scenario_order) out.loads.push_back(merge_loads(scenario, loads[scenario]));
  return out;
}

reports::RunMeta meta_of(const std::vector<std::pair<std::string, json::object>>& documents, bool rendered_later) {
  // The run's own description when one run document is rendered again;
  // otherwise what the inputs say, and the files they came from.
  reports::RunMeta meta;
  if (documents.empty()) return meta;
  const results::DocView first(documents.front().second);
  const auto target = first[k::envelope::target];
  meta.base_url = target[k::target::base_url].str();
  meta.channel = target[k::target::channel].str();
  meta.embedded = target[k::target::embedded].is_bool() && target[k::target::embedded].boolean();
  meta.started = std::chrono::system_clock::time_point::max();
  for (const auto& [file, doc] : documents) {
    const results::DocView d(doc);
    if (auto t = results::parse_iso8601(d[k::envelope::started_at].str())) meta.started = std::min(meta.started, *t);
    if (auto ms = d[k::envelope::duration_ms].maybe_num()) meta.duration_ms = std::max(meta.duration_ms, *ms);
  }
  if (meta.started == std::chrono::system_clock::time_point::max()) meta.started = std::chrono::system_clock::now();
  if (documents.size() == 1 && first[k::envelope::kind].str() == k::kind_run) {
    auto object_of = [&](std::string_view key) {
      const auto* o = first[key].object();
      return o ? *o : json::object{};
    };
    auto strings_of = [&](std::string_view key) {
      std::vector<std::string> out;
      for (const auto& s : first[key].items())
        if (s.is_string()) out.push_back(s.str());
      return out;
    };
    meta.config = object_of(k::envelope::config);
    meta.environment = object_of(k::run::environment);
    meta.skipped = strings_of(k::run::skipped);
    meta.problems = strings_of(k::run::problems);
    const auto incomplete = first[k::envelope::verdict][k::verdict::incomplete];
    meta.incomplete = incomplete.is_bool() && incomplete.boolean();
  } else {
    meta.environment = reports::environment();
    if (rendered_later)
      meta.environment[k::environment::note] =
          "of the machine that ran crh report; contract and load results do not record theirs";
  }
  return meta;
}

std::vector<std::string> write_single_result_outputs(const json::object& result, const OutputFiles& files) {
  std::vector<std::string> problems;
  if (!files.html.empty()) {
    OutputFiles html_only;
    html_only.html = files.html;
    const auto run = reports::run_document(reports::parts_of(result), std::nullopt, meta_of({{"", result}}, false));
    problems = write_outputs(run, html_only);
  }
  OutputFiles rest = files;
  rest.html.clear();
  auto more = write_outputs(result, rest);
  problems.insert(problems.end(), more.begin(), more.end());
  return problems;
}

std::vector<std::string> write_outputs(const json::object& doc, const OutputFiles& files) {
  std::vector<std::string> problems;
  auto write = [&](const std::string& path, const auto& render) {
    if (path.empty()) return;
    try {
      const std::string text = render();
      core::write_file_atomically(path, text);
    } catch (const std::exception& e) {
      problems.emplace_back(std::string(e.what()).find(path) == std::string::npos ? path + ": " + e.what() : e.what());
    }
  };
  write(files.json, [&] { return json::serialize(doc) + "\n"; });
  write(files.html, [&] { return reports::html_report(doc); });
  write(files.junit, [&] { return reports::junit_xml(doc); });
  if (!files.reproducers.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(files.reproducers, ec);
    if (ec) problems.push_back(files.reproducers + ": " + ec.message());
    else if (const auto contract = reports::parts_of(doc).contract) {
      const results::DocView view(*contract);
      for (const auto& check : view[k::contract::checks].items()) {
        const std::string script = reports::reproducer_script(view, check);
        if (script.empty()) continue;
        const std::string path = (std::filesystem::path(files.reproducers) / (check[k::check::id].str() + ".sh")).string();
        write(path, [&] { return script; });
        std::filesystem::permissions(path, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec,
                                     std::filesystem::perm_options::add, ec);
      }
    }
  }
  return problems;
}

}  // namespace crh::runners
