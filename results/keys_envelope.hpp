// The result documents' keys every kind shares: the kinds, the envelope, its tool and target, the verdict.
//
// The vocabulary of the result documents (DESIGN.md §1): every key name,
// defined once, one header per document (keys_contract.hpp, keys_load.hpp,
// keys_run.hpp, keys_capture.hpp, keys_trend.hpp), for the
// producers (contracts/result_document.cpp, loadgen/result.cpp,
// reports/run_document.cpp, runners/) and every reader (the strict readbacks
// and the renderers' results::DocView). A key that several sections share is
// defined in the first and brought into the others with `using`, so that a
// renamed key cannot drift between the writer and a reader.
//
// The tests keep their literals on purpose: they pin the format.
#pragma once

#include <string_view>

namespace crh::results::keys {

using Key = std::string_view;

// ---- values of the envelope: the schema every crh document names, and its kinds
inline constexpr Key schema_name = "crh.result";
inline constexpr Key kind_contract = "contract";
inline constexpr Key kind_load = "load";
inline constexpr Key kind_run = "run";
inline constexpr Key kind_pcap = "pcap";  // crh pcap check: the contract judged on a capture

// ---- the envelope, every kind (results/envelope.cpp); config and verdict follow it in every kind
namespace envelope {
inline constexpr Key schema = "schema";
inline constexpr Key schema_version = "schema_version";
inline constexpr Key kind = "kind";
inline constexpr Key tool = "tool";
inline constexpr Key started_at = "started_at";
inline constexpr Key duration_ms = "duration_ms";
inline constexpr Key target = "target";
inline constexpr Key config = "config";
inline constexpr Key verdict = "verdict";
// A run the preflight stopped before any check or load (a contract's, a
// load's or a run's document): what it asked, what came back, the mistake;
// absent when the preflight let the run go on
inline constexpr Key preflight = "preflight";
}  // namespace envelope

// preflight
namespace preflight {
inline constexpr Key request = "request";
inline constexpr Key answer = "answer";
inline constexpr Key answered = "answered";
inline constexpr Key mistake = "mistake";
}  // namespace preflight

// envelope.tool
namespace tool {
inline constexpr Key name = "name";
inline constexpr Key version = "version";
}  // namespace tool

// envelope.target
namespace target {
inline constexpr Key base_url = "base_url";
inline constexpr Key channel = "channel";
inline constexpr Key embedded = "embedded";
}  // namespace target

// verdict: status, exit_code and reason in every kind; the load's and the run's add theirs
namespace verdict {
inline constexpr Key status = "status";
inline constexpr Key exit_code = "exit_code";
inline constexpr Key reason = "reason";
inline constexpr Key valid = "valid";                      // load
inline constexpr Key invalid_reasons = "invalid_reasons";  // load
inline constexpr Key interrupted = "interrupted";          // load
inline constexpr Key reasons = "reasons";                  // run
inline constexpr Key incomplete = "incomplete";            // run
}  // namespace verdict

}  // namespace crh::results::keys
