// curl reproducers.
#include "core/curl.hpp"

namespace crh::core {
namespace {

bool needs_ansi_c(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// A piece of text without the secret, quoted for bash.
std::string quote_piece(std::string_view s) {
  if (s.empty()) return {};
  std::string out;
  if (needs_ansi_c(s)) {
    static constexpr char kHex[] = "0123456789abcdef";
    out = "$'";
    for (unsigned char c : s) {
      if (c == '\\' || c == '\'') {
        out.push_back('\\');
        out.push_back(static_cast<char>(c));
      } else if (c < 0x20 || c == 0x7f) {
        out += "\\x";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
    out.push_back('\'');
    return out;
  }
  out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string shell_word(std::string_view text, std::string_view secret) {
  if (text.empty()) return "''";
  std::string out;
  for (std::size_t pos = 0;;) {
    auto hit = secret.empty() ? std::string_view::npos : text.find(secret, pos);
    if (hit == std::string_view::npos) {
      out += quote_piece(text.substr(pos));
      return out;
    }
    out += quote_piece(text.substr(pos, hit - pos));
    out += "\"$CRH_API_KEY\"";
    pos = hit + secret.size();
  }
}

std::string to_curl(const HttpRequest& request, const BaseUrl& base, std::string_view api_key) {
  std::string cmd = "curl -sS -i";
  if (request.method != "GET" || !request.body.empty()) cmd += " -X " + shell_word(request.method);
  cmd += " " + shell_word(base.to_string() + request.target, api_key);
  // curl drops a header given with no value ("Name:"); "Name;" sends it empty.
  for (const auto& h : request.headers)
    cmd += " -H " + (h.value.empty() ? shell_word(h.name + ";") : shell_word(h.name + ": " + h.value, api_key));
  if (!request.body.empty()) cmd += " --data-binary " + shell_word(request.body, api_key);
  return cmd;
}

}  // namespace crh::core
