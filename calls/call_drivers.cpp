#include "calls/call_drivers.hpp"

#include <algorithm>
#include <cctype>

#include <boost/json.hpp>

#include "calls/alias_numbers.hpp"
#include "calls/http_call_driver.hpp"
#include "core/api.hpp"
#include "core/outside.hpp"

namespace crh::calls {
namespace {

// Digits, at least five, after an optional '+': what a telephone number looks like.
bool number_like(std::string_view s) {
  if (s.starts_with('+')) s.remove_prefix(1);
  return s.size() >= 5 &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

// Over SIP a caller dials the alias's number, read from the list's field
// sip.number_field; an alias without it is dialled at its id (a target whose
// ids are the numbers, calls/alias_numbers.hpp). Objects with neither leave
// nothing to dial: said with the field that looks like the number.
std::optional<std::string> nothing_to_dial(const core::Target& target, const boost::json::value& alias_list) {
  const auto& names = target.dialect.fields;
  const auto& field = target.dialect.sip.number_field;
  std::string why;
  const auto found = core::api::find_list(alias_list, names.aliases_list, why);
  if (!found || found->items->empty()) return std::nullopt;
  for (const auto& item : *found->items) {
    if (!item.is_object() || item.get_object().contains(field)) return std::nullopt;
    if (auto id = core::api::alias_id(names, item); id && number_like(*id)) return std::nullopt;
  }
  const auto& first = found->items->front();
  std::string hint;
  for (const auto& [k, v] : first.get_object())
    if (v.is_string() && v.get_string().starts_with('+') && number_like(v.get_string())) {
      hint = " (field \"" + core::from_target(std::string(k), 40) + "\" holds \"" +
             core::from_target(std::string(v.get_string()), 40) + "\")";
      break;
    }
  return "GET " + target.base.to_string() + core::api::aliases_path(target.channel) + ": no alias shows field \"" +
         field +
         "\" (profile sip.number_field) and no alias id looks like a telephone number, so a SIP caller has no number "
         "to dial; the first alias has " +
         core::api::fields_text(first) +
         ": set sip.number_field in a profile (--profile) to the field holding the alias's number" + hint;
}

}  // namespace

std::optional<std::string> cannot_place_calls(const core::Target& target, const boost::json::value& alias_list) {
  if (target.calls.sip) return nothing_to_dial(target, alias_list);
  if (!target.dialect.call_hook.enabled)
    return "calls need the call hook (POST /channels/{channel}/alias-numbers/{alias}/calls), and the profile says the target has none (call_hook: null)";
  return std::nullopt;
}

CallResult placed_past_not_now(const std::function<CallResult()>& place,
                               const std::function<bool(int again, const std::string& retry_after)>& wait_out) {
  auto r = place();
  for (int again = 0;
       r.not_now && wait_out(again, r.exchange && r.exchange->answered() ? r.exchange->response->header("Retry-After") : "");
       ++again)
    r = place();
  return r;
}

std::string first_call_hint(const core::Target& target) {
  if (target.calls.sip)
    return "The race over SIP needs --sip-target to take calls to the alias's number (profile sip.number_field, "
           "sip.uri)";
  return "The race needs the call hook, POST /channels/{channel}/alias-numbers/{alias}/calls with caller (README: the call hook); a target whose hook differs says so with "
         "call_hook.method, .path and .parameter in a profile (--profile)";
}

std::unique_ptr<CallDriver> make_call_driver(const core::Target& target,
                                             const core::ExpectedStatuses& statuses, core::ClientConfig client,
                                             std::function<void(const core::Exchange&)> observe,
                                             std::function<void(const SipCallRecord&)> observe_sip) {
  const auto& choice = target.calls;
  if (!choice.sip) return std::make_unique<HttpCallDriver>(target, statuses, client, std::move(observe));
  SipDriverConfig config;
  config.target = choice.sip_target;
  config.timeout = client.timeout;
  config.t1 = choice.sip_t1;
  config.refusals = statuses.sip_refused;
  config.uri_template = target.dialect.sip.uri_template;
  auto numbers = std::make_shared<AliasNumbers>(target, client);
  std::string why;
  numbers->refresh(why);  // read once up front: a race must not wait for the list
  config.number_of = [numbers](const std::string& alias) { return (*numbers)(alias); };
  config.credentials = sip_credentials_from_env();
  config.observe = std::move(observe_sip);
  return std::make_unique<SipCallDriver>(std::move(config));
}

}  // namespace crh::calls
