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
constexpr std::string_view kR3 =
    "R3, spec 4 rule 3 and 2: the tag operation requires both tag and minutes (an integer)";
constexpr std::string_view kR4 =
    "R4, spec 4 rule 4: the tag deletion addresses one alias by its own identifier, before the tag's lifetime ends";
constexpr std::string_view kR5 = "R5, spec 4 rule 5 and 5.1: every endpoint requires the Apikey header";
constexpr std::string_view kB3End =
    "B3 and T1, spec 1.3 and 3: the lock holds until the tag lifetime expires or the tag is deleted, no longer";

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
    MutantInfo{Mutant::auth_skip_untag, "auth-skip-untag", "endpoint", kR5,
               "DELETE of a tag is served without an Apikey (every other endpoint requires it)"},
    MutantInfo{Mutant::error_409_no_msg, "error-409-no-msg", "state",
               "X2, spec 7.3: the body of an error response is a JSON object with a string msg",
               "the refusal of a tag when every alias is tagged is {\"error\": ...} without msg"},
    MutantInfo{Mutant::list_hides_bound, "list-hides-bound", "state",
               "E7, spec 4: the alias list is the list of the channel's aliases",
               "the alias list leaves out aliases whose tag is bound to a caller"},
    MutantInfo{Mutant::list_stale_after_expiry, "list-stale-after-expiry", "endpoint", kT1,
               "the alias list shows an expired tag until the alias is tagged again or the tag deleted"},
    // Issue 35: written from the spec alone.
    MutantInfo{Mutant::expiry_extra_minute, "expiry-extra-minute", "lifetime", kT1,
               "a tag lives one minute longer than asked (whole minutes elapsed > minutes, not >=); "
               "its expires_at shows the right time"},
    MutantInfo{Mutant::expiry_in_seconds, "expiry-in-seconds", "lifetime", kT1,
               "the lifetime is counted in seconds: a tag of 10 minutes ends after 10 seconds"},
    MutantInfo{Mutant::lru_seconds_resolution, "lru-seconds-resolution", "edge", kR2,
               "last uses are kept to the second: aliases used within one second tie and the first in fixture "
               "order is picked"},
    MutantInfo{Mutant::agent_id_numeric, "agent-id-numeric", "identity",
               "E2, spec 4 (and the harness where it is silent): GET /api/v1/local-agents/[ID] answers that agent; no 200 for one "
               "that does not exist",
               "agent ids are parsed as integers: 0101 and +101 read, snooze and wake agent 101"},
    MutantInfo{Mutant::untag_index_off_by_one, "untag-index-off-by-one", "identity", kR4,
               "the tag deletion takes the alias's place in the channel as a 0-based index: deleting alias 1's "
               "tag removes alias 2's, the last alias is unknown"},
    MutantInfo{Mutant::db_key_non_ascii_lost, "db-key-non-ascii-lost", "identity", kE5,
               "keys are kept in an ASCII column: each non-ASCII character becomes '?', so ké and "
               "kü are one entry"},
    MutantInfo{Mutant::tag_answer_last_alias, "tag-answer-last-alias", "endpoint",
               "E8, spec 4: the tag operation returns the alias that was tagged",
               "the tag answer carries the tag but the id and number of the channel's last alias (the loop "
               "variable after the loop); the right alias is tagged"},
    MutantInfo{Mutant::untag_keeps_lock, "untag-keeps-lock", "lifetime", kB3End,
               "after a tag is deleted the alias stays locked to its bound caller until the tag would have "
               "ended (others get 403); a new tag frees it"},
    MutantInfo{Mutant::list_stale_after_untag, "list-stale-after-untag", "endpoint", kT1,
               "the alias list keeps showing a deleted tag until the channel's next tag (or the tag's own end)"},
    MutantInfo{Mutant::wake_answer_stale, "wake-answer-stale", "state",
               "E4 and R1, spec 4: wake returns the agent object in the same form as the single-agent GET",
               "wake answers the agent as read before the change: a snoozed agent is shown snoozed"},
    MutantInfo{Mutant::auth_skip_alias_list, "auth-skip-alias-list", "endpoint", kR5,
               "the alias list is served without checking the Apikey (the route sits before the auth check)"},
    MutantInfo{Mutant::auth_empty_key_ok, "auth-empty-key-ok", "edge",
               "A2, spec 5.2: the Apikey's value is the console key (an empty value is not)",
               "an empty Apikey header is accepted on every endpoint (only a non-empty wrong key is refused)"},
    MutantInfo{Mutant::error_401_empty_body, "error-401-empty-body", "endpoint",
               "X2, spec 7.3: the body of an error response is a JSON object with a string msg",
               "the 401 for a missing or wrong Apikey has an empty body (every other error has its msg)"},
    MutantInfo{Mutant::db_long_key_500, "db-long-key-500", "edge",
               "E6, spec 4 (and the harness where it is silent): POST /database/[key] sets the value; a 5xx is never a contract answer",
               "a POST of a key longer than 255 bytes answers 500 (the key column overflows)"},
    MutantInfo{Mutant::minutes_loose_parse, "minutes-loose-parse", "edge", kR3,
               "minutes are read up to the first letter or space: \"10abc\" and \"10 min\" are 10"},
    MutantInfo{Mutant::tag_empty_accepted, "tag-empty-accepted", "edge", kR3,
               "an empty tag (tag=) is accepted and assigned (only a missing tag is refused)"},
    MutantInfo{Mutant::tag_racy, "tag-racy", "state", kT1,
               "the tag picks the alias, waits 5 ms, then assigns: two racing tags both answer the same alias "
               "and the first tag is lost before its lifetime"},
    MutantInfo{Mutant::list_unknown_channel_empty, "list-unknown-channel-empty", "state",
               "E7, spec 4 (and the harness where it is silent): the list of the channel's aliases; no 200 for a channel that does not exist",
               "the alias list of an unknown channel answers 200 with an empty list"},
    MutantInfo{Mutant::untag_after_expiry_ok, "untag-after-expiry-ok", "lifetime", kR4,
               "deleting a tag that has already expired answers 200 with the alias untagged (the delete path "
               "ignores the tag's end)"},
    MutantInfo{Mutant::lock_outlives_expiry, "lock-outlives-expiry", "lifetime", kB3End,
               "the call path ignores the tag's end: after expiry, calls stay locked to the bound caller until "
               "something else (the list, a tag, a deletion) notices the end"},
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
