// The reference service's state model: agents, the database, channels with
// aliases, tags with lifetimes, and the caller lock. Thread-safe; knows no HTTP.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clock.hpp"
#include "faults.hpp"
#include "fixtures.hpp"
#include "mutants.hpp"

namespace crh::reference {

struct Agent {
  std::string id;
  std::string name;
  bool snoozed = false;
};

struct AliasView {
  std::string id;
  std::string number;
  std::optional<std::string> tag;
  std::optional<Clock::time_point> expires_at;
  std::optional<std::string> bound_caller;
  std::optional<Clock::time_point> last_used_at;
};

enum class TagStatus { tagged, unknown_channel, all_tagged };
struct TagResult {
  TagStatus status;
  AliasView alias;  // the tagged alias when status == tagged
};

enum class UntagStatus { untagged, unknown_channel, unknown_alias, not_tagged };
struct UntagResult {
  UntagStatus status;
  AliasView alias;  // the alias after the removal when status == untagged
};

enum class CallStatus { connected, locked, unknown_channel, unknown_alias };
struct CallResult {
  CallStatus status;
  AliasView alias;  // the alias after the call (when it exists)
};

// Where an alias lives: its channel and its id there.
struct AliasAddress {
  std::string channel;
  std::string alias;
};

enum class DbWriteStatus { stored, full };

struct StateLimits {
  std::size_t database_bytes = 256u << 20;  // keys + values held at most
};

class State {
 public:
  // `minute` is how long one tag minute lasts (60 s for real; less in tests).
  State(const Fixtures& fixtures, const Clock& clock, std::chrono::milliseconds minute,
        FaultSet faults = {}, StateLimits limits = {}, MutantSet mutants = {});
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  const Clock& clock() const { return clock_; }

  std::vector<Agent> agents() const;
  std::optional<Agent> agent(std::string_view id) const;
  // Sets the agent's state; returns the agent afterwards, or nothing if unknown.
  std::optional<Agent> set_snoozed(std::string_view id, bool snoozed);

  std::optional<std::string> db_get(std::string_view key) const;
  DbWriteStatus db_set(std::string_view key, std::string_view value);

  bool has_channel(std::string_view channel) const;
  // The alias whose number is `number` exactly (the first in fixture order if
  // several share it), for SIP calls that name a number, not an id.
  std::optional<AliasAddress> find_number(std::string_view number) const;
  std::optional<std::vector<AliasView>> aliases(std::string_view channel) const;

  // Tags the least recently used untagged alias for `minutes` tag minutes.
  TagResult tag(std::string_view channel, std::string_view tag, std::int64_t minutes);
  // The two halves of a tag done non-atomically, for the tag-racy mutant:
  // `tag_pick` names the alias a tag would take; `tag_apply` tags that alias
  // whatever it holds by then.
  TagResult tag_pick(std::string_view channel);
  TagResult tag_apply(std::string_view channel, std::string_view alias, std::string_view tag, std::int64_t minutes);
  UntagResult untag(std::string_view channel, std::string_view alias);

  // A call from `caller` to `alias`: atomic check and bind (spec §1).
  CallResult call(std::string_view channel, std::string_view alias, std::string_view caller);

  // The two halves of a call done non-atomically, for the binding-racy fault:
  // `call_check` decides without binding; `call_apply` binds without checking.
  CallResult call_check(std::string_view channel, std::string_view alias,
                        std::string_view caller);
  CallResult call_apply(std::string_view channel, std::string_view alias,
                        std::string_view caller);

 private:
  struct Impl;
  const Clock& clock_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crh::reference
