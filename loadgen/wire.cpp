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
  head_.clear();
  line_.clear();
  error_.clear();
  status_ = 0;
  keep_alive_ = true;
  chunked_ = false;
  content_length_.reset();
  remaining_ = 0;
  body_.clear();
  body_size_ = 0;
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
        line_.append(rest.substr(0, n));
        used += n;
        if (line_.size() > 4096) {
          fail("chunk line beyond 4096 bytes");
          return used;
        }
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
  const std::size_t before = head_.size();
  head_.append(bytes);
  auto end = head_.find("\r\n\r\n", before >= 3 ? before - 3 : 0);
  if (end == std::string::npos) {
    if (head_.size() > limits_.header_bytes)
      fail("status line and headers beyond " + std::to_string(limits_.header_bytes) + " bytes");
    return bytes.size();
  }
  const std::size_t head_len = end + 4;
  if (head_len > limits_.header_bytes)
    {
    fail("status line and headers beyond " + std::to_string(limits_.header_bytes) + " bytes");
    return bytes.size();
  }
  const std::size_t used = head_len - before;
  head_.resize(head_len);
  if (!finish_head()) return used;
  // An interim 1xx answer: the real one follows.
  if (status_ >= 100 && status_ < 200) {
    bool keep = keep_body_;
    reset(keep);
    return used;
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
  return used;
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
