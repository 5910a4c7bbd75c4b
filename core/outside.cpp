// The run's key and the redaction of outside text.
#include "core/outside.hpp"

#include <boost/json.hpp>
#include <memory>
#include <mutex>

#include "core/redact.hpp"

namespace crh::core {
namespace {

struct RunKey {
  std::mutex mutex;
  std::shared_ptr<const Redactor> redactor;
  bool is_short = true;
};

RunKey& run_key() {
  static RunKey k;
  return k;
}

std::pair<std::shared_ptr<const Redactor>, bool> current() {
  auto& k = run_key();
  std::lock_guard lock(k.mutex);
  return {k.redactor, k.is_short};
}

}  // namespace

void register_run_key(std::string_view key) {
  auto redactor = key.empty() ? nullptr : std::make_shared<const Redactor>(key);
  auto& k = run_key();
  std::lock_guard lock(k.mutex);
  k.redactor = std::move(redactor);
  k.is_short = key_is_short(key);
}

std::string from_target(std::string_view text) {
  auto [redactor, is_short] = current();
  return redactor ? redactor->redact(text) : std::string(text);
}

std::string from_target(std::string_view text, std::size_t max) {
  auto [redactor, is_short] = current();
  return redactor ? redactor->excerpt(text, max) : shorten(text, max);
}

std::string answer_text(const Exchange& x) {
  if (!x.response) return x.error_detail.empty() ? std::string(to_string(x.error)) : x.error_detail;
  std::string body = from_target(x.response->body, 200);  // redacted, then cut
  for (auto& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  return "HTTP " + std::to_string(x.response->status) + " (body: " + body + ")";
}

std::string composed(std::string_view text) {
  auto [redactor, is_short] = current();
  return redactor && !is_short ? redactor->redact(text) : std::string(text);
}

void redact_values(boost::json::value& document) {
  auto [redactor, is_short] = current();
  if (!redactor || is_short) return;
  auto walk = [r = redactor](auto& self, boost::json::value& v) -> void {
    if (auto* s = v.if_string()) {
      if (auto redacted = r->redact(*s); redacted != std::string_view(*s)) *s = redacted;
    } else if (auto* a = v.if_array()) {
      for (auto& e : *a) self(self, e);
    } else if (auto* o = v.if_object()) {
      for (auto& field : *o) self(self, field.value());
    }
  };
  walk(walk, document);
}

}  // namespace crh::core
