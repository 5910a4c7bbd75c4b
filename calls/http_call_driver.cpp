// The HTTP call driver: a warm connection per armed call.
#include "calls/http_call_driver.hpp"

#include "core/api.hpp"
#include "core/http1.hpp"

namespace crh::calls {

CallResult CallDriver::place(const std::string& alias, const std::string& caller) {
  auto call = arm(alias, caller);
  call->fire();
  return call->result();
}

std::string CallDriver::fire_together(std::span<ArmedCall* const> calls) {
  for (ArmedCall* c : calls) c->fire();
  return "one fire() per call";
}

// Armed: the connection is open (a request went through on it) and the
// call's request is written but for its last byte; fire() writes that byte,
// result() reads the answer. Many armed calls fired in a row reach the target
// within microseconds of each other, whatever their connections cost.
class HttpCallDriver::Armed : public ArmedCall {
 public:
  Armed(const HttpCallDriver& driver, core::HttpRequest request)
      : driver_(driver), client_(driver.target_.base, driver.client_) {
    auto warm = core::api::request(driver.target_, core::api::Operation::list_agents);
    warm.headers.push_back({"Apikey", driver.target_.api_key});
    warm_ = client_.send(std::move(warm));
    if (warm_.answered()) client_.hold(std::move(request));
  }

  bool ready() const override { return warm_.answered(); }

  void fire() override {
    if (warm_.answered()) client_.release();
  }

  CallResult result() override {
    if (!warm_.answered()) {  // the connection could not be opened: the call never went out
      auto r = driver_.result_of(warm_);
      r.evidence = "could not open the caller's connection: " + r.evidence;
      r.exchange.reset();  // that exchange was not the call
      return r;
    }
    auto e = client_.answer();
    if (driver_.observe_) driver_.observe_(e);
    return driver_.result_of(std::move(e));
  }

 private:
  const HttpCallDriver& driver_;
  core::HttpClient client_;
  core::Exchange warm_;
};

HttpCallDriver::HttpCallDriver(core::Target target, core::ExpectedStatuses statuses, core::ClientConfig client,
                               std::function<void(const core::Exchange&)> observe)
    : target_(std::move(target)), statuses_(std::move(statuses)), client_(client), observe_(std::move(observe)) {}

std::string HttpCallDriver::describe() const {
  return target_.dialect.call_hook.method + " " + target_.dialect.call_hook.path;
}

core::HttpRequest HttpCallDriver::request(const std::string& alias, const std::string& caller) const {
  auto r = core::api::request(target_, core::api::Operation::call, {.id = alias, .caller = caller});
  r.headers.push_back({"Apikey", target_.api_key});
  return r;
}

std::unique_ptr<ArmedCall> HttpCallDriver::arm(const std::string& alias, const std::string& caller) {
  return std::make_unique<Armed>(*this, request(alias, caller));
}

CallWire HttpCallDriver::wire(const std::string& alias, const std::string& caller) const {
  auto r = core::api::request(target_, core::api::Operation::call, {.id = alias, .caller = caller});
  std::string bytes = core::http1::serialize_request(r, target_.base, target_.api_key);
  // The last byte is the release: until it comes the target cannot act on the call.
  CallWire w;
  w.release = bytes.substr(bytes.size() - 1);
  bytes.pop_back();
  w.armed = std::move(bytes);
  return w;
}

CallOutcome HttpCallDriver::outcome_of(unsigned status) const {
  if (status == 0 || status >= 500) return CallOutcome::unknown;
  if (core::throttled(status, statuses_)) return CallOutcome::throttled;
  return status == 200 ? CallOutcome::connected : CallOutcome::refused;
}

CallResult HttpCallDriver::result_of(core::Exchange e) const {
  CallResult r;
  r.status = e.answered() ? e.response->status : 0;
  r.outcome = outcome_of(r.status);
  r.not_now = r.outcome == CallOutcome::throttled;
  r.no_hook = no_call_hook(r.status);
  r.evidence = e.answered() ? "HTTP " + std::to_string(r.status)
                            : "no answer: " + std::string(to_string(e.error)) + " (" + e.error_detail + ")";
  r.exchange = std::move(e);
  return r;
}

}  // namespace crh::calls
