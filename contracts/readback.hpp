// A contract result document read back (`crh report`): the run as
// result_document wrote it, so shards (runs of different suites or checks)
// merge into one document, rendered again by the same code.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "contracts/runner.hpp"

namespace crh::contracts {

struct ContractRun {
  RunReport report;
  RunOptions options;  // the key is never in a document: target.api_key stays empty
  bool embedded = false;
};

// Throws std::runtime_error naming the field that is missing or wrong.
ContractRun read_contract_document(const boost::json::object& doc);

// The union of two runs' checks, in catalogue order; a check in both keeps
// the worse outcome. Suites and check patterns add up, notes are kept.
ContractRun merge_contract_runs(ContractRun a, const ContractRun& b);

boost::json::value result_document(const ContractRun& run);

}  // namespace crh::contracts
