// libFuzzer target: parse_san. The first byte picks one of a few fixed positions; the
// rest is SAN text, one move per line, played in turn while they parse. Each accepted
// move must be legal, and its to_san must parse back to the same move.
#include "fuzz_common.h"

using namespace pgmate::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Board b = parse_fen(kPositions[data[0] % kPositionCount]);
  for_each_line(data + 1, size - 1, [&](std::string_view text) {
    Move m;
    try {
      m = parse_san(b, text);
    } catch (const ParseError&) {
      return false;
    }
    FUZZ_CHECK(is_legal(b, m));
    const std::string san = to_san(b, m);
    try {
      if (parse_san(b, san) != m) fail_with("to_san does not parse back", to_fen(b) + " " + san);
      FUZZ_CHECK(parse_uci(b, to_uci(m)) == m);
    } catch (const ParseError& e) {
      fail_with("SAN of an accepted move rejected", to_fen(b) + " " + san + ": " + e.what());
    }
    Board next;
    check_after_move(b, m, next);
    b = next;
    return true;
  });
  return 0;
}
