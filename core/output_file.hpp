// Writing what the harness produces: files appear whole or not at all, and
// text taken from a target is made valid UTF-8 before it goes into JSON/XML.
#pragma once

#include <string>
#include <string_view>

namespace crh::core {

// Writes `content` to a temporary file beside `path`, then renames it over
// `path`. Throws std::runtime_error naming the path and the reason.
void write_file_atomically(const std::string& path, std::string_view content);

// `text` with every byte that is not part of a valid UTF-8 sequence replaced
// by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace crh::core
