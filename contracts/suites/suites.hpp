// Each suite adds its checks to the registry, in the order they run.
#pragma once

#include <vector>

#include "contracts/api.hpp"
#include "contracts/check.hpp"
#include "contracts/context.hpp"

namespace crh::contracts::suites {

void add_endpoint_checks(std::vector<Check>& out);
void add_auth_checks(std::vector<Check>& out);
void add_auth_offer_checks(std::vector<Check>& out);  // the auth suite too, after add_auth_checks
void add_error_checks(std::vector<Check>& out);
void add_agent_checks(std::vector<Check>& out);
void add_database_checks(std::vector<Check>& out);
void add_alias_checks(std::vector<Check>& out);
void add_binding_checks(std::vector<Check>& out);
void add_expiry_checks(std::vector<Check>& out);
void add_explore_checks(std::vector<Check>& out);

}  // namespace crh::contracts::suites
