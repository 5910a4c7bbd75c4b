// The data the reference service starts with: agents, channels with their
// aliases, database entries. Defaults per DESIGN.md §3, or generated, or from JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace crh::reference {

struct AgentFixture {
  std::string id;
  std::string name;
  bool snoozed = false;
};

struct AliasFixture {
  std::string id;      // unique within its channel
  std::string number;  // the alias's telephone number
};

struct ChannelFixture {
  std::string id;
  std::vector<AliasFixture> aliases;
};

struct Fixtures {
  std::vector<AgentFixture> agents;
  std::vector<ChannelFixture> channels;
  std::vector<std::pair<std::string, std::string>> database;  // key, value
};

// Agents 101, 102, 103; `channels` channels with ids 1..N, each with
// `aliases` aliases with ids 1..M. The defaults are DESIGN.md §3's fixtures.
Fixtures default_fixtures(int channels = 2, int aliases = 4);

// Parses a fixtures document (format in README.md). Throws std::runtime_error
// naming the offending field when it is malformed or has duplicate ids.
Fixtures parse_fixtures(const std::string& json_text);

// Reads and parses a fixtures file; throws std::runtime_error naming the file.
Fixtures load_fixtures_file(const std::string& path);

}  // namespace crh::reference
