// The rule catalogue (DESIGN.md §5): one entry per documented rule of the
// spec. Every check cites the rules it covers; reports show coverage per rule.
#pragma once

#include <span>
#include <string_view>

namespace crh::oracle {

struct Rule {
  std::string_view id;       // "C1", "E5", "B2", ...
  std::string_view section;  // where the spec says it, e.g. "4, rule 2"
  std::string_view text;     // the rule in one line
};

// Every rule, in catalogue order.
std::span<const Rule> rule_catalogue();

// The rule with that id, or nullptr.
const Rule* find_rule(std::string_view id);

}  // namespace crh::oracle
