// A request's text and parameters decoded (see params.hpp): apart from the
// routing and the endpoints, which only ask for a parameter by name.
#include "params.hpp"

#include <boost/json.hpp>

namespace crh::reference {
namespace json = boost::json;

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the UTF-8 character starting at s[i], or 0 if none starts there.
std::size_t utf8_char_length(std::string_view s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 1;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3;
    cp = c & 0x07;
  } else return 0;
  if (i + n >= s.size()) return 0;
  for (std::size_t k = 1; k <= n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) ||
      cp > 0x10FFFF)
    return 0;
  return n + 1;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_char_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

std::string as_utf8_text(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (std::size_t n = utf8_char_length(s, i)) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      auto c = static_cast<unsigned char>(s[i++]);
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view in, bool form) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (form && c == '+') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  if (!valid_utf8(out)) return std::nullopt;
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

namespace {

// Adds `name=value` to `params`; the same name twice with different values is an error.
std::optional<std::string> add_param(Params& params, std::string name, std::string value) {
  auto [it, inserted] = params.emplace(std::move(name), value);
  if (!inserted && it->second != value) return "parameter \"" + it->first + "\" is given twice with different values";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_form(std::string_view text, Params& params) {
  while (!text.empty()) {
    auto amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!name || !value)
      return "malformed form encoding in \"" + std::string(pair.substr(0, 64)) + "\": bad percent-escape or not UTF-8";
    if (auto err = add_param(params, std::move(*name), std::move(*value))) return err;
  }
  return std::nullopt;
}

namespace {

std::optional<std::string> parse_json_params(std::string_view body, Params& params) {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return "request body is not valid JSON (" + ec.message() + ")";
  if (!doc.is_object()) return "a JSON request body must be an object of parameters";
  for (const auto& [k, v] : doc.get_object()) {
    std::string value;
    if (v.is_string()) value = std::string(v.get_string());
    else if (v.is_int64()) value = std::to_string(v.get_int64());
    else if (v.is_uint64()) value = std::to_string(v.get_uint64());
    else return "parameter \"" + std::string(k) + "\" must be a string or an integer";
    if (auto err = add_param(params, std::string(k), std::move(value))) return err;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::pair<unsigned, std::string>> read_params(const Request& req, std::string_view query,
                                                            Params& params) {
  if (auto err = parse_form(query, params)) return std::pair{400u, *err};
  if (req.body.empty()) return std::nullopt;
  std::string type = lower(trim(req.content_type.substr(0, req.content_type.find(';'))));
  if (type == "application/json" || (type.size() > 5 && type.ends_with("+json"))) {
    if (auto err = parse_json_params(req.body, params)) return std::pair{400u, *err};
  } else if (type.empty() || type == "application/x-www-form-urlencoded") {
    if (auto err = parse_form(req.body, params)) return std::pair{400u, *err};
  } else {
    return std::pair{415u, "unsupported Content-Type \"" + std::string(req.content_type) +
                               "\": send application/x-www-form-urlencoded or application/json"};
  }
  return std::nullopt;
}

std::string in_quotes(std::string_view s) {
  constexpr std::size_t kMax = 72;
  bool cut = s.size() > kMax;
  if (cut) {
    std::size_t end = kMax;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    s = s.substr(0, end);
  }
  std::string out = json::serialize(json::value(json::string(s)));
  if (cut) out.insert(out.size() - 1, "...");
  return out;
}

}  // namespace crh::reference
