// The every-encoding key redactor. At each position that could start the key
// it reads the text one key byte at a time, accepting each byte in any of
// its forms, so mixed encodings match as well as pure ones.
#include "core/redact.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace crh::core {
namespace {

constexpr std::size_t kNone = std::string_view::npos;

// Key bytes (or base64 characters) that a text must end with to count as a
// truncated capture: fewer would match ordinary text too often.
constexpr std::size_t kTrailingMin = 4;
// Base64 cores shorter than this are left alone: they would match everywhere.
constexpr std::size_t kMinBase64Core = 4;
// The longest form of one key byte's code point: a surrogate pair.
constexpr std::size_t kLongestForm = 12;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `count` hex digits at t[p...], or -1.
long read_hex(std::string_view t, std::size_t p, std::size_t count) {
  if (p > t.size() || t.size() - p < count) return -1;
  long v = 0;
  for (std::size_t i = 0; i < count; ++i) {
    int d = hex_digit(t[p + i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool all_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return hex_digit(c) >= 0; });
}

bool is_base64_char(std::uint32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '-' || c == '_';
}

// One escaped form decoded: '%XX' gives a byte; JSON and HTML escapes give a
// code point (the same as the byte for ASCII).
struct Escape {
  bool is_byte = false;
  std::uint32_t value = 0;
  std::size_t len = 0;  // characters of text
};

std::optional<Escape> decode_escape(std::string_view t, std::size_t p) {
  switch (t[p]) {
    case '%': {
      long v = read_hex(t, p + 1, 2);
      if (v < 0) return std::nullopt;
      return Escape{true, static_cast<std::uint32_t>(v), 3};
    }
    case '\\': {
      if (p + 1 >= t.size()) return std::nullopt;
      char simple = 0;
      switch (t[p + 1]) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': break;
        default: return std::nullopt;
      }
      if (simple) return Escape{false, static_cast<unsigned char>(simple), 2};
      long u = read_hex(t, p + 2, 4);
      if (u < 0 || (u >= 0xDC00 && u < 0xE000)) return std::nullopt;
      if (u < 0xD800 || u >= 0xE000) return Escape{false, static_cast<std::uint32_t>(u), 6};
      if (p + 12 > t.size() || t[p + 6] != '\\' || t[p + 7] != 'u') return std::nullopt;
      long lo = read_hex(t, p + 8, 4);
      if (lo < 0xDC00 || lo >= 0xE000) return std::nullopt;
      return Escape{false, static_cast<std::uint32_t>(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)), 12};
    }
    case '&': {
      auto semi = t.substr(p, 12).find(';');
      if (semi == kNone || semi < 3) return std::nullopt;
      std::string_view name = t.substr(p + 1, semi - 1);
      const std::size_t len = semi + 1;
      if (name[0] == '#') {
        const bool hex = name[1] == 'x' || name[1] == 'X';
        std::string_view digits = name.substr(hex ? 2 : 1);
        if (digits.empty() || digits.size() > 7) return std::nullopt;
        std::uint32_t v = 0;
        for (char c : digits) {
          int d = hex ? hex_digit(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
          if (d < 0) return std::nullopt;
          v = v * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
        }
        if (v > 0x10FFFF) return std::nullopt;
        return Escape{false, v, len};
      }
      static constexpr std::pair<std::string_view, char> kNamed[] = {
          {"quot", '"'}, {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"apos", '\''}};
      for (const auto& [n, c] : kNamed)
        if (name == n) return Escape{false, static_cast<unsigned char>(c), len};
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// Whether t[p...] is the cut-off start of an escaped form (or nothing at all):
// where a truncated capture may end.
bool truncated_tail(std::string_view t, std::size_t p) {
  if (p >= t.size()) return true;
  std::string_view r = t.substr(p);
  if (r.size() >= kLongestForm) return false;
  switch (r[0]) {
    case '%':
      return r.size() <= 2 && all_hex(r.substr(1));
    case '\\': {
      if (r.size() == 1) return true;
      if (r[1] != 'u') return false;
      if (r.size() <= 5) return all_hex(r.substr(2));
      long u = read_hex(r, 2, 4);  // a high surrogate waiting for its pair
      if (u < 0xD800 || u >= 0xDC00) return false;
      std::string_view rest = r.substr(6);
      return rest.empty() || (rest[0] == '\\' && (rest.size() < 2 || (rest[1] == 'u' && all_hex(rest.substr(2)))));
    }
    case '&':
      return r.size() <= 10 && std::all_of(r.begin() + 1, r.end(), [](char c) {
               return c == '#' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
             });
    default:
      return false;
  }
}

// Bytes to look for, with what the matcher needs to accept their forms.
struct Pattern {
  std::string bytes;
  std::vector<std::uint32_t> cp;     // code point of the UTF-8 sequence starting at each byte
  std::vector<std::uint8_t> cp_len;  // its length; 0 inside a sequence or in invalid UTF-8
  std::array<bool, 256> first{};     // text bytes that can start a form of bytes[0]
  // Base64 cores only: the encoded characters just outside the core hold
  // some key bits too when the key does not start (end) on a 6-bit boundary.
  bool base64 = false;
  bool partial_left = false;
  bool partial_right = false;
};

std::uint8_t utf8_length(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::uint8_t len = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = c & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return 0;
  return len;
}

Pattern make_pattern(std::string bytes) {
  Pattern p;
  p.bytes = std::move(bytes);
  p.cp.resize(p.bytes.size());
  p.cp_len.resize(p.bytes.size());
  for (std::size_t i = 0; i < p.bytes.size(); ++i) p.cp_len[i] = utf8_length(p.bytes, i, p.cp[i]);
  const auto b0 = static_cast<unsigned char>(p.bytes[0]);
  p.first[b0] = true;
  p.first['%'] = p.first['\\'] = p.first['&'] = true;
  if (b0 == ' ') p.first['+'] = true;
  return p;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16 |
                            static_cast<unsigned char>(bytes[i + 1]) << 8 | static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  return out;  // callers pad the input to whole groups
}

// The characters of base64(prefix + key + suffix) that depend on the key's
// bits alone, for a key starting `align` bytes into a 3-byte group, in the
// standard and the URL alphabet (one entry when they agree).
std::vector<Pattern> base64_cores(std::string_view key) {
  std::vector<Pattern> out;
  const std::size_t n = key.size();
  for (std::size_t align = 0; align < 3; ++align) {
    std::string group(align, '\0');
    group.append(key);
    group.append((3 - group.size() % 3) % 3, '\0');
    const std::string encoded = base64(group);
    const std::size_t lo = (8 * align + 5) / 6;   // the first character with no bits before the key
    const std::size_t hi = 8 * (align + n) / 6;   // one past the last with no bits after it
    if (hi <= lo || hi - lo < kMinBase64Core) continue;
    std::string core = encoded.substr(lo, hi - lo);
    std::string url = core;
    std::replace(url.begin(), url.end(), '+', '-');
    std::replace(url.begin(), url.end(), '/', '_');
    for (std::string* variant : {&core, &url}) {
      if (variant == &url && url == core) break;
      Pattern p = make_pattern(*variant);
      p.base64 = true;
      p.partial_left = (8 * align) % 6 != 0;
      p.partial_right = (8 * (align + n)) % 6 != 0;
      out.push_back(std::move(p));
    }
  }
  return out;
}

bool is_escape_start(char c) { return c == '%' || c == '\\' || c == '&'; }

// Text offsets reached after each key byte: a ring, since one step advances
// at most 4 key bytes (a 4-byte UTF-8 character in one escape).
constexpr std::size_t kRing = 5;
using Ring = std::array<std::vector<std::size_t>, kRing>;

// Every way key byte j (or the character starting there) is written at t[p].
template <class Emit>
void step(const Pattern& pat, std::size_t j, std::string_view t, std::size_t p, Emit&& emit) {
  const auto k = static_cast<unsigned char>(pat.bytes[j]);
  const auto c = static_cast<unsigned char>(t[p]);
  if (c == k) emit(1, 1);
  if (c == '+' && k == ' ') emit(1, 1);
  if (is_escape_start(static_cast<char>(c))) {
    if (auto e = decode_escape(t, p)) {
      if (e->is_byte) {
        if (e->value == k) emit(1, e->len);
      } else if (pat.cp_len[j] && pat.cp[j] == e->value) {
        emit(pat.cp_len[j], e->len);
      }
    }
  }
}

// Whether text starting with `c` (decoded as `escape`, when it is one) can
// start a form of the pattern's first byte: decided once per position.
bool may_start(const Pattern& pat, char c, const std::optional<Escape>& escape) {
  const char b0 = pat.bytes[0];
  if (c == b0 || (c == '+' && b0 == ' ')) return true;
  if (!escape) return false;
  if (escape->is_byte) return escape->value == static_cast<unsigned char>(b0);
  return pat.cp_len[0] && pat.cp[0] == escape->value;
}

// The end of the longest form of `pat` starting at t[i], t.size() for a
// truncated capture, or kNone. A breadth-first walk over (key byte, text
// offset) pairs: forms overlap ('\' is both a byte and an escape's start),
// and deduplicating offsets keeps that from growing exponentially.
std::size_t match(const Pattern& pat, std::string_view t, std::size_t i, Ring& ring) {
  const std::size_t n = pat.bytes.size();
  // Most candidates are a raw first byte followed by a raw wrong one: settle
  // those before the general walk, which is what keeps plain text fast.
  if (n > 1 && t[i] == pat.bytes[0] && !is_escape_start(t[i])) {
    if (i + 1 == t.size()) return kNone;
    const char d = t[i + 1];
    if (d != pat.bytes[1] && !is_escape_start(d) && !(d == '+' && pat.bytes[1] == ' ')) return kNone;
  }
  std::size_t best = kNone;
  ring[0].push_back(i);
  std::size_t pending = 1;
  for (std::size_t j = 0; pending > 0; ++j) {
    auto& here = ring[j % kRing];
    if (here.empty()) continue;
    pending -= here.size();
    if (here.size() > 1) {
      std::sort(here.begin(), here.end());
      here.erase(std::unique(here.begin(), here.end()), here.end());
    }
    for (std::size_t p : here) {
      if (j == n) {
        best = best == kNone ? p : std::max(best, p);
      } else if (j >= kTrailingMin && truncated_tail(t, p)) {
        best = t.size();
      } else if (p < t.size()) {
        step(pat, j, t, p, [&](std::size_t dj, std::size_t dp) {
          ring[(j + dj) % kRing].push_back(p + dp);
          ++pending;
        });
      }
    }
    here.clear();
  }
  return best;
}

// The start of the base64 character written just before t[s], or s.
std::size_t base64_char_before(std::string_view t, std::size_t s) {
  if (s == 0) return s;
  if (s >= 6 && t[s - 6] == '\\' && t[s - 5] == 'u') {
    long v = read_hex(t, s - 4, 4);
    if (v >= 0 && is_base64_char(static_cast<std::uint32_t>(v))) return s - 6;
  }
  if (s >= 3 && t[s - 3] == '%') {
    long v = read_hex(t, s - 2, 2);
    if (v >= 0 && is_base64_char(static_cast<std::uint32_t>(v))) return s - 3;
  }
  if (t[s - 1] == ';') {
    auto amp = t.substr(0, s).find_last_of('&');
    if (amp != kNone && s - amp <= 10) {
      auto e = decode_escape(t, amp);
      if (e && amp + e->len == s && is_base64_char(e->value)) return amp;
    }
  }
  return is_base64_char(static_cast<unsigned char>(t[s - 1])) ? s - 1 : s;
}

// Characters of the base64 character written at t[e], or 0.
std::size_t base64_char_at(std::string_view t, std::size_t e) {
  if (e >= t.size()) return 0;
  if (auto x = decode_escape(t, e)) return is_base64_char(x->value) ? x->len : 0;
  return is_base64_char(static_cast<unsigned char>(t[e])) ? 1 : 0;
}

// Takes in the partial characters around a base64 core, and padding after it.
void widen_base64(const Pattern& pat, std::string_view t, std::size_t& s, std::size_t& e) {
  if (pat.partial_left) s = base64_char_before(t, s);
  if (!pat.partial_right || e >= t.size()) return;
  const std::size_t partial = base64_char_at(t, e);
  if (partial == 0) return;
  e += partial;
  std::size_t q = e;
  for (int pads = 0; pads < 2 && q < t.size(); ++pads) {
    if (t[q] == '=') q += 1;
    else if (t.substr(q, 3) == "%3D" || t.substr(q, 3) == "%3d") q += 3;
    else break;
  }
  // Padding ends an encoded string; '=' before more base64 is something else.
  if (q == t.size() || !is_base64_char(static_cast<unsigned char>(t[q]))) e = q;
}

// Lengths of backslash runs, remembered between calls: hits come in text
// order, so one long run is walked once, not once per hit inside it.
class BackslashRuns {
 public:
  explicit BackslashRuns(std::string_view t) : t_(t) {}

  // Backslashes immediately before t[pos].
  std::size_t before(std::size_t pos) {
    std::size_t q = pos;
    while (q > 0 && t_[q - 1] == '\\') {
      if (q == known_end_) {  // the rest of this run was walked before
        q = known_start_;
        break;
      }
      --q;
    }
    known_start_ = q;
    known_end_ = pos;
    return pos - q;
  }

 private:
  std::string_view t_;
  std::size_t known_start_ = 0, known_end_ = kNone;  // t_[known_start_, known_end_) is one run's start
};

// Widens [s, e) so that it neither starts on a character a backslash escapes
// nor ends on an escaping backslash: redacted JSON stays JSON.
void keep_escapes_whole(std::string_view t, BackslashRuns& runs, std::size_t& s, std::size_t& e) {
  if (runs.before(s) % 2 == 1) --s;
  if (e < t.size() && runs.before(e) % 2 == 1) e += t[e] == 'u' && read_hex(t, e + 1, 4) >= 0 ? 5 : 1;
}

}  // namespace

bool key_is_short(std::string_view key) { return key.size() < kMinRedactableKey; }

struct Redactor::Impl {
  std::string placeholder;
  std::vector<Pattern> patterns;  // the key, then its base64 cores
  std::array<bool, 256> first{};  // bytes that can start any of them, or the placeholder
};

Redactor::Redactor(std::string_view key, std::string_view placeholder) {
  if (key.empty()) return;
  auto im = std::make_shared<Impl>();
  im->placeholder = std::string(placeholder);
  im->patterns.push_back(make_pattern(std::string(key)));
  for (auto& p : base64_cores(key)) im->patterns.push_back(std::move(p));
  for (const auto& p : im->patterns)
    for (std::size_t c = 0; c < 256; ++c) im->first[c] = im->first[c] || p.first[c];
  if (!placeholder.empty()) im->first[static_cast<unsigned char>(placeholder[0])] = true;
  impl_ = std::move(im);
}

std::string Redactor::redact(std::string_view t) const {
  if (!impl_) return std::string(t);
  const Impl& im = *impl_;
  Ring ring;
  BackslashRuns runs(t);
  std::vector<std::pair<std::size_t, std::size_t>> hits;  // [start, end), ascending, disjoint
  for (std::size_t i = 0; i < t.size();) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (!im.first[c]) {
      ++i;
      continue;
    }
    std::size_t s = kNone, e = 0;
    std::optional<Escape> escape;
    if (is_escape_start(t[i])) escape = decode_escape(t, i);
    for (const auto& pat : im.patterns) {
      if (!pat.first[c] || !may_start(pat, t[i], escape)) continue;
      std::size_t end = match(pat, t, i, ring);
      if (end == kNone) continue;
      std::size_t ps = i;
      if (pat.base64) widen_base64(pat, t, ps, end);
      if (end > e) s = ps, e = end;
    }
    if (s == kNone) {
      // A placeholder already there stays whole (redacting twice changes nothing).
      const auto& ph = im.placeholder;
      i += !ph.empty() && t[i] == ph[0] && t.compare(i, ph.size(), ph) == 0 ? ph.size() : 1;
      continue;
    }
    keep_escapes_whole(t, runs, s, e);
    if (!hits.empty() && s < hits.back().second) {
      hits.back().first = std::min(hits.back().first, s);
      hits.back().second = std::max(hits.back().second, e);
    } else {
      hits.emplace_back(s, e);
    }
    i = e;
  }
  if (hits.empty()) return std::string(t);
  std::string out;
  out.reserve(t.size());
  std::size_t pos = 0;
  for (const auto& [s, e] : hits) {
    out.append(t.substr(pos, s - pos)).append(im.placeholder);
    pos = e;
  }
  out.append(t.substr(pos));
  return out;
}

std::string Redactor::excerpt(std::string_view text, std::size_t max) const {
  return shorten(redact(text), max, impl_ ? std::string_view(impl_->placeholder) : kKeyPlaceholder);
}

std::string redact(std::string_view text, std::string_view key, std::string_view placeholder) {
  if (key.empty()) return std::string(text);
  return Redactor(key, placeholder).redact(text);
}

std::string shorten(std::string_view redacted, std::size_t max, std::string_view placeholder) {
  if (redacted.size() <= max) return std::string(redacted);
  std::size_t cut = max;
  if (!placeholder.empty()) {
    // The only occurrence that can straddle the cut starts in the window before it.
    const std::size_t from = cut >= placeholder.size() ? cut - placeholder.size() + 1 : 0;
    const std::size_t hit = redacted.substr(from, cut - from + placeholder.size() - 1).find(placeholder);
    if (hit != kNone && from + hit < cut) cut = from + hit;
  }
  while (cut > 0 && (static_cast<unsigned char>(redacted[cut]) & 0xC0) == 0x80) --cut;
  return std::string(redacted.substr(0, cut));
}

}  // namespace crh::core
