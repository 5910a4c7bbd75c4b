// capture_section: see capture_section.hpp
#include "reports/capture_section.hpp"

#include "results/keys_capture.hpp"
#include "reports/html_parts.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace {
namespace c = results::keys::live_capture;
using html::esc;

bool lost(const results::DocView& w) { return clean(w).starts_with("LOST PACKETS"); }

}  // namespace

std::string capture_terminal(const results::DocView& capture, bool color) {
  if (!capture.present()) return {};
  if (!capture[c::made].boolean())
    return "\n" + paint(color, "capture: none made", "33") + " (" + clean(capture[c::not_made]) + ")\n";
  std::string out = "\ncapture: " + clean(capture[c::file]) + " on " + clean(capture[c::interface]) + " (" +
                    clean(capture[c::filter]) + "): " + count_text(capture[c::packets]) + " packets, " +
                    count_text(capture[c::bytes]) + " bytes; kernel: " + count_text(capture[c::kernel_received]) + " received, " +
                    count_text(capture[c::kernel_dropped]) + " dropped, " + count_text(capture[c::interface_dropped]) +
                    " dropped by the interface; " + count_text(capture[c::redactions]) + " key and SIP digest redactions\n";
  for (const auto& w : capture[c::warnings].items())
    out += "  " + paint(color, (lost(w) ? "" : "warning: ") + clean(w), lost(w) ? "1;31" : "33") + "\n";
  return out;
}

std::string capture_html(const results::DocView& capture, bool top) {
  if (!capture.present()) return {};
  const std::string h = top ? "h2" : "h3";
  std::string out = "<" + h + " id=\"capture\">Capture</" + h + ">\n";
  if (!capture[c::made].boolean())
    return out + "<p class=\"bad\">No capture was made: " + esc(capture[c::not_made].str()) + "</p>\n";
  const auto row = [](const std::string& name, const std::string& value) {
    return "<tr><th>" + name + "</th><td>" + value + "</td></tr>\n";
  };
  const auto limit = capture[c::limit_bytes].count();
  out += "<table>\n" + row("file", "<code>" + esc(capture[c::file].str()) + "</code>") +
         row("interface", esc(capture[c::interface].str())) +
         row("filter", "<code>" + esc(capture[c::filter].str()) + "</code>") +
         row("packets written", count_text(capture[c::packets])) + row("bytes", count_text(capture[c::bytes])) +
         row("kernel received / dropped / interface dropped",
             count_text(capture[c::kernel_received]) + " / " + count_text(capture[c::kernel_dropped]) + " / " +
                 count_text(capture[c::interface_dropped]) +
                 (capture[c::counted_twice].boolean() ? " (loopback: each packet counted twice)" : "")) +
         row("limit", limit == 0 ? std::string("none")
                                 : std::to_string(limit) + " bytes" +
                                       (capture[c::limit_reached].boolean() ? ", reached: capture stopped" : "")) +
         row("key and SIP digest redactions", count_text(capture[c::redactions]) +
                                   (capture[c::checksums_recomputed].boolean() ? " (checksums recomputed)" : "")) +
         "</table>\n";
  for (const auto& w : capture[c::warnings].items())
    out += std::string("<p class=\"") + (lost(w) ? "bad" : "muted") + "\">" + esc(w.str()) + "</p>\n";
  return out;
}

}  // namespace crh::reports
