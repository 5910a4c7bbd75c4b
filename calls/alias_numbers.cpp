#include "calls/alias_numbers.hpp"

#include <boost/json.hpp>

#include "core/api.hpp"

namespace crh::calls {
namespace json = boost::json;

AliasNumbers::AliasNumbers(core::Target target, core::ClientConfig client) : target_(std::move(target)), client_(client) {}

bool AliasNumbers::refresh(std::string& why) {
  core::HttpClient http(target_.base, client_);
  auto request = core::api::request(target_, core::api::Operation::list_aliases);
  request.headers.push_back({"Apikey", target_.api_key});
  {
    std::lock_guard lock(mutex_);
    last_read_ = std::chrono::steady_clock::now();
  }
  const auto e = http.send(std::move(request));
  if (!e.answered() || e.response->status != 200) {
    why = e.answered() ? "the aliases list answered HTTP " + std::to_string(e.response->status)
                       : "the aliases list was not answered: " + e.error_detail;
    return false;
  }
  boost::system::error_code ec;
  const auto body = json::parse(e.response->body, ec);
  if (ec) {
    why = "the aliases list is not JSON";
    return false;
  }
  const auto& fields = target_.dialect.fields;
  auto list = core::api::find_list(body, fields.aliases_list, why);
  if (!list) return false;
  std::map<std::string, std::string> numbers;
  for (const auto& item : *list->items) {
    auto id = core::api::alias_id(fields, item);
    if (!id) continue;
    std::string number = *id;
    if (const auto* o = item.if_object())
      if (const auto* n = o->if_contains(target_.dialect.sip.number_field)) {
        if (n->is_string()) number = std::string(n->get_string());
        else if (n->is_int64()) number = std::to_string(n->get_int64());
      }
    numbers.emplace(*id, std::move(number));
  }
  std::lock_guard lock(mutex_);
  numbers_ = std::move(numbers);
  return true;
}

std::optional<std::string> AliasNumbers::operator()(const std::string& alias) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = numbers_.find(alias); it != numbers_.end()) return it->second;
    if (std::chrono::steady_clock::now() - last_read_ < std::chrono::milliseconds(100)) return std::nullopt;
  }
  std::string why;
  if (!refresh(why)) return std::nullopt;
  std::lock_guard lock(mutex_);
  if (auto it = numbers_.find(alias); it != numbers_.end()) return it->second;
  return std::nullopt;
}

}  // namespace crh::calls
