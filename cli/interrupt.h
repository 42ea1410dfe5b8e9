// Ctrl-C for the long commands (selfplay, arena): the first one asks the command to stop at
// its next check, where it keeps what is whole (stored or written) and prints a summary; a
// second one kills.
#pragma once

namespace pgmate::cli {

struct Interrupted {};

// Catches SIGINT while alive (clearing an earlier request); the default handler after.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

bool interrupted();
// Throws Interrupted once Ctrl-C was pressed.
void stop_if_interrupted();

}  // namespace pgmate::cli
