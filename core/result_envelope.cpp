// The shared envelope of result documents.
#include "core/result_envelope.hpp"

#include <boost/json.hpp>
#include <ctime>

namespace crh::core {

std::string iso8601(std::chrono::system_clock::time_point t) {
  auto secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text) {
  std::tm tm{};
  const std::string copy(text);
  const char* end = strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

boost::json::object result_envelope(std::string_view kind, std::chrono::system_clock::time_point started,
                                    double duration_ms, const BaseUrl& base, std::string_view channel,
                                    bool embedded) {
  return boost::json::object{
      {"schema", "crh.result"},
      {"schema_version", kResultSchemaVersion},
      {"kind", kind},
      {"tool", boost::json::object{{"name", "crh"}, {"version", "0.1.0"}}},
      {"started_at", iso8601(started)},
      {"duration_ms", duration_ms},
      {"target", boost::json::object{{"base_url", base.to_string()}, {"channel", channel}, {"embedded", embedded}}},
  };
}

}  // namespace crh::core
