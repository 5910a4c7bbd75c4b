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
  StateLimits limits;

  std::vector<std::unique_ptr<AgentSlot>> agents;
  StringMap<std::size_t> agent_index;

  std::vector<std::unique_ptr<ChannelSlot>> channels;
  StringMap<std::size_t> channel_index;

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
    if (a.tag && !faults.has(Fault::expiry_never) && now >= a.expires_at) {
      a.tag.reset();
      release_caller(a);
    }
  }
  // A tag's end ends its lock; with binding-survives-retag the caller stays
  // behind for the alias's next tag. Caller holds the channel's mutex.
  void release_caller(AliasSlot& a) const {
    if (!faults.has(Fault::binding_survives_retag)) a.bound_caller.reset();
  }
  // A call that connected: a use, and with expiry-sliding a fresh lifetime.
  void mark_called(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) const {
    if (a.tag && faults.has(Fault::expiry_sliding)) a.expires_at = now + a.lifetime;
    mark_used(ch, a, now);
  }
  static void mark_used(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) {
    a.last_use = ++ch.use_counter;
    a.last_used_at = now;
  }
  // The caller `a` is locked to, if any. With binding-per-tag-name, a caller
  // bound on any live alias of the channel with the same tag name counts.
  // Caller holds the channel's mutex.
  const std::optional<std::string>* lock_holder(ChannelSlot& ch, AliasSlot& a, Clock::time_point now) const {
    if (!a.tag) return nullptr;
    if (a.bound_caller) return &a.bound_caller;
    if (!faults.has(Fault::binding_per_tag_name)) return nullptr;
    for (auto& other : ch.aliases) {
      expire(other, now);
      if (other.tag == a.tag && other.bound_caller) return &other.bound_caller;
    }
    return nullptr;
  }
  static Agent to_agent(const AgentSlot& s) { return Agent{s.id, s.name, s.snoozed.load(std::memory_order_relaxed)}; }
};

State::State(const Fixtures& fixtures, const Clock& clock, std::chrono::milliseconds minute, FaultSet faults,
             StateLimits limits)
    : clock_(clock), impl_(std::make_unique<Impl>()) {
  impl_->minute = minute;
  impl_->faults = faults;
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

std::optional<std::string> State::db_get(std::string_view key) const {
  std::shared_lock lock(impl_->db_mutex);
  auto it = impl_->db.find(key);
  if (it == impl_->db.end()) return std::nullopt;
  return it->second;
}

DbWriteStatus State::db_set(std::string_view key, std::string_view value) {
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

std::optional<std::vector<AliasView>> State::aliases(std::string_view channel) const {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return std::nullopt;
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  std::vector<AliasView> out;
  out.reserve(ch->aliases.size());
  for (auto& a : ch->aliases) {
    impl_->expire(a, now);
    out.push_back(a.view());
  }
  return out;
}

TagResult State::tag(std::string_view channel, std::string_view tag, std::int64_t minutes) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {TagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  const bool most_recent = impl_->faults.has(Fault::lru_mru);
  AliasSlot* pick = nullptr;
  for (auto& a : ch->aliases) {
    impl_->expire(a, now);
    if (a.tag) continue;
    // Strict comparisons keep the first alias on ties (never-used aliases, fixture order).
    if (!pick || (most_recent ? a.last_use > pick->last_use : a.last_use < pick->last_use)) pick = &a;
  }
  if (!pick) return {TagStatus::all_tagged, {}};
  pick->tag = std::string(tag);
  pick->lifetime = minutes * impl_->minute;
  pick->expires_at = now + pick->lifetime;
  impl_->release_caller(*pick);
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
    auto* holder = impl_->lock_holder(*ch, *a, now);
    if (holder && **holder != caller && !impl_->faults.has(Fault::binding_last_caller))
      return {CallStatus::locked, a->view()};
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
  if (auto* holder = impl_->lock_holder(*ch, *a, now); holder && **holder != caller)
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
