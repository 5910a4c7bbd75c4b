// The "capture" section of a result (crh contract/load/run --capture) for
// people: a few terminal lines and a small HTML section, beside the rest.
#pragma once

#include <string>

#include "results/view.hpp"

namespace crh::reports {

// Lines for the terminal: the file and its counts, every warning (lost
// packets in red), or why no capture was made. Nothing when `capture` is absent.
std::string capture_terminal(const results::DocView& capture, bool color);

// An HTML section (h3 unless `top` asks for h2); nothing when absent.
std::string capture_html(const results::DocView& capture, bool top = false);

}  // namespace crh::reports
