// Text and numbers from result documents for people: text made safe for a
// terminal (a target's answer must not drive it, so control bytes show as
// '?'), and the units every rendering shares.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "results/units.hpp"
#include "results/view.hpp"

namespace crh::reports {

std::string clean(std::string_view text);

// The string the view holds, cleaned; empty when absent or not a string (the view records it).
std::string clean(const results::DocView& v);

// The count the view holds, in digits (0 when absent; the view records it).
std::string count_text(const results::DocView& v);

// "missing from the document: ...\n" when the views of `doc` met a missing or
// mistyped field, else nothing: a report says what it could not show.
std::string missing_line(const results::DocView& doc);

// "crh contract: not tested: GET ... answered ...: the mistake\n" when the
// preflight stopped the run `doc` is of, else nothing: then that line is all
// a report says of it.
std::string preflight_line(const results::DocView& doc, std::string_view command);

using results::fixed;
using results::format_figure;
using results::format_ns;

// `text` in an ANSI colour (`code` such as "1;31") when `on`.
std::string paint(bool on, const std::string& text, const char* code);

// A verdict status as shown: "passed" -> "PASSED", "untested" -> "UNTESTED".
std::string status_label(std::string_view status);

// The ANSI colour of a verdict status: green passed; amber for a night that
// could not tell (inconclusive, unreliable: exit 4), neither passed nor
// failed; red otherwise.
const char* status_color(std::string_view status);
bool could_not_tell(std::string_view status);  // inconclusive or unreliable

// "+24.0%", "-3.5%".
std::string signed_percent(double pct, int decimals = 1);

// How two deployments were loaded side by side (`crh run --against`):
// "10 pairs of 2 s trials, one side after the other in a random order", or
// "a duet: both loaded at once for 12 s, each second a pair".
std::string side_by_side_design(std::string_view design, std::size_t pairs, double duration_s);

// What a race's release can catch, from its skew's p99 (the span of a
// round's release, which bounds the first two callers' arrival gap): "a
// check-then-bind window of 140 µs or longer is caught in at least 99% of
// rounds by a target that checks each call as it arrives ...".
std::string race_power(const std::string& skew_p99);

}  // namespace crh::reports
