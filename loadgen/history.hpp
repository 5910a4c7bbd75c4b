// The operation history of a load run: every operation with its invoke and
// completion times and outcome, streamed to a JSON-lines file when asked.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace crh::loadgen {

// Every operation the generator sends. `call` is a caller's first call in a
// race round, `recall` its second.
enum class OpKind : std::uint8_t {
  get,
  list_agents,
  get_agent,
  snooze,
  wake,
  db_get,
  db_set,
  list_aliases,
  tag,
  untag,
  call,
  recall,
  count_
};
inline constexpr std::size_t kOpKinds = static_cast<std::size_t>(OpKind::count_);

std::string_view to_string(OpKind k);  // "get", "list-agents", ..., "untag", "call", "recall"
std::optional<OpKind> op_kind_by_name(std::string_view name);

// ok: the target said yes (2xx). fail: it said no (any other answer).
// indeterminate: no answer, or a 5xx: the operation may or may not have been applied.
enum class Outcome : std::uint8_t { ok, fail, indeterminate, count_ };
inline constexpr std::size_t kOutcomes = static_cast<std::size_t>(Outcome::count_);
std::string_view to_string(Outcome o);

struct Op {
  std::uint64_t round = 0;  // race round id; 0 outside the race
  OpKind kind = OpKind::get;
  std::string alias;             // tag: the alias it returned; untag and calls: the alias addressed
  std::string caller;            // calls: the calling number
  std::int64_t invoke_ns = 0;    // since the run started (steady clock): when the last byte went out
  std::int64_t complete_ns = 0;  // when the answer was complete (or the attempt given up)
  Outcome outcome = Outcome::indeterminate;
  unsigned status = 0;  // HTTP status; 0 when there was no answer
  std::string error;    // why there was no answer ("timeout", "reset", ...)
};

// One JSON object, no newline.
std::string to_json_line(const Op& op);

// The history file cannot be opened or written: a configuration error of the
// run (crh exits 2), not a fault of the target.
struct HistoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Appends operations to a file as JSON lines, from any thread. Buffered:
// memory stays bounded however long the run.
class HistoryWriter {
 public:
  HistoryWriter() = default;
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Throws HistoryError saying why the file cannot be written.
  void open(const std::string& path);
  bool is_open() const { return file_ != nullptr; }
  void write(std::span<const Op> ops);
  // Flushes and closes; throws HistoryError when the data did not all reach the file.
  void close();
  std::uint64_t written() const { return written_; }

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string buffer_;
  std::uint64_t written_ = 0;
  bool failed_ = false;
};

}  // namespace crh::loadgen
