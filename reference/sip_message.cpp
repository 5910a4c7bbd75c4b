// SIP framing and header reading for the reference's user-agent server. Strict
// where a mistake would mislead (start line, Content-Length), lenient where
// peers differ harmlessly (bare LF line ends, compact header names).
#include "sip_message.hpp"

#include <algorithm>
#include <array>

namespace crh::reference {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-.!%*_+`'~").find(c) != std::string_view::npos;
}
bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char); }
bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Compact forms (§7.3.3) and the canonical spelling of the headers this UAS reads.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kNames{{
    {"v", "Via"}, {"f", "From"}, {"t", "To"}, {"i", "Call-ID"}, {"m", "Contact"}, {"l", "Content-Length"},
    {"c", "Content-Type"}, {"k", "Supported"}, {"s", "Subject"}, {"e", "Content-Encoding"},
    {"cseq", "CSeq"}, {"max-forwards", "Max-Forwards"}, {"record-route", "Record-Route"},
    {"p-asserted-identity", "P-Asserted-Identity"}, {"o", "Event"}, {"r", "Refer-To"},
}};

std::string canonical(std::string_view name) {
  for (const auto& [key, full] : kNames)
    if (iequals(name, key) || iequals(name, full)) return std::string(full);
  return std::string(name);
}

// Splits a header value at commas outside quotes and angle brackets.
void split_commas(std::string_view v, std::vector<std::string_view>& out) {
  bool quoted = false;
  int angle = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
    } else if (c == '"') quoted = true;
    else if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == ',' && angle == 0) {
      if (auto part = trim(v.substr(start, i - start)); !part.empty()) out.push_back(part);
      start = i + 1;
    }
  }
  if (auto part = trim(v.substr(std::min(start, v.size()))); !part.empty()) out.push_back(part);
}

bool parse_start_line(std::string_view line, SipMessage& m) {
  auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return false;
  std::string_view a = line.substr(0, sp1), b = line.substr(sp1 + 1, sp2 - sp1 - 1), c = line.substr(sp2 + 1);
  if (iequals(a, "SIP/2.0")) {  // a response: SIP/2.0 200 OK
    if (b.size() != 3 || !is_digits(b) || b[0] < '1' || b[0] > '6') return false;
    m.is_request = false;
    m.status = static_cast<unsigned>((b[0] - '0') * 100 + (b[1] - '0') * 10 + (b[2] - '0'));
    m.reason = std::string(c);
    return true;
  }
  if (!is_token(a) || b.empty() || !iequals(c, "SIP/2.0")) return false;
  if (b.find_first_of(" \t") != std::string_view::npos || b.find(':') == std::string_view::npos) return false;
  m.is_request = true;
  m.method = std::string(a);
  m.uri = std::string(b);
  return true;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::optional<std::string_view> SipMessage::header(std::string_view name) const {
  const std::string full = canonical(name);
  for (const auto& h : headers)
    if (iequals(h.name, full)) return std::string_view(h.value);
  return std::nullopt;
}

std::vector<std::string_view> SipMessage::all(std::string_view name) const {
  const std::string full = canonical(name);
  std::vector<std::string_view> out;
  for (const auto& h : headers)
    if (iequals(h.name, full)) split_commas(h.value, out);
  return out;
}

std::size_t SipMessage::count(std::string_view name) const {
  const std::string full = canonical(name);
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const SipHeader& h) { return iequals(h.name, full); }));
}

SipParse parse_sip(std::string_view data, bool stream) {
  SipParse r;
  std::size_t skipped = 0;
  if (stream)  // keep-alive CRLFs between messages (RFC 5626 §3.5.1)
    while (skipped < data.size() && (data[skipped] == '\r' || data[skipped] == '\n')) ++skipped;
  std::string_view rest = data.substr(skipped);
  r.consumed = skipped;
  // The header section ends at the first empty line.
  std::size_t end = std::string_view::npos, body_at = 0;
  for (std::size_t i = rest.find('\n'); i != std::string_view::npos; i = rest.find('\n', i + 1)) {
    if (i + 1 < rest.size() && rest[i + 1] == '\n') { end = i; body_at = i + 2; break; }
    if (i + 2 < rest.size() && rest[i + 1] == '\r' && rest[i + 2] == '\n') { end = i; body_at = i + 3; break; }
    if (i > kSipMessageLimit) break;
  }
  if (end == std::string_view::npos) {
    if (rest.size() > kSipMessageLimit) r.status = SipParseStatus::too_large;
    else r.status = stream ? SipParseStatus::incomplete : SipParseStatus::invalid;
    return r;
  }
  if (body_at > kSipMessageLimit) {
    r.status = SipParseStatus::too_large;
    return r;
  }
  std::string_view head = rest.substr(0, end);
  SipMessage& m = r.message;
  bool first = true;
  while (!head.empty()) {
    auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head = nl == std::string_view::npos ? std::string_view{} : head.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      if (!parse_start_line(line, m)) return r;
      first = false;
      continue;
    }
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {  // a folded continuation
      if (m.headers.empty()) return r;
      auto more = trim(line);
      if (!more.empty()) m.headers.back().value += " " + std::string(more);
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return r;
    auto name = trim(line.substr(0, colon));
    if (!is_token(name)) return r;
    m.headers.push_back({canonical(name), std::string(trim(line.substr(colon + 1)))});
  }
  if (first) return r;
  // Content-Length: every copy must agree; a stream needs it to find the next message.
  std::optional<std::size_t> length;
  for (const auto& h : m.headers) {
    if (h.name != "Content-Length") continue;
    if (!is_digits(h.value) || h.value.size() > 7) {
      r.status = h.value.size() > 7 && is_digits(h.value) ? SipParseStatus::too_large : SipParseStatus::invalid;
      return r;
    }
    std::size_t n = std::stoul(h.value);
    if (length && *length != n) return r;
    length = n;
  }
  std::size_t available = rest.size() - body_at;
  std::size_t body_size = length ? *length : (stream ? 0 : available);
  if (body_at + body_size > kSipMessageLimit) {
    r.status = SipParseStatus::too_large;
    return r;
  }
  if (body_size > available) {
    r.status = stream ? SipParseStatus::incomplete : SipParseStatus::invalid;
    return r;
  }
  m.body = std::string(rest.substr(body_at, body_size));
  r.consumed = skipped + body_at + body_size;
  r.status = SipParseStatus::complete;
  return r;
}

std::optional<SipAddress> parse_address(std::string_view value) {
  value = trim(value);
  bool quoted = false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quoted) {
      if (c == '\\') ++i;
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    else if (c == '<') {  // name-addr
      auto close = value.find('>', i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      auto uri = trim(value.substr(i + 1, close - i - 1));
      if (uri.find(':') == std::string_view::npos) return std::nullopt;
      return SipAddress{std::string(uri), std::string(trim(value.substr(close + 1)))};
    } else if (c == ';') break;
  }
  if (quoted) return std::nullopt;
  // addr-spec: the URI ends at the first ';' (what follows are header parameters, §20.10).
  auto semi = value.find(';');
  auto uri = trim(value.substr(0, semi));
  if (uri.empty() || uri.find(':') == std::string_view::npos || uri.find_first_of(" \t\"<>") != std::string_view::npos)
    return std::nullopt;
  return SipAddress{std::string(uri), semi == std::string_view::npos ? "" : std::string(value.substr(semi))};
}

std::string uri_user(std::string_view uri) {
  auto colon = uri.find(':');
  if (colon == std::string_view::npos) return {};
  std::string_view scheme = uri.substr(0, colon), rest = uri.substr(colon + 1);
  std::string_view user;
  if (iequals(scheme, "tel")) {
    user = rest.substr(0, rest.find_first_of(";?"));
  } else if (iequals(scheme, "sip") || iequals(scheme, "sips")) {
    rest = rest.substr(0, rest.find('?'));
    auto at = rest.find('@');
    if (at == std::string_view::npos) return {};
    user = rest.substr(0, at);
    user = user.substr(0, user.find(':'));  // a password is no part of the user
  } else {
    return {};
  }
  std::string out;
  for (std::size_t i = 0; i < user.size(); ++i) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = lower(c);
      return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    if (user[i] == '%' && i + 2 < user.size() && hex(user[i + 1]) >= 0 && hex(user[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(user[i + 1]) * 16 + hex(user[i + 2])));
      i += 2;
    } else {
      out.push_back(user[i]);
    }
  }
  return out;
}

std::optional<std::string> param(std::string_view params, std::string_view name) {
  while (!params.empty()) {
    auto semi = params.find(';');
    std::string_view item = trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    auto eq = item.find('=');
    if (iequals(trim(item.substr(0, eq)), name))
      return eq == std::string_view::npos ? std::string() : std::string(trim(item.substr(eq + 1)));
  }
  return std::nullopt;
}

std::optional<SipCseq> parse_cseq(std::string_view value) {
  value = trim(value);
  auto sp = value.find_first_of(" \t");
  if (sp == std::string_view::npos) return std::nullopt;
  auto digits = value.substr(0, sp);
  auto method = trim(value.substr(sp));
  if (!is_digits(digits) || digits.size() > 10 || !is_token(method)) return std::nullopt;
  unsigned long n = std::stoul(std::string(digits));
  if (n > 0x7fffffffUL) return std::nullopt;  // §8.1.1.5: less than 2**31
  return SipCseq{n, std::string(method)};
}

std::optional<SipVia> parse_via(std::string_view value) {
  value = trim(value);
  auto semi = value.find(';');
  std::string_view sent = value.substr(0, semi);
  SipVia via;
  via.params = semi == std::string_view::npos ? "" : std::string(value.substr(semi));
  // sent-protocol: SIP / 2.0 / transport, with optional whitespace around the slashes.
  std::string protocol;
  std::size_t i = 0, slashes = 0;
  for (; i < sent.size(); ++i) {
    char c = sent[i];
    if (c == ' ' || c == '\t') {
      if (slashes == 2 && !protocol.empty() && protocol.back() != '/') break;
      continue;
    }
    if (c == '/') ++slashes;
    protocol.push_back(c);
  }
  auto last = protocol.rfind('/');
  if (slashes != 2 || last == std::string::npos || !iequals(protocol.substr(0, last), "SIP/2.0")) return std::nullopt;
  via.transport = protocol.substr(last + 1);
  if (!is_token(via.transport)) return std::nullopt;
  std::string_view by = trim(sent.substr(i));
  if (by.empty()) return std::nullopt;
  std::string_view port;
  if (by.front() == '[') {
    auto close = by.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    via.host = std::string(by.substr(1, close - 1));
    by = by.substr(close + 1);
    if (!by.empty() && by.front() != ':') return std::nullopt;
    if (!by.empty()) port = by.substr(1);
  } else {
    auto colon = by.find(':');
    via.host = std::string(trim(by.substr(0, colon)));
    if (colon != std::string_view::npos) port = trim(by.substr(colon + 1));
  }
  if (via.host.empty() || via.host.find_first_of(" \t") != std::string::npos) return std::nullopt;
  if (!port.empty() || (semi == std::string_view::npos && by.ends_with(':'))) {
    if (!is_digits(port) || port.size() > 5 || std::stoul(std::string(port)) > 65535) return std::nullopt;
    via.port = static_cast<unsigned>(std::stoul(std::string(port)));
  }
  return via;
}

std::string request_defect(const SipMessage& m) {
  auto vias = m.all("Via");
  if (vias.empty() || !parse_via(vias.front())) return "Missing or malformed Via";
  auto from = m.header("From");
  if (!from || !parse_address(*from)) return "Missing or malformed From";
  auto to = m.header("To");
  if (!to || !parse_address(*to)) return "Missing or malformed To";
  if (m.count("From") > 1 || m.count("To") > 1 || m.count("Call-ID") > 1 || m.count("CSeq") > 1)
    return "Repeated From, To, Call-ID or CSeq";
  auto call_id = m.header("Call-ID");
  if (!call_id || call_id->empty() || call_id->find_first_of(" \t") != std::string_view::npos)
    return "Missing or malformed Call-ID";
  auto cseq = m.header("CSeq") ? parse_cseq(*m.header("CSeq")) : std::nullopt;
  if (!cseq) return "Missing or malformed CSeq";
  if (cseq->method != m.method) return "CSeq method does not match the request";
  if (auto mf = m.header("Max-Forwards"); mf && (!is_digits(*mf) || mf->size() > 3)) return "Malformed Max-Forwards";
  return {};
}

}  // namespace crh::reference
