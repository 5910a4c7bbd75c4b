// Mutants of the reference service (issue 25): wrong versions that break a
// rule the spec states, subtly, in the classes the targeted checks tend to
// miss (a rule held at one instant instead of a whole lifetime, an identity
// compared loosely, a rule checked in one state or on one endpoint, an input
// edge). They measure what exploration catches; unlike the fault modes
// (faults.hpp) no targeted check is promised to catch each one.
#pragma once

#include <bitset>
#include <optional>
#include <span>
#include <string_view>

namespace crh::reference {

enum class Mutant {
  caller_suffix_match,         // the caller lock compares the last 4 characters of the number
  caller_prefix_match,         // the caller lock compares the first 8 characters of the number
  caller_ignores_plus,         // the caller lock ignores a leading '+'
  lock_checked_once,           // only the first call after the bind is checked
  lock_forgotten_after_calls,  // the bound caller is forgotten after its 3rd call
  lock_half_lifetime,          // the lock ends at half the tag's lifetime
  late_first_call_unbound,     // a first call in the second half of the lifetime does not bind
  untagged_call_binds,         // a call to an untagged alias locks the alias's next tag
  lru_first_use,               // the tag picks the oldest first use, not the oldest last use
  lru_counter_wraps,           // the use order is kept in 4 bits and wraps every 16 uses
  tag_overwrites_when_full,    // with every alias tagged, tag retags the LRU alias instead of refusing
  tag_skips_expired,           // an alias whose tag expired is not free for a tag until deleted
  expiry_drops_hours,          // the lifetime is minutes % 60
  expiry_from_first_call,      // the lifetime is counted from the first call, not from the tag
  minutes_fraction_truncated,  // minutes "2.5" is accepted as 2
  tag_text_truncated,          // the tag text is stored cut to 32 bytes
  db_value_trimmed,            // spaces and tabs at the ends of a value are dropped on store
  db_value_truncated,          // a value is stored cut to 255 bytes
  db_unicode_bytes,            // a non-ASCII value is stored as if its bytes were Latin-1 (mojibake)
  db_empty_missing,            // a key whose value is "" reads as not found
  db_key_case,                 // keys are compared without regard to case
  db_key_dots,                 // dots in keys are ignored
  db_key_undecoded,            // keys are taken from the path without percent-decoding
  agents_list_hides_snoozed,   // the agent list leaves snoozed agents out
  agent_get_snoozed_404,       // GET of a snoozed agent answers 404
  auth_skip_untag,             // DELETE of a tag needs no Apikey
  error_409_no_msg,            // the all-tagged refusal has no msg
  list_hides_bound,            // the alias list leaves out aliases bound to a caller
  list_stale_after_expiry,     // the alias list shows an expired tag until the alias is retagged or deleted
  // Issue 35: written from the spec alone, by someone who had not tuned exploration.
  expiry_extra_minute,         // a tag lives one minute longer than asked
  expiry_in_seconds,           // the lifetime is counted in seconds, not minutes
  lru_seconds_resolution,      // last uses compared to the second; ties go to fixture order
  agent_id_numeric,            // agent ids parsed as integers: 0101 and +101 are agent 101
  untag_index_off_by_one,      // the deleted alias is found by 0-based position: alias 1 deletes alias 2's tag
  db_key_non_ascii_lost,       // non-ASCII characters of a key become '?'
  tag_answer_last_alias,       // the tag answer names the channel's last alias
  untag_keeps_lock,            // a deleted tag's caller lock stays until the tag would have ended
  list_stale_after_untag,      // the alias list shows a deleted tag until the channel's next tag
  wake_answer_stale,           // wake answers the agent as it was before waking
  auth_skip_alias_list,        // the alias list is served without an Apikey
  auth_empty_key_ok,           // an empty Apikey header is accepted
  error_401_empty_body,        // the 401 has an empty body
  db_long_key_500,             // a POST of a key over 255 bytes answers 500
  minutes_loose_parse,         // minutes "10abc" or "10 min" read as 10
  tag_empty_accepted,          // an empty tag text is accepted
  tag_racy,                    // the tag picks, yields, then assigns: racing tags take one alias
  list_unknown_channel_empty,  // the alias list of an unknown channel is 200 with no aliases
  untag_after_expiry_ok,       // deleting a tag that has expired answers 200
  lock_outlives_expiry,        // the call path does not see a tag's end: its lock outlives it
  count_
};

struct MutantInfo {
  Mutant mutant;
  std::string_view name;         // as given to --mutant
  std::string_view kind;         // lifetime | identity | state | endpoint | edge (the classes)
  std::string_view rule;         // the rule id(s) it breaks and where the spec states it
  std::string_view description;  // one line: what is wrong
};

// Every mutant, in a stable order.
std::span<const MutantInfo> all_mutants();

// The mutant named `name` (as on the command line), if there is one.
std::optional<Mutant> mutant_by_name(std::string_view name);

class MutantSet {
 public:
  void add(Mutant m) { bits_.set(static_cast<std::size_t>(m)); }
  bool has(Mutant m) const { return bits_.test(static_cast<std::size_t>(m)); }
  bool empty() const { return bits_.none(); }

 private:
  std::bitset<static_cast<std::size_t>(Mutant::count_)> bits_;
};

}  // namespace crh::reference
