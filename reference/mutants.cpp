// The catalogue of mutants: names, classes, the rule each breaks (with the
// spec's words) and one line saying what is wrong.
#include "mutants.hpp"

#include <array>

namespace crh::reference {
namespace {

// The spec's sentences the mutants break, quoted once.
constexpr std::string_view kB1 = "B1, spec 1.1: any caller may call a newly tagged alias";
constexpr std::string_view kB2 = "B2, spec 1.2: the first caller to call it is bound to the alias";
constexpr std::string_view kB3 =
    "B3, spec 1.3: until the tag lifetime expires only that caller (that calling number) may call";
constexpr std::string_view kR2 = "R2, spec 4 rule 2: the tag picks the alias whose last use is oldest";
constexpr std::string_view kT1 =
    "T1, spec 3: a tag exists from the tag operation until its minutes elapse or it is deleted";
constexpr std::string_view kE5 = "E5, spec 4: GET /database/[key] returns the entry for the key (the value set)";

constexpr std::array kMutants{
    MutantInfo{Mutant::caller_suffix_match, "caller-suffix-match", "identity", kB3,
               "the caller lock compares only the last 4 characters of the calling number"},
    MutantInfo{Mutant::caller_prefix_match, "caller-prefix-match", "identity", kB3,
               "the caller lock compares only the first 8 characters of the calling number (country and area)"},
    MutantInfo{Mutant::caller_ignores_plus, "caller-ignores-plus", "identity", kB3,
               "the caller lock ignores a leading '+': +15550001234 and 15550001234 count as one caller"},
    MutantInfo{Mutant::lock_checked_once, "lock-checked-once", "lifetime", kB3,
               "only the first call after the bind is checked; every later call by anyone connects"},
    MutantInfo{Mutant::lock_forgotten_after_calls, "lock-forgotten-after-calls", "lifetime", kB3,
               "the bound caller is forgotten after its 3rd connected call; the next caller binds anew"},
    MutantInfo{Mutant::lock_half_lifetime, "lock-half-lifetime", "lifetime", kB3,
               "the caller lock ends at half the tag's lifetime while the tag still lives"},
    MutantInfo{Mutant::late_first_call_unbound, "late-first-call-unbound", "lifetime", kB2,
               "a first call in the second half of the tag's lifetime connects without binding"},
    MutantInfo{Mutant::untagged_call_binds, "untagged-call-binds", "state", kB1,
               "a call to an untagged alias records its caller, and the alias's next tag is locked to it"},
    MutantInfo{Mutant::lru_first_use, "lru-first-use", "lifetime", kR2,
               "the tag picks the alias whose first use is oldest, not its last use"},
    MutantInfo{Mutant::lru_counter_wraps, "lru-counter-wraps", "edge", kR2,
               "the order of uses is kept in 4 bits: every 16th use of a channel looks like no use at all"},
    MutantInfo{Mutant::tag_overwrites_when_full, "tag-overwrites-when-full", "state", kT1,
               "with every alias tagged, a tag replaces the least recently used alias's live tag instead of refusing"},
    MutantInfo{Mutant::tag_skips_expired, "tag-skips-expired", "lifetime",
               "R2, spec 4 rule 2 and T1, spec 3: an expired tag no longer exists, the alias is free to pick",
               "an alias whose tag expired is not picked by a tag until its tag is deleted (409 when none else)"},
    MutantInfo{Mutant::expiry_drops_hours, "expiry-drops-hours", "edge", kT1,
               "the lifetime is minutes % 60: a tag of 60 or 1440 minutes ends at once, 90 lasts 30"},
    MutantInfo{Mutant::expiry_from_first_call, "expiry-from-first-call", "lifetime", kT1,
               "the lifetime is counted from the tag's first call, not from the tag: a late first call extends it"},
    MutantInfo{Mutant::minutes_fraction_truncated, "minutes-fraction-truncated", "edge",
               "R3, spec 2: minutes is an integer (a fraction is no valid minutes)",
               "minutes such as \"2.5\" are accepted and cut to their integer part"},
    MutantInfo{Mutant::tag_text_truncated, "tag-text-truncated", "edge",
               "E8, spec 2 and 4: the alias is assigned the tag sent and the tag answers that alias",
               "the tag text is stored cut to 32 bytes (answers and list show the cut text)"},
    MutantInfo{Mutant::db_value_trimmed, "db-value-trimmed", "edge", kE5,
               "spaces and tabs at either end of a value are dropped when stored (the POST echoes what was sent)"},
    MutantInfo{Mutant::db_value_truncated, "db-value-truncated", "edge", kE5,
               "a value is stored cut to 255 bytes (the POST echoes what was sent)"},
    MutantInfo{Mutant::db_unicode_bytes, "db-unicode-bytes", "edge", kE5,
               "a value's non-ASCII bytes are stored as Latin-1 characters: \"é\" reads back as \"Ã©\""},
    MutantInfo{Mutant::db_empty_missing, "db-empty-missing", "edge", kE5,
               "a key set to the empty value reads as not found (404)"},
    MutantInfo{Mutant::db_key_case, "db-key-case", "identity", kE5,
               "database keys are compared without regard to case: Key and key are one entry"},
    MutantInfo{Mutant::db_key_dots, "db-key-dots", "identity", kE5,
               "dots in database keys are ignored: a.b and ab are one entry"},
    MutantInfo{Mutant::db_key_undecoded, "db-key-undecoded", "identity", kE5,
               "database keys are taken from the path as sent: crh-probe-%41 and crh-probe-A are two entries"},
    MutantInfo{Mutant::agents_list_hides_snoozed, "agents-list-hides-snoozed", "state",
               "E1, spec 4: the list of local agents lists them all, whatever their state",
               "the agent list leaves snoozed agents out"},
    MutantInfo{Mutant::agent_get_snoozed_404, "agent-get-snoozed-404", "state",
               "E2, spec 4: GET of an agent that exists returns the agent object",
               "GET of a snoozed agent answers 404 (the list and wake still know it)"},
    MutantInfo{Mutant::auth_skip_untag, "auth-skip-untag", "endpoint",
               "R5, spec 4 rule 5 and 5.1: every endpoint requires the Apikey header",
               "DELETE of a tag is served without an Apikey (every other endpoint requires it)"},
    MutantInfo{Mutant::error_409_no_msg, "error-409-no-msg", "state",
               "X2, spec 7.3: the body of an error response is a JSON object with a string msg",
               "the refusal of a tag when every alias is tagged is {\"error\": ...} without msg"},
    MutantInfo{Mutant::list_hides_bound, "list-hides-bound", "state",
               "E7, spec 4: the alias list is the list of the channel's aliases",
               "the alias list leaves out aliases whose tag is bound to a caller"},
    MutantInfo{Mutant::list_stale_after_expiry, "list-stale-after-expiry", "endpoint", kT1,
               "the alias list shows an expired tag until the alias is tagged again or the tag deleted"},
};
static_assert(kMutants.size() == static_cast<std::size_t>(Mutant::count_));

}  // namespace

std::span<const MutantInfo> all_mutants() { return kMutants; }

std::optional<Mutant> mutant_by_name(std::string_view name) {
  for (const auto& info : kMutants)
    if (info.name == name) return info.mutant;
  return std::nullopt;
}

}  // namespace crh::reference
