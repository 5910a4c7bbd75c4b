// What a request sends, read as text (private to reference/): percent-escapes
// and UTF-8 checked, the parameters of the query and of a form or JSON body;
// and the peer's text made safe to quote in the service's messages.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "service.hpp"

namespace crh::reference {

// `s` with every byte that is not part of a UTF-8 character written as the
// text \xHH. Boost.JSON copies a string's bytes as they are, and a body that
// is not UTF-8 is not JSON (RFC 8259 §8.1); messages quote what the peer sent.
std::string as_utf8_text(std::string_view s);

// Percent-decodes `in`; in form encoding '+' stands for a space. Nothing on
// bad escapes or when the result is not UTF-8.
std::optional<std::string> percent_decode(std::string_view in, bool form);

std::string lower(std::string_view s);
std::string trim(std::string_view s);

using Params = std::map<std::string, std::string, std::less<>>;

// The `name=value` pairs of a query or form body added to `params`; an error
// message when they cannot be read.
std::optional<std::string> parse_form(std::string_view text, Params& params);

// Parameters from the query string and the body (form-encoded or JSON).
// Returns an error status and message when they cannot be read.
std::optional<std::pair<unsigned, std::string>> read_params(const Request& req, std::string_view query,
                                                            Params& params);

// `s` as a JSON string for a message, shortened to about 72 bytes. The cut
// falls between characters, never inside one.
std::string in_quotes(std::string_view s);

}  // namespace crh::reference
