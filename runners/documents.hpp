// Result files for `crh report` and `crh run`: reading them, merging shards
// into one set of parts, and writing the outputs whole or not at all.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "reports/run_document.hpp"

namespace crh::runners {

// The document in `path`. Throws std::runtime_error naming the file and what is wrong.
boost::json::object read_result_file(const std::string& path);

// The parts of every document; several results of one kind (shards) merge
// exactly: contract checks unite, loads of one scenario add up bucket by
// bucket. Throws std::runtime_error naming the file that cannot be merged.
reports::RunParts merge_documents(const std::vector<std::pair<std::string, boost::json::object>>& documents);

// What a run document says about results it is made of: the target and start
// of the first, the longest duration; a single run document's own config,
// environment, skipped parts, problems and incompleteness. `rendered_later`:
// the environment is the renderer's, and says so.
reports::RunMeta meta_of(const std::vector<std::pair<std::string, boost::json::object>>& documents, bool rendered_later);

struct OutputFiles {
  std::string json;
  std::string html;
  std::string junit;
  std::string reproducers;  // a directory: one sh script per failed contract check
};

// Writes the requested renderings of a run document (or, for --json and
// --junit, of any result document), each through a temporary file and a
// rename. The document's values are redacted already (core/outside.hpp):
// the rendered text is never redacted again, so the harness's own words stay.
// Returns what could not be written.
std::vector<std::string> write_outputs(const boost::json::object& run_document, const OutputFiles& files);

// The same for one contract or load result (`crh contract`, `crh load`):
// --json and --junit of the result itself, --html of the run it makes alone.
std::vector<std::string> write_single_result_outputs(const boost::json::object& result, const OutputFiles& files);

}  // namespace crh::runners
