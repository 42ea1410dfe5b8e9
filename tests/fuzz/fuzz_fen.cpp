// libFuzzer target: parse_fen on arbitrary text. Whatever it accepts must print as a FEN
// that parses back to the identical board, and must survive pack/unpack unchanged.
#include "fuzz_common.h"

using namespace pgmate::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Board b;
  try {
    b = parse_fen(text);
  } catch (const ParseError&) {
    return 0;
  }
  FUZZ_CHECK(b.key == b.compute_key());
  FUZZ_CHECK(b.fullmove >= 1);

  const std::string fen = to_fen(b);
  Board again;
  try {
    again = parse_fen(fen);
    validate_position(b, "accepted FEN");
  } catch (const ParseError& e) {
    fail_with("to_fen output rejected", fen + ": " + e.what());
  }
  if (to_fen(again) != fen) fail_with("to_fen(parse_fen(to_fen(b))) differs", fen + " vs " + to_fen(again));
  if (!same_board(again, b)) fail_with("board differs after FEN round trip", fen);

  const PackedBoard packed = pack(b);
  FUZZ_CHECK(packed[30] == 0 && packed[31] == 0);
  Board unpacked;
  try {
    unpacked = unpack(packed);
  } catch (const ParseError& e) {
    fail_with("unpack rejected pack() output", fen + ": " + e.what());
  }
  if (!same_board(unpacked, b)) fail_with("board differs after pack/unpack", fen);
  FUZZ_CHECK(pack(unpacked) == packed);

  // Every legal move must lead to a consistent board with distinct, round-tripping
  // notation.
  MoveList list;
  legal_moves(b, list);
  FUZZ_CHECK(count_legal_moves(b) == list.size);
  for (Move m : list) {
    Board next;
    check_after_move(b, m, next);
    try {
      FUZZ_CHECK(parse_uci(b, to_uci(m)) == m);
      FUZZ_CHECK(parse_san(b, to_san(b, m)) == m);
    } catch (const ParseError& e) {
      fail_with("notation of a legal move rejected", fen + " " + to_uci(m) + ": " + e.what());
    }
  }
  return 0;
}
