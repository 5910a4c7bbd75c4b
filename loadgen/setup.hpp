// Before and after a load run: check the target answers, learn its agents and
// aliases, probe the call hook for the race, and put back what the run changed.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/engine.hpp"

namespace crh::loadgen {

// The target cannot be reached or set up (exit 3). The message says what was
// sent, what came back and what to do.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the run may change, as it was found.
struct FoundState {
  // id, and the agent's state field as JSON text (whatever words the target
  // uses); nothing when the agent showed no such field.
  std::vector<std::pair<std::string, std::optional<std::string>>> agent_states;
  std::optional<std::string> database_value;  // of the load's database key (load_database_key)
  // The alias field that shows a tag: the profile's fields.alias_tag when the
  // list shows it, else the field in which a tag answer showed the name just
  // sent; "" when neither (the load's tags cannot be seen in the list).
  std::string alias_tag;
};

// The alias id in a tag's answer under the dialect's id fields: of the
// object, or of the first object it holds that has one. Nothing when the
// body is not such JSON.
std::optional<std::string> tagged_alias_id(const core::FieldNames& names, const std::string& body);

// Throws SetupError. For the race it also places one call on a freshly tagged
// alias, so a target without the call hook is told so instead of racing on 404s.
Discovery discover(const LoadConfig& config, FoundState& found);

// Best effort: puts agents back in their state (waking or snoozing one until
// its state field reads as it did), restores the database value and deletes
// tags the run left (named crh-load). Returns what could not be restored or
// not be verified: a restore is done only when a read shows it.
std::vector<std::string> restore(const LoadConfig& config, const FoundState& found);

}  // namespace crh::loadgen
