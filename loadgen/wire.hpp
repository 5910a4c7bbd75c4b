// HTTP/1.1 on the load path without Beast: request bytes built once, and an
// incremental response reader that never allocates per header and never
// throws, so a hostile or broken target costs a counted error, not a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base_url.hpp"
#include "core/http.hpp"

namespace crh::loadgen {

// The whole request as bytes: request line with the base URL's path prefix,
// Host, the Apikey (when non-empty), the request's own headers and a
// Content-Length. Keep-alive is HTTP/1.1's default, so no Connection header.
std::string serialize_request(const core::HttpRequest& request, const core::BaseUrl& base,
                              std::string_view api_key);

struct ReaderLimits {
  std::size_t header_bytes = 64 * 1024;       // status lines and headers, interim 1xx answers included
  std::size_t body_bytes = 4 * 1024 * 1024;   // decoded body
  std::size_t interim_answers = 32;           // 1xx answers skipped before the final one
};

// Reads one response from bytes fed as they arrive. Keeps the body only when
// asked (the race needs the tag's alias id; `get` only needs the status).
// Interim 1xx answers (RFC 9110 §15.2) are skipped, but a bounded number of
// them: a peer that only ever sends `100 Continue` must end in an error, not
// keep the reader busy. 101 was never asked for and is an error too.
class ResponseReader {
 public:
  enum class State { need_more, done, error };

  explicit ResponseReader(ReaderLimits limits = {}) : limits_(limits) {}

  // Starts a new response; `keep_body` says whether body() is wanted.
  void reset(bool keep_body);

  // Consumes a prefix of `bytes` and returns its length. Bytes after the end
  // of the response are left unconsumed (the caller keeps them).
  std::size_t feed(std::string_view bytes);

  // The peer closed the connection: ends a close-delimited body, else an error.
  void eof();

  State state() const { return state_; }
  const std::string& error() const { return error_; }  // why, when state() == error

  unsigned status() const { return status_; }
  bool keep_alive() const { return keep_alive_; }
  const std::string& body() const { return body_; }
  std::size_t body_size() const { return body_size_; }
  // Seconds from a Retry-After header given in seconds (dates are ignored).
  std::optional<double> retry_after() const { return retry_after_; }

 private:
  enum class Phase { head, body_length, body_close, chunk_size, chunk_data, chunk_data_end, trailers };
  std::size_t feed_head(std::string_view bytes);
  void start_head();
  bool finish_head();
  bool header(std::string_view name, std::string_view value);
  void take_body(std::string_view bytes);
  void fail(std::string why);

  ReaderLimits limits_;
  State state_ = State::need_more;
  Phase phase_ = Phase::head;
  bool keep_body_ = false;
  std::string head_;  // bytes of the head so far (reused across responses)
  std::string line_;  // a chunk-size or trailer line in progress
  std::size_t interim_ = 0;         // 1xx answers skipped in this response
  std::size_t interim_bytes_ = 0;   // their heads' bytes, counted against header_bytes
  std::size_t trailer_bytes_ = 0;   // counted against header_bytes too
  std::string error_;
  unsigned status_ = 0;
  bool keep_alive_ = true;
  bool chunked_ = false;
  std::optional<std::uint64_t> content_length_;
  std::uint64_t remaining_ = 0;
  std::string body_;
  std::size_t body_size_ = 0;
  std::optional<double> retry_after_;
};

}  // namespace crh::loadgen
