// SIP messages (RFC 3261 §7) read and written, beside the HTTP/1 reader: the
// call driver's, the capture's and the pcap check's. A datagram is one
// message; a stream (TCP) is framed by Content-Length (mandatory there).
// Never throws on input; caps every size; compact header names (i, f, t, v,
// m, l, c, k, s) are read as their long forms.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crh::calls::sip {

struct Header {
  std::string name;  // as sent (compact forms kept as sent; find() knows both)
  std::string value;
};

struct Message {
  bool request = false;
  std::string method;  // requests: "INVITE", ...
  std::string uri;     // requests: the Request-URI
  unsigned status = 0; // responses: 100..699
  std::string reason;  // responses
  std::vector<Header> headers;
  std::string body;

  // The first header of that name (case-insensitive; a long name also finds
  // its compact form and the other way round); nothing when absent.
  const std::string* find(std::string_view name) const;
  // Every value of that name, in order; a comma-separated header (Via) is
  // split into its values.
  std::vector<std::string_view> all(std::string_view name) const;
  // The CSeq's method ("INVITE" from "1 INVITE"); empty when absent or bad.
  std::string_view cseq_method() const;
};

// The limits a reader keeps; a message beyond them is an error, not a crash.
struct Limits {
  std::size_t head = 16 * 1024;  // start line and headers
  std::size_t body = 64 * 1024;
  std::size_t headers = 100;
};

struct ParseResult {
  std::optional<Message> message;
  std::string error;  // why not, when there is no message
};

// One datagram (UDP): the whole message. A Content-Length longer than what
// came is an error; a shorter one truncates the body (RFC 3261 §18.3).
ParseResult parse_datagram(std::string_view bytes, const Limits& limits = {});

// A TCP stream's messages, fed as bytes arrive. Leading CRLFs (keep-alives)
// are skipped. After an error the stream cannot be resynchronised.
class StreamReader {
 public:
  explicit StreamReader(Limits limits = {}) : limits_(limits) {}
  void feed(std::string_view bytes);
  // The next whole message, if any; error() is set when the stream is broken.
  std::optional<Message> next();
  const std::string& error() const { return error_; }

 private:
  Limits limits_;
  std::string buffer_;
  std::string error_;
};

// The message's bytes: start line, headers as given (Content-Length set to
// the body's size, added when missing), blank line, body.
std::string serialize(const Message& message);

// The parts of a name-addr or addr-spec header value ("Alice"
// <sip:+1555@host;user=phone>;tag=abc): the URI, the URI's user part (before
// '@', percent-decoded), and a header parameter (tag, branch...).
std::string uri_of(std::string_view header_value);
std::string user_of(std::string_view uri);
std::optional<std::string> param_of(std::string_view header_value, std::string_view name);

}  // namespace crh::calls::sip
