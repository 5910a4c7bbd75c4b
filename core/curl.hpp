// Evidence people can rerun: a request as a curl command, with the API key
// shown as $CRH_API_KEY wherever it would appear. Includes core/redact.hpp,
// the redaction used on every text the harness prints or writes.
#pragma once

#include <string>
#include <string_view>

#include "core/base_url.hpp"
#include "core/http.hpp"
#include "core/redact.hpp"

namespace crh::core {

// One shell word that stands for `text`, with `secret` (if non-empty) written
// as a reference to $CRH_API_KEY so that the shell expands it.
std::string shell_word(std::string_view text, std::string_view secret = {});

// "curl -sS -i -X POST 'http://host:port/path' -H 'Apikey: '"$CRH_API_KEY" --data-binary '...'"
std::string to_curl(const HttpRequest& request, const BaseUrl& base, std::string_view api_key);

}  // namespace crh::core
