// Fixtures: the defaults of DESIGN.md §3, generated sizes, and the JSON file format.
#include "reference/fixtures.hpp"

#include <gtest/gtest.h>

#include <set>

namespace crh::reference {
namespace {

TEST(Fixtures, DefaultsAreThreeAgentsAndTwoChannelsOfFourAliases) {
  auto f = default_fixtures();
  ASSERT_EQ(f.agents.size(), 3u);
  EXPECT_EQ(f.agents[0].id, "101");
  EXPECT_EQ(f.agents[2].id, "103");
  ASSERT_EQ(f.channels.size(), 2u);
  EXPECT_EQ(f.channels[1].id, "2");
  ASSERT_EQ(f.channels[0].aliases.size(), 4u);
  EXPECT_EQ(f.channels[0].aliases[2].number, "+15550103");
}

TEST(Fixtures, GeneratedNumbersAreUniqueAcrossChannels) {
  auto f = default_fixtures(120, 150);
  std::set<std::string> numbers;
  for (const auto& c : f.channels)
    for (const auto& a : c.aliases) numbers.insert(a.number);
  EXPECT_EQ(numbers.size(), 120u * 150u);
}

TEST(Fixtures, ParsesAgentsChannelsAndDatabase) {
  auto f = parse_fixtures(R"({
    "agents": [{"id": 7, "name": "Ann", "state": "snoozed"}, {"id": "8"}],
    "channels": [{"id": "c", "aliases": [{"id": 1, "number": "+1"}, {"id": "x", "number": "+2"}]}],
    "database": {"greeting": "hello"}})");
  ASSERT_EQ(f.agents.size(), 2u);
  EXPECT_EQ(f.agents[0].id, "7");
  EXPECT_TRUE(f.agents[0].snoozed);
  EXPECT_EQ(f.channels[0].aliases[1].id, "x");
  ASSERT_EQ(f.database.size(), 1u);
  EXPECT_EQ(f.database[0].second, "hello");
}

TEST(Fixtures, RejectsMalformedDocumentsNamingTheProblem) {
  auto message = [](const char* text) {
    try {
      parse_fixtures(text);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"agents":[{"id":"1"},{"id":1}]})").find("appears twice"), std::string::npos);
  EXPECT_NE(message(R"({"channels":[{"id":"1","aliases":[{"id":"1"}]}]})").find("number"),
            std::string::npos);
  EXPECT_NE(message(R"({"agents":[{"id":"1","state":"busy"}]})").find("state"), std::string::npos);
  EXPECT_NE(message(R"({"database":{"k":1}})").find("k"), std::string::npos);
}

}  // namespace
}  // namespace crh::reference
