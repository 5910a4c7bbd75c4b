// Request bytes and the incremental HTTP/1 readers (see core/http1.hpp). The
// framing is shared; the start line and a few header rules are per direction.
#include "core/http1.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace crh::core::http1 {
namespace {

constexpr auto npos = std::string_view::npos;

// ASCII letters folded to lower case, every other byte as it is: one load a
// byte on the load path, and a CR never taken for the '-' of a header name.
constexpr auto kLower = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
  return t;
}();

char lower(char c) { return kLower[static_cast<unsigned char>(c)]; }

// `text` equals `lowercase` (a literal in lower case) but for the case of its letters.
bool is(std::string_view text, std::string_view lowercase) {
  return text.size() == lowercase.size() &&
         std::equal(text.begin(), text.end(), lowercase.begin(), [](char x, char y) { return lower(x) == y; });
}

bool icontains(std::string_view haystack, std::string_view lowercase) {
  if (lowercase.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + lowercase.size() <= haystack.size(); ++i)
    if (is(haystack.substr(i, lowercase.size()), lowercase)) return true;
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// tchar (RFC 9110 §5.6.2): what a method or a header name is made of.
bool is_token(std::string_view s) {
  static constexpr auto kTchar = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : std::string_view("!#$%&'*+-.^_`|~")) t[c] = true;
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = t[c - 0x20] = true;
    return t;
  }();
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return kTchar[static_cast<unsigned char>(c)]; });
}

// A bare CR or LF, a NUL or another control character (HTAB aside): a line
// break or a cut to another parser, so the request could mean two things.
bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t') || u == 0x7f;
  });
}

std::string bytes_text(std::size_t n) { return std::to_string(n) + " bytes"; }

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::string serialize_request(const HttpRequest& request, const BaseUrl& base, std::string_view api_key,
                              std::string_view user_agent) {
  std::string out;
  out.reserve(128 + request.target.size() + request.body.size());
  out += request.method;
  out += ' ';
  out += base.path_prefix;
  out += request.target.empty() ? "/" : request.target;
  out += " HTTP/1.1\r\nHost: ";
  out += base.host_header();
  out += "\r\n";
  if (!user_agent.empty()) {
    out += "User-Agent: ";
    out += user_agent;
    out += "\r\n";
  }
  if (!api_key.empty()) {
    out += "Apikey: ";
    out += api_key;
    out += "\r\n";
  }
  for (const auto& h : request.headers) out += h.name + ": " + h.value + "\r\n";
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT")
    out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n";
  out += "\r\n";
  out += request.body;
  return out;
}

// ---------------------------------------------------------------- framing, both directions

void MessageReader::start(bool keep_body, bool head_request, bool upgrade_asked) {
  state_ = State::need_more;
  phase_ = Phase::head;
  fault_ = Fault::none;
  keep_body_ = keep_body;
  head_request_ = head_request;
  upgrade_asked_ = upgrade_asked;
  line_.clear();
  error_.clear();
  interim_ = 0;
  earlier_head_bytes_ = 0;
  trailer_bytes_ = 0;
  remaining_ = 0;
  body_.clear();
  body_size_ = 0;
  trailers_.clear();
  start_head();
}

// What one head (interim or final) sets; an interim answer's headers say
// nothing about the final one.
void MessageReader::start_head() {
  head_.clear();
  status_ = 0;
  version_ = 0;
  method_.clear();
  target_.clear();
  keep_alive_ = true;
  chunked_ = false;
  transfer_coded_ = false;
  request_line_ended_ = false;
  content_length_.reset();
  retry_after_.reset();
  headers_.clear();
}

bool MessageReader::fail(Fault fault, std::string why) {
  state_ = State::error;
  fault_ = fault;
  error_ = std::move(why);
  keep_alive_ = false;
  return false;
}

void MessageReader::take_body(std::string_view bytes) {
  body_size_ += bytes.size();
  if (body_size_ > limits_.body_bytes) fail(Fault::body_too_large, "body beyond " + bytes_text(limits_.body_bytes));
  else if (keep_body_) body_.append(bytes);
}

// Flattened: the load path reads every answer through here, and the small
// helpers it calls per line and per chunk cost more as calls than as code.
[[gnu::flatten]] std::size_t MessageReader::feed(std::string_view bytes) {
  std::size_t used = 0;
  while (state_ == State::need_more && used < bytes.size()) {
    const std::string_view rest = bytes.substr(used);
    switch (phase_) {
      case Phase::head:
        used += kind_ == Kind::request && head_.empty() && (rest[0] == '\r' || rest[0] == '\n') ? skip_blank_lines(rest)
                                                                                                : feed_head(rest);
        break;
      case Phase::body_close:
        take_body(rest);
        used += rest.size();
        break;
      case Phase::body_length:
      case Phase::chunk_data: used += feed_counted(rest); break;
      case Phase::chunk_size:
      case Phase::chunk_data_end:
      case Phase::trailers: used += feed_line(rest); break;
    }
  }
  return used;
}

// Body bytes whose number is known: a Content-Length body or one chunk's data.
std::size_t MessageReader::feed_counted(std::string_view bytes) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size()));
  take_body(bytes.substr(0, n));
  remaining_ -= n;
  if (remaining_ == 0) {
    if (phase_ == Phase::chunk_data) phase_ = Phase::chunk_data_end;
    else if (state_ == State::need_more) state_ = State::done;
  }
  return n;
}

// A chunk-size line, the CRLF after a chunk's data, or a trailer line.
std::size_t MessageReader::feed_line(std::string_view bytes) {
  const auto eol = bytes.find('\n');
  const std::size_t n = eol == npos ? bytes.size() : eol + 1;
  if (line_.size() + n > limits_.chunk_line_bytes) {
    fail(Fault::head_too_large, "chunk line beyond " + bytes_text(limits_.chunk_line_bytes));
    return 0;
  }
  if (phase_ == Phase::trailers && (trailer_bytes_ += n) > limits_.header_bytes) {
    fail(Fault::head_too_large, "trailers beyond " + bytes_text(limits_.header_bytes));
    return 0;
  }
  line_.append(bytes.substr(0, n));
  if (eol == npos) return n;
  std::string_view line = line_;
  line.remove_suffix(line.size() >= 2 && line[line.size() - 2] == '\r' ? 2 : 1);
  end_line(line);
  line_.clear();
  return n;
}

void MessageReader::end_line(std::string_view line) {
  if (phase_ == Phase::chunk_data_end) {
    if (!line.empty()) fail(Fault::malformed, "chunk data not followed by CRLF");
    else phase_ = Phase::chunk_size;
  } else if (phase_ == Phase::trailers) {
    if (line.empty()) state_ = State::done;
    else if (capture_) trailer_line(line);
  } else {
    chunk_size_line(line);
  }
}

void MessageReader::chunk_size_line(std::string_view line) {
  std::uint64_t size = 0;
  const auto digits = trim(line.substr(0, line.find(';')));
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
  if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty())
    fail(Fault::malformed, "bad chunk size line");
  else if (size > limits_.body_bytes) fail(Fault::body_too_large, "chunk beyond the body limit");
  else {
    remaining_ = size;
    phase_ = size == 0 ? Phase::trailers : Phase::chunk_data;
  }
}

// Trailers are kept only as captured headers; their lines are not checked,
// as no framing depends on them.
void MessageReader::trailer_line(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == npos || colon == 0) return;
  trailers_.push_back({std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1)))});
}

void MessageReader::eof() {
  if (state_ != State::need_more) return;
  if (phase_ == Phase::body_close) {
    state_ = State::done;
    return;
  }
  if (phase_ != Phase::head || !head_.empty())
    fail(Fault::closed, std::string("connection closed in the middle of the ") + noun());
  else if (kind_ == Kind::response) fail(Fault::closed, "connection closed before an answer");
  else fail(Fault::closed, "connection closed before a request");
}

// ---------------------------------------------------------------- the head

std::size_t MessageReader::feed_head(std::string_view bytes) {
  // Find the blank line that ends the head without copying what follows it
  // (a pipelined message, or the next of many 1xx answers): it may begin in
  // the last three bytes already held.
  constexpr std::string_view kEnd = "\r\n\r\n";
  const std::size_t before = head_.size();
  std::size_t take = npos;
  if (before > 0 && !bytes.empty()) {
    char joined[6];
    const std::size_t tail = std::min<std::size_t>(before, 3), lead = std::min<std::size_t>(bytes.size(), 3);
    std::copy_n(head_.data() + before - tail, tail, joined);
    std::copy_n(bytes.data(), lead, joined + tail);
    const auto at = std::string_view(joined, tail + lead).find(kEnd);
    if (at != npos) take = at + kEnd.size() - tail;
  }
  if (take == npos) {
    const auto at = bytes.find(kEnd);
    if (at != npos) take = at + kEnd.size();
  }
  const bool complete = take != npos;
  if (!complete) take = bytes.size();
  if (kind_ == Kind::request && !request_line_fits(bytes.substr(0, take))) return take;
  if (!head_fits(before + take)) return take;
  head_.append(bytes.substr(0, take));
  if (complete) after_head();
  return take;
}

// Every head of a response, interim ones included, shares one budget.
bool MessageReader::head_fits(std::size_t bytes) {
  if (bytes <= limits_.header_bytes - earlier_head_bytes_) return true;
  const std::string limit = bytes_text(limits_.header_bytes);
  if (kind_ == Kind::request) fail(Fault::head_too_large, "request line and headers beyond " + limit);
  else if (interim_) fail(Fault::head_too_large, "interim 1xx answers and the final answer's head beyond " + limit);
  else fail(Fault::head_too_large, "status line and headers beyond " + limit);
  return false;
}

// A request line has a cap of its own (a server answers 414), checked as it
// comes so that the same bytes fail the same way however they are cut.
bool MessageReader::request_line_fits(std::string_view taken) {
  if (request_line_ended_) return true;
  const auto lf = taken.find('\n');
  std::size_t length = head_.size() + (lf == npos ? taken.size() : lf);
  if (lf == npos) --length;  // its CR may have come already
  else if ((lf > 0 ? taken[lf - 1] : head_.back()) == '\r') --length;
  request_line_ended_ = lf != npos;
  if (length <= limits_.request_line_bytes) return true;
  return fail(Fault::head_too_large, "request line beyond " + bytes_text(limits_.request_line_bytes));
}

// Skipped before a request line (RFC 9112 §2.2): some clients send a CRLF
// after a body. They count against the head's budget all the same.
std::size_t MessageReader::skip_blank_lines(std::string_view bytes) {
  const std::size_t n = std::min(bytes.find_first_not_of("\r\n"), bytes.size());
  earlier_head_bytes_ += n;
  if (earlier_head_bytes_ > limits_.header_bytes)
    fail(Fault::head_too_large, "blank lines before the request line beyond " + bytes_text(limits_.header_bytes));
  return n;
}

void MessageReader::after_head() {
  if (!finish_head()) return;
  if (kind_ == Kind::request || status_ >= 200) return start_body();
  if (status_ == 101) {
    if (!upgrade_asked_) fail(Fault::unasked_upgrade, "101 Switching Protocols, although no upgrade was asked for");
    else state_ = State::done;  // the bytes after it are no longer HTTP
    keep_alive_ = false;
    return;
  }
  // An interim answer: the final one follows.
  if (++interim_ > limits_.interim_answers) {
    fail(Fault::too_many_interim,
         "more than " + std::to_string(limits_.interim_answers) + " interim 1xx answers before the final answer");
    return;
  }
  earlier_head_bytes_ += head_.size();
  start_head();
}

void MessageReader::start_body() {
  const bool bodiless =
      kind_ == Kind::response ? status_ == 204 || status_ == 304 || head_request_ : !chunked_ && !content_length_;
  if (bodiless) state_ = State::done;
  else if (chunked_) phase_ = Phase::chunk_size;
  else if (content_length_) {
    remaining_ = *content_length_;
    if (remaining_ > limits_.body_bytes) fail(Fault::body_too_large, "Content-Length beyond the body limit");
    else if (remaining_ == 0) state_ = State::done;
    else phase_ = Phase::body_length;
  } else {
    phase_ = Phase::body_close;
    keep_alive_ = false;
  }
}

bool MessageReader::finish_head() {
  const std::string_view head = head_;
  const auto eol = head.find("\r\n");
  if (!(kind_ == Kind::response ? status_line(head.substr(0, eol)) : request_line(head.substr(0, eol)))) return false;
  if (!fields(head.substr(eol + 2))) return false;
  if (kind_ == Kind::response || !transfer_coded_) return true;
  // A request's body must have one length that every parser agrees on
  // (RFC 9112 §6.1, §6.3): anything else is how requests are smuggled.
  if (content_length_) fail(Fault::malformed, "both Transfer-Encoding and Content-Length in a request");
  else if (!chunked_) fail(Fault::malformed, "a request whose final transfer coding is not chunked");
  return state_ != State::error;
}

// HTTP/1.x SSS reason
bool MessageReader::status_line(std::string_view line) {
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[8] != ' ')
    return fail(Fault::malformed, "not an HTTP/1.x status line");
  if (line[7] == '0') keep_alive_ = false;
  unsigned code = 0;
  const auto digits = line.substr(9, 3);
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + 3, code);
  if (ec != std::errc{} || p != digits.data() + 3 || code < 100 || code > 999 || (line.size() > 12 && line[12] != ' '))
    return fail(Fault::malformed, "bad status code in the status line");
  status_ = code;
  return true;
}

// method SP request-target SP HTTP/1.x (RFC 9112 §3), with single spaces.
bool MessageReader::request_line(std::string_view line) {
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == npos ? npos : line.find(' ', sp1 + 1);
  if (sp2 == npos) return fail(Fault::malformed, "not a request line (method, target and version)");
  const auto method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1), version = line.substr(sp2 + 1);
  if (!is_token(method)) return fail(Fault::malformed, "a request method that is not a token");
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f;
      }))
    return fail(Fault::malformed, "an empty request target or one with control characters");
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." || version[7] < '0' || version[7] > '9')
    return fail(Fault::malformed, "not an HTTP/1.x request line");
  method_.assign(method);
  target_.assign(target);
  version_ = 10 + static_cast<unsigned>(version[7] - '0');
  if (version_ == 10) keep_alive_ = false;
  return true;
}

// The header lines after the start line, up to the blank line that ends the head.
bool MessageReader::fields(std::string_view lines) {
  while (!lines.empty()) {
    const auto next = lines.find("\r\n");  // always found: the head ends with CRLF CRLF
    const std::string_view line = lines.substr(0, next);
    if (line.empty() || next == npos) break;
    lines.remove_prefix(next + 2);
    const auto colon = line.find(':');
    if (colon == npos || colon == 0) return fail(Fault::malformed, "header line without a name");
    const std::string_view name = line.substr(0, colon), value = trim(line.substr(colon + 1));
    // A response keeps the load path's lenient reading; a request must parse
    // the same way everywhere.
    if (kind_ == Kind::response && name.find_first_of(" \t") != npos)
      return fail(Fault::malformed, "space in a header name");
    if (kind_ == Kind::request && !is_token(name)) return fail(Fault::malformed, "a header name that is not a token");
    if (kind_ == Kind::request && has_control(value))
      return fail(Fault::malformed, "a control character in a header value");
    if (!header(name, value)) return false;
  }
  return true;
}

bool MessageReader::header(std::string_view name, std::string_view value) {
  if (capture_) headers_.push_back({std::string(name), std::string(value)});
  if (is(name, "content-length")) return content_length(value);
  if (is(name, "transfer-encoding")) return transfer_coding(value);
  if (is(name, "connection")) {
    if (icontains(value, "close")) keep_alive_ = false;
    else if (icontains(value, "keep-alive")) keep_alive_ = true;
  } else if (is(name, "retry-after")) {
    double seconds = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc{} && p == value.data() + value.size() && seconds >= 0) retry_after_ = seconds;
  }
  return true;
}

bool MessageReader::content_length(std::string_view value) {
  std::uint64_t n = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || p != value.data() + value.size() || value.empty())
    return fail(Fault::malformed, "bad Content-Length");
  if (content_length_ && *content_length_ != n) return fail(Fault::malformed, "conflicting Content-Length headers");
  content_length_ = n;
  return true;
}

bool MessageReader::transfer_coding(std::string_view value) {
  if (kind_ == Kind::response) {  // lenient, as the load path always was
    chunked_ = icontains(value, "chunked");
    if (!chunked_) fail(Fault::malformed, "a transfer coding other than chunked");
    return chunked_;
  }
  // In a request, chunked comes once and last, over every Transfer-Encoding
  // header (RFC 9112 §6.1); finish_head() checks that it came at all.
  transfer_coded_ = true;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const auto coding = trim(value.substr(0, comma));
    value = comma == npos ? std::string_view() : value.substr(comma + 1);
    if (coding.empty()) continue;
    if (chunked_) return fail(Fault::malformed, "a transfer coding after chunked in a request");
    chunked_ = is(coding, "chunked");
  }
  return true;
}

}  // namespace crh::core::http1
