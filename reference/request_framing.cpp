// RFC 9112's framing rules for requests, applied to a parsed head before any of
// the body is read. Where the RFC lets a server choose, the choice is the one
// that never lets bytes of doubtful meaning be read as a request.
#include "request_framing.hpp"

#include <vector>

namespace crh::reference {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// RFC 9110 §5.6.2.
bool is_tchar(char c) {
  return is_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// RFC 3986 §2.2, §2.3.
bool is_unreserved(char c) { return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
bool is_sub_delim(char c) { return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos; }

std::size_t token_length(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && is_tchar(s[n])) ++n;
  return n;
}

// Length of the quoted-string at the start of `s` (RFC 9110 §5.6.4), or 0.
std::size_t quoted_string_length(std::string_view s) {
  if (s.empty() || s.front() != '"') return 0;
  for (std::size_t i = 1; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') return i + 1;
    if (c == '\\') {
      if (++i >= s.size()) return 0;
      const auto q = static_cast<unsigned char>(s[i]);
      if (q != '\t' && (q < 0x20 || q == 0x7F)) return 0;
    } else if (c != '\t' && (c < 0x20 || c == 0x7F)) {
      return 0;
    }
  }
  return 0;
}

// A field value as it may be shown inside a JSON msg: printable ASCII only
// (obs-text need not be UTF-8), and short.
std::string shown(std::string_view v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  constexpr std::size_t kMax = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < v.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (v.size() > kMax) out += "...";
  out += '"';
  return out;
}

struct Coding {
  std::string_view text;  // the list element, trimmed
  std::string_view name;  // the coding's token
  bool has_parameters = false;
};

// transfer-coding = token *( OWS ";" OWS [ token "=" ( token / quoted-string ) ] )
std::optional<Coding> parse_coding(std::string_view element) {
  Coding c{element, element.substr(0, token_length(element)), false};
  if (c.name.empty()) return std::nullopt;
  std::string_view rest = trim_ows(element.substr(c.name.size()));
  while (!rest.empty()) {
    if (rest.front() != ';') return std::nullopt;
    c.has_parameters = true;
    rest = trim_ows(rest.substr(1));
    if (rest.empty() || rest.front() == ';') continue;
    const std::size_t name = token_length(rest);
    if (name == 0 || name >= rest.size() || rest[name] != '=') return std::nullopt;
    rest = rest.substr(name + 1);
    std::size_t value = rest.starts_with('"') ? quoted_string_length(rest) : token_length(rest);
    if (value == 0) return std::nullopt;
    rest = trim_ows(rest.substr(value));
  }
  return c;
}

// Splits a field value into list elements at commas outside quoted strings,
// dropping empty elements (RFC 9110 §5.6.1). An unterminated quote leaves the
// rest of the value as one element, which then fails to parse as a coding.
void split_list(std::string_view value, std::vector<std::string_view>& out) {
  auto emit = [&](std::size_t from, std::size_t to) {
    std::string_view element = trim_ows(value.substr(from, to - from));
    if (!element.empty()) out.push_back(element);
  };
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (quoted) {
      if (c == '\\') ++i;  // a quoted-pair; may step past the end, which ends the loop
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      emit(start, i);
      start = i + 1;
    }
  }
  emit(start, value.size());
}

FramingError te_error(FramingProblem p, unsigned status, std::string_view te, std::string_view why) {
  return {p, status, "Transfer-Encoding " + shown(te) + ": " + std::string(why)};
}

std::optional<FramingError> check_transfer_encoding(unsigned version, bool content_length,
                                                    std::string_view te,
                                                    const std::vector<std::string_view>& elements) {
  // HTTP/1.0 has no transfer codings: a 1.0 peer (or a proxy in between)
  // frames such a body differently, so its end is in doubt (RFC 9112 §6.1).
  if (version < 11)
    return te_error(FramingProblem::te_in_http10, 400, te,
                    "an HTTP/1.0 request must not use a transfer coding; send Content-Length "
                    "(RFC 9112 §6.1)");
  // The RFC allows ignoring Content-Length here; refusing is safer, since the
  // two disagree about where the body ends and a peer may have chosen the other.
  if (content_length)
    return te_error(FramingProblem::te_with_content_length, 400, te,
                    "a request must not send both Transfer-Encoding and Content-Length "
                    "(RFC 9112 §6.1)");
  std::vector<Coding> codings;
  for (std::string_view element : elements) {
    auto c = parse_coding(element);
    if (!c)
      return te_error(FramingProblem::te_malformed, 400, te,
                      shown(element) + " is not a transfer coding (RFC 9112 §7)");
    codings.push_back(*c);
  }
  auto plain_chunked = [](const Coding& c) { return iequals(c.name, "chunked") && !c.has_parameters; };
  if (codings.empty())
    return te_error(FramingProblem::te_empty, 400, te,
                    "names no coding; the final coding of a request must be chunked (RFC 9112 §6.3)");
  if (!plain_chunked(codings.back()))
    return te_error(FramingProblem::te_final_not_chunked, 400, te,
                    "the final coding of a request must be chunked (RFC 9112 §6.3)");
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (iequals(codings[i].name, "chunked"))
      return te_error(FramingProblem::te_chunked_twice, 400, te,
                      "chunked must be applied only once (RFC 9112 §6.1)");
  }
  // Any coding but chunked is one this service does not implement. RFC 9112
  // §6.1 says 501 for a coding the server does not understand; the framing
  // itself is sound (chunked is final) but the body cannot be decoded, so the
  // answer is 501 and, as for every refusal here, the connection closes.
  if (codings.size() > 1)
    return te_error(FramingProblem::te_unknown_coding, 501, te,
                    "coding " + shown(codings.front().text) +
                        " is not implemented; send the body with chunked alone or with "
                        "Content-Length (RFC 9112 §6.1)");
  return std::nullopt;
}

}  // namespace

bool valid_host(std::string_view v) {
  if (v.empty()) return true;  // a target URI without authority (RFC 9112 §3.2)
  std::size_t i = 0;
  if (v.front() == '[') {
    // IP-literal: IPv6address or IPvFuture; their characters, not their grammar.
    const auto close = v.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    for (i = 1; i < close; ++i) {
      const char c = v[i];
      if (!is_unreserved(c) && !is_sub_delim(c) && c != ':') return false;
    }
    ++i;
  } else {
    // IPv4address or reg-name: unreserved, pct-encoded, sub-delims.
    for (; i < v.size() && v[i] != ':'; ++i) {
      const char c = v[i];
      if (c == '%') {
        if (i + 2 >= v.size() || !is_hex(v[i + 1]) || !is_hex(v[i + 2])) return false;
        i += 2;
      } else if (!is_unreserved(c) && !is_sub_delim(c)) {
        return false;
      }
    }
    if (i == 0) return false;  // ":80" has no host
  }
  if (i == v.size()) return true;
  if (v[i] != ':') return false;
  for (++i; i < v.size(); ++i)
    if (v[i] < '0' || v[i] > '9') return false;
  return true;
}

std::optional<FramingError> check_request_framing(unsigned version,
                                                  std::span<const HeaderField> fields) {
  std::size_t hosts = 0;
  std::string_view host;
  bool content_length = false;
  std::string te;  // every Transfer-Encoding line, combined as one list
  bool has_te = false;
  std::vector<std::string_view> te_elements;
  for (const auto& f : fields) {
    if (iequals(f.name, "host")) {
      if (hosts++ == 0) host = f.value;
    } else if (iequals(f.name, "content-length")) {
      content_length = true;
    } else if (iequals(f.name, "transfer-encoding")) {
      if (has_te) te += ", ";
      te += f.value;
      has_te = true;
      split_list(f.value, te_elements);
    }
  }
  if (has_te) {
    if (auto err = check_transfer_encoding(version, content_length, te, te_elements)) return err;
  }
  if (hosts == 0 && version >= 11)
    return FramingError{FramingProblem::host_missing, 400,
                        "missing Host header: an HTTP/1.1 request must send one (RFC 9112 §3.2)"};
  if (hosts > 1)
    return FramingError{FramingProblem::host_repeated, 400,
                        "Host header sent " + std::to_string(hosts) +
                            " times: a request must send it once (RFC 9112 §3.2)"};
  if (hosts == 1 && !valid_host(host))
    return FramingError{FramingProblem::host_invalid, 400,
                        "invalid Host " + shown(host) +
                            ": expected a host name or address with an optional :port "
                            "(RFC 9112 §3.2)"};
  return std::nullopt;
}

}  // namespace crh::reference
