// Parsing and printing of base URLs (Boost.URL does the grammar).
#include "core/base_url.hpp"

#include <boost/url/parse.hpp>

namespace crh::core {
namespace {

// IPv6 addresses are bracketed wherever a port may follow.
std::string bracketed(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

std::string BaseUrl::host_header() const {
  return port == "80" ? bracketed(host) : bracketed(host) + ":" + port;
}

std::string BaseUrl::to_string() const { return "http://" + bracketed(host) + ":" + port + path_prefix; }

std::optional<BaseUrl> parse_base_url(const std::string& text, std::string& why) {
  auto parsed = boost::urls::parse_absolute_uri(text);
  if (!parsed) {
    why = "\"" + text + "\" is not an absolute URL such as http://127.0.0.1:8080";
    return std::nullopt;
  }
  const auto& u = *parsed;
  if (u.scheme() != "http") {
    why = "only http:// base URLs are supported (got " + std::string(u.scheme()) + "://)";
    return std::nullopt;
  }
  if (u.has_query() || u.has_fragment() || u.has_userinfo()) {
    why = "the base URL must not carry a query, fragment or user info: " + text;
    return std::nullopt;
  }
  BaseUrl b;
  b.host = u.host_type() == boost::urls::host_type::ipv6 ? std::string(u.host_address())
                                                          : std::string(u.encoded_host());
  if (b.host.empty()) {
    why = "the base URL has no host: " + text;
    return std::nullopt;
  }
  if (u.has_port()) {
    if (u.port().empty() || u.port_number() == 0) {
      why = "the base URL's port must be a number from 1 to 65535: " + text;
      return std::nullopt;
    }
    b.port = std::string(u.port());
  }
  std::string path(u.encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  b.path_prefix = path;
  return b;
}

}  // namespace crh::core
