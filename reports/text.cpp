// Terminal-safe text from result documents.
#include "reports/text.hpp"

#include <boost/json.hpp>

namespace crh::reports {

std::string clean(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
  return out;
}

std::string str(const boost::json::value& v, std::string_view key) {
  if (auto* p = v.as_object().if_contains(key); p && p->is_string()) return clean(p->get_string());
  return {};
}

}  // namespace crh::reports
