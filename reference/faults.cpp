// The catalogue of fault modes: names and one-line descriptions.
#include "faults.hpp"

#include <array>

namespace crh::reference {
namespace {

constexpr std::array kFaults{
    FaultInfo{Fault::auth_missing_ok, "auth-missing-ok", "requests without an Apikey header are accepted"},
    FaultInfo{Fault::auth_wrong_ok, "auth-wrong-ok",
              "any Apikey value (even empty or wrong) is accepted; a missing header is still refused"},
    FaultInfo{Fault::auth_skip_database, "auth-skip-database",
              "the database endpoints (GET/POST /database/[key]) ignore the key"},
    FaultInfo{Fault::rejected_write_applies, "rejected-write-applies",
              "a database POST with a missing or wrong key is answered 401 but stored anyway"},
    FaultInfo{Fault::error_no_msg, "error-no-msg", "error bodies are {\"error\": ...} without a msg field"},
    FaultInfo{Fault::error_status_200, "error-status-200", "not-found conditions are answered 200 (with a msg body)"},
    FaultInfo{Fault::text_errors, "text-errors", "error bodies are text/plain instead of a JSON object"},
    FaultInfo{Fault::snooze_shape, "snooze-shape", "snooze answers {\"ok\":true} instead of the agent object"},
    FaultInfo{Fault::lru_mru, "lru-mru", "tag picks the most recently used untagged alias instead of the least"},
    FaultInfo{Fault::tag_minutes_optional, "tag-minutes-optional",
              "tag without minutes is accepted (lifetime 5 minutes)"},
    FaultInfo{Fault::binding_last_caller, "binding-last-caller",
              "each new caller of a tagged alias takes it over instead of being refused"},
    FaultInfo{Fault::binding_racy, "binding-racy",
              "the bind is check-then-act with a 5 ms yield between: racing callers can all connect"},
    FaultInfo{Fault::expiry_never, "expiry-never", "tags never expire (only delete removes them)"},
    FaultInfo{Fault::delete_tag_noop, "delete-tag-noop",
              "delete tag answers 200 with the alias untagged, but the tag and lock stay"},
    FaultInfo{Fault::db_first_write_wins, "db-first-write-wins",
              "a database POST to a key that has a value answers 200 but keeps the old value"},
    FaultInfo{Fault::slow_tag, "slow-tag", "tag answers 20 ms later than it would (a performance regression)"},
    FaultInfo{Fault::auth_key_prefix, "auth-key-prefix",
              "only the first 8 characters of the Apikey are compared: a truncated or extended key passes"},
    FaultInfo{Fault::auth_key_case, "auth-key-case", "the Apikey is compared case-insensitively"},
    FaultInfo{Fault::auth_key_query, "auth-key-query",
              "without an Apikey header, the key as query parameter apikey (any case) is accepted"},
    FaultInfo{Fault::auth_key_bearer, "auth-key-bearer",
              "without an Apikey header, the key in Authorization (\"Bearer KEY\" or bare) is accepted"},
    FaultInfo{Fault::auth_key_cookie, "auth-key-cookie",
              "without an Apikey header, the key in the cookie Apikey is accepted"},
    FaultInfo{Fault::wake_types, "wake-types",
              "wake answers the agent's id as a JSON number (an id that is no number: its name as an array)"},
    FaultInfo{Fault::binding_per_tag_name, "binding-per-tag-name",
              "the caller lock is kept per (channel, tag name): aliases with the same tag share one bound caller"},
    FaultInfo{Fault::expiry_sliding, "expiry-sliding",
              "each call of a tagged alias restarts the tag's lifetime, so it outlives its minutes"},
    FaultInfo{Fault::binding_racy_turn, "binding-racy-turn",
              "the bind is check-then-act with one event-loop turn between: a microsecond race window"},
    FaultInfo{Fault::binding_survives_retag, "binding-survives-retag",
              "a deleted or expired tag leaves its bound caller behind: the alias's next tag is locked to that caller"},
    FaultInfo{Fault::crash_unknown_wake, "crash-unknown-wake",
              "PUT .../local-agents/{unknown}/wake closes the connection without an answer (a handler that crashes)"},
};
static_assert(kFaults.size() == static_cast<std::size_t>(Fault::count_));

}  // namespace

std::span<const FaultInfo> all_faults() { return kFaults; }

std::optional<Fault> fault_by_name(std::string_view name) {
  for (const auto& info : kFaults)
    if (info.name == name) return info.fault;
  return std::nullopt;
}

}  // namespace crh::reference
