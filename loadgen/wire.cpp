// Request bytes and the incremental response reader of the load path.
#include "loadgen/wire.hpp"

#include <algorithm>
#include <charconv>

namespace crh::loadgen {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

bool icontains(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i)
    if (iequals(haystack.substr(i, needle.size()), needle)) return true;
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string serialize_request(const core::HttpRequest& request, const core::BaseUrl& base,
                              std::string_view api_key) {
  std::string out;
  out.reserve(128 + request.target.size() + request.body.size());
  out += request.method;
  out += ' ';
  out += base.path_prefix;
  out += request.target.empty() ? "/" : request.target;
  out += " HTTP/1.1\r\nHost: ";
  out += base.host_header();
  out += "\r\nUser-Agent: crh-load\r\n";
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

void ResponseReader::reset(bool keep_body) {
  state_ = State::need_more;
  phase_ = Phase::head;
  keep_body_ = keep_body;
  line_.clear();
  error_.clear();
  interim_ = 0;
  interim_bytes_ = 0;
  trailer_bytes_ = 0;
  remaining_ = 0;
  body_.clear();
  body_size_ = 0;
  start_head();
}

// What one head (interim or final) sets; an interim answer's headers say
// nothing about the final one.
void ResponseReader::start_head() {
  head_.clear();
  status_ = 0;
  keep_alive_ = true;
  chunked_ = false;
  content_length_.reset();
  retry_after_.reset();
}

void ResponseReader::fail(std::string why) {
  state_ = State::error;
  error_ = std::move(why);
  keep_alive_ = false;
}

void ResponseReader::take_body(std::string_view bytes) {
  body_size_ += bytes.size();
  if (body_size_ > limits_.body_bytes) return fail("body beyond " + std::to_string(limits_.body_bytes) + " bytes");
  if (keep_body_) body_.append(bytes);
}

std::size_t ResponseReader::feed(std::string_view bytes) {
  std::size_t used = 0;
  while (state_ == State::need_more && used < bytes.size()) {
    std::string_view rest = bytes.substr(used);
    switch (phase_) {
      case Phase::head: used += feed_head(rest); break;
      case Phase::body_length: {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, rest.size()));
        take_body(rest.substr(0, n));
        used += n;
        remaining_ -= n;
        if (remaining_ == 0 && state_ == State::need_more) state_ = State::done;
        break;
      }
      case Phase::body_close:
        take_body(rest);
        used += rest.size();
        break;
      case Phase::chunk_size:
      case Phase::chunk_data_end:
      case Phase::trailers: {
        auto eol = rest.find('\n');
        std::size_t n = eol == std::string_view::npos ? rest.size() : eol + 1;
        if (line_.size() + n > 4096) {
          fail("chunk line beyond 4096 bytes");
          return used;
        }
        if (phase_ == Phase::trailers && (trailer_bytes_ += n) > limits_.header_bytes) {
          fail("trailers beyond " + std::to_string(limits_.header_bytes) + " bytes");
          return used;
        }
        line_.append(rest.substr(0, n));
        used += n;
        if (eol == std::string_view::npos) break;
        std::string_view line = line_;
        if (line.size() >= 2 && line[line.size() - 2] == '\r') line.remove_suffix(2);
        else line.remove_suffix(1);
        if (phase_ == Phase::chunk_data_end) {
          if (!line.empty()) {
            fail("chunk data not followed by CRLF");
            return used;
          }
          phase_ = Phase::chunk_size;
        } else if (phase_ == Phase::trailers) {
          if (line.empty()) state_ = State::done;
        } else {
          std::uint64_t size = 0;
          auto digits = trim(line.substr(0, line.find(';')));
          auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
          if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty())
            {
            fail("bad chunk size line");
            return used;
          }
          if (size > limits_.body_bytes) {
            fail("chunk beyond the body limit");
            return used;
          }
          remaining_ = size;
          phase_ = size == 0 ? Phase::trailers : Phase::chunk_data;
        }
        line_.clear();
        break;
      }
      case Phase::chunk_data: {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, rest.size()));
        take_body(rest.substr(0, n));
        used += n;
        remaining_ -= n;
        if (remaining_ == 0) phase_ = Phase::chunk_data_end;
        break;
      }
    }
  }
  return used;
}

std::size_t ResponseReader::feed_head(std::string_view bytes) {
  // Find the blank line that ends the head without copying what follows it
  // (a pipelined answer, or the next of many 1xx answers): it may begin in
  // the last three bytes already held.
  constexpr std::string_view kEnd = "\r\n\r\n";
  const std::size_t before = head_.size();
  std::size_t take = std::string_view::npos;
  if (before > 0 && !bytes.empty()) {
    char joined[6];
    const std::size_t tail = std::min<std::size_t>(before, 3), lead = std::min<std::size_t>(bytes.size(), 3);
    std::copy_n(head_.data() + before - tail, tail, joined);
    std::copy_n(bytes.data(), lead, joined + tail);
    const auto at = std::string_view(joined, tail + lead).find(kEnd);
    if (at != std::string_view::npos) take = at + kEnd.size() - tail;
  }
  if (take == std::string_view::npos) {
    const auto at = bytes.find(kEnd);
    if (at != std::string_view::npos) take = at + kEnd.size();
  }
  const bool complete = take != std::string_view::npos;
  if (!complete) take = bytes.size();
  // Every head of this response, interim ones included, shares one budget.
  if (before + take > limits_.header_bytes - interim_bytes_) {
    const std::string limit = std::to_string(limits_.header_bytes) + " bytes";
    fail(interim_ ? "interim 1xx answers and the final answer's head beyond " + limit
                  : "status line and headers beyond " + limit);
    return take;
  }
  head_.append(bytes.substr(0, take));
  if (!complete) return take;
  if (!finish_head()) return take;
  if (status_ == 101) {
    fail("101 Switching Protocols, although no upgrade was asked for");
    return take;
  }
  if (status_ >= 100 && status_ < 200) {  // an interim answer: the final one follows
    if (++interim_ > limits_.interim_answers) {
      fail("more than " + std::to_string(limits_.interim_answers) + " interim 1xx answers before the final answer");
      return take;
    }
    interim_bytes_ += head_.size();
    start_head();
    return take;
  }
  if (status_ == 204 || status_ == 304) state_ = State::done;
  else if (chunked_) phase_ = Phase::chunk_size;
  else if (content_length_) {
    remaining_ = *content_length_;
    if (remaining_ > limits_.body_bytes) fail("Content-Length beyond the body limit");
    else if (remaining_ == 0) state_ = State::done;
    else phase_ = Phase::body_length;
  } else {
    phase_ = Phase::body_close;
    keep_alive_ = false;
  }
  return take;
}

bool ResponseReader::finish_head() {
  std::string_view head = head_;
  auto eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  // HTTP/1.x SSS reason
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ')
    {
      fail("not an HTTP/1.x status line");
      return false;
    }
  if (status_line[7] == '0') keep_alive_ = false;
  unsigned code = 0;
  auto digits = status_line.substr(9, 3);
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + 3, code);
  if (ec != std::errc{} || p != digits.data() + 3 || code < 100 || code > 999 ||
      (status_line.size() > 12 && status_line[12] != ' '))
    {
      fail("bad status code in the status line");
      return false;
    }
  status_ = code;
  std::size_t pos = eol + 2;
  while (pos < head.size()) {
    auto next = head.find("\r\n", pos);
    std::string_view line = head.substr(pos, next - pos);
    pos = next + 2;
    if (line.empty()) break;
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      fail("header line without a name");
      return false;
    }
    std::string_view name = line.substr(0, colon);
    if (name.find_first_of(" \t") != std::string_view::npos) {
      fail("space in a header name");
      return false;
    }
    if (!header(name, trim(line.substr(colon + 1)))) return false;
  }
  return true;
}

bool ResponseReader::header(std::string_view name, std::string_view value) {
  if (iequals(name, "content-length")) {
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc{} || p != value.data() + value.size() || value.empty())
      {
      fail("bad Content-Length");
      return false;
    }
    if (content_length_ && *content_length_ != n) {
      fail("conflicting Content-Length headers");
      return false;
    }
    content_length_ = n;
  } else if (iequals(name, "transfer-encoding")) {
    chunked_ = icontains(value, "chunked");
    if (!chunked_) {
      fail("a transfer coding other than chunked");
      return false;
    }
  } else if (iequals(name, "connection")) {
    if (icontains(value, "close")) keep_alive_ = false;
    else if (icontains(value, "keep-alive")) keep_alive_ = true;
  } else if (iequals(name, "retry-after")) {
    double seconds = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc{} && p == value.data() + value.size() && seconds >= 0) retry_after_ = seconds;
  }
  return true;
}

void ResponseReader::eof() {
  if (state_ != State::need_more) return;
  if (phase_ == Phase::body_close) state_ = State::done;
  else fail(phase_ == Phase::head && head_.empty() ? "connection closed before an answer"
                                                   : "connection closed in the middle of the answer");
}

}  // namespace crh::loadgen
