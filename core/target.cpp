// Parameter encodings and the call hook's path.
#include "core/target.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

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
