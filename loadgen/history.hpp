// The operation history of a load run, streamed to a JSON-lines file when
// asked. The operations are the oracle's (oracle/history.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>

#include "oracle/history.hpp"

namespace crh::loadgen {

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
  void write(std::span<const oracle::Op> ops);
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
