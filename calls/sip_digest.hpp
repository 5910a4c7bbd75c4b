// SIP digest authentication (RFC 3261 §22.4, RFC 2617 MD5): a challenge's
// parameters read and the Authorization/Proxy-Authorization value computed.
// Internal to the SIP driver; the tests' scripted peer checks it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace crh::calls::sip {

// MD5 as 32 lowercase hex digits.
std::string md5_hex(std::string_view bytes);

// The auth-params of a "Digest k=v, k="v"" value (names lowercased, quotes
// removed); nothing when the scheme is not Digest.
std::optional<std::map<std::string, std::string>> digest_params(std::string_view challenge);

struct DigestAnswer {
  std::string header_value;  // the credentials, to send; empty when `error` is set
  std::string error;         // why the challenge cannot be answered (never holds the password)
};

// The credentials answering `challenge` for a request of `method` to `uri`.
DigestAnswer answer_digest(std::string_view challenge, std::string_view method, std::string_view uri,
                           std::string_view user, std::string_view password, std::string_view cnonce);

}  // namespace crh::calls::sip
