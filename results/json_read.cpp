#include "results/json_read.hpp"

#include <stdexcept>

namespace crh::results {
namespace json = boost::json;
namespace {

[[noreturn]] void fail(std::string_view where, std::string_view key, std::string_view what) {
  throw std::runtime_error(std::string(where) + (where.empty() ? "" : ".") + std::string(key) + ": " + std::string(what));
}

}  // namespace

const json::value& field_at(const json::object& o, std::string_view key, std::string_view where) {
  auto it = o.find(key);
  if (it == o.end()) fail(where, key, "missing");
  return it->value();
}

const json::object& as_object(const json::value& v, std::string_view where) {
  if (!v.is_object()) throw std::runtime_error(std::string(where) + ": expected an object");
  return v.get_object();
}

const json::object& object_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (!v.is_object()) fail(where, key, "expected an object");
  return v.get_object();
}

const json::array& array_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (!v.is_array()) fail(where, key, "expected an array");
  return v.get_array();
}

std::string string_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (!v.is_string()) fail(where, key, "expected a string");
  return std::string(v.get_string());
}

double number_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  fail(where, key, "expected a number");
}

std::uint64_t count_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64() && v.get_int64() >= 0) return static_cast<std::uint64_t>(v.get_int64());
  fail(where, key, "expected a whole number >= 0");
}

std::int64_t integer_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(v.get_uint64());
  fail(where, key, "expected a whole number");
}

bool bool_at(const json::object& o, std::string_view key, std::string_view where) {
  const auto& v = field_at(o, key, where);
  if (!v.is_bool()) fail(where, key, "expected true or false");
  return v.get_bool();
}

}  // namespace crh::results
