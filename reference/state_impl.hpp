// The state model's insides (private to reference/): the slots agents and
// aliases live in and the helpers the state's operations share (state.cpp for
// agents and the database, state_aliases.cpp for aliases, tags and calls).
#pragma once

#include <atomic>
#include <charconv>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "state.hpp"

namespace crh::reference {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

struct AgentSlot {
  std::string id;
  std::string name;
  std::atomic<bool> snoozed{false};
};

struct AliasSlot {
  std::string id;
  std::string number;
  std::optional<std::string> tag;
  Clock::time_point expires_at{};
  std::chrono::milliseconds lifetime{0};  // what the tag was given (for the expiry-sliding fault)
  std::optional<std::string> bound_caller;
  std::uint64_t last_use = 0;  // 0: never used; otherwise the channel's use sequence number
  std::optional<Clock::time_point> last_used_at;
  // What the mutants (mutants.hpp) need to know besides.
  Clock::time_point tagged_at{};
  std::uint64_t first_use = 0;             // lru-first-use
  std::uint32_t calls_after_bind = 0;      // lock-checked-once
  std::uint32_t bound_calls = 0;           // lock-forgotten-after-calls
  bool awaiting_first_call = false;        // expiry-from-first-call
  std::optional<std::string> expired_tag;  // tag-skips-expired, list-stale-after-expiry
  Clock::time_point ghost_lock_until{};    // untag-keeps-lock: when the deleted tag would have ended
  std::optional<AliasView> deleted_view;   // list-stale-after-untag: the alias as listed before the deletion

  AliasView view() const {
    AliasView v{id, number, tag, std::nullopt, std::nullopt, last_used_at};
    if (tag) v.expires_at = expires_at;
    if (tag) v.bound_caller = bound_caller;  // a caller left behind (binding-survives-retag) is not shown
    return v;
  }
};

struct ChannelSlot {
  std::string id;
  std::mutex mutex;
  std::vector<AliasSlot> aliases;
  StringMap<std::size_t> index;
  std::uint64_t use_counter = 0;
};

struct State::Impl {
  std::chrono::milliseconds minute;
  FaultSet faults;
  MutantSet mutants;
  StateLimits limits;

  std::vector<std::unique_ptr<AgentSlot>> agents;
  StringMap<std::size_t> agent_index;

  std::vector<std::unique_ptr<ChannelSlot>> channels;
  StringMap<std::size_t> channel_index;
  StringMap<AliasAddress> numbers;  // fixed at construction, so read without a lock

  mutable std::shared_mutex db_mutex;
  StringMap<std::string> db;
  std::size_t db_bytes = 0;

  AgentSlot* find_agent(std::string_view id) const {
    auto it = agent_index.find(id);
    if (it == agent_index.end() && mutants.has(Mutant::agent_id_numeric)) {
      // agent-id-numeric: the id read as a number, as Atoi or parseInt read it ("+101", "0101").
      std::string_view digits = id.starts_with('+') ? id.substr(1) : id;
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec == std::errc{} && end == digits.data() + digits.size()) it = agent_index.find(std::to_string(n));
    }
    return it == agent_index.end() ? nullptr : agents[it->second].get();
  }
  ChannelSlot* find_channel(std::string_view id) const {
    auto it = channel_index.find(id);
    return it == channel_index.end() ? nullptr : channels[it->second].get();
  }
  static AliasSlot* find_alias(ChannelSlot& ch, std::string_view id) {
    auto it = ch.index.find(id);
    return it == ch.index.end() ? nullptr : &ch.aliases[it->second];
  }

  // Ends a tag whose lifetime has elapsed. Caller holds the channel's mutex.
  void expire(AliasSlot& a, Clock::time_point now) const {
    // expiry-extra-minute: whole minutes elapsed compared with > instead of >=.
    const auto end = a.expires_at + (mutants.has(Mutant::expiry_extra_minute) ? minute : std::chrono::milliseconds(0));
    if (a.tag && !faults.has(Fault::expiry_never) && !a.awaiting_first_call && now >= end) {
      a.expired_tag = std::move(a.tag);
      a.tag.reset();
      release_caller(a);
    }
  }
  bool second_half(const AliasSlot& a, Clock::time_point now) const { return now - a.tagged_at >= a.lifetime / 2; }
  // Whether `caller` is the bound caller; the identity mutants compare loosely.
  bool same_caller(std::string_view bound, std::string_view caller) const {
    if (mutants.has(Mutant::caller_suffix_match) && bound.size() >= 4 && caller.size() >= 4)
      return bound.substr(bound.size() - 4) == caller.substr(caller.size() - 4);
    if (mutants.has(Mutant::caller_prefix_match) && bound.size() >= 8 && caller.size() >= 8)
      return bound.substr(0, 8) == caller.substr(0, 8);
    if (mutants.has(Mutant::caller_ignores_plus)) {
      if (bound.starts_with('+')) bound.remove_prefix(1);
      if (caller.starts_with('+')) caller.remove_prefix(1);
    }
    return bound == caller;
  }
  // The first caller of a tag becomes its bound caller. Caller holds the channel's mutex.
  void bind(AliasSlot& a, std::string_view caller, Clock::time_point now) const {
    if (mutants.has(Mutant::late_first_call_unbound) && second_half(a, now)) return;  // connects, binds nobody
    a.bound_caller = std::string(caller);
    a.calls_after_bind = 0;
    a.bound_calls = 1;
  }
  // A connected call by the bound caller (lock-forgotten-after-calls counts them).
  void bound_call(AliasSlot& a) const {
    if (++a.bound_calls >= 3 && mutants.has(Mutant::lock_forgotten_after_calls)) a.bound_caller.reset();
  }
  // The order the tag compares last uses in (lru-first-use, lru-counter-wraps: another order).
  std::uint64_t use_order(const AliasSlot& a) const {
    if (mutants.has(Mutant::lru_first_use)) return a.first_use;
    if (mutants.has(Mutant::lru_counter_wraps)) return a.last_use & 15;
    if (mutants.has(Mutant::lru_seconds_resolution) && a.last_used_at) {  // a whole-seconds column
      auto seconds = std::chrono::floor<std::chrono::seconds>(a.last_used_at->time_since_epoch()).count();
      return static_cast<std::uint64_t>(seconds) + 1;  // 0 stays "never used"
    }
    if (mutants.has(Mutant::lru_seconds_resolution)) return 0;
    return a.last_use;
  }
  // A tag's end ends its lock; with binding-survives-retag the caller stays
  // behind for the alias's next tag. Caller holds the channel's mutex.
  void release_caller(AliasSlot& a) const {
    if (!faults.has(Fault::binding_survives_retag)) a.bound_caller.reset();
  }
  // A call that connected: a use, and with expiry-sliding a fresh lifetime.
  void mark_called(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) const {
    if (a.tag && faults.has(Fault::expiry_sliding)) a.expires_at = now + a.lifetime;
    if (a.tag && a.awaiting_first_call) {  // expiry-from-first-call: the lifetime starts only now
      a.expires_at = now + a.lifetime;
      a.awaiting_first_call = false;
    }
    mark_used(ch, a, now);
  }
  static void mark_used(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) {
    a.last_use = ++ch.use_counter;
    if (!a.first_use) a.first_use = a.last_use;
    a.last_used_at = now;
  }
  // The caller `a` is locked to, if any. With binding-per-tag-name, a caller
  // bound on any live alias of the channel with the same tag name counts.
  // Caller holds the channel's mutex.
  std::optional<std::string> lock_holder(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) const {
    if (!a.tag) return std::nullopt;
    if (mutants.has(Mutant::lock_half_lifetime) && second_half(a, now)) return std::nullopt;
    if (a.bound_caller) return a.bound_caller;
    if (!faults.has(Fault::binding_per_tag_name)) return std::nullopt;
    for (auto& other : ch.aliases) {
      expire(other, now);
      if (other.tag == a.tag && other.bound_caller) return other.bound_caller;
    }
    return std::nullopt;
  }
  // The database's key and stored value as the database mutants see them.
  std::string db_key(std::string_view key) const {
    std::string k(key);
    if (mutants.has(Mutant::db_key_case))
      for (auto& c : k)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (mutants.has(Mutant::db_key_dots)) std::erase(k, '.');
    if (mutants.has(Mutant::db_key_non_ascii_lost)) {
      std::string ascii;  // each UTF-8 character outside ASCII becomes one '?'
      for (unsigned char c : k)
        if (c < 0x80) ascii.push_back(static_cast<char>(c));
        else if ((c & 0xC0) != 0x80) ascii.push_back('?');
      k = std::move(ascii);
    }
    return k;
  }
  std::string db_value(std::string_view v) const {
    if (mutants.has(Mutant::db_value_trimmed)) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    }
    if (mutants.has(Mutant::db_value_truncated)) v = cut(v, 255);
    if (!mutants.has(Mutant::db_unicode_bytes)) return std::string(v);
    std::string out;
    for (unsigned char c : v) {
      if (c < 0x80) out.push_back(static_cast<char>(c));
      else {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
    }
    return out;
  }
  // `s` cut to at most `n` bytes, between UTF-8 characters.
  static std::string_view cut(std::string_view s, std::size_t n) {
    if (s.size() <= n) return s;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    return s.substr(0, n);
  }
  // The alias a tag picks (null when none is free), and the tag assigned to
  // `pick` with the answer to show. Caller holds the channel's mutex.
  AliasSlot* pick_lru(ChannelSlot& ch, Clock::time_point now) const;
  AliasView assign(ChannelSlot& ch, AliasSlot& pick, std::string_view tag, std::int64_t minutes,
                   Clock::time_point now) const;
  static Agent to_agent(const AgentSlot& s) { return Agent{s.id, s.name, s.snoozed.load(std::memory_order_relaxed)}; }
};

}  // namespace crh::reference
