// SIP messages read and written: a head split into lines (folding joined),
// a start line checked strictly, headers kept as sent, a body framed by
// Content-Length. Every path that meets bad input returns an error string.
#include "calls/sip_message.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace crh::calls::sip {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// RFC 3261 §7.3.3 and the later compact forms in common use.
constexpr std::array<std::pair<char, std::string_view>, 14> compact_forms{{
    {'i', "Call-ID"}, {'f', "From"}, {'t', "To"}, {'v', "Via"}, {'m', "Contact"},
    {'l', "Content-Length"}, {'c', "Content-Type"}, {'k', "Supported"}, {'s', "Subject"},
    {'e', "Content-Encoding"}, {'o', "Event"}, {'r', "Refer-To"}, {'u', "Allow-Events"}, {'x', "Session-Expires"},
}};

// The long form of a name (a compact one expanded), for comparisons.
std::string_view long_name(std::string_view name) {
  if (name.size() == 1)
    for (const auto& [c, full] : compact_forms)
      if (lower(name[0]) == c) return full;
  return name;
}

bool same_name(std::string_view a, std::string_view b) { return iequal(long_name(a), long_name(b)); }

// Headers whose values are comma-separated lists (RFC 3261 §7.3.1); others
// (WWW-Authenticate, Date...) hold commas inside one value.
bool is_list_header(std::string_view name) {
  static constexpr std::array<std::string_view, 11> lists{"Via", "Route", "Record-Route", "Contact", "Path",
                                                          "Allow", "Supported", "Require", "Proxy-Require",
                                                          "Unsupported", "Accept"};
  return std::any_of(lists.begin(), lists.end(), [&](std::string_view l) { return same_name(name, l); });
}

bool is_ws(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("-.!%*_+`'~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char); }

// Controls other than HTAB have no place in a line (a bare CR would let a
// value smuggle a line of its own when written back).
bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// Where the head ends: the offset of the blank line and its length (CRLFCRLF,
// or bare LFs from lenient peers); npos when not (yet) there.
std::pair<std::size_t, std::size_t> head_end(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') return {i + 1, 1};
    if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') return {i + 1, 2};
  }
  return {std::string_view::npos, 0};
}

bool parse_start_line(std::string_view line, Message& m, std::string& error) {
  if (has_control(line) || line.empty()) return error = "bad start line", false;
  if (line.size() >= 8 && iequal(line.substr(0, 8), "SIP/2.0 ")) {
    std::string_view rest = line.substr(8);
    std::string_view code = rest.substr(0, 3);
    if (code.size() != 3 || !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return error = "bad status code in start line", false;
    unsigned status = 0;
    std::from_chars(code.data(), code.data() + 3, status);
    if (status < 100 || status > 699) return error = "status code out of 100..699", false;
    rest.remove_prefix(3);
    if (!rest.empty() && rest.front() != ' ') return error = "bad status line", false;
    if (!rest.empty()) rest.remove_prefix(1);
    m.request = false;
    m.status = status;
    m.reason = std::string(trim(rest));
    return true;
  }
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return error = "bad request line", false;
  std::string_view method = line.substr(0, sp1), uri = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  if (!is_token(method)) return error = "bad method in request line", false;
  if (uri.empty() || uri.find_first_of(" \t") != std::string_view::npos || uri.find(':') == std::string_view::npos)
    return error = "bad Request-URI", false;
  if (!iequal(version, "SIP/2.0")) return error = "not SIP/2.0", false;
  m.request = true;
  m.method = std::string(method);
  m.uri = std::string(uri);
  return true;
}

// The head (start line and headers, without the blank line) into `m`.
bool parse_head(std::string_view head, const Limits& limits, Message& m, std::string& error) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  if (lines.empty() || !parse_start_line(lines[0], m, error)) {
    if (error.empty()) error = "empty message";
    return false;
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) return error = "empty header line", false;
    if (has_control(line)) return error = "control character in a header line", false;
    if (is_ws(line.front())) {  // folding (RFC 3261 §7.3.1): a continuation of the previous value
      if (m.headers.empty()) return error = "continuation line before any header", false;
      auto more = trim(line);
      auto& value = m.headers.back().value;
      if (!more.empty()) value += value.empty() ? std::string(more) : " " + std::string(more);
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return error = "header line without ':'", false;
    auto name = trim(line.substr(0, colon));
    if (!is_token(name) || is_ws(line.front())) return error = "bad header name", false;
    if (m.headers.size() >= limits.headers) return error = "more than " + std::to_string(limits.headers) + " headers", false;
    m.headers.push_back({std::string(name), std::string(trim(line.substr(colon + 1)))});
  }
  return true;
}

// The Content-Length, when present and well formed; `bad` when not a number
// or when two disagree.
std::optional<std::size_t> content_length(const Message& m, bool& bad) {
  std::optional<std::size_t> length;
  for (const auto& h : m.headers) {
    if (!same_name(h.name, "Content-Length")) continue;
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(h.value.data(), h.value.data() + h.value.size(), n);
    if (ec != std::errc{} || end != h.value.data() + h.value.size() || h.value.empty()) return bad = true, std::nullopt;
    if (length && *length != n) return bad = true, std::nullopt;
    length = n;
  }
  return length;
}

std::string_view skip_leading_newlines(std::string_view s) {
  while (!s.empty() && (s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
  return s;
}

// Splits on commas outside quotes and angle brackets.
void split_list(std::string_view value, std::vector<std::string_view>& out) {
  bool quoted = false;
  int angle = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == ',' && angle == 0) {
      auto part = trim(value.substr(start, i - start));
      if (!part.empty()) out.push_back(part);
      start = i + 1;
    }
  }
  if (start < value.size()) {
    auto part = trim(value.substr(start));
    if (!part.empty()) out.push_back(part);
  }
}

// Where the first of `chars` stands outside a quoted string (a display
// name, a quoted parameter value), or npos.
std::size_t find_unquoted(std::string_view value, std::string_view chars) {
  bool quoted = false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (chars.find(c) != std::string_view::npos) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

const std::string* Message::find(std::string_view name) const {
  for (const auto& h : headers)
    if (same_name(h.name, name)) return &h.value;
  return nullptr;
}

std::vector<std::string_view> Message::all(std::string_view name) const {
  std::vector<std::string_view> out;
  bool list = is_list_header(name);
  for (const auto& h : headers) {
    if (!same_name(h.name, name)) continue;
    if (list) split_list(h.value, out);
    else out.push_back(h.value);
  }
  return out;
}

std::string_view Message::cseq_method() const {
  const std::string* cseq = find("CSeq");
  if (!cseq) return {};
  std::string_view v = trim(*cseq);
  std::size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  if (digits == 0 || digits > 10 || digits == v.size() || !is_ws(v[digits])) return {};
  auto method = trim(v.substr(digits));
  return is_token(method) ? method : std::string_view{};
}

ParseResult parse_datagram(std::string_view bytes, const Limits& limits) {
  ParseResult r;
  bytes = skip_leading_newlines(bytes);
  if (bytes.empty()) return r.error = "empty datagram", r;
  auto [end, blank] = head_end(bytes);
  if (end == std::string_view::npos) {
    r.error = bytes.size() > limits.head ? "head larger than " + std::to_string(limits.head) + " bytes"
                                         : "no blank line after the headers";
    return r;
  }
  if (end > limits.head) return r.error = "head larger than " + std::to_string(limits.head) + " bytes", r;
  Message m;
  if (!parse_head(bytes.substr(0, end), limits, m, r.error)) return r;
  std::string_view body = bytes.substr(end + blank);
  bool bad = false;
  auto length = content_length(m, bad);
  if (bad) return r.error = "bad Content-Length", r;
  if (length) {
    if (*length > body.size()) return r.error = "Content-Length beyond the datagram", r;
    body = body.substr(0, *length);
  }
  if (body.size() > limits.body) return r.error = "body larger than " + std::to_string(limits.body) + " bytes", r;
  m.body = std::string(body);
  r.message = std::move(m);
  return r;
}

void StreamReader::feed(std::string_view bytes) {
  if (error_.empty()) buffer_.append(bytes);
}

std::optional<Message> StreamReader::next() {
  if (!error_.empty()) return std::nullopt;
  std::size_t skip = 0;
  while (skip < buffer_.size() && (buffer_[skip] == '\r' || buffer_[skip] == '\n')) ++skip;
  buffer_.erase(0, skip);
  std::string_view bytes = buffer_;
  // Only the head's worth of bytes is searched, so a peer that never ends
  // its head costs a bounded scan and then an error.
  auto [end, blank] = head_end(bytes.substr(0, std::min(bytes.size(), limits_.head + 3)));
  if (end == std::string_view::npos || end > limits_.head) {
    if (bytes.size() > limits_.head + 2 || end != std::string_view::npos)
      error_ = "head larger than " + std::to_string(limits_.head) + " bytes";
    return std::nullopt;
  }
  Message m;
  if (!parse_head(bytes.substr(0, end), limits_, m, error_)) return std::nullopt;
  bool bad = false;
  auto length = content_length(m, bad);
  if (bad) return error_ = "bad Content-Length", std::nullopt;
  if (!length) return error_ = "no Content-Length on a stream (RFC 3261 §18.3)", std::nullopt;
  if (*length > limits_.body) return error_ = "body larger than " + std::to_string(limits_.body) + " bytes", std::nullopt;
  std::size_t total = end + blank + *length;
  if (bytes.size() < total) return std::nullopt;
  m.body = std::string(bytes.substr(end + blank, *length));
  buffer_.erase(0, total);
  return m;
}

std::string serialize(const Message& message) {
  std::string out;
  out.reserve(256 + message.body.size());
  if (message.request) out += message.method + " " + message.uri + " SIP/2.0\r\n";
  else out += "SIP/2.0 " + std::to_string(message.status) + " " + message.reason + "\r\n";
  bool length_written = false;
  for (const auto& h : message.headers) {
    if (same_name(h.name, "Content-Length")) {
      if (length_written) continue;
      out += h.name + ": " + std::to_string(message.body.size()) + "\r\n";
      length_written = true;
      continue;
    }
    out += h.name + ": " + h.value + "\r\n";
  }
  if (!length_written) out += "Content-Length: " + std::to_string(message.body.size()) + "\r\n";
  out += "\r\n";
  out += message.body;
  return out;
}

std::string uri_of(std::string_view value) {
  auto open = find_unquoted(value, "<");
  // addr-spec without brackets: its parameters are the header's (§20.10).
  if (open == std::string_view::npos) return std::string(trim(value.substr(0, value.find(';'))));
  auto close = value.find('>', open + 1);
  if (close == std::string_view::npos) return {};
  return std::string(trim(value.substr(open + 1, close - open - 1)));
}

std::string user_of(std::string_view uri) {
  auto colon = uri.find(':');
  if (colon == std::string_view::npos) return {};
  std::string_view scheme = uri.substr(0, colon), rest = uri.substr(colon + 1);
  std::string_view user;
  if (iequal(scheme, "tel")) {
    user = rest.substr(0, rest.find(';'));
  } else {
    auto at = rest.find('@');
    if (at == std::string_view::npos) return {};
    user = rest.substr(0, at);
    user = user.substr(0, user.find(':'));  // a password, never part of the user
  }
  std::string out;
  for (std::size_t i = 0; i < user.size(); ++i) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (lower(c) >= 'a' && lower(c) <= 'f') return lower(c) - 'a' + 10;
      return -1;
    };
    if (user[i] == '%' && i + 2 < user.size() && hex(user[i + 1]) >= 0 && hex(user[i + 2]) >= 0) {
      out += static_cast<char>(hex(user[i + 1]) * 16 + hex(user[i + 2]));
      i += 2;
    } else {
      out += user[i];
    }
  }
  return out;
}

std::optional<std::string> param_of(std::string_view value, std::string_view name) {
  // The header's parameters start after the URI: after '>' in a name-addr,
  // at the first ';' otherwise (a Via's sent-by has no brackets).
  std::size_t start = find_unquoted(value, "<;");
  if (start != std::string_view::npos && value[start] == '<') {
    auto close = value.find('>', start + 1);
    if (close == std::string_view::npos) return std::nullopt;
    start = value.find(';', close);
  }
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view params = value.substr(start);
  while (!params.empty()) {
    params.remove_prefix(1);  // the ';'
    std::size_t end = find_unquoted(params, ";,");
    end = std::min(end, params.size());
    std::string_view param = trim(params.substr(0, end));
    auto eq = param.find('=');
    if (iequal(trim(param.substr(0, eq)), name)) {
      if (eq == std::string_view::npos) return std::string{};
      auto v = trim(param.substr(eq + 1));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return std::string(v);
    }
    if (end >= params.size() || params[end] == ',') break;
    params.remove_prefix(end);
  }
  return std::nullopt;
}

}  // namespace crh::calls::sip
