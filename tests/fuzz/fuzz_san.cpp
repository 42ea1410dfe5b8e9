// libFuzzer target: parse_san. The first byte picks one of a few fixed positions; the
// rest is SAN text, one move per line, played in turn while they parse. Each accepted
// move must be legal, and its to_san must parse back to the same move; parse_san and the
// reference that lists every legal move must agree on the move or on the error.
#include <string>

#include "fuzz_common.h"

using namespace pgmate::fuzz;

namespace {

std::string outcome(Move (*parse)(const Board&, std::string_view), const Board& b, std::string_view text) {
  try {
    return "move " + to_uci(parse(b, text));
  } catch (const IllegalMove& e) {
    return std::string("IllegalMove: ") + e.what();
  } catch (const ParseError& e) {
    return std::string("ParseError: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Board b = parse_fen(kPositions[data[0] % kPositionCount]);
  for_each_line(data + 1, size - 1, [&](std::string_view text) {
    const std::string fast = outcome(parse_san, b, text), listed = outcome(detail::parse_san_by_list, b, text);
    if (fast != listed) fail_with("parse_san differs from the listing", to_fen(b) + " " + fast + " / " + listed);
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
