// Putting back what a run changed, read back through the API model.
#include "core/leave_as_found.hpp"

#include <boost/json.hpp>

#include "core/api.hpp"
#include "core/outside.hpp"

namespace crh::core {
namespace json = boost::json;
using api::Operation;

namespace {

// The JSON body of a 200; nothing otherwise.
std::optional<json::value> ok_body(const Exchange& x) {
  if (!x.response || x.response->status != 200) return std::nullopt;
  boost::system::error_code ec;
  auto v = json::parse(x.response->body, ec);
  if (ec) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string> put_agent_back(const SendRequest& send, const Target& target, const std::string& id,
                                          const std::string& start) {
  const auto& field = target.dialect.fields.agent_state;
  std::string seen;
  for (auto op : {Operation::wake, Operation::snooze}) {
    send(api::request(target, op, {.id = id}));
    const auto get = send(api::request(target, Operation::get_agent, {.id = id}));
    const auto body = ok_body(get);
    if (!body) return "agent " + id + ": its state could not be read back (" + answer_text(get) + ")";
    seen = api::agent_state(target.dialect.fields, *body);
    if (seen == start) return std::nullopt;
  }
  return "agent " + id + ": its \"" + field + "\" was " + start + " at the start and is " + seen +
         " after the run; neither wake nor snooze put it back";
}

std::optional<std::string> put_database_value_back(const SendRequest& send, const Target& target,
                                                   const std::string& key, const std::optional<std::string>& start) {
  const std::string value = start.value_or("");
  const auto set = send(api::request(target, Operation::db_set, {.id = key, .value = value}));
  if (!set.response || set.response->status != 200)
    return "restoring database key " + key + ": " + answer_text(set);
  const auto get = send(api::request(target, Operation::db_get, {.id = key}));
  const auto body = ok_body(get);
  if (body && api::database_value(target.dialect.fields, *body) == value) return std::nullopt;
  return "database key " + key + " was written back but a read does not show the value (field \"" +
         target.dialect.fields.database_value + "\"): " + answer_text(get);
}

}  // namespace crh::core
