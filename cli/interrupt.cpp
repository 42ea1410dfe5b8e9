#include "interrupt.h"

#include <csignal>

namespace pgmate::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills
}

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted = 0;
  std::signal(SIGINT, on_interrupt);
}

InterruptScope::~InterruptScope() { std::signal(SIGINT, SIG_DFL); }

bool interrupted() { return g_interrupted != 0; }

void stop_if_interrupted() {
  if (g_interrupted) throw Interrupted{};
}

}  // namespace pgmate::cli
