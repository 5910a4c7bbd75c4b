// Default, generated and file-based fixtures of the reference service.
#include "fixtures.hpp"

#include <boost/json.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace crh::reference {
namespace json = boost::json;
namespace {

std::string digits(int value, int width) {
  std::string s = std::to_string(value);
  if (static_cast<int>(s.size()) < width) s.insert(0, width - s.size(), '0');
  return s;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("fixtures: " + what);
}

// An id may be written as a string or an integer.
std::string id_of(const json::object& o, const char* field, const std::string& where) {
  auto* v = o.if_contains(field);
  if (!v) fail(where + " has no \"" + field + "\"");
  if (v->is_string() && !v->get_string().empty()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  fail(where + ": \"" + field + "\" must be a non-empty string or an integer");
}

const json::array& array_of(const json::object& o, const char* field, const std::string& where) {
  auto* v = o.if_contains(field);
  if (!v || !v->is_array()) fail(where + ": \"" + field + "\" must be an array");
  return v->get_array();
}

const json::object& object_at(const json::value& v, const std::string& where) {
  if (!v.is_object()) fail(where + " must be an object");
  return v.get_object();
}

}  // namespace

Fixtures default_fixtures(int channels, int aliases) {
  Fixtures f;
  f.agents = {{"101", "Alice Avery", false}, {"102", "Bob Brennan", false},
              {"103", "Carol Chen", false}};
  const int cw = std::max<int>(2, std::to_string(channels).size());
  const int aw = std::max<int>(2, std::to_string(aliases).size());
  for (int c = 1; c <= channels; ++c) {
    ChannelFixture ch{std::to_string(c), {}};
    for (int a = 1; a <= aliases; ++a)
      ch.aliases.push_back({std::to_string(a), "+1555" + digits(c, cw) + digits(a, aw)});
    f.channels.push_back(std::move(ch));
  }
  return f;
}

Fixtures parse_fixtures(const std::string& json_text) {
  boost::system::error_code ec;
  json::value doc = json::parse(json_text, ec);
  if (ec) fail("not valid JSON: " + ec.message());
  const auto& root = object_at(doc, "the document");
  Fixtures f;
  std::set<std::string> seen;
  if (root.contains("agents")) {
    for (const auto& v : array_of(root, "agents", "the document")) {
      const auto& o = object_at(v, "each agent");
      AgentFixture a{id_of(o, "id", "an agent"), "", false};
      if (!seen.insert(a.id).second) fail("agent id \"" + a.id + "\" appears twice");
      if (auto* n = o.if_contains("name")) {
        if (!n->is_string()) fail("agent " + a.id + ": \"name\" must be a string");
        a.name = std::string(n->get_string());
      }
      if (auto* s = o.if_contains("state")) {
        if (!s->is_string() || (s->get_string() != "available" && s->get_string() != "snoozed"))
          fail("agent " + a.id + ": \"state\" must be \"available\" or \"snoozed\"");
        a.snoozed = s->get_string() == "snoozed";
      }
      f.agents.push_back(std::move(a));
    }
  }
  seen.clear();
  if (root.contains("channels")) {
    for (const auto& v : array_of(root, "channels", "the document")) {
      const auto& o = object_at(v, "each channel");
      ChannelFixture ch{id_of(o, "id", "a channel"), {}};
      if (!seen.insert(ch.id).second) fail("channel id \"" + ch.id + "\" appears twice");
      std::set<std::string> alias_ids;
      for (const auto& av : array_of(o, "aliases", "channel " + ch.id)) {
        const auto& ao = object_at(av, "each alias of channel " + ch.id);
        AliasFixture a{id_of(ao, "id", "an alias of channel " + ch.id), ""};
        if (!alias_ids.insert(a.id).second)
          fail("alias id \"" + a.id + "\" appears twice in channel " + ch.id);
        auto* n = ao.if_contains("number");
        if (!n || !n->is_string()) fail("alias " + a.id + " of channel " + ch.id +
                                        ": \"number\" must be a string");
        a.number = std::string(n->get_string());
        ch.aliases.push_back(std::move(a));
      }
      f.channels.push_back(std::move(ch));
    }
  }
  if (auto* db = root.if_contains("database")) {
    if (!db->is_object()) fail("\"database\" must be an object of key: string value");
    for (const auto& [k, v] : db->get_object()) {
      if (!v.is_string()) fail("database key \"" + std::string(k) + "\": value must be a string");
      f.database.emplace_back(std::string(k), std::string(v.get_string()));
    }
  }
  return f;
}

Fixtures load_fixtures_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("fixtures: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_fixtures(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (in " + path + ")");
  }
}

}  // namespace crh::reference
