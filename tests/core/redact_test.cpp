// Key redaction: the key must vanish in every form a target might echo it
// in (raw, JSON, percent, HTML, base64, mixes, truncated), and text without
// it must come back untouched.
#include "core/redact.hpp"
#include "core/outside.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cctype>
#include <string>

namespace crh::core {
namespace {

// 20 bytes, with a character for each escaping rule: / + " \ .
const std::string kAwkward = "SeCrEt/Pro+be\"Key\\12";
const std::string kPlain = "SeCrEtProbeKey123456";
constexpr std::string_view kPh = kKeyPlaceholder;

std::string hex2(unsigned char c, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  return {digits[c >> 4], digits[c & 15]};
}

// The key as a JSON serializer writes it, escaping '/' too (PHP does).
std::string json_escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '/') out += '\\';
    out += c;
  }
  return out;
}

std::string json_unicode(std::string_view s, bool upper) {
  std::string out;
  for (unsigned char c : s) out += "\\u00" + hex2(c, upper);
  return out;
}

// `all`: every byte; otherwise only what a form encoder must encode.
std::string percent(std::string_view s, bool upper, bool all) {
  std::string out;
  for (unsigned char c : s) {
    const bool plain = std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
    if (c == ' ' && !all) out += '+';
    else if (plain && !all) out += static_cast<char>(c);
    else out += "%" + hex2(c, upper);
  }
  return out;
}

std::string base64(std::string_view s, bool url, bool pad) {
  const char* a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                      : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(s[i]) << 16 | static_cast<unsigned char>(s[i + 1]) << 8 |
                 static_cast<unsigned char>(s[i + 2]);
    for (int sh = 18; sh >= 0; sh -= 6) out += a[(v >> sh) & 63];
  }
  if (std::size_t rest = s.size() - i) {
    unsigned v = static_cast<unsigned char>(s[i]) << 16 | (rest == 2 ? static_cast<unsigned char>(s[i + 1]) << 8 : 0);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    if (rest == 2) out += a[(v >> 6) & 63];
    if (pad) out.append(3 - rest, '=');
  }
  return out;
}

std::string in_json(std::string_view encoded) { return "{\"echo_key\": \"" + std::string(encoded) + "\", \"n\": 1}"; }
std::string expected_json() { return in_json(kPh); }

TEST(Redact, FindsTheKeyRawAndJsonEscaped) {
  for (const auto& key : {kAwkward, kPlain}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(redact(in_json(key), key), expected_json());
    EXPECT_EQ(redact(in_json(json_escaped(key)), key), expected_json());
    EXPECT_EQ(redact(in_json(json_unicode(key, false)), key), expected_json());
    EXPECT_EQ(redact(in_json(json_unicode(key, true)), key), expected_json());
    EXPECT_EQ(redact(in_json(json_escaped(key)) + in_json(key), key), expected_json() + expected_json());
  }
  // Control characters in their short escapes.
  EXPECT_EQ(redact("[\"key\\twith\\nlines\\r\\b\\f\"]", "key\twith\nlines\r\b\f"), "[\"" + std::string(kPh) + "\"]");
}

TEST(Redact, FindsTheKeyPercentEncoded) {
  for (const auto& key : {kAwkward, kPlain, std::string("Se Cr/Et+Key?&=#%12")}) {
    SCOPED_TRACE(key);
    for (bool upper : {false, true})
      for (bool all : {false, true})
        EXPECT_EQ(redact("GET /echo?key=" + percent(key, upper, all) + "&x=1", key),
                  "GET /echo?key=" + std::string(kPh) + "&x=1")
            << percent(key, upper, all);
  }
}

TEST(Redact, FindsTheKeyAsHtmlEntities) {
  EXPECT_EQ(redact("<td>SeCrEt&#x2F;Pro+be&quot;Key\\12</td>", kAwkward), "<td>" + std::string(kPh) + "</td>");
  EXPECT_EQ(redact("<td>&#83;eCrEt&#47;Pro&#43;be&#34;Key&#X5c;12</td>", kAwkward),
            "<td>" + std::string(kPh) + "</td>");
  EXPECT_EQ(redact("a&amp;b&lt;c&gt;d&apos;e", "a&b<c>d'e"), kPh);
}

TEST(Redact, FindsAKeyWhoseBytesTakeDifferentForms) {
  // Each byte of one occurrence in a form of its own.
  const std::string mixed = "S%65\\u0043r&#69;t\\/Pro%2Bbe\\\"Key%5c12";
  EXPECT_EQ(redact("echo " + mixed + " end", kAwkward), "echo " + std::string(kPh) + " end");
  EXPECT_EQ(redact("echo SeCrEt%2fPro+be&quot;Key\\u005c12", kAwkward), "echo " + std::string(kPh));
}

TEST(Redact, FindsNonAsciiKeysInUnicodeEscapes) {
  const std::string key = "Cl\xc3\xa9-\xf0\x9f\x98\x80-Key-1234";  // "Clé-😀-Key-1234"
  EXPECT_EQ(redact("\"Cl\\u00e9-\\ud83d\\ude00-Key-1234\"", key), "\"" + std::string(kPh) + "\"");
  EXPECT_EQ(redact("\"Cl\\u00E9-\\uD83D\\uDE00-Key-1234\"", key), "\"" + std::string(kPh) + "\"");
  EXPECT_EQ(redact("\"" + key + "\"", key), "\"" + std::string(kPh) + "\"");
  EXPECT_EQ(redact("Cl%C3%A9-%F0%9F%98%80-Key-1234", key), kPh);
  EXPECT_EQ(redact("Cl&#233;-&#x1F600;-Key-1234", key), kPh);
}

// For base64(prefix + key + suffix): what must remain is exactly the
// characters made of prefix bits alone and of suffix bits alone.
struct Kept {
  std::string left, right;
  std::string with(std::string_view middle) const { return left + std::string(middle) + right; }
};

Kept kept_base64(const std::string& encoded, std::size_t prefix, std::size_t key, bool suffix) {
  const std::size_t keep_left = 8 * prefix / 6;
  const std::size_t keep_right = (8 * (prefix + key) + 5) / 6;
  std::string tail = encoded.substr(std::min(keep_right, encoded.size()));
  if (!suffix) tail.clear();  // only padding is left, and it goes too
  return {encoded.substr(0, keep_left), tail};
}

TEST(Redact, FindsTheKeyInBase64AtEveryAlignment) {
  for (const auto& key : {kAwkward, kPlain})
    for (const std::string prefix : {"", "u", "us", "user:", "Apikey: "})
      for (const std::string suffix : {"", "\n", "!", "ok", "tail of it"})
        for (bool url : {false, true})
          for (bool pad : {false, true}) {
            const std::string encoded = base64(prefix + key + suffix, url, pad);
            SCOPED_TRACE("base64(\"" + prefix + "\" + key + \"" + suffix + "\") = " + encoded);
            const Kept kept = kept_base64(encoded, prefix.size(), key.size(), !suffix.empty());
            EXPECT_EQ(redact("Authorization: Basic " + encoded + "\r\n", key),
                      "Authorization: Basic " + kept.with(kPh) + "\r\n");
            EXPECT_EQ(redact(encoded, key), kept.with(kPh));
          }
}

TEST(Redact, FindsBase64InJsonWithEscapedSlashes) {
  // base64 of these bytes holds '/' in the middle of the key's characters.
  const std::string key = "\xff\xff\xff-key-\xfe\xfe\xfe";
  for (const std::string prefix : {"", "a", "ab"}) {
    const std::string encoded = base64(prefix + key + "z", false, true);
    ASSERT_NE(encoded.find('/'), std::string::npos);
    const Kept kept = kept_base64(encoded, prefix.size(), key.size(), true);
    EXPECT_EQ(redact(in_json(json_escaped(encoded)), key),
              in_json(json_escaped(kept.left) + std::string(kPh) + json_escaped(kept.right)))
        << encoded;
    EXPECT_EQ(redact("auth=" + percent(encoded, true, false), key),
              "auth=" + percent(kept.left, true, false) + std::string(kPh) + percent(kept.right, true, false))
        << encoded;
  }
}

TEST(Redact, HidesATruncatedCaptureAtTheEnd) {
  const std::string head = "{\"echo_key\": \"";
  for (std::size_t n = 4; n < kAwkward.size(); ++n)
    EXPECT_EQ(redact(head + kAwkward.substr(0, n), kAwkward), head + std::string(kPh)) << n;
  EXPECT_EQ(redact(head + "SeC", kAwkward), head + "SeC") << "3 bytes also start ordinary words";
  EXPECT_EQ(redact(head + "SeCrEt%2", kAwkward), head + std::string(kPh)) << "cut inside %2F";
  EXPECT_EQ(redact(head + "SeCrEt\\u00", kAwkward), head + std::string(kPh)) << "cut inside \\u002F";
  EXPECT_EQ(redact(head + json_escaped(kAwkward).substr(0, 15), kAwkward), head + std::string(kPh));
  const std::string encoded = base64("user:" + kPlain, false, true);
  EXPECT_EQ(redact("Basic " + encoded.substr(0, 14), kPlain), "Basic " + encoded.substr(0, 6) + std::string(kPh));
  // Not at the end: a prefix in the middle of text is just text.
  EXPECT_EQ(redact("SeCrEt/Pro and more", kAwkward), "SeCrEt/Pro and more");
}

TEST(Redact, ShortenNeverCutsThroughThePlaceholder) {
  const std::string text = "echo: " + kAwkward + " and then some more text";
  const std::string redacted = redact(text, kAwkward);
  ASSERT_EQ(redacted, "echo: " + std::string(kPh) + " and then some more text");
  for (std::size_t max = 6; max < 6 + kPh.size(); ++max) EXPECT_EQ(shorten(redacted, max), "echo: ") << max;
  EXPECT_EQ(shorten(redacted, 6 + kPh.size()), "echo: " + std::string(kPh));
  EXPECT_EQ(shorten(redacted, 1000), redacted);
  EXPECT_EQ(shorten("caf\xc3\xa9", 4), "caf") << "nor through a UTF-8 character";
  // The Redactor's excerpt redacts first: cutting the raw text at 12 would
  // have printed "SeCrEt".
  Redactor redactor(kAwkward);
  EXPECT_EQ(redactor.excerpt(text, 12), "echo: ");
  EXPECT_EQ(redactor.excerpt(text, 20), "echo: " + std::string(kPh) + " a");
}

TEST(Redact, OneCharacterKeyReplacesRawOccurrences) {
  EXPECT_TRUE(key_is_short("k"));
  EXPECT_TRUE(key_is_short("1234567"));
  EXPECT_FALSE(key_is_short("12345678"));
  EXPECT_EQ(redact("kayak knows", "k"), "$CRH_API_KEYaya$CRH_API_KEY $CRH_API_KEYnows");
  EXPECT_EQ(redact("%6b \\u006B", "k"), "$CRH_API_KEY $CRH_API_KEY");
  EXPECT_EQ(redact("a2 aw== YQ", "k"), "a2 aw== YQ") << "base64 cores of a short key would match everywhere";
  EXPECT_EQ(redact("", "k"), "");
  EXPECT_EQ(redact("k", "k"), kPh);
}

TEST(Redact, TextWithoutTheKeyComesBackByteForByte) {
  constexpr char kBinary[] = "binary \0\x01\xff\xfe\xc3 end";
  const std::string texts[] = {
      "",
      "{\"agents\": [{\"id\": \"101\", \"name\": \"Ann \\\"A\\\" \\u00e9\\/\", \"state\": \"available\"}]}",
      "a=1&b=%20%2F%zz%4&c=+&d=&amp;&#65;&#x;&bogus;&#99999999;",
      "trailing escapes \\ \\u12 %4 & &#",
      std::string(kBinary, sizeof kBinary - 1),
      "Basic " + base64("user:other-key-entirely", false, true),
      "SeCrEt/Pr0+be\"Key\\12 differs in one byte",
      "ends with three key bytes: SeC",
      "$CRH_API_KEY already redacted",
  };
  for (const auto& t : texts) {
    EXPECT_EQ(redact(t, kAwkward), t);
    EXPECT_EQ(redact(t, kPlain), t);
  }
  EXPECT_EQ(redact("abc", ""), "abc");
  EXPECT_TRUE(Redactor("").empty());
}

TEST(Redact, RedactingTwiceChangesNothing) {
  const std::string once = redact("x " + kAwkward + " " + base64("u:" + kAwkward, false, true), kAwkward);
  EXPECT_EQ(redact(once, kAwkward), once);
  // A key that occurs inside the placeholder leaves the placeholder alone.
  EXPECT_EQ(redact("KEY and $CRH_API_KEY", "KEY"), "$CRH_API_KEY and $CRH_API_KEY");
}

TEST(Redact, RedactedJsonStaysValidJson) {
  const std::string key = "SeCrEtProbeKey\\";  // ends with a backslash
  const std::string docs[] = {
      "{\"a\": \"SeCrEtProbeKey\\\\\"}",            // the key, escaped
      "{\"a\": \"SeCrEtProbeKey\\\"more\"}",        // not the key: SeCrEtProbeKey"more
      "{\"a\": \"\\\\u0053eCrEtProbeKey\\\\ x\"}",  // a backslash, then the key with an escaped-looking start
      "{\"a\": \"x\\\\SeCrEtProbeKey\\\\\"}",
  };
  for (const auto& doc : docs) {
    ASSERT_NO_THROW(boost::json::parse(doc)) << doc;
    const std::string out = redact(doc, key);
    EXPECT_NE(out.find(kPh), std::string::npos) << out;
    boost::system::error_code ec;
    auto value = boost::json::parse(out, ec);
    EXPECT_FALSE(ec) << out;
    if (!ec) {
      EXPECT_EQ(value.at("a").as_string().find("SeCr"), boost::json::string::npos) << out;
    }
  }
}

// Two targets compared side by side, each with its key: both stay out of
// what either sent, in bodies, excerpts and documents, whichever holds the
// other; registering again leaves one key.
TEST(RunKeys, TwoKeysAddedStayOutOfEverythingAndRegisteringStartsAgain) {
  const std::string candidate = "candidate-key-0123456789", baseline = "candidate-key-0123456789-baseline";
  register_run_key(candidate);
  add_run_key(baseline);
  add_run_key(candidate);  // again: no second copy
  const std::string body = "echo " + baseline + " and " + candidate + " and %63andidate-key-0123456789";
  for (const std::string& shown : {from_target(body), from_target(body, 60), composed(body)}) {
    EXPECT_EQ(shown.find("candidate-key"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("baseline"), std::string::npos) << "the longer key cut by the shorter: " << shown;
  }
  boost::json::value doc = {{"message", body}};
  redact_values(doc);
  EXPECT_EQ(doc.at("message").as_string().find("key-0123"), std::string::npos) << doc;
  register_run_key(candidate);
  EXPECT_NE(from_target(baseline).find("-baseline"), std::string::npos) << "registering replaces the added keys";
  register_run_key("");
  EXPECT_EQ(from_target(candidate), candidate);
}

}  // namespace
}  // namespace crh::core
