// A load result document read back (`crh report`): the run exactly as
// result_document wrote it, so results of shards and repetitions merge
// exactly (loadgen/merge.hpp) and are rendered again by the same code.
#pragma once

#include <vector>

#include <boost/json/object.hpp>

#include "loadgen/result.hpp"

namespace crh::loadgen {

struct LoadRun {
  LoadConfig config;  // the key is never in a document: target.api_key stays empty
  LoadResult result;
  std::vector<Threshold> thresholds;
  RunInfo info;
};

// Throws std::runtime_error naming the field that is missing or wrong.
LoadRun read_load_document(const boost::json::object& doc);

// The document of a run read back or merged; thresholds are evaluated on it.
boost::json::object result_document(const LoadRun& run);

}  // namespace crh::loadgen
