// libFuzzer target: parse_uci. The first byte picks one of a few fixed positions; the
// rest is UCI text, one move per line, played in turn while they parse. Each accepted
// move must be legal, print back as the same text, and parse back to the same move.
#include "fuzz_common.h"

using namespace pgmate::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Board b = parse_fen(kPositions[data[0] % kPositionCount]);
  for_each_line(data + 1, size - 1, [&](std::string_view text) {
    Move m;
    try {
      m = parse_uci(b, text);
    } catch (const ParseError&) {
      return false;
    }
    FUZZ_CHECK(is_legal(b, m));
    const std::string uci = to_uci(m);
    if (uci != text) fail_with("to_uci differs from the accepted text", std::string(text) + " -> " + uci);
    try {
      FUZZ_CHECK(parse_uci(b, uci) == m);
      const Move syntax = parse_uci_syntax(text);
      FUZZ_CHECK(syntax.from() == m.from() && syntax.to() == m.to());
      FUZZ_CHECK((syntax.kind() == kPromotion) == (m.kind() == kPromotion));
      // SAN accepts UCI text too, and must agree.
      FUZZ_CHECK(parse_san(b, text) == m);
    } catch (const ParseError& e) {
      fail_with("accepted UCI move does not parse back", to_fen(b) + " " + uci + ": " + e.what());
    }
    Board next;
    check_after_move(b, m, next);
    b = next;
    return true;
  });
  return 0;
}
