// The record of nights: writing, reading, pruning, accepting a new level,
// and which nights a comparison may use.
#include "nightly/record.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <boost/json.hpp>

#include "core/output_file.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "results/keys_run.hpp"
#include "results/view.hpp"
#include "nightly/figures.hpp"
#include "results/verdict.hpp"

namespace crh::nightly {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace k = results::keys;
using results::DocView;

namespace {

constexpr std::string_view kSchema = "crh.night";
constexpr int kSchemaVersion = 1;
constexpr std::string_view kPrefix = "night-";
constexpr std::string_view kAcceptedFile = "accepted.json";

// 2026-11-25T22:45:00Z -> 20261125T224500Z (file names sort by time).
std::string compact_time(const std::string& iso) {
  std::string out;
  for (char c : iso.substr(0, 19))
    if (c != '-' && c != ':') out += c;
  return out + "Z";
}

std::string random_hex(int digits) {
  std::random_device rd;
  std::string out;
  while (static_cast<int>(out.size()) < digits) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", rd());
    out += buf;
  }
  return out.substr(0, digits);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Better better_of(std::string_view s) { return s == "higher" ? Better::higher : Better::lower; }

NightFigure figure_from_json(const DocView& f) {
  NightFigure out;
  out.scenario = f.find("scenario").str();
  out.operation = f.find("operation").str();
  out.figure = f.find("figure").str();
  out.unit = f.find("unit").str();
  out.better = better_of(f.find("better").str());
  out.estimate.value = f.find("value").num();
  out.estimate.lower = f.find("lower").maybe_num();
  out.estimate.upper = f.find("upper").maybe_num();
  out.estimate.backed = !f.find("backed").is_bool() || f.find("backed").boolean();
  for (const auto& r : f.find("repetitions").items())
    if (auto v = r.maybe_num()) out.estimate.repetitions.push_back(*v);
  out.n = f.find("n").count();
  return out;
}

Night night_from_json(const json::object& doc, const std::string& file) {
  const DocView d(doc);
  if (d.find("schema").str() != kSchema) throw std::runtime_error("not a crh night file (schema is not crh.night)");
  Night n;
  n.file = file;
  n.id = d.find("night").str();
  n.started_at = d.find("started_at").str();
  const auto verdict = d.find("verdict");
  n.status = verdict.find("status").str();
  n.exit_code = static_cast<int>(verdict.find("exit_code").num());
  n.reason = verdict.find("reason").str();
  n.comparable = verdict.find("comparable").boolean();
  n.fingerprint = d.find("fingerprint").find("hash").str();
  if (const auto* f = d.find("fingerprint").find("fields").object()) n.fingerprint_fields = *f;
  n.tool_version = d.find("tool_version").str();
  const auto machine = d.find("machine");
  n.cpu = machine.find("cpu").str();
  n.cores = static_cast<int>(machine.find("cores").num());
  n.host = machine.find("host").str();
  n.report = d.find("report").str();
  for (const auto& f : d.find("figures").items()) n.figures.push_back(figure_from_json(f));
  if (const auto* h = d.find("histograms").object()) n.histograms = *h;
  if (const auto* g = d.find("gate").object()) n.gate = *g;
  if (n.id.empty() || n.started_at.empty()) throw std::runtime_error("a night file without its id or start");
  return n;
}

std::vector<fs::path> night_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file() && name.starts_with(kPrefix) && name.ends_with(".json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());  // names start with the time: oldest first
  return out;
}

}  // namespace

const NightFigure* Night::find(const std::string& key) const {
  for (const auto& f : figures)
    if (f.key() == key) return &f;
  return nullptr;
}

json::object night_document(const json::object& run, const std::string& report) {
  const DocView d(run);
  const auto verdict = d.find(k::envelope::verdict);
  const std::string started = d.find(k::envelope::started_at).str();
  const int exit_code = static_cast<int>(verdict.find(k::verdict::exit_code).num());
  const auto env = d.find(k::run::environment);
  const auto fields = fingerprint_fields(run);
  std::vector<json::object> loads;
  for (const auto& l : d.find(k::run::loads).items())
    if (const auto* o = l.object()) loads.push_back(*o);
  const auto* comparison = d.find(k::run::comparison).object();
  // Side by side with a baseline deployment, a night's figures are its ratios
  // (what was judged); its gate is that whole comparison, drawn again by the trend page.
  const bool side_by_side = comparison && DocView(*comparison).find(k::comparison::mode).str() == "against";
  // With a control arm, the ratios to the control were judged against the record: they are the figures.
  const json::object* control = comparison ? DocView(*comparison).find(k::comparison::control).object() : nullptr;
  // A control-arm night not compared (interrupted) has no ratios: no figures, rather than the target's own in a series of ratios.
  const bool control_arm = !d.find(k::envelope::config).find(k::run_config::control).str().empty();
  json::array figures;
  for (const auto& f : side_by_side ? ratio_figures(*comparison)
                       : control    ? ratio_figures(*control)
                       : control_arm ? std::vector<NightFigure>{}
                                     : figures_of_loads(loads))
    figures.push_back(figure_json(f));
  json::object histograms;
  for (const auto& l : loads) {
    const DocView load(l);
    json::object ops;
    for (const auto& [op, v] : load.find(k::load::operations).fields())
      if (const auto* h = v.find(k::operation::latency).find(k::latency::histogram).value()) ops[op] = *h;
    histograms[load.find(k::envelope::config).find(k::load_config::scenario).str()] = std::move(ops);
  }
  json::object gate;
  if (side_by_side)
    gate = *comparison;
  else if (comparison)
    for (auto key : {k::comparison::mode, k::comparison::regressions, k::comparison::inconclusive,
                     k::comparison::change_points, k::comparison::unreliable, k::comparison::control})
      if (auto it = comparison->find(key); it != comparison->end()) gate[key] = it->value();
  // A night that passed is a reference for later ones, and so is one whose
  // figures were only inconclusive (nothing failed, its loads reliable: a
  // measurement of the service like any other; were it left out, a new record
  // whose first nights cannot tell would never gather a window). A failed,
  // unreliable or interrupted night is kept to be seen, never compared against.
  const std::string status = verdict.find(k::verdict::status).str();
  const auto named = results::status_from(status);
  const bool comparable = named && results::exit_code_of(*named) == exit_code &&
                          (named == results::Status::passed || named == results::Status::inconclusive) &&
                          !verdict.find(k::verdict::incomplete).boolean();
  return json::object{
      {"schema", kSchema},
      {"schema_version", kSchemaVersion},
      {"night", compact_time(started) + "-" + random_hex(8)},
      {"started_at", started},
      {"verdict", json::object{{"status", status},
                               {"exit_code", exit_code},
                               {"reason", verdict.find(k::verdict::reason).str()},
                               {"comparable", comparable}}},
      {"fingerprint", json::object{{"hash", fingerprint_hash(fields)}, {"fields", fields}}},
      {"tool_version", d.find(k::envelope::tool).find(k::tool::version).str()},
      {"machine", json::object{{"cpu", env.find(k::environment::cpu_model).str()},
                               {"cores", env.find(k::environment::cpus).num()},
                               {"host", env.find(k::environment::host).str()}}},
      {"report", report.empty() ? json::value(nullptr) : json::value(report)},
      {"figures", std::move(figures)},
      {"histograms", std::move(histograms)},
      {"gate", gate.empty() ? json::value(nullptr) : json::value(std::move(gate))}};
}

std::string write_night(const std::string& dir, const json::object& night, std::size_t keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--nights " + dir + ": cannot be created (" + ec.message() + ")");
  const auto path = fs::path(dir) / (std::string(kPrefix) + std::string(night.at("night").as_string()) + ".json");
  core::write_file_atomically(path.string(), json::serialize(night) + "\n");
  auto files = night_files(dir);
  for (std::size_t i = 0; files.size() > keep && i < files.size() - keep; ++i) fs::remove(files[i], ec);
  return path.string();
}

std::vector<Night> read_nights(const std::string& dir, std::vector<std::string>& problems) {
  std::vector<Night> out;
  for (const auto& p : night_files(dir)) {
    try {
      boost::system::error_code ec;
      auto v = json::parse(read_text(p), ec);
      if (ec || !v.is_object()) throw std::runtime_error("not JSON (" + ec.message() + ")");
      out.push_back(night_from_json(v.get_object(), p.string()));
    } catch (const std::exception& e) {
      problems.push_back(p.string() + ": " + e.what() + ": left out of the record");
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Night& a, const Night& b) { return a.started_at < b.started_at; });
  return out;
}

std::vector<std::string> accepted_nights(const std::string& dir) {
  const auto path = fs::path(dir) / kAcceptedFile;
  std::vector<std::string> out;
  if (!fs::exists(path)) return out;
  boost::system::error_code ec;
  auto v = json::parse(read_text(path), ec);
  if (ec || !v.is_object()) throw std::runtime_error(path.string() + ": not JSON; fix or remove it");
  for (const auto& a : DocView(v.get_object()).find("accepted").items()) out.push_back(a.find("night").str());
  return out;
}

void accept_night(const std::string& dir, const std::string& night_id) {
  std::vector<std::string> problems;
  const auto record = read_nights(dir, problems);
  const auto it = std::find_if(record.begin(), record.end(), [&](const Night& n) { return n.id == night_id; });
  if (it == record.end())
    throw std::runtime_error("--accept " + night_id + ": no such night in " + dir +
                             (record.empty() ? " (it holds none)" : " (the last is " + record.back().id + ")"));
  json::array accepted;
  for (const auto& id : accepted_nights(dir)) accepted.push_back(json::object{{"night", id}});
  accepted.push_back(json::object{{"night", night_id}, {"fingerprint", it->fingerprint}});
  core::write_file_atomically((fs::path(dir) / kAcceptedFile).string(),
                              json::serialize(json::object{{"schema", "crh.nights.accepted"},
                                                           {"accepted", std::move(accepted)}}) +
                                  "\n");
}

std::vector<const Night*> comparison_window(const std::vector<Night>& record, const std::string& fingerprint,
                                            const std::vector<std::string>& accepted,
                                            const std::string& before_started_at) {
  // The latest accepted night of this fingerprint starts the level in force.
  std::string from;
  for (const auto& n : record)
    if (n.fingerprint == fingerprint && std::find(accepted.begin(), accepted.end(), n.id) != accepted.end())
      from = std::max(from, n.started_at);

  std::vector<const Night*> out;
  auto is_accepted = [&](const Night& n) { return std::find(accepted.begin(), accepted.end(), n.id) != accepted.end(); };
  for (const auto& n : record) {
    // An accepted night that failed on its figures (1) or could not tell (4)
    // is the new level itself; one that was not measured (3) is not.
    const bool usable =
        n.comparable || (is_accepted(n) && (n.exit_code == results::kExitFailed || n.exit_code == results::kExitCouldNotTell));
    if (n.fingerprint == fingerprint && usable && n.started_at >= from && n.started_at < before_started_at)
      out.push_back(&n);
  }
  return out;
}

}  // namespace crh::nightly
