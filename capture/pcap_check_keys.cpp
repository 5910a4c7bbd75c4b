// The keys a capture's requests carry (the Apikey header, apikey parameters of
// the query, a form or a JSON body), learned so that every text the check
// shows hides them, before any excerpt is cut.
#include <algorithm>
#include <boost/json.hpp>

#include "capture/packet_redaction.hpp"
#include "capture/pcap_check_parts.hpp"
#include "core/http1.hpp"
#include "oracle/shapes.hpp"

namespace crh::capture {
namespace json = boost::json;
namespace api = core::api;

namespace judging {
namespace {

bool is_apikey_name(std::string_view name) { return core::http1::iequals(name, "apikey"); }

bool mentions_apikey(std::string_view text) {
  static constexpr std::string_view kName = "apikey";
  if (text.size() < kName.size()) return false;
  for (std::size_t i = 0; i + kName.size() <= text.size(); ++i)
    if (core::http1::iequals(text.substr(i, kName.size()), kName)) return true;
  return false;
}

// The values of the parameters named apikey (any case) in a query string or
// a form body, percent-decoded ('+' a space).
void apikey_pairs(std::string_view pairs, std::vector<std::string>& out) {
  while (!pairs.empty()) {
    const auto amp = pairs.find('&');
    const std::string_view pair = pairs.substr(0, amp);
    pairs = amp == std::string_view::npos ? std::string_view{} : pairs.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const auto name = api::percent_decode(pair.substr(0, eq), true);
    if (!name || !is_apikey_name(*name)) continue;
    if (auto v = api::percent_decode(pair.substr(eq + 1), true); v && !v->empty()) out.push_back(*v);
    out.emplace_back(pair.substr(eq + 1));  // as sent, too
  }
}

}  // namespace

// A request header's value (the first of that name, case-insensitive), as
// core::HttpResponse::header gives a response's.
const std::string* request_header(const core::HttpRequest& r, std::string_view name) {
  for (const auto& h : r.headers)
    if (core::http1::iequals(h.name, name)) return &h.value;
  return nullptr;
}

// Every apikey a request carries outside its header: query, form or JSON body.
std::vector<std::string> apikey_parameters(const core::HttpRequest& r) {
  std::vector<std::string> out;
  if (const auto q = r.target.find('?'); q != std::string::npos && mentions_apikey(r.target))
    apikey_pairs(std::string_view(r.target).substr(q + 1), out);
  if (!r.body.empty() && mentions_apikey(r.body)) {
    boost::system::error_code ec;
    auto body = json::parse(r.body, ec);
    if (!ec && body.is_object()) {
      for (const auto& [name, v] : body.get_object())
        if (is_apikey_name(name) && v.is_string()) out.emplace_back(v.get_string());
    } else {
      apikey_pairs(r.body, out);
    }
  }
  std::erase_if(out, [](const std::string& v) { return v.empty(); });
  return out;
}

// The target with the value of every query parameter named apikey replaced,
// whatever key it holds: a target is never printed with one.
std::string mask_target(const std::string& target) {
  const auto q = target.find('?');
  if (q == std::string::npos || !mentions_apikey(std::string_view(target).substr(q))) return target;
  std::string out = target.substr(0, q + 1);
  std::string_view pairs = std::string_view(target).substr(q + 1);
  bool first = true;
  while (true) {
    const auto amp = pairs.find('&');
    const std::string_view pair = pairs.substr(0, amp);
    if (!first) out += '&';
    first = false;
    const auto eq = pair.find('=');
    const auto name = api::percent_decode(pair.substr(0, eq), true);
    if (eq != std::string_view::npos && name && is_apikey_name(*name)) {
      out.append(pair.substr(0, eq + 1));
      out.append(core::kKeyPlaceholder);
    } else {
      out.append(pair);
    }
    if (amp == std::string_view::npos) break;
    pairs = pairs.substr(amp + 1);
  }
  return out;
}

// A value crh's own capture wrote over (capture/packet_redaction: the key
// with 'x', another value with '*'): nothing to learn or redact.
bool redacted_value(std::string_view v) {
  const auto filled_with = [&](char f) { return std::all_of(v.begin(), v.end(), [f](char c) { return c == f; }); };
  return !v.empty() && (filled_with(detail::PacketRedactor::kFill) || filled_with(detail::PacketRedactor::kOtherFill));
}

}  // namespace judging

using namespace judging;

void ContractJudge::Impl::learn_key(const std::string& key) {
  if (key.empty() || redacted_value(key) || keys.count(key)) return;
  if (keys.size() >= kMaxKeys) {
    keys_overflow = true;
    return;
  }
  keys.insert(key);
  redactors.emplace_back(key);
  short_keys.push_back(core::key_is_short(key));
}

// Text from the capture (a body, a value, a target), fit to show: every
// key learned so far replaced. Always before an excerpt is cut.
std::string ContractJudge::Impl::redact(std::string_view text) const {
  std::string out(text);
  for (const auto& r : redactors) out = r.redact(out);
  return out;
}

// Text the check composed, which may quote the capture: redacted with the
// keys that match only themselves (a short key would mangle its words; the
// quotes were redacted with every key known when they were cut).
std::string ContractJudge::Impl::redact_composed(std::string_view text) const {
  std::string out(text);
  for (std::size_t i = 0; i < redactors.size(); ++i)
    if (!short_keys[i]) out = redactors[i].redact(out);
  return out;
}

// The start of a body, redacted before it is cut (a key across the cut
// leaves no prefix behind).
std::string ContractJudge::Impl::shown(std::string_view body, std::size_t max) const {
  return oracle::excerpt(redact(body), max);
}

}  // namespace crh::capture
