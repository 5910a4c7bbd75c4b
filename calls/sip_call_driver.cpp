// The SIP call driver: credentials read, a finished call's outcome
// and evidence, and the CallDriver seam over the user-agent client.
#include "calls/sip_call_driver.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "calls/sip_agent.hpp"

namespace crh::calls {

std::optional<SipCredentials> sip_credentials_from_env() {
  const char* user = std::getenv("CRH_SIP_USER");
  const char* password = std::getenv("CRH_SIP_PASSWORD");
  if (!user || !*user || !password) return std::nullopt;
  return SipCredentials{user, password};
}

namespace sip {
namespace {

std::string seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

// What the status says beyond its code, for people reading the evidence.
std::string why_not(const Call& c, const SipDriverConfig& config, CallResult& r) {
  unsigned s = c.status;
  if (s >= 200 && s < 300) return {};
  if (std::find(config.refusals.begin(), config.refusals.end(), s) != config.refusals.end()) return {};
  if (s == 503 && !c.retry_after.empty())
    return "Retry-After " + c.retry_after + ": not now, and it may have bound the caller on the way";
  if (s >= 500 && s < 600) return r.failure = true, "a server error is never a contract answer";
  if (s == 404 || s == 484)
    return r.failure = true, "the alias's number " + c.number + " is not routable, yet the alias is tagged";
  if (s == 401 || s == 407) {
    if (!config.credentials)
      return "authentication asked (" + std::to_string(s) + ") and no CRH_SIP_USER/CRH_SIP_PASSWORD";
    if (!c.auth_error.empty()) return "authentication asked (" + std::to_string(s) + ") and not answerable: " + c.auth_error;
    return "authentication refused (" + std::to_string(s) + ") with CRH_SIP_USER's credentials";
  }
  if (s >= 300 && s < 400)
    return "a redirect" + (c.redirect_to.empty() ? std::string{} : " to " + c.redirect_to) +
           " is not followed: says nothing of the binding";
  if (s == 480 || s == 486 || s == 487) return "says nothing of the binding";
  return "not a contract answer (not in the profile's SIP refusals)";
}

}  // namespace

CallResult classify(const Call& c, const SipDriverConfig& config) {
  CallResult r;
  r.status = c.status;
  std::string after;
  for (auto p : c.provisional) after += (after.empty() ? " (after " : ", ") + std::to_string(p);
  if (!after.empty()) after += ")";
  std::string route = " to " + c.party.request_uri + " from " + c.caller + "; " + std::to_string(c.invites_sent) +
                      (c.invites_sent == 1 ? " INVITE sent" : " INVITEs sent");
  if (c.status == 0) {
    r.outcome = CallOutcome::unknown;
    if (!c.transport_error.empty()) r.evidence = c.transport_error + after + route;
    else if (c.settled) r.evidence = "no final answer before the driver settled" + after + route + "; CANCELled";
    else r.evidence = "no final answer within " + seconds(config.timeout) + " (Timer B)" + after + route;
  } else {
    bool refused = std::find(config.refusals.begin(), config.refusals.end(), c.status) != config.refusals.end();
    if (c.status < 300) r.outcome = CallOutcome::connected;
    else if (refused) r.outcome = CallOutcome::refused;
    else r.outcome = CallOutcome::unknown;
    r.not_now = !refused && c.status == 503 && !c.retry_after.empty();
    r.evidence = "SIP " + std::to_string(c.status) + (c.reason.empty() ? "" : " " + c.reason) + after + route;
    if (c.auth_tried) r.evidence += " (digest authentication answered)";
    if (auto why = why_not(c, config, r); !why.empty()) r.evidence += "; " + why;
  }
  if (c.from_elsewhere > 0)
    r.evidence += "; " + std::to_string(c.from_elsewhere) + " answer(s) from another address (" + c.elsewhere +
                  ") ignored";
  return r;
}

SipCallRecord record_of(const Call& c) {
  SipCallRecord r;
  r.call_id = c.party.call_id;
  r.alias = c.alias;
  r.number = c.number;
  r.caller = c.caller;
  r.status = c.status;
  r.provisional = c.provisional;
  r.invites_sent = c.invites_sent;
  r.sent = c.sent;
  r.final_at = c.final_at;
  return r;
}

}  // namespace sip

struct SipCallDriver::Agent : sip::UserAgentClient {
  using UserAgentClient::UserAgentClient;
};

namespace {

class SipArmedCall : public ArmedCall {
 public:
  SipArmedCall(sip::UserAgentClient& agent, std::shared_ptr<sip::Call> call) : agent_(agent), call_(std::move(call)) {}
  bool ready() const override { return call_->arm_error.empty(); }
  void fire() override { agent_.fire(call_); }
  CallResult result() override { return agent_.wait(call_); }
  void when_done(std::function<void()> done) override { agent_.when_done(call_, std::move(done)); }
  const std::shared_ptr<sip::Call>& call() const { return call_; }

 private:
  sip::UserAgentClient& agent_;
  std::shared_ptr<sip::Call> call_;
};

}  // namespace

SipCallDriver::SipCallDriver(SipDriverConfig config)
    : config_(std::move(config)), agent_(std::make_unique<Agent>(config_)) {}

SipCallDriver::~SipCallDriver() {
  settle();
  agent_.reset();
}

std::string SipCallDriver::describe() const {
  std::string host = config_.target.host.find(':') != std::string::npos ? "[" + config_.target.host + "]"
                                                                         : config_.target.host;
  std::string uri = config_.uri_template;
  for (auto [from, to] : {std::pair<std::string, std::string>{"{host}", host}, {"{port}", std::to_string(config_.target.port)}})
    for (auto at = uri.find(from); at != std::string::npos; at = uri.find(from, at + to.size())) uri.replace(at, from.size(), to);
  return "SIP INVITE " + uri + (config_.target.tcp ? " (tcp)" : " (udp)");
}

std::unique_ptr<ArmedCall> SipCallDriver::arm(const std::string& alias, const std::string& caller) {
  return std::make_unique<SipArmedCall>(*agent_, agent_->prepare(alias, caller));
}

std::string SipCallDriver::fire_together(std::span<ArmedCall* const> calls) {
  std::vector<std::shared_ptr<sip::Call>> sip_calls;
  for (ArmedCall* c : calls) sip_calls.push_back(static_cast<SipArmedCall*>(c)->call());  // armed by this driver
  return agent_->fire_all(sip_calls);
}

CallWire SipCallDriver::wire(const std::string&, const std::string&) const {
  throw std::logic_error("the SIP call driver has no stream wire: drive it with arm, fire and when_done");
}

CallOutcome SipCallDriver::outcome_of(unsigned status) const {
  if (status >= 200 && status < 300) return CallOutcome::connected;
  if (std::find(config_.refusals.begin(), config_.refusals.end(), status) != config_.refusals.end())
    return CallOutcome::refused;
  return CallOutcome::unknown;  // 503 is throttled only with Retry-After, which the status alone cannot show
}

void SipCallDriver::settle() {
  if (agent_) agent_->settle();
}

}  // namespace crh::calls
