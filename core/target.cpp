// Parameter encodings and the call hook's path.
#include "core/target.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <cctype>

namespace crh::core {

std::string_view to_string(ParamEncoding e) {
  switch (e) {
    case ParamEncoding::form: return "form";
    case ParamEncoding::json: return "json";
    case ParamEncoding::query: return "query";
  }
  return "?";
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {

std::string urlencoded(const std::vector<Param>& params) {
  std::string out;
  for (const auto& p : params) {
    if (!out.empty()) out.push_back('&');
    out += percent_encode(p.name) + "=" + percent_encode(p.value);
  }
  return out;
}

std::string json_object(const std::vector<Param>& params) {
  std::string out = "{";
  for (const auto& p : params) {
    if (out.size() > 1) out.push_back(',');
    out += boost::json::serialize(boost::json::string(p.name)) + ":";
    out += p.number ? p.value : boost::json::serialize(boost::json::string(p.value));
  }
  return out + "}";
}

}  // namespace

HttpRequest build_request(std::string method, std::string path, const std::vector<Param>& params,
                          ParamEncoding encoding) {
  HttpRequest r{std::move(method), std::move(path), {}, {}};
  if (params.empty()) return r;
  switch (encoding) {
    case ParamEncoding::form:
      r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
      r.body = urlencoded(params);
      break;
    case ParamEncoding::json:
      r.headers.push_back({"Content-Type", "application/json"});
      r.body = json_object(params);
      break;
    case ParamEncoding::query:
      r.target += (r.target.find('?') == std::string::npos ? "?" : "&") + urlencoded(params);
      break;
  }
  return r;
}

}  // namespace crh::core

namespace crh::core {

std::string SipTarget::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + (tcp ? ";transport=tcp" : "");
}

std::optional<SipTarget> parse_sip_target(std::string_view text, std::string& why) {
  SipTarget t;
  std::string_view rest = text;
  if (auto semi = rest.find(';'); semi != std::string_view::npos) {
    std::string params(rest.substr(semi + 1));
    for (auto& c : params) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (params == "transport=tcp") t.tcp = true;
    else if (params != "transport=udp") {
      why = "unknown parameter \";" + std::string(rest.substr(semi + 1)) + "\" (only ;transport=tcp or ;transport=udp)";
      return std::nullopt;
    }
    rest = rest.substr(0, semi);
  }
  std::string_view port;
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      why = "expected [IPV6]:PORT, got \"" + std::string(text) + "\"";
      return std::nullopt;
    }
    t.host = std::string(rest.substr(1, close - 1));
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || rest.find(':') != colon) {
      why = "expected HOST:PORT[;transport=tcp], got \"" + std::string(text) + "\"";
      return std::nullopt;
    }
    t.host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
  }
  unsigned long n = 0;
  const bool digits = !port.empty() && port.size() <= 5 &&
                      std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) n = std::stoul(std::string(port));
  if (t.host.empty() || !digits || n == 0 || n > 65535) {
    why = "expected HOST:PORT with a port from 1 to 65535, got \"" + std::string(text) + "\"";
    return std::nullopt;
  }
  t.port = static_cast<unsigned short>(n);
  return t;
}

}  // namespace crh::core
