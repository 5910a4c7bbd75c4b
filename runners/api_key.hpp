// Where the API key comes from: CRH_API_KEY or --api-key-file, never a flag
// value (flag values show in ps). Values are never printed by the harness.
#pragma once

#include <optional>
#include <string>

namespace crh::runners {

// The key from `key_file` when given, else from the variable `env`, else
// nothing. Throws std::runtime_error (a configuration error) when the file
// cannot be read or a key is empty.
std::optional<std::string> configured_api_key(const std::string& key_file, const char* env = "CRH_API_KEY");

// A fresh random key (32 hex digits).
std::string random_api_key();

}  // namespace crh::runners
