// Text and numbers from result documents for people: text made safe for a
// terminal (a target's answer must not drive it, so control bytes show as
// '?'), and the units every rendering shares.
#pragma once

#include <string>
#include <string_view>

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

// `v` with that many decimals.
std::string fixed(double v, int decimals);

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

// "812 µs", "1.23 ms", "2.50 s": a duration in nanoseconds for people.
std::string format_ns(double ns);

// A compared figure in its unit ("ns", "per_second", "fraction"): 1.23 ms, 2884/s, 0.125%.
std::string format_figure(std::string_view unit, double v);

}  // namespace crh::reports
