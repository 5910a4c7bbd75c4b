// The run's key and the redaction of outside text.
#include "core/outside.hpp"

#include <boost/json.hpp>
#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "core/redact.hpp"

namespace crh::core {
namespace {

// The keys of the run (one, or two when two deployments are compared), each
// with whether it is too short to look for in the harness's own words.
struct Key {
  std::string key;
  std::shared_ptr<const Redactor> redactor;
  bool is_short = true;
};

struct RunKeys {
  std::mutex mutex;
  std::vector<Key> keys;
};

RunKeys& run_keys() {
  static RunKeys k;
  return k;
}

std::vector<Key> current() {
  auto& k = run_keys();
  std::lock_guard lock(k.mutex);
  return k.keys;
}

std::string redact_all(const std::vector<Key>& keys, std::string_view text, bool long_only) {
  std::string out(text);
  for (const auto& k : keys)
    if (!long_only || !k.is_short) out = k.redactor->redact(out);
  return out;
}

}  // namespace

void register_run_key(std::string_view key) {
  auto& k = run_keys();
  std::lock_guard lock(k.mutex);
  k.keys.clear();
  if (!key.empty()) k.keys.push_back({std::string(key), std::make_shared<const Redactor>(key), key_is_short(key)});
}

void add_run_key(std::string_view key) {
  if (key.empty()) return;
  auto& k = run_keys();
  std::lock_guard lock(k.mutex);
  for (const auto& known : k.keys)
    if (known.key == key) return;
  k.keys.push_back({std::string(key), std::make_shared<const Redactor>(key), key_is_short(key)});
  // Longest first: a key that holds another is hidden whole before the shorter one cuts into it.
  std::stable_sort(k.keys.begin(), k.keys.end(), [](const Key& a, const Key& b) { return a.key.size() > b.key.size(); });
}

std::string from_target(std::string_view text) { return redact_all(current(), text, false); }

std::string from_target(std::string_view text, std::size_t max) {
  return shorten(redact_all(current(), text, false), max);  // redaction first: a cut never leaves a key's prefix
}

std::string answer_text(const Exchange& x) {
  if (!x.response) return x.error_detail.empty() ? std::string(to_string(x.error)) : x.error_detail;
  std::string body = from_target(x.response->body, 200);  // redacted, then cut
  for (auto& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return "HTTP " + std::to_string(x.response->status) + " (body: " + body + ")";
}

std::string composed(std::string_view text) { return redact_all(current(), text, true); }

void redact_values(boost::json::value& document) {
  const auto keys = current();
  if (std::none_of(keys.begin(), keys.end(), [](const Key& k) { return !k.is_short; })) return;
  auto walk = [&keys](auto& self, boost::json::value& v) -> void {
    if (auto* s = v.if_string()) {
      if (auto redacted = redact_all(keys, *s, true); redacted != std::string_view(*s)) *s = redacted;
    } else if (auto* a = v.if_array()) {
      for (auto& e : *a) self(self, e);
    } else if (auto* o = v.if_object()) {
      for (auto& field : *o) self(self, field.value());
    }
  };
  walk(walk, document);
}

}  // namespace crh::core
