// What a reproducer script is made of besides its steps: POSIX sh words,
// the prelude of shell functions every script starts with, and the C++
// twins of the prelude's readers, which say at generation what the script
// will read from the failing run's answers (so both read alike).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crh::contracts {

// One POSIX sh word for `text`, `secret` (if non-empty) written as
// $CRH_API_KEY; with control bytes (core::shell_word's $'...' is bash's),
// the bytes as printf octal escapes in a command substitution, which drops
// trailing newlines: a text ending in one loses it.
std::string sh_word(std::string_view text, std::string_view secret = {});

// The shell functions: send, step, picked, tagged, keys, item, read_field,
// shown, media, excerpt, untag_made and the trap that calls it; @BASE@ and @UNTAG@ are the
// default base URL and the tag deletion's path (its alias "$a"), as words.
extern const char* const kShPrelude;

// What keys() prints for `body`: every quoted name before a colon, sorted,
// each followed by a space.
std::string field_names(const std::string& body);
// What item KEY ID prints: the text after the '{' that opens the object
// starting with that field, to the next '{', without the closing "},]" and
// spaces. Nothing when none.
std::optional<std::string> item_text(const std::string& body, const std::string& key, const std::string& id);
// What tagged N FIELD counts: the pieces between ',' and '{' that start with
// "FIELD": followed by a string (a tag).
int tagged_count(const std::string& body, const std::string& field);
// What media() prints for a Content-Type: the media type, lower case.
std::string media_type(std::string_view content_type);

}  // namespace crh::contracts
