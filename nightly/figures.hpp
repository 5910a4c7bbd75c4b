// The figures a night is judged on, read from its load documents, and what
// makes two nights comparable (DESIGN.md §7). Reads documents only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "nightly/record.hpp"

namespace crh::nightly {

// Per load: throughput and error rate of the whole load ("all"); per
// operation p50 and p99 (with their intervals and whether they are backed),
// throughput and error rate. A load of `crh run --repeat K` gives each
// figure's repetitions; its value is their median, its interval their range.
std::vector<NightFigure> figures_of_loads(const std::vector<boost::json::object>& loads);

// A night side by side with a baseline deployment (`crh run --against
// --nights`, the run document's comparison in mode "against"): per judged
// figure its ratio candidate / baseline in unit "ratio", with the interval it
// was judged on and its pairs as n; a figure measured in too few pairs
// (no ratio) is kept as not backed at ratio 1 with no interval.
std::vector<NightFigure> ratio_figures(const boost::json::object& against_comparison);
boost::json::object figure_json(const NightFigure& f);

// Why tonight's loads cannot be trusted, if so: a load INVALID (the generator
// limited the figures), or a load whose first and second halves differ in
// p50 by more than `limit_pct` (a trend or a warm-up left inside it).
// A short stable hash of `text` (FNV-1a, 16 hex digits): the same on every
// build and machine, so fingerprints recorded by one crh match another's.
std::string hash_text(std::string_view text);

std::vector<std::string> unreliable_reasons(const std::vector<boost::json::object>& loads, double limit_pct);

}  // namespace crh::nightly
