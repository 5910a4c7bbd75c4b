// The capture of one run (issue 14 §1) as the commands use it: started from
// the --capture flags before the run's traffic, stopped before the result
// document is written, and its summary added to that document as "capture".
// Says once on stderr why no capture was made; --capture-required turns that
// into exit 3 before any traffic.
#pragma once

#include <memory>
#include <string>

#include <boost/json/object.hpp>

#include "capture/live.hpp"
#include "core/target.hpp"

namespace crh::runners {

struct CaptureFlags;

class CaptureSession {
 public:
  CaptureSession();
  ~CaptureSession();  // stops a capture still running (the file is still written whole)
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  // Starts the capture the flags ask for (none: nothing happens, returns 0)
  // on the target's address and port, and on the SIP target's over UDP and
  // TCP when the target's calls go over SIP. Returns 0, or kExitUnreachable after
  // printing why when the capture is required and cannot be made.
  // `command` ("crh load") prefixes the one line said when there is no capture.
  int start(const CaptureFlags& flags, const core::Target& target, const std::string& command);

  bool asked() const;    // --capture was given
  bool running() const;  // a capture is being made (asked, started, not stopped)
  // Stops the capture (idempotent) and returns its final summary; the file
  // is complete once this returns.
  const capture::LiveSummary& stop();

  // After stop(): whether a capture was made and written, and its file.
  bool made() const;
  const std::string& file() const;
  const capture::LiveSummary& summary() const;

  // Adds the "capture" section (results::keys::capture) to a result document;
  // nothing when no capture was asked for. Stops the capture first.
  void add_to(boost::json::object& document);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The "capture" section of a result document from a summary.
boost::json::object capture_document(const capture::LiveSummary& summary);

}  // namespace crh::runners
