// The explore suite (issue 25): random sequences against the target, every
// answer judged by the model of the spec, the first MUST divergence shrunk
// to a short reproducer. The sequences and their judging are in
// contracts/explore/; here is the wire to the live target, what the janitor
// must know to put it back, and the check's verdict and evidence.
#include <chrono>
#include <cstdio>
#include <sstream>

#include "calls/http_call_driver.hpp"
#include "contracts/explore/explore.hpp"
#include "contracts/suites/suites.hpp"
#include "core/curl.hpp"
#include "core/http1.hpp"

namespace crh::contracts::suites {
namespace {

using explore::KeyForm;
using explore::Step;
using Endpoint = core::api::Operation;
using Clock = std::chrono::steady_clock;

// The live target: requests built as the dialect says, the key in the form
// the step names, and the janitor told what may need putting back.
class LiveWire final : public explore::Wire {
 public:
  LiveWire(CheckContext& ctx, core::HttpClient& client, CheckContext& quiet)
      : ctx_(ctx), client_(client), quiet_(quiet), start_(Clock::now()) {}

  std::int64_t now_ms() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  }
  void sleep_until_ms(std::int64_t at_ms) override { ctx_.sleep_until(start_ + std::chrono::milliseconds(at_ms)); }
  std::string_view api_key() const override { return ctx_.target().api_key; }
  std::int64_t longest_wait_ms() override { return longest_wait_ms_; }
  std::int64_t longest_wait_ms_ = 600'000;
  bool stopped() override {
    const auto* stop = ctx_.run().stop;
    return (stop && stop->load()) || ctx_.run().stalled || ctx_.run().target_lost;
  }

  std::vector<explore::Answer> send(const Step& step, const std::vector<oracle::Operation>& ops) override {
    for (const auto& op : ops) before(op);
    std::vector<core::HttpRequest> requests;
    for (const auto& op : ops) requests.push_back(build(op, step));
    std::vector<core::Exchange> exchanges;
    if (requests.size() == 1) {
      exchanges.push_back(client_.send(requests.front()));
      if (dropped(exchanges.back()) && requests.front().method != "POST") {
        exchanges.back() = client_.send(requests.front());  // a one-off blip is not a crash
        exchanges.back().error_detail += "; the same when sent a second time";
      }
    } else {
      // Held on connections of their own, released together (the race's way).
      while (burst_.size() < requests.size()) burst_.push_back(ctx_.new_client());
      for (std::size_t i = 0; i < requests.size(); ++i) burst_[i]->hold(requests[i]);
      for (std::size_t i = 0; i < requests.size(); ++i) burst_[i]->release();
      for (std::size_t i = 0; i < requests.size(); ++i) exchanges.push_back(burst_[i]->answer());
    }
    std::vector<explore::Answer> out;
    for (std::size_t i = 0; i < exchanges.size(); ++i) {
      const auto& e = exchanges[i];
      after(ops[i], e);
      explore::Answer a;
      if (e.answered()) {
        a.observed = {true, e.response->status, e.response->body};
        for (const auto& h : e.response->headers)
          if (core::http1::iequals(h.name, "Content-Type")) a.content_type = h.value;
      } else {
        a.observed = oracle::ObservedAnswer::none();
        a.timed_out = e.error == core::TransportError::timeout;
        a.dropped = dropped(e) && ctx_.run().answered_any;
      }
      if (e.error == core::TransportError::connect_failed) ctx_.run().target_lost = true;
      if (e.request.method != "GET" && e.request.method != "HEAD")
        ctx_.run().record_unjudged_write({.request = e.request, .status = e.answered() ? e.response->status : 0u});
      if (e.answered()) ctx_.run().answered_any = true;
      a.curl = curl(e.request, step.key);
      a.request = e.request;
      a.described = describe_answer(e);
      out.push_back(std::move(a));
    }
    if (out.size() > 1) {  // one shell line: the calls at once
      std::string line = "(";
      for (const auto& a : out) line += " " + a.curl + " &";
      line += " wait )";
      for (auto& a : out) a.curl = line;
    }
    return out;
  }

 private:
  CheckContext& ctx_;
  core::HttpClient& client_;
  CheckContext& quiet_;  // reads that are not part of the sequence: what the janitor must know
  Clock::time_point start_;
  std::vector<std::unique_ptr<core::HttpClient>> burst_;

  static bool dropped(const core::Exchange& e) {
    return !e.answered() && (e.error == core::TransportError::reset || e.error == core::TransportError::malformed);
  }

  const core::Target& target() const { return ctx_.target(); }

  core::HttpRequest build(const oracle::Operation& op, const Step& step) const {
    core::HttpRequest r = core::api::request_as_sent(target(), op.endpoint,
                                             core::api::Sent{.id = op.id,
                                                             .channel = op.channel,
                                                             .value = op.value,
                                                             .tag = op.tag,
                                                             .minutes = op.minutes,
                                                             .caller = op.caller,
                                                             .every_byte_encoded = step.encode_all});
    if (step.trailing_slash) r.target.insert(std::min(r.target.find('?'), r.target.size()), "/");
    const std::string& key = target().api_key;
    const std::string& wrong = ctx_.run().wrong_key;
    const auto header = [&](std::string name, std::string value) { r.headers.push_back({std::move(name), std::move(value)}); };
    switch (step.key) {
      case KeyForm::proper: header("Apikey", key); break;
      case KeyForm::missing: break;
      case KeyForm::empty: header("Apikey", ""); break;
      case KeyForm::random: header("Apikey", wrong); break;
      case KeyForm::same_prefix: header("Apikey", same_prefix(key, wrong)); break;
      case KeyForm::other_case: header("Apikey", other_case(key)); break;
      case KeyForm::longer: header("Apikey", key + "x"); break;
      case KeyForm::shorter: header("Apikey", key.substr(0, key.size() - 1)); break;
      case KeyForm::in_query: {
        const std::string q = "apikey=" + core::percent_encode(key) + "&api_key=" + core::percent_encode(key);
        r.target += (r.target.find('?') == std::string::npos ? "?" : "&") + q;
        break;
      }
      case KeyForm::bearer: header("Authorization", "Bearer " + key); break;
      case KeyForm::cookie: header("Cookie", "Apikey=" + key + "; apikey=" + key); break;
      case KeyForm::x_api_key: header("X-Api-Key", key); break;
    }
    return r;
  }

  static std::string same_prefix(const std::string& key, const std::string& wrong) {
    std::string k = key.substr(0, std::min<std::size_t>(8, key.size()));
    k += wrong.substr(std::min(k.size(), wrong.size()));
    if (k.size() <= key.size() && key.starts_with(k)) k += "z";
    return k;
  }
  static std::string other_case(std::string key) {
    for (auto& c : key) c = std::isupper(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c))
                                                                       : static_cast<char>(std::toupper(c));
    return key;
  }

  // The request as curl, the key never written out: the forms made of it
  // are shell expressions of $CRH_API_KEY.
  std::string curl(const core::HttpRequest& r, KeyForm form) const {
    const std::string& key = target().api_key;
    const auto expressed = [&](const std::string& made, const std::string& expression, const std::string& rest) {
      core::HttpRequest copy = r;
      for (auto& h : copy.headers)
        if (h.name == "Apikey") h.value = key + rest;
      std::string out = core::to_curl(copy, ctx_.target().base, key);
      const std::string plain = "\"$CRH_API_KEY\"";
      if (auto at = out.find(plain); at != std::string::npos) out.replace(at, plain.size(), expression);
      (void)made;
      return out;
    };
    switch (form) {
      case KeyForm::other_case:
        return expressed(other_case(key), "\"$(printf %s \"$CRH_API_KEY\" | tr a-zA-Z A-Za-z)\"", "");
      case KeyForm::shorter: return expressed({}, "\"${CRH_API_KEY%?}\"", "");
      case KeyForm::same_prefix: {
        const std::string made = same_prefix(key, ctx_.run().wrong_key);
        return expressed(made, "\"${CRH_API_KEY:0:8}\"" + core::shell_word(made.substr(std::min<std::size_t>(8, made.size()))), "");
      }
      default: return core::to_curl(r, ctx_.target().base, key);
    }
  }

  // What the janitor must know before a write: the agent's state and the
  // key's value as the run found them.
  void before(const oracle::Operation& op) {
    if ((op.endpoint == Endpoint::snooze || op.endpoint == Endpoint::wake) && !noted_agents_.contains(op.id)) {
      noted_agents_.insert(op.id);
      auto e = quiet_.send(Endpoint::get_agent, {.id = op.id});
      std::string why;
      if (e.answered() && e.response->status == 200)
        if (auto body = oracle::parse_json(e.response->body, why))
          if (!ctx_.janitor().agents().contains(op.id))
            ctx_.janitor().agent_changed(op.id, api::agent_state(quiet_, *body));
    }
    if (op.endpoint == Endpoint::db_set) api::probe_key(quiet_, op.id.substr(api::kProbePrefix.size()));
  }

  // Tags the janitor must end: every answer that may have made one.
  void after(const oracle::Operation& op, const core::Exchange& e) {
    if (op.endpoint != Endpoint::tag) return;
    if (e.answered() && e.response->status != 200 && e.response->status < 500) return;
    if (e.answered() && e.response->status == 200) {
      std::string why;
      if (auto body = oracle::parse_json(e.response->body, why))
        if (auto id = core::api::tagged_alias_id(ctx_.fields(), *body)) {
          ctx_.janitor().tagged(*id);
          return;
        }
    }
    ctx_.janitor().tag_unsure(op.tag.value_or("(no tag name)"));
  }

  std::set<std::string> noted_agents_;
};

// Whether the call hook answers a call of a freshly tagged alias as a hook
// would (calls::no_call_hook, the binding checks' reading): a target without
// one is not explored through it. Unknown: yes.
bool has_call_hook(CheckContext& quiet) {
  try {
    api::TagGuard tags(quiet);
    const auto e = quiet.call(tags.tag("explore-hook"), quiet.caller(99));
    return !e.answered() || !calls::no_call_hook(e.response->status);
  } catch (const CheckEnded&) {
    return true;  // no alias to tag: the sequences find out
  }
}

// The agents and aliases to draw from, read without judging.
explore::Ground ground_of(CheckContext& ctx, CheckContext& quiet) {
  explore::Ground g;
  g.channel = ctx.target().channel;
  try {
    for (const auto& a : api::list_agents(quiet)) g.agents.push_back(a.id);
    for (const auto& a : api::list_aliases(quiet)) g.aliases.push_back(a.id);
  } catch (const CheckEnded&) {
    // A list that cannot be read: its own check says why; explore what was read.
  }
  g.caller_base = ctx.run().caller_base;
  g.minutes = ctx.target().dialect.minutes;
  g.call_hook = ctx.target().dialect.call_hook.enabled && !ctx.run().no_call_hook && has_call_hook(quiet);
  const auto minute_ms = ctx.target().minute.count();
  g.cross_expiry = minute_ms <= 2000 || ctx.run().explore.slow;
  g.waits = minute_ms <= 2000 ? 1'000'000 : (ctx.run().explore.slow ? 2 : 0);
  g.longest_wait_ms = std::max<std::int64_t>(3 * minute_ms, 5000);
  return g;
}

void explore_sequences(CheckContext& ctx) {
  const auto& settings = ctx.run().explore;
  if (settings.operations == 0) ctx.skip("exploration is off (--explore 0)");
  core::HttpClient quiet_client(ctx.target().base, ctx.run().client);
  CheckResult scratch;
  CheckContext quiet(ctx.run(), quiet_client, scratch);
  const explore::Ground ground = ground_of(ctx, quiet);
  if (ground.aliases.empty() && ground.agents.empty())
    ctx.indeterminate("could not read the agents nor the aliases of channel " + ground.channel + " to explore from");

  const core::Profile profile{ctx.target().dialect, ctx.statuses(), true};
  oracle::Claims claims;
  claims.channels = {ground.channel};
  claims.agents = ground.agents;
  claims.key_prefixes = {std::string(api::kProbePrefix)};
  const oracle::ModelClock clock{ctx.target().minute.count(), 0};
  const auto fresh = [&] { return oracle::Model::unknown(clock, claims); };
  auto client = ctx.new_client();
  const auto restore = [&] {
    if (ctx.run().restore) ctx.run().restore();
  };

  explore::Generator gen(settings.seed, ground);
  const auto started = Clock::now();
  // `drawn` counts against --explore: the follow-up GETs come on top, so
  // they do not change which operations a seed draws.
  std::size_t operations = 0, drawn = 0, sequences = 0, timeouts = 0, throttled = 0;
  std::set<std::string> rules;
  std::vector<std::pair<std::string, oracle::Divergence>> should;  // the curl, the SHOULD divergence
  std::optional<std::pair<explore::Sequence, explore::Replay>> failed;
  bool interrupted = false;
  while (drawn < settings.operations && !failed) {
    if (sequences > 0) restore();
    LiveWire wire(ctx, *client, quiet);
    wire.longest_wait_ms_ = ground.longest_wait_ms;
    if (wire.stopped()) {
      interrupted = true;
      break;
    }
    explore::Judge judge(fresh(), profile);
    explore::Replay r;
    explore::Sequence seq = gen.opening();
    std::size_t length = gen.length(8, 40);
    for (std::size_t i = 0; !r.failure && drawn + r.operations - r.follow_ups < settings.operations && i < length; ++i) {
      if (wire.stopped()) {
        interrupted = r.interrupted = true;
        break;
      }
      if (i >= seq.size()) {
        seq.push_back(gen.next(judge.model(), seq));
        if (seq.back().follow_up) ++length;
      }
      judge.step(seq[i], wire, r);
      if (!r.sent.back().ops.empty()) seq[i].not_before_ms = r.sent.back().ops.front().at_ms;
    }
    ++sequences;
    operations += r.operations;
    drawn += r.operations - r.follow_ups;
    timeouts += r.timeouts;
    throttled += r.throttled;
    rules.insert(r.rules.begin(), r.rules.end());
    for (auto& [step, d] : r.should)
      if (std::none_of(should.begin(), should.end(), [&rule = d.rule](const auto& x) { return x.second.rule == rule; }))
        should.emplace_back(r.sent[step].answers.empty() ? "" : r.sent[step].answers.front().curl, d);
    if (r.failure) failed.emplace(seq, std::move(r));
    if (interrupted) break;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const auto rate = static_cast<long>(seconds > 0 ? static_cast<double>(operations) / seconds : 0);
  ctx.cover({rules.begin(), rules.end()});
  const std::string seed = std::to_string(settings.seed);
  const std::string replays_it = "--seed " + seed + " replays it (the rerun line has the run's other options)";
  for (const auto& [curl, d] : should)
    ctx.add({oracle::Severity::should, d.rule, d.text + " (seed " + seed + ": " + curl + ")"});
  const std::string explored =
      std::to_string(operations) + " operations" +
      (operations > drawn ? " (" + std::to_string(operations - drawn) + " of them follow-up GETs)" : "") + " in " +
      std::to_string(sequences) + " sequences, " +
      std::to_string(rate) + " operations/s, seed " + seed +
      (timeouts ? ", " + std::to_string(timeouts) + " without an answer within --timeout" : "") +
      (throttled ? ", " + std::to_string(throttled) + " answered HTTP 429 (not now: rate limits, spec 8)" : "");
  if (!failed) {
    if (interrupted) ctx.skip("exploration interrupted (Ctrl-C) after " + explored + "; no divergence until then");
    // An answer that never came, or came as "not now", proves nothing either way.
    if (2 * timeouts > operations) ctx.indeterminate("most answers did not come: " + explored);
    else if (2 * (timeouts + throttled) > operations)
      ctx.indeterminate("most answers did not come or said \"not now\": " + explored);
    ctx.note(explored + "; every answer as the model of the spec predicts");
    return;
  }

  // Shrink: each candidate replayed from the state the restore leaves.
  const auto& [sequence, replay] = *failed;
  const std::string rule(replay.failure->rule());
  const auto shrink_started = Clock::now();
  const auto budget_time = std::chrono::seconds(30) + 4 * (Clock::now() - started) / std::max<std::size_t>(sequences, 1);
  auto shrunk = explore::shrink(
      sequence, replay, rule,
      [&](const explore::Sequence& candidate) {
        restore();
        LiveWire wire(ctx, *client, quiet);
        wire.longest_wait_ms_ = ground.longest_wait_ms;
        return explore::replay(candidate, fresh(), profile, wire);
      },
      200, [&] { return Clock::now() - shrink_started > budget_time || LiveWire(ctx, *client, quiet).stopped(); });
  const auto& kept = shrunk.replay;
  // One shell line a step; the time between steps, where it may matter (a
  // tag's minutes), as a sleep before it.
  std::int64_t last_ms = 0;
  std::string waited;  // a wait's note: said with the step after it, whose sleep it is
  for (std::size_t i = 0; i < kept.sent.size(); ++i) {
    const auto& s = kept.sent[i];
    if (s.ops.empty()) {
      waited = s.note;
      continue;
    }
    const std::int64_t at = s.ops.front().at_ms;
    Evidence e;
    char gap[32] = "";
    if (at - last_ms >= 20) std::snprintf(gap, sizeof gap, "sleep %.3f; ", static_cast<double>(at - last_ms) / 1000);
    last_ms = at;
    e.curl = gap + s.answers.front().curl;
    e.answer = (waited.empty() ? "" : "(" + waited + ") ") + s.answers.front().described;
    waited.clear();
    for (std::size_t j = 1; j < s.answers.size(); ++j) e.answer += " | " + s.answers[j].described;
    if (s.answers.size() > 1) {
      ctx.needs_one_instant();  // a burst: callers at once
    } else {
      const auto& a = s.answers.front();
      e.replay = ReplayStep{.request = a.request,
                            .status = a.observed.answered ? a.observed.status : 0u,
                            .content_type = a.content_type,
                            .body = a.observed.answered ? a.observed.body : std::string(),
                            .at = std::chrono::milliseconds(at)};
    }
    ctx.record_evidence(std::move(e));
    if (kept.failure && i == kept.failure->step) ctx.fails_at_last_evidence();
  }
  std::size_t shrunk_ops = 0;
  for (const auto& s : kept.sent) shrunk_ops += s.ops.size();
  std::size_t failing_ops = 0;
  for (const auto& s : replay.sent) failing_ops += s.ops.size();
  const auto& d = kept.failure->divergences.front();
  ctx.fail(d.rule, d.text + "; shrunk from " + std::to_string(failing_ops) + " to " + std::to_string(shrunk_ops) +
                       " operations in " + std::to_string(shrunk.replays) + " replays" +
                       (shrunk.interrupted ? " (shrinking stopped early)" : "") + " — the evidence is the reproducer; " +
                       (ground.cross_expiry ? "a tag's end was judged with a margin of " +
                                                  std::to_string(kept.margin_ms) +
                                                  " ms either side (twice the slowest answer, plus 10 ms); "
                                            : "") +
                       explored + "; " + replays_it);
}

}  // namespace

void add_explore_checks(std::vector<Check>& out) {
  out.push_back({.id = "explore.sequences",
                 .suite = "explore",
                 .rules = {"E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "R1", "R2", "R3", "R4", "R5", "A2",
                           "T1", "B1", "B2", "B3", "X0", "X1", "X2"},
                 .summary = "random sequences of every operation, inputs at the edges, every answer judged by the "
                            "model of the spec; a failure is shrunk to a short curl reproducer (--explore N, --seed S)",
                 .body = explore_sequences,
                 .alone = true});
}

}  // namespace crh::contracts::suites
