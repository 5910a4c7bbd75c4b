// The reference service's own SIP message reader and response writer (RFC
// 3261 §7, §20). It shares no code with the harness's SIP reader in core/: a
// bug in one cannot hide the same bug in the other.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crh::reference {

inline constexpr std::size_t kSipMessageLimit = 64 * 1024;  // bytes; beyond it a message is dropped

struct SipHeader {
  std::string name;   // the full name in canonical case ("Via", "Call-ID"), compact forms expanded
  std::string value;  // trimmed; folded lines joined with one space
};

struct SipMessage {
  bool is_request = true;
  std::string method;       // requests: "INVITE"
  std::string uri;          // requests: the Request-URI
  unsigned status = 0;      // responses
  std::string reason;       // responses
  std::vector<SipHeader> headers;  // in order
  std::string body;

  // The first value of header `name` (any case, compact form accepted), if present.
  std::optional<std::string_view> header(std::string_view name) const;
  // Every value of `name`, in order; comma-separated values split (Via, Record-Route).
  std::vector<std::string_view> all(std::string_view name) const;
  std::size_t count(std::string_view name) const;
};

enum class SipParseStatus {
  complete,    // `message` and `consumed` are set
  incomplete,  // a stream needs more bytes
  invalid,     // not SIP, or framing that cannot be trusted
  too_large,   // over kSipMessageLimit
};

struct SipParse {
  SipParseStatus status = SipParseStatus::invalid;
  SipMessage message;
  std::size_t consumed = 0;  // bytes of `data` the message used (streams: leading CRLF keep-alives too)
};

// Reads one message from the front of `data`. A datagram (`stream` false) is
// one whole message: Content-Length, when present, may not exceed the bytes
// left. On a stream Content-Length frames the body (absent means 0, §18.3).
SipParse parse_sip(std::string_view data, bool stream);

// The pieces of a name-addr or addr-spec ("Bob" <sip:+1555@host;user=phone>;tag=x).
struct SipAddress {
  std::string uri;     // what was inside <...>, or the bare URI
  std::string params;  // header parameters after the URI (";tag=x"), as sent
};
std::optional<SipAddress> parse_address(std::string_view value);

// The user part of a sip:, sips: or tel: URI, percent-decoded; empty when the URI has none.
std::string uri_user(std::string_view uri);

// The value of parameter `name` in ";a=1;name=2" (case-insensitive name);
// empty string for a parameter without value; nothing when absent.
std::optional<std::string> param(std::string_view params, std::string_view name);

struct SipCseq {
  unsigned long number = 0;
  std::string method;
};
std::optional<SipCseq> parse_cseq(std::string_view value);

// A Via value split into its sent-by host, port (0 when absent) and parameters.
struct SipVia {
  std::string transport;  // "UDP", "TCP"
  std::string host;       // without brackets for IPv6
  unsigned port = 0;
  std::string params;     // ";branch=z9hG4bK...;rport"
};
std::optional<SipVia> parse_via(std::string_view value);

// Whether the mandatory request headers (§8.1.1) are present and readable:
// an empty string when they are, else what is wrong (for the 400's reason).
std::string request_defect(const SipMessage& request);

// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b);

}  // namespace crh::reference
