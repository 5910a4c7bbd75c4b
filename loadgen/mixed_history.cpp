// The mixed load's history (issue 25): every read and write of the load's
// database key and of its agents is kept with its times and judged after the
// run by the oracle's register checker; each tag with its untag goes to the
// race's checker at once (an alias given to two tags at the same time).
//
// Only what the run owns is judged: its shard's database key (crh-probe-...,
// written at set-up, restored after) and its shard's agents, which the load
// takes for its own during the run as the restore does (another client that
// snoozes or wakes them would be read as a violation: README, the mixed load).
#include <boost/json.hpp>

#include <cstdio>
#include <map>
#include <set>

#include "core/api.hpp"
#include "loadgen/engine_parts.hpp"
#include "loadgen/shard.hpp"
#include "oracle/register_checker.hpp"

namespace crh::loadgen::engine {
namespace json = boost::json;
namespace {

std::optional<json::value> parse(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec) return std::nullopt;
  return v;
}

// The agent's state field as JSON text, compared as is, as set-up reads it
// (setup.cpp): the harness need not know the target's words for the states.
std::optional<std::string> state_of(const core::FieldNames& names, const json::value& agent) {
  if (!agent.is_object()) return std::nullopt;
  const auto* v = agent.get_object().if_contains(names.agent_state);
  if (!v) return std::nullopt;
  return json::serialize(*v);
}

bool is_database(OpKind k) { return k == OpKind::db_get || k == OpKind::db_set; }
bool is_agent_write(OpKind k) { return k == OpKind::snooze || k == OpKind::wake; }

// Keeps `op` unless it was sent after the recording stopped. The first
// thread to reach the bound stops it: reads that end later are not judged,
// and every write they could see was sent before, so it is kept.
void keep(Worker& w, Op op) {
  Run& run = w.run;
  if (op.invoke_ns >= run.judge_until.load(std::memory_order_relaxed)) return;
  w.judged.push_back(std::move(op));
  if (run.judged_ops.fetch_add(1, std::memory_order_relaxed) + 1 == run.config.max_judged_ops)
    run.judge_until.store(run.ns(Clock::now()), std::memory_order_relaxed);
}

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

std::string mix_text(const LoadConfig& c) {
  std::string out;
  for (const auto& m : c.mix)
    out += (out.empty() ? "" : ",") + std::string(oracle::to_string(m.op)) + "=" + number(m.weight);
  return out;
}

// The command that runs the same load again (the key from CRH_API_KEY, never written).
std::string reproduce(const LoadConfig& c) {
  std::string out = "crh load --base-url " + c.target.base.to_string() + " --channel " + c.target.channel +
                    " --scenario mixed --mix " + mix_text(c) + " --seed " + std::to_string(c.seed) + " --duration " +
                    number(static_cast<double>(c.duration.count()) / 1000.0);
  if (c.connections > 0) out += " --connections " + std::to_string(c.connections);
  if (c.shard.sharded()) out += " --shard " + std::to_string(c.shard.index) + "/" + std::to_string(c.shard.count);
  return out +
         " --history history.jsonl  (the seed replays the same operations; their interleaving depends on "
         "timing, so repeat it until the violation shows again; the history keeps every operation)";
}

void add(Run& run, std::vector<oracle::Violation> found) {
  for (auto& v : found) v.reproduce = reproduce(run.config);
  std::lock_guard lock(run.mutex);
  run.add_violations(std::move(found));
}

}  // namespace

std::string unique_write(Worker& w, const Prepared& p, std::string& value) {
  value = std::string(kLoadDatabaseValue) + " " + std::to_string(w.run.config.shard.index) + "." +
          std::to_string(w.index) + "." + std::to_string(++w.value_serial);
  return bytes_for(w.run, request_for(w.run.config, OpKind::db_set, p.id, {}, value));
}

void note_mixed(Worker& w, const Prepared& p, const Answer& a, const std::string& written, Op& op) {
  const auto& names = w.run.config.target.dialect.fields;
  const bool ok = outcome_of(a) == Outcome::ok;
  auto body = [&] { return ok ? parse(a.body) : std::nullopt; };
  switch (p.op) {
    case OpKind::db_set: op.value = written; break;
    case OpKind::db_get:
      if (auto v = body()) op.value = core::api::database_value(names, *v);
      break;
    case OpKind::get_agent:
    case OpKind::snooze:
    case OpKind::wake:
      if (auto v = body()) op.value = state_of(names, *v);
      break;
    case OpKind::list_agents: {
      // One read per agent listed, each over the list's interval.
      auto v = body();
      std::string why;
      auto list = v ? core::api::find_list(*v, names.agents_list, why) : std::nullopt;
      if (!list) return;
      for (const auto& item : *list->items) {
        Op read = op;
        auto id = core::api::agent_id(names, item);
        if (!id) continue;
        read.id = *id;
        read.value = state_of(names, item);
        keep(w, std::move(read));
      }
      return;
    }
    default: return;
  }
  op.id = p.id;
  keep(w, op);
}

void note_mixed_tag(Run& run, const Op& tag, const Op& untag) {
  oracle::Round round;
  round.id = tag.round;
  round.tag = tag;
  round.untag = untag;
  round.lifetime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(run.config.target.minute).count() *
                      run.config.effective_tag_minutes();
  std::vector<oracle::Violation> found;
  {
    std::lock_guard lock(run.mutex);
    found = run.checker.add(round);
  }
  if (!found.empty()) add(run, std::move(found));
}

void judge_mixed(Run& run, const std::vector<std::unique_ptr<Worker>>& workers, HistoryJudgement& out) {
  const auto& c = run.config;
  out.judged = true;
  out.tags = run.checker.rounds();
  const std::int64_t until = run.judge_until.load();
  if (until != std::numeric_limits<std::int64_t>::max())
    out.unjudged.push_back("reads that ended after the first " + std::to_string(c.max_judged_ops) +
                           " reads and writes (" + std::to_string(until / 1'000'000) +
                           " ms into the run): the history kept in memory is bounded");

  // The words the target's snooze and wake answers show. An answer may show
  // the state at the moment it was written, after a concurrent snooze or
  // wake: the state a snooze leaves is the one at least 90% of snooze answers
  // show, and the same for wake; they must differ to judge the reads.
  std::map<std::string, std::size_t> snooze_shows, wake_shows;
  bool agent_ops = false;
  for (const auto& w : workers)
    for (const auto& op : w->judged) {
      agent_ops |= !is_database(op.kind);
      if (is_agent_write(op.kind) && op.outcome == Outcome::ok && op.value)
        ++(op.kind == OpKind::snooze ? snooze_shows : wake_shows)[*op.value];
    }
  const auto mostly = [](const std::map<std::string, std::size_t>& shows) -> std::optional<std::string> {
    std::size_t total = 0;
    for (const auto& [state, n] : shows) total += n;
    for (const auto& [state, n] : shows)
      if (10 * n >= 9 * total) return state;
    return std::nullopt;
  };
  const auto snoozed = mostly(snooze_shows), awake = mostly(wake_shows);
  const bool agents_judged = snoozed && awake && *snoozed != *awake;
  if (agent_ops && !agents_judged)
    out.unjudged.push_back("agent states: the snooze answers showed " + std::to_string(snooze_shows.size()) +
                           " state(s) and the wake answers " + std::to_string(wake_shows.size()) + " (field \"" +
                           c.target.dialect.fields.agent_state +
                           "\"); 90% of each must show one state, not the other's, to judge the reads");

  oracle::RegisterHistory database;
  database.id = load_database_key(c.shard);
  database.initial = run.discovery.database_value;
  database.judge_until = until;
  if (!database.initial)
    out.unjudged.push_back(
        "database reads before the first answered write: the key's value could not be read back "
        "after set-up wrote it");
  std::map<std::string, oracle::RegisterHistory> agents;
  for (const auto& [id, state] : run.discovery.agent_states) {
    auto& h = agents[id];
    h.what = oracle::Register::agent;
    h.id = id;
    h.initial = state;
    h.judge_until = until;
  }
  for (const auto& w : workers)
    for (const auto& op : w->judged) {
      if (is_database(op.kind)) {
        (op.kind == OpKind::db_set ? database.writes : database.reads).push_back(op);
        continue;
      }
      auto it = agents.find(op.id);  // only the run's own agents: a list shows the other shards' too
      if (!agents_judged || it == agents.end()) continue;
      if (!is_agent_write(op.kind)) {
        it->second.reads.push_back(op);
        continue;
      }
      Op write = op;
      write.value = op.kind == OpKind::snooze ? *snoozed : *awake;
      it->second.writes.push_back(std::move(write));
    }

  auto judge = [&](const oracle::RegisterHistory& h, std::uint64_t& judged) {
    auto verdict = oracle::check_register(h, c.max_violations_kept);
    judged += verdict.judged;
    // Counted whole, listed up to the bound (add_violations keeps the first).
    if (verdict.violation_count > verdict.violations.size()) {
      std::lock_guard lock(run.mutex);
      run.violation_count += verdict.violation_count - verdict.violations.size();
    }
    add(run, std::move(verdict.violations));
  };
  if (!database.reads.empty() || !database.writes.empty()) judge(database, out.database_reads);
  for (const auto& [id, h] : agents) judge(h, out.agent_reads);
}

}  // namespace crh::loadgen::engine
