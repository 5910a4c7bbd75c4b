#include "interrupt.hpp"

#include <csignal>

namespace crh::runners {
namespace {

std::atomic<bool> g_requested{false};
using Handler = void (*)(int);
Handler g_previous_int = SIG_DFL;
Handler g_previous_term = SIG_DFL;

extern "C" void on_interrupt(int signal) {
  g_requested.store(true);
  std::signal(signal, SIG_DFL);  // the second one ends the process
}

}  // namespace

InterruptScope::InterruptScope() {
  g_requested.store(false);
  g_previous_int = std::signal(SIGINT, on_interrupt);
  g_previous_term = std::signal(SIGTERM, on_interrupt);
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, g_previous_int);
  std::signal(SIGTERM, g_previous_term);
}

const std::atomic<bool>& InterruptScope::requested() { return g_requested; }

}  // namespace crh::runners
