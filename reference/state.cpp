// The state model behind the reference service. Each channel has its own
// mutex, so a bind is one critical section however many threads race.
#include "state.hpp"

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace crh::reference {
namespace {

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
  std::uint64_t first_use = 0;           // lru-first-use
  std::uint32_t calls_after_bind = 0;    // lock-checked-once
  std::uint32_t bound_calls = 0;         // lock-forgotten-after-calls
  bool awaiting_first_call = false;      // expiry-from-first-call
  std::optional<std::string> expired_tag;  // tag-skips-expired, list-stale-after-expiry

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

}  // namespace

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
    if (a.tag && !faults.has(Fault::expiry_never) && !a.awaiting_first_call && now >= a.expires_at) {
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
  static Agent to_agent(const AgentSlot& s) { return Agent{s.id, s.name, s.snoozed.load(std::memory_order_relaxed)}; }
};

State::State(const Fixtures& fixtures, const Clock& clock, std::chrono::milliseconds minute, FaultSet faults,
             StateLimits limits, MutantSet mutants)
    : clock_(clock), impl_(std::make_unique<Impl>()) {
  impl_->minute = minute;
  impl_->faults = faults;
  impl_->mutants = mutants;
  impl_->limits = limits;
  for (const auto& a : fixtures.agents) {
    auto slot = std::make_unique<AgentSlot>();
    slot->id = a.id;
    slot->name = a.name;
    slot->snoozed = a.snoozed;
    impl_->agent_index.emplace(a.id, impl_->agents.size());
    impl_->agents.push_back(std::move(slot));
  }
  for (const auto& c : fixtures.channels) {
    auto slot = std::make_unique<ChannelSlot>();
    slot->id = c.id;
    for (const auto& a : c.aliases) {
      slot->index.emplace(a.id, slot->aliases.size());
      slot->aliases.push_back(AliasSlot{a.id, a.number});
      impl_->numbers.emplace(a.number, AliasAddress{c.id, a.id});
    }
    impl_->channel_index.emplace(c.id, impl_->channels.size());
    impl_->channels.push_back(std::move(slot));
  }
  for (const auto& [k, v] : fixtures.database) db_set(k, v);
}

State::~State() = default;

std::vector<Agent> State::agents() const {
  std::vector<Agent> out;
  out.reserve(impl_->agents.size());
  for (const auto& a : impl_->agents) out.push_back(Impl::to_agent(*a));
  return out;
}

std::optional<Agent> State::agent(std::string_view id) const {
  if (auto* a = impl_->find_agent(id)) return Impl::to_agent(*a);
  return std::nullopt;
}

std::optional<Agent> State::set_snoozed(std::string_view id, bool snoozed) {
  auto* a = impl_->find_agent(id);
  if (!a) return std::nullopt;
  a->snoozed.store(snoozed, std::memory_order_relaxed);
  return Impl::to_agent(*a);
}

std::optional<std::string> State::db_get(std::string_view key_sent) const {
  const std::string key = impl_->db_key(key_sent);
  std::shared_lock lock(impl_->db_mutex);
  auto it = impl_->db.find(key);
  if (it == impl_->db.end()) return std::nullopt;
  if (it->second.empty() && impl_->mutants.has(Mutant::db_empty_missing)) return std::nullopt;
  return it->second;
}

DbWriteStatus State::db_set(std::string_view key_sent, std::string_view value_sent) {
  const std::string key = impl_->db_key(key_sent), stored = impl_->db_value(value_sent);
  const std::string_view value = stored;
  std::unique_lock lock(impl_->db_mutex);
  auto it = impl_->db.find(key);
  if (it != impl_->db.end()) {
    if (impl_->faults.has(Fault::db_first_write_wins)) return DbWriteStatus::stored;
    std::size_t bytes = impl_->db_bytes - it->second.size() + value.size();
    if (bytes > impl_->limits.database_bytes) return DbWriteStatus::full;
    impl_->db_bytes = bytes;
    it->second.assign(value);
    return DbWriteStatus::stored;
  }
  std::size_t bytes = impl_->db_bytes + key.size() + value.size();
  if (bytes > impl_->limits.database_bytes) return DbWriteStatus::full;
  impl_->db_bytes = bytes;
  impl_->db.emplace(std::string(key), std::string(value));
  return DbWriteStatus::stored;
}

bool State::has_channel(std::string_view channel) const { return impl_->find_channel(channel) != nullptr; }

std::optional<AliasAddress> State::find_number(std::string_view number) const {
  auto it = impl_->numbers.find(number);
  if (it == impl_->numbers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<AliasView>> State::aliases(std::string_view channel) const {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return std::nullopt;
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  std::vector<AliasView> out;
  out.reserve(ch->aliases.size());
  for (auto& a : ch->aliases) {
    impl_->expire(a, now);
    AliasView v = a.view();
    if (!a.tag && a.expired_tag && impl_->mutants.has(Mutant::list_stale_after_expiry)) {
      v.tag = a.expired_tag;
      v.expires_at = a.expires_at;
    }
    out.push_back(std::move(v));
  }
  return out;
}

TagResult State::tag(std::string_view channel, std::string_view tag, std::int64_t minutes) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {TagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  const bool most_recent = impl_->faults.has(Fault::lru_mru);
  const auto& m = impl_->mutants;
  AliasSlot* pick = nullptr;
  auto older = [&](const AliasSlot& a) {
    // Strict comparisons keep the first alias on ties (never-used aliases, fixture order).
    return !pick || (most_recent ? impl_->use_order(a) > impl_->use_order(*pick)
                                 : impl_->use_order(a) < impl_->use_order(*pick));
  };
  for (auto& a : ch->aliases) {
    impl_->expire(a, now);
    if (a.tag || (a.expired_tag && m.has(Mutant::tag_skips_expired))) continue;
    if (older(a)) pick = &a;
  }
  if (!pick && m.has(Mutant::tag_overwrites_when_full))
    for (auto& a : ch->aliases)
      if (older(a)) pick = &a;
  if (!pick) return {TagStatus::all_tagged, {}};
  pick->tag = std::string(m.has(Mutant::tag_text_truncated) ? Impl::cut(tag, 32) : tag);
  pick->expired_tag.reset();
  pick->lifetime = (m.has(Mutant::expiry_drops_hours) ? minutes % 60 : minutes) * impl_->minute;
  pick->tagged_at = now;
  pick->expires_at = now + pick->lifetime;
  pick->awaiting_first_call = m.has(Mutant::expiry_from_first_call);
  pick->calls_after_bind = 0;
  pick->bound_calls = 0;
  // untagged-call-binds: the caller an untagged call recorded stays for the new tag.
  if (!m.has(Mutant::untagged_call_binds)) impl_->release_caller(*pick);
  Impl::mark_used(*ch, *pick, now);
  return {TagStatus::tagged, pick->view()};
}

UntagResult State::untag(std::string_view channel, std::string_view alias) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {UntagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {UntagStatus::unknown_alias, {}};
  impl_->expire(*a, clock_.now());
  a->expired_tag.reset();  // an expired tag deleted: tag-skips-expired frees the alias, the list stops showing it
  if (!a->tag) return {UntagStatus::not_tagged, a->view()};
  if (impl_->faults.has(Fault::delete_tag_noop)) {
    AliasView shown = a->view();
    shown.tag.reset();
    shown.expires_at.reset();
    shown.bound_caller.reset();
    return {UntagStatus::untagged, shown};
  }
  a->tag.reset();
  impl_->release_caller(*a);
  return {UntagStatus::untagged, a->view()};
}

CallResult State::call(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  if (a->tag) {
    const auto holder = impl_->lock_holder(*ch, *a, now);
    // lock-checked-once: the call right after the bind is the only one checked.
    const bool checked = !(holder && a->calls_after_bind > 0 && impl_->mutants.has(Mutant::lock_checked_once));
    if (holder) ++a->calls_after_bind;
    if (checked && holder && !impl_->same_caller(*holder, caller) && !impl_->faults.has(Fault::binding_last_caller))
      return {CallStatus::locked, a->view()};
    if (!holder) {
      impl_->bind(*a, caller, now);
    } else if (checked) {
      a->bound_caller = std::string(caller);
      impl_->bound_call(*a);
    }
  } else if (impl_->mutants.has(Mutant::untagged_call_binds)) {
    a->bound_caller = std::string(caller);
  }
  impl_->mark_called(*ch, *a, now);
  return {CallStatus::connected, a->view()};
}

CallResult State::call_check(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  if (auto holder = impl_->lock_holder(*ch, *a, now); holder && !impl_->same_caller(*holder, caller))
    return {CallStatus::locked, a->view()};
  return {CallStatus::connected, a->view()};
}

CallResult State::call_apply(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  if (a->tag) a->bound_caller = std::string(caller);
  impl_->mark_called(*ch, *a, now);
  return {CallStatus::connected, a->view()};
}

}  // namespace crh::reference
