// The shared envelope of result documents.
#include "results/envelope.hpp"

#include <boost/json.hpp>
#include <ctime>

#include "results/keys_envelope.hpp"

namespace crh::results {

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
                                    double duration_ms, const core::BaseUrl& base, std::string_view channel, bool embedded) {
  namespace k = keys;
  return boost::json::object{
      {k::envelope::schema, k::schema_name},
      {k::envelope::schema_version, kResultSchemaVersion},
      {k::envelope::kind, kind},
      {k::envelope::tool, boost::json::object{{k::tool::name, "crh"}, {k::tool::version, "0.1.0"}}},
      {k::envelope::started_at, iso8601(started)},
      {k::envelope::duration_ms, duration_ms},
      {k::envelope::target,
       boost::json::object{
           {k::target::base_url, base.to_string()}, {k::target::channel, channel}, {k::target::embedded, embedded}}},
  };
}

boost::json::object preflight_json(const core::PreflightStop& stop) {
  namespace p = keys::preflight;
  return {{p::request, stop.request}, {p::answered, stop.answered}, {p::answer, stop.answer}, {p::mistake, stop.mistake}};
}

Verdict preflight_verdict(const core::PreflightStop& stop) {
  return {stop.answered ? Status::untested : Status::unreachable, stop.line()};
}

boost::json::object verdict_json(const Verdict& verdict) {
  namespace v = keys::verdict;
  return {{v::status, to_string(verdict.status)}, {v::exit_code, verdict.exit_code()}, {v::reason, verdict.reason}};
}

}  // namespace crh::results
