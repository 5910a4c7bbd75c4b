// The HTML report of a run document (kind "run"): one self-contained file
// (inline CSS and SVG; no script, font, image or style fetched), readable
// with JavaScript off and printable. DESIGN.md §7 lists its sections. A
// field the document lacks is shown blank and named in a last line
// ("missing from the document: ...", id="missing").
#pragma once

#include <boost/json/object.hpp>
#include <string>

namespace crh::reports {

std::string html_report(const boost::json::object& run_document);

}  // namespace crh::reports
