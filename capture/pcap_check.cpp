// The offline contract check (`crh pcap check`): per-exchange rules counted as
// exchanges stream through; R1, the database read-back and the binding rules
// kept in bounded maps and judged in wire-time order once the times make the
// order certain (at the end, or when an alias's epochs are old enough to be
// freed). pcap_check_parts.hpp says which file holds which step; here, the
// checks, the judge's public face and a capture file judged.
#include "capture/pcap_check.hpp"

#include <cstdlib>
#include <memory>

#include "capture/pcap_check_parts.hpp"

namespace crh::capture {
using namespace judging;

namespace {

struct CheckSpec {
  const char* id;
  std::vector<std::string> rules;
  const char* summary;
};

const CheckSpec& spec(std::size_t i) {
  static const CheckSpec specs[kChecks] = {
      {"capture.auth.missing-key", {"R5", "A2"}, "a request without the Apikey header is never answered 200"},
      {"capture.no-5xx", {"X1"}, "no answer is a 5xx (a server error is never a contract answer)"},
      {"capture.json-bodies", {"C1"}, "every answer's body is JSON"},
      {"capture.error-shape", {"X1", "X2"}, "every error answer is a JSON object with a string msg"},
      {"capture.success-is-200", {"C2"}, "success is HTTP 200, never another 2xx"},
      {"capture.snooze-wake-shape", {"R1"}, "snooze and wake answer with the fields and types of the agent's GET"},
      {"capture.database-readback", {"E5", "E6"},
       "a database GET after a POST of the key on the same stream (no other write between) returns the value"},
      {"capture.tag-answer", {"E8"}, "a tag answer names the alias under the profile's id fields"},
      {"capture.binding", {"B1", "B2", "B3"},
       "per alias and tag epoch: the first caller is bound, others refused, the bound caller still connects"},
  };
  return specs[i];
}

}  // namespace

ContractJudge::Impl::Impl(CheckConfig c) : config(std::move(c)) {
  if (config.base_path) {
    base_known = true;
    base_path = *config.base_path;
  }
  // The key the user holds, wherever a target echoed it.
  if (const char* key = std::getenv("CRH_API_KEY"); key && *key) learn_key(key);
  for (std::size_t i = 0; i < kChecks; ++i) {
    JudgedCheck j;
    j.id = spec(i).id;
    j.rules = spec(i).rules;
    j.summary = spec(i).summary;
    checks.push_back(std::move(j));
  }
}

ContractJudge::ContractJudge(CheckConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
ContractJudge::~ContractJudge() = default;
void ContractJudge::add(WireExchange&& exchange) { impl_->add(std::move(exchange)); }
void ContractJudge::add_sip(WireSipMessage&& message) { impl_->sip.add(std::move(message)); }
CheckReport ContractJudge::finish(const ReadSummary& capture) { return impl_->finish(capture); }

CheckReport check_capture(const std::string& path, const CheckConfig& config) {
  ContractJudge judge(config);
  // Exchanges whose place on their stream a loss hid are judged too: the
  // judge needs only their order on the stream (`sequence`), never the place.
  ReadLimits limits;
  limits.keep_unplaced = true;
  const auto summary = read_capture(
      path, [&](WireExchange&& e) { judge.add(std::move(e)); }, limits,
      [&](WireSipMessage&& m) { judge.add_sip(std::move(m)); });
  auto report = judge.finish(summary);
  report.file = path;
  return report;
}

}  // namespace crh::capture
