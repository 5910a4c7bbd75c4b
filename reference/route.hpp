// A request's route (private to reference/): the endpoint it names and the
// ids in its path, found by the router (service.cpp) for the endpoints
// (endpoints.cpp).
#pragma once

#include <string>
#include <string_view>

#include "service.hpp"

namespace crh::reference {

enum class Endpoint {
  agents_list,
  agent_get,
  agent_snooze,
  agent_wake,
  db_get,
  db_set,
  aliases_list,
  tag,
  untag,
  call,
};

struct Service::Route {
  Endpoint endpoint;
  std::string id;     // agent id, database key or channel id
  std::string alias;  // alias id (untag, call)
  std::string_view query;
};

}  // namespace crh::reference
