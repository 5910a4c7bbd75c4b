// Terminal-safe text from result documents.
#include "reports/text.hpp"

#include "results/keys_envelope.hpp"

#include <cctype>

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

std::string preflight_line(const results::DocView& doc, std::string_view command) {
  if (!doc.find(results::keys::envelope::preflight).is_object()) return {};
  return std::string(command) + ": not tested: " + clean(doc[results::keys::envelope::verdict][results::keys::verdict::reason]) + "\n";
}

std::string paint(bool on, const std::string& text, const char* code) {
  return on ? std::string("\x1b[") + code + "m" + text + "\x1b[0m" : text;
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

std::string side_by_side_design(std::string_view design, std::size_t pairs, double duration_s) {
  const std::string seconds = fixed(duration_s, duration_s == static_cast<double>(static_cast<long>(duration_s)) ? 0 : 1);
  return design == "duet" ? "a duet: both loaded at once for " + seconds + " s, each second a pair"
                          : std::to_string(pairs) + " pairs of " + seconds +
                                " s trials, one side after the other in a random order";
}

std::string race_power(const std::string& skew_p99) {
  // A window is caught once a second caller is checked inside it; the second
  // arrives within the release's span, so windows of the span's p99 are
  // caught in 99% of rounds or more, by a target that checks calls as they
  // arrive (one that queues them behind each other catches less).
  return "a race bug whose window between checking a caller and binding it lasts " + skew_p99 +
         " (the p99 of the spread between the callers' sends) or longer is caught in at least 99% of rounds, by a "
         "target that checks each call as it arrives";
}

}  // namespace crh::reports
