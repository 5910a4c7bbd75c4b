// The envelope every result document shares (DESIGN.md §1), whatever produced
// it: schema and version, tool, start time, target. `crh report` keys on it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/base_url.hpp"
#include "core/preflight.hpp"
#include "results/verdict.hpp"

namespace crh::results {

// 2: latencies carry their percentiles' intervals, operations their series
// (issue 23); documents of version 1 still read, with point values only.
inline constexpr int kResultSchemaVersion = 2;

// "2026-11-21T10:00:00Z"
std::string iso8601(std::chrono::system_clock::time_point t);

// The inverse of iso8601 (whole seconds, UTC); nothing when `text` is not one.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text);

// {"schema":"crh.result","schema_version":2,"kind":kind,"tool":{...},
//  "started_at":...,"duration_ms":...,"target":{"base_url","channel","embedded"}}
boost::json::object result_envelope(std::string_view kind, std::chrono::system_clock::time_point started,
                                    double duration_ms, const core::BaseUrl& base, std::string_view channel,
                                    bool embedded);

// A run the preflight stopped: its section of the document (keys::preflight)
// and its verdict, untested when the target answered (exit 3: the run proved
// nothing of it), unreachable when nothing did.
boost::json::object preflight_json(const core::PreflightStop& stop);
Verdict preflight_verdict(const core::PreflightStop& stop);
// The verdict as a document's "verdict" object.
boost::json::object verdict_json(const Verdict& verdict);

}  // namespace crh::results
