// The load's texts from the command line: the mix and the rate.
#include "loadgen/options.hpp"

#include <stdexcept>

namespace crh::loadgen {

std::vector<MixEntry> parse_mix(std::string_view text) {
  std::vector<MixEntry> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("--mix: \"" + std::string(item) + "\" is not op=weight");
    auto op = oracle::op_kind_by_name(item.substr(0, eq));
    if (!op || *op == oracle::OpKind::get || *op == oracle::OpKind::untag || *op == oracle::OpKind::recall ||
        *op == oracle::OpKind::sip_call || *op == oracle::OpKind::sip_recall)
      throw std::invalid_argument("--mix: unknown operation \"" + std::string(item.substr(0, eq)) +
                                  "\" (expected list-agents, get-agent, snooze, wake, db-get, db-set, "
                                  "list-aliases, tag (each tag is then deleted) or call)");
    const std::string weight(item.substr(eq + 1));
    std::size_t used = 0;
    double w = -1;
    try {
      w = std::stod(weight, &used);
    } catch (const std::exception&) {
    }
    if (used != weight.size() || w < 0)
      throw std::invalid_argument("--mix: weight of " + std::string(item.substr(0, eq)) + " must be a number >= 0, got \"" +
                                  weight + "\"");
    out.push_back({*op, w});
  }
  return out;
}

double parse_rate(std::string text) {
  if (text.ends_with("/s")) text.resize(text.size() - 2);
  std::size_t used = 0;
  double r = 0;
  try {
    r = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || r < 0)
    throw std::invalid_argument("--rate: expected requests per second such as 500 or 500/s (0: closed loop)");
  return r;
}

}  // namespace crh::loadgen
