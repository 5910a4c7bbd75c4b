// What the files of the HTML report share (reports/html.cpp, html_load.cpp,
// comparison_section.cpp, trend_html.cpp):
// escaping, numbers and badges as every section shows them, and the section
// of a load result. Not an API of its own.
#pragma once

#include <string>
#include <string_view>

#include "results/view.hpp"

namespace crh::reports::html {

std::string esc(std::string_view s);            // text for HTML content and attributes
std::string whole(double v);                    // no decimals
std::string badge(const std::string& outcome);  // "PASS" on its outcome's colour
std::string class_name(std::string_view s);     // "no change" -> "no-change": a CSS class

// The page's head and the shared style, up to the opened <body>.
std::string page_start(const std::string& title);

// The comparison with a baseline or with the record of nights (reports/comparison_section.cpp).
std::string comparison_section(const results::DocView& comparison);

// The section of one load result of the run document, with its charts.
std::string load_section(const results::DocView& load);

}  // namespace crh::reports::html
