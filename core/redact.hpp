// Keeping the API key out of everything the harness prints or writes: finds
// it in every form a target might echo it in and replaces it with a marker.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace crh::core {

// What the key is replaced with (also the name a curl reproducer expands).
inline constexpr std::string_view kKeyPlaceholder = "$CRH_API_KEY";

// Keys shorter than this also match ordinary text: redaction still hides
// them, but it will replace innocent words too, so warn the user once.
inline constexpr std::size_t kMinRedactableKey = 8;
bool key_is_short(std::string_view key);

// Replaces every occurrence of one key, in any of these forms and any mix of
// them within one occurrence (each key byte may take its own form):
//   * raw;
//   * JSON-escaped: \" \\ \/ \b \f \n \r \t, \uXXXX (either hex case;
//     surrogate pairs for characters beyond the BMP);
//   * percent-encoded, either hex case, any subset of bytes, '+' for space;
//   * HTML entities: &quot; &amp; &lt; &gt; &apos;, &#NN; and &#xHH;;
//   * base64 and base64url, padded or not, at any byte alignment inside a
//     longer encoded string (e.g. "Basic " + base64("user:" + key)): the
//     characters that carry key bits are replaced, partial ones included.
// A text that ENDS with at least 4 bytes of the key's start (in any of those
// forms) is taken as a truncated capture and that tail is replaced too.
// Escape sequences are never split, so redacted JSON stays valid JSON. Text
// without the key comes back byte for byte. Short keys (key_is_short) skip
// the base64 forms shorter than 4 characters: those would match everywhere.
//
// Build one per key and reuse it (construction encodes the key a dozen ways);
// `redact` and `excerpt` are const and safe to call from several threads.
class Redactor {
 public:
  explicit Redactor(std::string_view key, std::string_view placeholder = kKeyPlaceholder);

  // `text` with the key replaced wherever it appears.
  std::string redact(std::string_view text) const;

  // For messages: redact(text), then shorten(..., max). Redaction comes
  // first, so a key near the cut can never leave a prefix behind.
  std::string excerpt(std::string_view text, std::size_t max) const;

  bool empty() const { return impl_ == nullptr; }  // an empty key: nothing to redact

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// Redactor(key, placeholder).redact(text): the function every output path
// calls. An empty key returns `text` unchanged.
std::string redact(std::string_view text, std::string_view key,
                   std::string_view placeholder = kKeyPlaceholder);

// The start of an ALREADY REDACTED text, at most `max` bytes, cut neither
// inside `placeholder` nor inside a UTF-8 sequence (so it may be shorter).
// Returns `redacted` whole when it fits; adds no "..." marker: the caller
// knows the full size and says it its own way.
std::string shorten(std::string_view redacted, std::size_t max,
                    std::string_view placeholder = kKeyPlaceholder);

}  // namespace crh::core
