// Renderings of a `crh pcap check` document (kind "pcap"): the terminal
// summary and the self-contained HTML page, each with the capture's own
// section (file, format, link types, packets, streams, exchanges, what could
// not be parsed). JUnit XML is junit_xml's, as for a contract document.
#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "reports/terminal.hpp"

namespace crh::reports {

std::string pcap_summary(const boost::json::value& document, const TerminalStyle& style);
std::string pcap_html(const boost::json::value& document);

}  // namespace crh::reports
