// HTTP/1.1 without Beast: request bytes built once, and incremental readers
// of responses and requests fed as bytes arrive. The readers never throw and,
// unless asked to keep headers, never allocate per message once warm, so a
// hostile or broken peer costs a counted error, not a crash. Used by the load
// path, the blocking client and (later) wire capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base_url.hpp"
#include "core/http.hpp"

namespace crh::core::http1 {

// The whole request as bytes: request line with the base URL's path prefix,
// Host, the User-Agent and the Apikey (each when non-empty), the request's
// own headers and a Content-Length. Keep-alive is HTTP/1.1's default, so no
// Connection header. The load path names itself; the blocking client sends
// the caller's headers only (user_agent empty).
std::string serialize_request(const HttpRequest& request, const BaseUrl& base, std::string_view api_key,
                              std::string_view user_agent = "crh-load");

// ASCII case-insensitive equality, as header names and tokens compare.
bool iequals(std::string_view a, std::string_view b);

struct ReaderLimits {
  std::size_t header_bytes = 64 * 1024;       // start lines and headers, interim 1xx answers included; trailers too
  std::size_t body_bytes = 4 * 1024 * 1024;   // decoded body
  std::size_t interim_answers = 32;           // 1xx answers skipped before the final one
  std::size_t chunk_line_bytes = 4096;        // one chunk-size or trailer line
  std::size_t request_line_bytes = 8 * 1024;  // method, target and version of a request
};

enum class State : std::uint8_t { need_more, done, error };

// Why a reader gave up, for callers that map it to their own error kinds.
enum class Fault : std::uint8_t {
  none,
  malformed,         // not HTTP/1.x: start line, header line, framing or chunk syntax
  head_too_large,    // start line and headers (or trailers, or one line) beyond their cap
  body_too_large,    // the decoded body beyond body_bytes
  too_many_interim,  // more interim 1xx answers than interim_answers
  unasked_upgrade,   // 101 Switching Protocols to a request without Upgrade
  closed,            // the peer closed the connection before the message ended
};

// Off on the load path: keeping headers costs an allocation per header.
enum class HeaderCapture : bool { off, on };

// The framing both directions share: the head found and bounded, then a body
// by Content-Length, by chunks (trailers bounded) or, for a response, until
// the connection closes. Bytes after one message are left unconsumed, for the
// next one. Used through ResponseReader and RequestReader.
class MessageReader {
 public:
  using State = http1::State;

  // Consumes a prefix of `bytes` and returns its length. Bytes after the end
  // of the message are left unconsumed (the caller keeps them).
  std::size_t feed(std::string_view bytes);

  // The peer closed the connection: ends a close-delimited body, else an error.
  void eof();

  State state() const { return state_; }
  const std::string& error() const { return error_; }  // why, when state() == error
  Fault fault() const { return fault_; }

  // Whether any byte of this message (or of an interim answer before it) has
  // come; blank lines before a request line are no part of it.
  bool started() const { return phase_ != Phase::head || !head_.empty() || interim_ > 0; }

  bool keep_alive() const { return keep_alive_; }
  const std::string& body() const { return body_; }  // empty unless asked for
  std::size_t body_size() const { return body_size_; }
  // With HeaderCapture::on: the final head's headers and the chunked trailers, in order.
  const std::vector<Header>& headers() const { return headers_; }
  const std::vector<Header>& trailers() const { return trailers_; }

 protected:
  enum class Kind : std::uint8_t { request, response };
  MessageReader(Kind kind, ReaderLimits limits, HeaderCapture capture)
      : limits_(limits), kind_(kind), capture_(capture == HeaderCapture::on) {}
  void start(bool keep_body, bool head_request, bool upgrade_asked);

  unsigned status_ = 0;
  unsigned version_ = 0;  // 10 * major + minor, requests only
  std::string method_, target_;
  std::size_t interim_ = 0;  // 1xx answers skipped in this response
  std::optional<double> retry_after_;

 private:
  enum class Phase : std::uint8_t { head, body_length, body_close, chunk_size, chunk_data, chunk_data_end, trailers };
  std::size_t feed_head(std::string_view bytes);
  std::size_t skip_blank_lines(std::string_view bytes);
  std::size_t feed_counted(std::string_view bytes);
  std::size_t feed_line(std::string_view bytes);
  void end_line(std::string_view line);
  void chunk_size_line(std::string_view line);
  void trailer_line(std::string_view line);
  void start_head();
  bool head_fits(std::size_t bytes);
  bool request_line_fits(std::string_view taken);
  void after_head();
  void start_body();
  bool finish_head();
  bool status_line(std::string_view line);
  bool request_line(std::string_view line);
  bool fields(std::string_view lines);
  bool header(std::string_view name, std::string_view value);
  bool content_length(std::string_view value);
  bool transfer_coding(std::string_view value);
  void take_body(std::string_view bytes);
  bool fail(Fault fault, std::string why);  // false, for `return fail(...)`
  const char* noun() const { return kind_ == Kind::response ? "answer" : "request"; }

  ReaderLimits limits_;
  Kind kind_;
  bool capture_;
  State state_ = State::need_more;
  Phase phase_ = Phase::head;
  Fault fault_ = Fault::none;
  bool keep_body_ = false;
  bool head_request_ = false;   // a response to HEAD: no body
  bool upgrade_asked_ = false;  // a response to a request with Upgrade: a 101 ends it
  bool request_line_ended_ = false;
  std::string head_;                    // bytes of the head so far (reused across messages)
  std::string line_;                    // a chunk-size or trailer line in progress
  std::size_t earlier_head_bytes_ = 0;  // interim heads (or blank lines before a request), counted against header_bytes
  std::size_t trailer_bytes_ = 0;       // counted against header_bytes too
  std::string error_;
  bool keep_alive_ = true;
  bool chunked_ = false;
  bool transfer_coded_ = false;  // a Transfer-Encoding header came
  std::optional<std::uint64_t> content_length_;
  std::uint64_t remaining_ = 0;
  std::string body_;
  std::size_t body_size_ = 0;
  std::vector<Header> headers_, trailers_;
};

// What the reader of an answer must know of the request it answers.
struct Asked {
  bool head = false;     // a HEAD request: the answer has no body, whatever its headers say
  bool upgrade = false;  // the request carried Upgrade: a 101 is the answer (the connection leaves HTTP)
};

// Reads one response. Keeps the body only when asked (the race needs the
// tag's alias id; `get` only needs the status). Interim 1xx answers (RFC 9110
// §15.2) are skipped, but a bounded number of them: a peer that only ever
// sends `100 Continue` must end in an error, not keep the reader busy. A 101
// is an error unless the request asked for an upgrade.
class ResponseReader : public MessageReader {
 public:
  explicit ResponseReader(ReaderLimits limits = {}, HeaderCapture capture = HeaderCapture::off)
      : MessageReader(Kind::response, limits, capture) {}

  // Starts a new response; `keep_body` says whether body() is wanted.
  void reset(bool keep_body, Asked asked = {}) { start(keep_body, asked.head, asked.upgrade); }

  unsigned status() const { return status_; }
  // Seconds from a Retry-After header given in seconds (dates are ignored).
  std::optional<double> retry_after() const { return retry_after_; }
  std::size_t interim_answers() const { return interim_; }  // 1xx answers skipped so far
};

// Reads one request, as a server or a capture sees it: stricter than the
// response reader where a lax reading would let a request be smuggled past
// another parser (RFC 9112 §6.1, §11.2). No body unless Content-Length or
// chunked says so; blank lines before the request line are skipped.
class RequestReader : public MessageReader {
 public:
  explicit RequestReader(ReaderLimits limits = {}, HeaderCapture capture = HeaderCapture::off)
      : MessageReader(Kind::request, limits, capture) {}

  void reset(bool keep_body = true) { start(keep_body, false, false); }

  const std::string& method() const { return method_; }
  const std::string& target() const { return target_; }
  unsigned version() const { return version_; }  // 10 for HTTP/1.0, 11 for HTTP/1.1
};

}  // namespace crh::core::http1
