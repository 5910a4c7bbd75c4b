// The record of nights (`--nights DIR`, DESIGN.md §7): one small JSON file per
// night, what makes nights comparable (the fingerprint), which nights a
// comparison may use, and a deliberate new level (--accept).
//
// A night file, DIR/night-<started, UTC, yyyymmddThhmmssZ>-<run id>.json:
//   {"schema":"crh.night","schema_version":1,"night":ID,"started_at":ISO,
//    "verdict":{"status","exit_code","reason","comparable"},
//    "fingerprint":{"hash":HEX,"fields":{...}},
//    "tool_version":V,"machine":{"cpu","cores","host"},
//    "report":PATH|null,
//    "figures":[{"scenario","operation","figure","unit","better",
//                "value","lower","upper","n","backed","repetitions":[...]}],
//    "histograms":{SCENARIO:{OPERATION:{sparse histogram}}},
//    "gate":{comparison summary}|null}
// A night side by side with a baseline deployment (--against) keeps its
// ratios as its figures (unit "ratio") and its whole comparison as "gate".
// Written through a temporary file and a rename; the run id makes two
// writers' names differ even within one second.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "nightly/gate.hpp"

namespace crh::nightly {

inline constexpr std::size_t kKeepNights = 400;

struct NightFigure {
  std::string scenario;   // "race", "mixed", "get"
  std::string operation;  // an operation, or "all" for the load's totals
  std::string figure;     // "p50", "p99", "throughput", "error rate"
  std::string unit;       // "ns", "per_second", "fraction"
  Better better = Better::lower;
  Estimate estimate;
  std::uint64_t n = 0;    // samples behind a percentile (0 for other figures)

  std::string key() const { return scenario + " " + operation + " " + figure; }
};

struct Night {
  std::string id;          // "20261125T224500Z-3f2a9c1b"
  std::string file;        // where it was read from
  std::string started_at;  // ISO 8601, UTC
  std::string status;      // the run's verdict status ("passed", "failed", "inconclusive", ...)
  int exit_code = 0;
  std::string reason;
  bool comparable = false;  // passed, reliable and complete: other nights may be judged against it
  std::string fingerprint;  // hash of the fields below
  boost::json::object fingerprint_fields;
  std::string tool_version;
  std::string cpu;
  int cores = 0;
  std::string host;
  std::string report;  // the night's HTML report, "" when none was written
  std::vector<NightFigure> figures;
  boost::json::object histograms;
  boost::json::object gate;  // the night's own comparison summary, empty when none

  const NightFigure* find(const std::string& key) const;
};

// What changes what is measured (scenario, connections, rate, duration,
// repetitions, callers, mix, threads, shard count, timeout, profile hash,
// call driver, target URL), read from a run document's config and loads.
// The crh version and the machine are not part of it.
boost::json::object fingerprint_fields(const boost::json::object& run_document);
std::string fingerprint_hash(const boost::json::object& fields);

// The night file of a run document (kind "run"). `report` is the HTML
// written for it ("" when none).
boost::json::object night_document(const boost::json::object& run_document, const std::string& report);

// Writes it into `dir` (created when missing) and keeps the newest `keep`
// night files. Returns the file written. Throws std::runtime_error saying why.
std::string write_night(const std::string& dir, const boost::json::object& night, std::size_t keep = kKeepNights);

// Every night file in `dir`, oldest first. Files that cannot be read are
// named in `problems` and left out.
std::vector<Night> read_nights(const std::string& dir, std::vector<std::string>& problems);

// --accept: from `night_id` on, comparisons of its fingerprint use only
// nights from it on. Throws std::runtime_error when no such night exists.
void accept_night(const std::string& dir, const std::string& night_id);
// The accepted nights, oldest first (ids).
std::vector<std::string> accepted_nights(const std::string& dir);

// The nights tonight may be compared with: same fingerprint, comparable,
// started before tonight and not before the latest accepted night of that
// fingerprint; oldest first.
std::vector<const Night*> comparison_window(const std::vector<Night>& record, const std::string& fingerprint,
                                            const std::vector<std::string>& accepted,
                                            const std::string& before_started_at);

}  // namespace crh::nightly
