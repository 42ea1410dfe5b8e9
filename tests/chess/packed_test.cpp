// The 32-byte packed board: layout, round trips, and rejection of every value pack()
// could not have produced (crafted and random).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "chess/packed.h"

#ifndef PGMATE_TEST_DATA_DIR
#error "PGMATE_TEST_DATA_DIR must name the tests/data directory"
#endif

namespace pgmate::chess {
namespace {

using testing::HasSubstr;

std::vector<std::string> perft_suite_fens() {
  std::ifstream in(std::string(PGMATE_TEST_DATA_DIR) + "/perftsuite.epd");
  EXPECT_TRUE(in) << "cannot open perftsuite.epd under " << PGMATE_TEST_DATA_DIR;
  std::vector<std::string> fens;
  std::string line;
  while (std::getline(in, line)) {
    std::string fen = line.substr(0, line.find(';'));
    while (!fen.empty() && (fen.back() == ' ' || fen.back() == '\r')) fen.pop_back();
    if (!fen.empty()) fens.push_back(fen);
  }
  return fens;
}

::testing::AssertionResult same_board(const Board& a, const Board& b) {
  if (std::memcmp(a.by_color, b.by_color, sizeof a.by_color) != 0) return ::testing::AssertionFailure() << "by_color";
  if (std::memcmp(a.by_type, b.by_type, sizeof a.by_type) != 0) return ::testing::AssertionFailure() << "by_type";
  if (std::memcmp(a.mailbox, b.mailbox, sizeof a.mailbox) != 0) return ::testing::AssertionFailure() << "mailbox";
  if (a.side != b.side) return ::testing::AssertionFailure() << "side";
  if (a.castling != b.castling) return ::testing::AssertionFailure() << "castling " << int(a.castling) << " vs " << int(b.castling);
  if (a.ep != b.ep) return ::testing::AssertionFailure() << "ep " << int(a.ep) << " vs " << int(b.ep);
  if (a.halfmove != b.halfmove) return ::testing::AssertionFailure() << "halfmove";
  if (a.fullmove != b.fullmove) return ::testing::AssertionFailure() << "fullmove";
  if (a.key != b.key) return ::testing::AssertionFailure() << "key";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult round_trips(const Board& b) {
  const PackedBoard p = pack(b);
  if (p[30] != 0 || p[31] != 0) return ::testing::AssertionFailure() << "bytes 30..31 not zero for " << to_fen(b);
  Board u;
  try {
    u = unpack(p);
  } catch (const ParseError& e) {
    return ::testing::AssertionFailure() << to_fen(b) << ": " << e.what();
  }
  auto same = same_board(u, b);
  if (!same) return same << " differs after unpack for " << to_fen(b);
  if (pack(u) != p) return ::testing::AssertionFailure() << "re-pack differs for " << to_fen(b);
  return ::testing::AssertionSuccess();
}

std::string unpack_error(const PackedBoard& p) {
  try {
    Board b = unpack(p);
    ADD_FAILURE() << "unpack accepted the value as " << to_fen(b);
    return "<no error>";
  } catch (const ParseError& e) {
    return e.what();
  }
}

void set_nibble(PackedBoard& p, int index, int code) {
  std::uint8_t& byte = p[8 + index / 2];
  const int shift = 4 * (index & 1);
  byte = std::uint8_t((byte & ~(0xF << shift)) | (code << shift));
}

void set_occupancy(PackedBoard& p, Bitboard occ) { std::memcpy(p.data(), &occ, 8); }

// ---------------------------------------------------------------- layout

TEST(Packed, SizeIs32Bytes) {
  static_assert(sizeof(PackedBoard) == 32);
  EXPECT_EQ(pack(parse_fen("startpos")).size(), 32u);
}

TEST(Packed, StartPositionLayout) {
  const PackedBoard p = pack(parse_fen("startpos"));
  const std::uint8_t expected[32] = {
      0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF,  // occupancy: ranks 1, 2, 7, 8
      0x13, 0x42, 0x25, 0x31,                          // R N B Q K B N R (low nibble first)
      0x00, 0x00, 0x00, 0x00,                          // eight white pawns
      0x88, 0x88, 0x88, 0x88,                          // eight black pawns
      0x9B, 0xCA, 0xAD, 0xB9,                          // r n b q k b n r
      0x1E, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // White, KQkq, no ep, clocks 0 1
  };
  for (int i = 0; i < 32; ++i) EXPECT_EQ(p[i], expected[i]) << "byte " << i;
}

TEST(Packed, FlagsEnPassantAndClocks) {
  const PackedBoard p = pack(parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w Kq f6 300 513"));
  EXPECT_EQ(p[24], (1 | 8) << 1);
  EXPECT_EQ(p[25], 6);  // file f + 1
  EXPECT_EQ(p[26] | (p[27] << 8), 300);
  EXPECT_EQ(p[28] | (p[29] << 8), 513);
  const PackedBoard q = pack(parse_fen("rnbqkbnr/ppp1pppp/8/8/2Pp4/5N2/PP1PPPPP/RNBQKB1R b - c3 0 3"));
  EXPECT_EQ(q[24], 1);
  EXPECT_EQ(q[25], 3);
}

// ---------------------------------------------------------------- round trips

TEST(Packed, RoundTripPerftSuite) {
  const auto fens = perft_suite_fens();
  ASSERT_GE(fens.size(), 100u);
  for (const std::string& fen : fens) EXPECT_TRUE(round_trips(parse_fen(fen)));
}

TEST(Packed, RoundTripVariedStates) {
  for (const char* fen : {
           "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
           "rnbqkbnr/ppp1pppp/8/8/2Pp4/5N2/PP1PPPPP/RNBQKB1R b KQkq c3 0 3",
           "4k3/8/8/8/8/8/8/4K2R b K - 65535 65535",
           "r3k2r/8/8/8/8/8/8/R3K2R b Qk - 5 20",
           "4k3/8/8/2PpP3/8/8/8/4K3 w - d6 0 40",
           "8/8/8/8/8/8/8/k6K w - - 0 1",
           "4k3/8/8/KPp4r/8/8/8/8 w - c6 0 2",
       })
    EXPECT_TRUE(round_trips(parse_fen(fen))) << fen;
}

TEST(Packed, RoundTripRandomPlayouts) {
  std::mt19937 rng(7);
  int boards = 0;
  for (int game = 0; game < 300; ++game) {
    Board b = parse_fen("startpos");
    for (int ply = 0; ply < 120; ++ply) {
      ASSERT_TRUE(round_trips(b));
      ++boards;
      MoveList list;
      legal_moves(b, list);
      if (list.size == 0) break;
      b.play(list.moves[std::uniform_int_distribution<int>(0, list.size - 1)(rng)]);
    }
  }
  EXPECT_GT(boards, 10000);
}

// ---------------------------------------------------------------- rejections

TEST(PackedReject, TooManyOccupiedSquares) {
  PackedBoard p = pack(parse_fen("startpos"));
  set_occupancy(p, ~Bitboard(0));
  EXPECT_THAT(unpack_error(p), HasSubstr("invalid packed board: 64 occupied squares (at most 32)"));
  set_occupancy(p, 0x00000001FFFFFFFFULL);  // 33
  EXPECT_THAT(unpack_error(p), HasSubstr("33 occupied squares"));
}

TEST(PackedReject, InvalidPieceCode) {
  for (int code : {6, 7, 14, 15}) {
    PackedBoard p = pack(parse_fen("startpos"));
    set_nibble(p, 0, code);  // a1
    EXPECT_THAT(unpack_error(p), HasSubstr("unknown piece code " + std::to_string(code) + " on a1"));
  }
  PackedBoard p = pack(parse_fen("startpos"));
  set_nibble(p, 31, 7);  // h8
  EXPECT_THAT(unpack_error(p), HasSubstr("unknown piece code 7 on h8"));
}

TEST(PackedReject, DataAfterLastPiece) {
  const PackedBoard base = pack(parse_fen("8/8/8/8/8/8/8/k6K w - - 0 1"));
  for (int index : {2, 3, 17, 31}) {
    PackedBoard p = base;
    set_nibble(p, index, 1);
    EXPECT_THAT(unpack_error(p), HasSubstr("data after the last piece")) << index;
  }
}

TEST(PackedReject, ReservedFlagBits) {
  for (int bit : {5, 6, 7}) {
    PackedBoard p = pack(parse_fen("startpos"));
    p[24] |= std::uint8_t(1 << bit);
    EXPECT_THAT(unpack_error(p), HasSubstr("reserved bits set in the flags byte")) << bit;
  }
}

TEST(PackedReject, ReservedBytes) {
  for (int i : {30, 31}) {
    PackedBoard p = pack(parse_fen("startpos"));
    p[i] = 0x80;
    EXPECT_THAT(unpack_error(p), HasSubstr("reserved bytes are not zero")) << i;
  }
}

TEST(PackedReject, EnPassantFileOutOfRange) {
  PackedBoard p = pack(parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"));
  p[25] = 9;
  EXPECT_THAT(unpack_error(p), HasSubstr("en-passant file 9 out of range"));
  p[25] = 255;
  EXPECT_THAT(unpack_error(p), HasSubstr("en-passant file 255 out of range"));
}

TEST(PackedReject, EnPassantInconsistentWithBoard) {
  // Start position with an en-passant file: no pawn pushed two squares.
  PackedBoard p = pack(parse_fen("startpos"));
  p[25] = 5;
  EXPECT_THAT(unpack_error(p), HasSubstr("en-passant square e6: no black pawn on e5"));
  // After 1.e4 with the file set: legal FEN input would drop it, but pack() never writes it.
  PackedBoard q = pack(parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"));
  q[25] = 5;
  EXPECT_THAT(unpack_error(q), HasSubstr("en-passant square e3 that no pawn can take"));
}

TEST(PackedReject, FullmoveZero) {
  PackedBoard p = pack(parse_fen("startpos"));
  p[28] = 0;
  p[29] = 0;
  EXPECT_THAT(unpack_error(p), HasSubstr("fullmove number 0"));
}

TEST(PackedReject, NoKings) {
  PackedBoard p{};
  p[28] = 1;
  EXPECT_THAT(unpack_error(p), HasSubstr("invalid packed board: White has no king"));
  PackedBoard q = pack(parse_fen("startpos"));
  set_nibble(q, 4, 4);  // the king on e1 becomes a queen
  EXPECT_THAT(unpack_error(q), HasSubstr("White has no king"));
  PackedBoard r = pack(parse_fen("startpos"));
  set_nibble(r, 28, 8 + 4);  // the king on e8 becomes a queen
  EXPECT_THAT(unpack_error(r), HasSubstr("Black has no king"));
}

TEST(PackedReject, PositionRules) {
  PackedBoard p = pack(parse_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"));
  set_nibble(p, 0, 0);  // the rook on a1 becomes a white pawn
  EXPECT_THAT(unpack_error(p), HasSubstr("pawn on a1"));
  PackedBoard q = pack(parse_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1"));
  q[24] |= 2 << 1;  // the Q right without a rook on a1
  EXPECT_THAT(unpack_error(q), HasSubstr("castling right 'Q' but no white rook on a1"));
  PackedBoard s = pack(parse_fen("4k3/8/8/8/8/8/8/4R1K1 b - - 0 1"));
  s[24] &= ~1;  // White to move with Black in check
  EXPECT_THAT(unpack_error(s), HasSubstr("Black is in check but it is White to move"));
}

// Random bytes must either be rejected with ParseError or unpack to a valid board that
// packs back to the same bytes.
void check_arbitrary(const PackedBoard& p, int& accepted) {
  Board b;
  try {
    b = unpack(p);
  } catch (const ParseError&) {
    return;
  }
  ++accepted;
  ASSERT_NO_THROW(validate_position(b, "unpacked board"));
  ASSERT_EQ(b.key, b.compute_key());
  ASSERT_EQ(pack(b), p) << to_fen(b);
  // Whatever unpacks also survives FEN.
  ASSERT_EQ(to_fen(parse_fen(to_fen(b))), to_fen(b));
}

TEST(PackedFuzz, RandomBytes) {
  std::mt19937_64 rng(12345);
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    PackedBoard p;
    for (auto& byte : p) byte = std::uint8_t(rng());
    ASSERT_NO_FATAL_FAILURE(check_arbitrary(p, accepted));
  }
  // Also random bytes shaped a little: sparse occupancy, zero reserved bytes, small ep.
  for (int i = 0; i < 100000; ++i) {
    PackedBoard p;
    for (auto& byte : p) byte = std::uint8_t(rng());
    Bitboard occ = rng() & rng() & rng();
    set_occupancy(p, occ);
    const int n = popcount(occ);
    for (int k = n; k < 32; ++k) set_nibble(p, k, 0);
    p[24] &= 0x1F;
    p[25] %= 9;
    p[30] = p[31] = 0;
    ASSERT_NO_FATAL_FAILURE(check_arbitrary(p, accepted));
  }
  RecordProperty("accepted", accepted);
}

TEST(PackedFuzz, BitFlipsOfValidBoards) {
  std::mt19937_64 rng(99);
  const auto fens = perft_suite_fens();
  int accepted = 0;
  for (int i = 0; i < 100000; ++i) {
    PackedBoard p = pack(parse_fen(fens[i % fens.size()]));
    const int flips = 1 + int(rng() % 3);
    for (int f = 0; f < flips; ++f) p[rng() % 32] ^= std::uint8_t(1u << (rng() % 8));
    ASSERT_NO_FATAL_FAILURE(check_arbitrary(p, accepted));
  }
  EXPECT_GT(accepted, 1000);  // many flips (clocks, castling, piece kinds) stay valid
}

}  // namespace
}  // namespace pgmate::chess
