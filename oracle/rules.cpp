// The rule catalogue as data: ids, spec sections and wording.
#include "oracle/rules.hpp"

#include <array>

namespace crh::oracle {
namespace {

constexpr std::array kRules{
    Rule{"C1", "1", "responses are JSON"},
    Rule{"C2", "1, 7.1", "success is HTTP status 200"},
    Rule{"E1", "4", "GET /api/v1/local-agents lists the local agents"},
    Rule{"E2", "4", "GET /api/v1/local-agents/[ID] returns the agent object"},
    Rule{"E3", "4", "PUT /api/v1/local-agents/[ID]/snooze snoozes the agent"},
    Rule{"E4", "4", "PUT /api/v1/local-agents/[ID]/wake wakes the agent"},
    Rule{"E5", "4", "GET /database/[key] returns the entry for the key"},
    Rule{"E6", "4", "POST /database/[key] with value sets the value for the key"},
    Rule{"E7", "4", "GET /channels/[id]/alias-numbers lists the channel's aliases"},
    Rule{"E8", "4", "POST /channels/[id]/alias-numbers/tag tags an alias and returns it"},
    Rule{"E9", "4", "DELETE /channels/[id]/alias-numbers/:id/tag removes the tag before it expires"},
    Rule{"R1", "4, rule 1", "snooze and wake return the agent object in the same form as the single-agent GET"},
    Rule{"R2", "4, rule 2", "the tag operation picks the alias whose last use is oldest"},
    Rule{"R3", "4, rule 3", "the tag operation requires both tag and minutes"},
    Rule{"R4", "4, rule 4", "tag deletion addresses one alias by its own id under the channel, before expiry"},
    Rule{"R5", "4, rule 5; 5.1", "every endpoint requires the Apikey header"},
    Rule{"A2", "5.2", "only the key shown on the console is accepted"},
    Rule{"T1", "3", "a tag lives from the tag operation until its minutes elapse or it is deleted"},
    Rule{"B1", "1", "any caller may call a newly tagged alias"},
    Rule{"B2", "1", "the first caller to call a tagged alias is bound to it"},
    Rule{"B3", "1", "until the tag expires only the bound caller may call the alias"},
    Rule{"X0", "1, 7", "every well-formed request gets an answer: a connection dropped without one is a crash"},
    Rule{"X1", "7.2", "an error response has a status other than 200"},
    Rule{"X2", "7.3", "an error body is a JSON object with a string field msg"},
    Rule{"V1", "9", "agent endpoints carry /api/v1; database and alias endpoints carry no version prefix"},
};

}  // namespace

std::span<const Rule> rule_catalogue() { return kRules; }

const Rule* find_rule(std::string_view id) {
  for (const auto& r : kRules)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace crh::oracle
