// The state model behind the reference service: agents and the database
// (aliases, tags and calls: state_aliases.cpp). Each channel has its own
// mutex, so a bind is one critical section however many threads race.
#include "state.hpp"

#include "state_impl.hpp"

namespace crh::reference {

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

}  // namespace crh::reference
