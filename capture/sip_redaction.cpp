// sip_redaction: see sip_redaction.hpp. A small state machine over header
// lines: the header's name decides the scope, then parameter names, '=' and
// the value (quoted, with escapes, or a token) whose bytes are overwritten.
#include "capture/sip_redaction.hpp"

#include "capture/packet_headers.hpp"

namespace crh::capture::detail {
namespace {

constexpr std::size_t kFlows = 16384;   // flow directions followed; the oldest state is dropped past it
constexpr std::size_t kRecent = 16;     // segments whose start state is kept for retransmissions
constexpr std::size_t kLongestName = 32;

char lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c); }
bool token(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '!' || c == '%' || c == '*' || c == '+' || c == '`' || c == '\'' || c == '~';
}
bool space(unsigned char c) { return c == ' ' || c == '\t'; }

}  // namespace

void DigestScanner::start_unknown() {
  at_ = At::value;
  in_scope_ = true;
  param_ = Param::word;
  word_.clear();
  escaped_ = false;
  masking_started_ = false;
}

unsigned DigestScanner::scan(unsigned char* data, std::size_t n, bool& edited) {
  unsigned found = 0;
  auto mask = [&](unsigned char& c) {
    if (!masking_started_) {
      masking_started_ = true;
      ++found;
    }
    if (c != kFill) {
      c = kFill;
      edited = true;
    }
  };
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char& c = data[i];
    if (c == '\n' || c == '\r') {
      // A line ends (a value cannot span it: a folded line goes on below).
      if (c == '\n') at_ = At::line_start;
      if (param_ == Param::quoted || param_ == Param::token) param_ = Param::word;
      word_.clear();
      continue;
    }
    switch (at_) {
      case At::line_start:
        if (space(c)) {  // folded: the same header goes on
          at_ = in_scope_ ? At::value : At::other_line;
          continue;
        }
        in_scope_ = false;
        param_ = Param::word;
        name_.assign(1, lower(c));
        at_ = At::name;
        continue;
      case At::name:
        if (c == ':') {
          while (!name_.empty() && space(static_cast<unsigned char>(name_.back()))) name_.pop_back();
          in_scope_ = name_ == "authorization" || name_ == "proxy-authorization";
          at_ = in_scope_ ? At::value : At::other_line;
          param_ = Param::word;
          word_.clear();
        } else if (name_.size() < kLongestName) {
          name_ += lower(c);
        } else {
          at_ = At::other_line;
        }
        continue;
      case At::other_line: continue;
      case At::value: break;
    }
    switch (param_) {
      case Param::word:
        if (c == '"') {
          param_ = Param::skip_quoted;
        } else if (token(c)) {
          if (word_.size() < kLongestName) word_ += lower(c);
        } else if (c == '=') {
          param_ = word_ == "response" || word_ == "cnonce" ? Param::before_value : Param::word;
          word_.clear();
        } else if (space(c) && !word_.empty()) {
          param_ = Param::before_equals;
        } else {
          word_.clear();
        }
        break;
      case Param::before_equals:
        if (space(c)) break;
        if (c == '=') {
          param_ = word_ == "response" || word_ == "cnonce" ? Param::before_value : Param::word;
          word_.clear();
        } else {  // the word was a scheme ("Digest"): another begins
          param_ = c == '"' ? Param::skip_quoted : Param::word;
          word_.clear();
          if (token(c)) word_ += lower(c);
        }
        break;
      case Param::before_value:
        if (space(c)) break;
        masking_started_ = false;
        escaped_ = false;
        if (c == '"') {
          param_ = Param::quoted;
        } else if (c == ',' || c == ';') {
          param_ = Param::word;
        } else {
          param_ = Param::token;
          mask(c);
        }
        break;
      case Param::quoted:
        if (escaped_) {
          escaped_ = false;
          mask(c);
        } else if (c == '"') {
          param_ = Param::word;
        } else {
          if (c == '\\') escaped_ = true;
          mask(c);
        }
        break;
      case Param::token:
        if (c == ',' || c == ';' || space(c)) param_ = Param::word;
        else mask(c);
        break;
      case Param::skip_quoted:
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') param_ = Param::word;
        break;
    }
  }
  // A value that goes on in the next segment is a new piece there.
  masking_started_ = false;
  return found;
}

unsigned DigestRedactor::tcp(const FlowId& id, std::uint32_t seq, bool syn, bool closing, unsigned char* payload,
                             std::size_t n, bool& edited) {
  auto it = flows_.find(id);
  if (it == flows_.end()) {
    if (n == 0 && !syn) return 0;
    if (flows_.size() >= kFlows) flows_.erase(flows_.begin());
    it = flows_.try_emplace(id).first;
    Flow& f = it->second;
    f.next = syn ? seq + 1 : seq;
    if (!syn) f.scanner.start_unknown();  // joined mid-way
  }
  Flow& f = it->second;
  if (syn) {
    f = Flow{};
    f.next = seq + 1;
  }
  unsigned found = 0;
  if (n > 0) {
    if (seq == f.next) {
      f.recent.emplace_back(seq, f.scanner);
      if (f.recent.size() > kRecent) f.recent.pop_front();
      found = f.scanner.scan(payload, n, edited);
      f.next = seq + static_cast<std::uint32_t>(n);
    } else {
      // A retransmission read from the state where its first copy began;
      // anything else (a gap, overlap, reordering) from an unknown start.
      DigestScanner scratch;
      bool known = false;
      for (const auto& [at, state] : f.recent)
        if (at == seq) {
          scratch = state;
          known = true;
        }
      if (!known) scratch.start_unknown();
      found = scratch.scan(payload, n, edited);
      if (static_cast<std::int32_t>(seq - f.next) > 0) {
        // Ahead of what was seen: reading goes on after it, from an unknown start.
        f.scanner = scratch;
        f.next = seq + static_cast<std::uint32_t>(n);
      }
    }
  }
  if (closing) flows_.erase(it);
  return found;
}

unsigned DigestRedactor::udp(unsigned char* payload, std::size_t n, bool& edited) {
  DigestScanner scanner;
  return scanner.scan(payload, n, edited);
}

std::uint16_t udp_checksum_fold(bool ipv6, const unsigned char* src, const unsigned char* dst,
                                std::span<const unsigned char> udp) {
  std::uint64_t sum = 0;
  const std::size_t alen = ipv6 ? 16 : 4;
  for (std::size_t i = 0; i < alen; i += 2) sum += be16(src + i) + be16(dst + i);
  sum += 17;  // next header / protocol: UDP
  sum += ipv6 ? (udp.size() >> 16) + (udp.size() & 0xFFFF) : udp.size();
  std::size_t i = 0;
  for (; i + 1 < udp.size(); i += 2) sum += be16(&udp[i]);
  if (i < udp.size()) sum += std::uint32_t{udp[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

}  // namespace crh::capture::detail
