// A target's base URL: http://host[:port][/prefix]. Paths of the API are
// appended to the prefix.
#pragma once

#include <optional>
#include <string>

namespace crh::core {

struct BaseUrl {
  std::string host;         // without brackets for IPv6
  std::string port = "80";
  std::string path_prefix;  // "" or "/something" without a trailing slash

  // "http://127.0.0.1:8080", "http://[::1]:8080/prefix"
  std::string to_string() const;
  // The value of the Host header.
  std::string host_header() const;
};

// Parses `text`; on failure returns nothing and sets `why` to a sentence.
std::optional<BaseUrl> parse_base_url(const std::string& text, std::string& why);

}  // namespace crh::core
