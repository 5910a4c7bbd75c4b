// Strict readers for result documents read back from disk (`crh report`):
// each throws std::runtime_error naming the field's path when it is missing
// or of the wrong type, so a truncated or foreign file is named, not guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace crh::results {

const boost::json::value& field_at(const boost::json::object& o, std::string_view key, std::string_view where);
const boost::json::object& object_at(const boost::json::object& o, std::string_view key, std::string_view where);
const boost::json::array& array_at(const boost::json::object& o, std::string_view key, std::string_view where);
std::string string_at(const boost::json::object& o, std::string_view key, std::string_view where);
double number_at(const boost::json::object& o, std::string_view key, std::string_view where);  // integer or not
std::uint64_t count_at(const boost::json::object& o, std::string_view key, std::string_view where);
std::int64_t integer_at(const boost::json::object& o, std::string_view key, std::string_view where);
bool bool_at(const boost::json::object& o, std::string_view key, std::string_view where);

// The value as an object, or the error naming `where`.
const boost::json::object& as_object(const boost::json::value& v, std::string_view where);

}  // namespace crh::results
