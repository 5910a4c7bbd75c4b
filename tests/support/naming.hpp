// Test-name helpers: GoogleTest names are CamelCase without dashes.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace crh::test {

// "binding-racy" -> "BindingRacy"
inline std::string camel_case(std::string_view kebab) {
  std::string out;
  bool up = true;
  for (char c : kebab) {
    if (c == '-') {
      up = true;
      continue;
    }
    out.push_back(up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    up = false;
  }
  return out;
}

}  // namespace crh::test
