// Text from a result document made safe for a terminal: a target's answer
// must not drive it (escape sequences), so control bytes show as '?'.
#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace crh::reports {

std::string clean(std::string_view text);

// The string field `key` of object `v`, cleaned; empty when absent or not a string.
std::string str(const boost::json::value& v, std::string_view key);

}  // namespace crh::reports
