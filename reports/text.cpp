// Terminal-safe text from result documents.
#include "reports/text.hpp"

#include <cctype>
#include <cstdio>

namespace crh::reports {

std::string clean(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
  return out;
}

std::string clean(const results::DocView& v) { return clean(v.str()); }

std::string count_text(const results::DocView& v) { return std::to_string(v.count()); }

std::string missing_line(const results::DocView& doc) {
  const std::string footnote = doc.missing_footnote();
  return footnote.empty() ? std::string() : clean(footnote) + "\n";
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string paint(bool on, const std::string& text, const char* code) {
  return on ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
}

std::string format_ns(double ns) {
  if (ns < 1e3) return fixed(ns, 0) + " ns";
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 2 : ns < 1e5 ? 1 : 0) + " µs";
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : ns < 1e8 ? 1 : 0) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

std::string format_figure(std::string_view unit, double v) {
  if (unit == "ns") return format_ns(v);
  if (unit == "per_second") return fixed(v, v < 100 ? 1 : 0) + "/s";
  if (unit == "fraction") return fixed(v * 100, 3) + "%";
  return fixed(v, 3);
}

std::string status_label(std::string_view status) {
  std::string out(status.empty() ? "unknown" : status);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool could_not_tell(std::string_view status) { return status == "inconclusive" || status == "unreliable"; }

const char* status_color(std::string_view status) {
  return status == "passed" ? "1;32" : could_not_tell(status) ? "1;33" : "1;31";
}

std::string signed_percent(double pct, int decimals) { return (pct >= 0 ? "+" : "") + fixed(pct, decimals) + "%"; }

}  // namespace crh::reports
