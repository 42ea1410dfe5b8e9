// FEN parsing and printing: round trips, the documented normalisations, every rejection
// rule (with the wording of its message), and Polyglot Zobrist keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"

namespace pgmate::chess {
namespace {

using testing::HasSubstr;

// Runs parse_fen and returns the ParseError message; fails the test when nothing is thrown.
// Any exception other than ParseError escapes and fails the test as well.
std::string fen_error(std::string_view fen) {
  try {
    Board b = parse_fen(fen);
    ADD_FAILURE() << "parse_fen accepted \"" << fen << "\" as " << to_fen(b);
    return "<no error>";
  } catch (const ParseError& e) {
    return e.what();
  }
}

void expect_same_board(const Board& a, const Board& b) {
  for (int c = 0; c < 2; ++c) EXPECT_EQ(a.by_color[c], b.by_color[c]) << "colour " << c;
  for (int t = 0; t < 6; ++t) EXPECT_EQ(a.by_type[t], b.by_type[t]) << "type " << t;
  for (int s = 0; s < 64; ++s) EXPECT_EQ(a.mailbox[s], b.mailbox[s]) << "square " << s;
  EXPECT_EQ(a.side, b.side);
  EXPECT_EQ(a.castling, b.castling);
  EXPECT_EQ(a.ep, b.ep);
  EXPECT_EQ(a.halfmove, b.halfmove);
  EXPECT_EQ(a.fullmove, b.fullmove);
  EXPECT_EQ(a.key, b.key);
}

// ---------------------------------------------------------------- round trips

const char* const kRoundTrip[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Kiwipete and the other chessprogramming-wiki perft positions.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    // Capturable en passant, White to move (1.e4 d5 2.e5 f5) and Black to move.
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "rnbqkbnr/ppp1pppp/8/8/2Pp4/5N2/PP1PPPPP/RNBQKB1R b KQkq c3 0 3",
    // Capturable from both sides.
    "4k3/8/8/2PpP3/8/8/8/4K3 w - d6 0 40",
    // Castling subsets.
    "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R b Qk - 5 20",
    "r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1",
    "r3k3/8/8/8/8/8/8/4K2R w Kq - 12 40",
    "4k2r/8/8/8/8/8/8/R3K3 b Qk - 0 1",
    // Clocks at their limits, a promotion pending, and the side to move in check.
    "4k3/8/8/8/8/8/8/4K2R b K - 65535 65535",
    "8/P1k5/K7/8/8/8/8/8 w - - 99 150",
    "4k3/8/8/8/8/8/8/4R1K1 b - - 1 1",
};

class FenRoundTrip : public testing::TestWithParam<const char*> {};

TEST_P(FenRoundTrip, ParseThenPrintGivesTheSameText) {
  const std::string fen = GetParam();
  Board b = parse_fen(fen);
  EXPECT_EQ(to_fen(b), fen);
  EXPECT_EQ(b.key, b.compute_key());
  expect_same_board(parse_fen(to_fen(b)), b);
}

INSTANTIATE_TEST_SUITE_P(Positions, FenRoundTrip, testing::ValuesIn(kRoundTrip));

TEST(Fen, StartposKeyword) {
  Board b = parse_fen("startpos");
  EXPECT_EQ(to_fen(b), kStartFen);
  expect_same_board(b, parse_fen(kStartFen));
}

TEST(Fen, FourFieldsGetDefaultClocks) {
  EXPECT_EQ(to_fen(parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -")), kStartFen);
  Board b = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R b Kq -");
  EXPECT_EQ(b.halfmove, 0);
  EXPECT_EQ(b.fullmove, 1);
  EXPECT_EQ(to_fen(b), "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 0 1");
}

TEST(Fen, FiveFieldsGetDefaultFullmove) {
  EXPECT_EQ(to_fen(parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 7")), "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 7 1");
}

TEST(Fen, ExtraSpacesBetweenFieldsAreTolerated) {
  EXPECT_EQ(to_fen(parse_fen("  rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR   w KQkq -  0 1  ")), kStartFen);
}

TEST(Fen, UncapturableEnPassantSquareIsDropped) {
  // After 1.e4 no black pawn stands beside e4.
  Board b = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  EXPECT_EQ(b.ep, kNoSquare);
  EXPECT_EQ(to_fen(b), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  // Equal positions compare equal, key included.
  expect_same_board(b, parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"));
  EXPECT_EQ(b.key, 0x823c9b50fd114196ULL);

  // Same for White to move: a black pawn on d5 with no white pawn on c5 or e5.
  Board w = parse_fen("rnbqkbnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKBNR w KQkq d6 0 2");
  EXPECT_EQ(w.ep, kNoSquare);
  EXPECT_EQ(to_fen(w), "rnbqkbnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2");
}

TEST(Fen, EnPassantKeptWhenAPawnStandsBesideEvenIfPinned) {
  // Polyglot keeps the en-passant key whenever a pawn of the side to move stands beside
  // the pushed pawn, legal capture or not. Here b5xc6 would expose the king on a5 to the
  // rook on h5, yet the square is kept (and the key includes it).
  Board b = parse_fen("4k3/8/8/KPp4r/8/8/8/8 w - c6 0 2");
  EXPECT_EQ(b.ep, make_square(2, 5));
  EXPECT_EQ(to_fen(b), "4k3/8/8/KPp4r/8/8/8/8 w - c6 0 2");
  EXPECT_NE(b.key, parse_fen("4k3/8/8/KPp4r/8/8/8/8 w - - 0 2").key);
  // ... but the capture is not generated.
  MoveList list;
  legal_moves(b, list);
  for (Move m : list) EXPECT_NE(m.kind(), kEnPassant) << to_uci(m);
}

TEST(Fen, SquareHelpers) {
  EXPECT_EQ(parse_square("a1"), 0);
  EXPECT_EQ(parse_square("h8"), 63);
  EXPECT_EQ(parse_square("e4"), 28);
  EXPECT_EQ(parse_square("i1"), kNoSquare);
  EXPECT_EQ(parse_square("a9"), kNoSquare);
  EXPECT_EQ(parse_square("a"), kNoSquare);
  EXPECT_EQ(parse_square("a1 "), kNoSquare);
  EXPECT_EQ(parse_square("A1"), kNoSquare);
  for (Square s = 0; s < 64; ++s) EXPECT_EQ(parse_square(square_name(s)), s);
  EXPECT_EQ(piece_char(make_piece(kWhite, kKnight)), 'N');
  EXPECT_EQ(piece_char(make_piece(kBlack, kQueen)), 'q');
  EXPECT_EQ(piece_char(make_piece(kBlack, kPawn)), 'p');
}

// ---------------------------------------------------------------- rejections

TEST(FenReject, MessageQuotesTheInput) {
  std::string msg = fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1");
  EXPECT_THAT(msg, HasSubstr("invalid FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1\""));
}

TEST(FenReject, TooFewFields) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq"),
              HasSubstr("has 3 field(s); expected 6"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"), HasSubstr("has 1 field(s)"));
}

TEST(FenReject, TooManyFields) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra"),
              HasSubstr("has more than 6 fields"));
}

TEST(FenReject, BadPieceLetterNamesCharacterAndOffset) {
  std::string msg = fen_error("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
  EXPECT_THAT(msg, HasSubstr("character 'x' at offset 13"));
  EXPECT_THAT(msg, HasSubstr("not a piece letter"));
}

TEST(FenReject, NonPrintableByteIsDescribed) {
  std::string fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN";
  fen += '\x01';
  fen += " w KQkq - 0 1";
  EXPECT_THAT(fen_error(fen), HasSubstr("character byte 0x01 at offset 42"));
}

TEST(FenReject, DigitZeroAndNineAreNotPieces) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/0/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"), HasSubstr("character '0'"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"), HasSubstr("character '9'"));
}

TEST(FenReject, RankWithSevenSquares) {
  EXPECT_THAT(fen_error("rnbqkbn/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("rank 8 has 7 squares, not 8"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w Qkq - 0 1"),
              HasSubstr("rank 1 has 7 squares, not 8"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/7/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("rank 4 has 7 squares, not 8"));
}

TEST(FenReject, RankWithNineSquares) {
  EXPECT_THAT(fen_error("rnbqkbnrr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("rank 8 has more than 8 squares"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR1 w KQkq - 0 1"),
              HasSubstr("rank 1 has more than 8 squares"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/p7p/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("rank 4 has more than 8 squares"));
}

TEST(FenReject, SevenRanks) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("has 7 ranks, not 8"));
}

TEST(FenReject, NineRanks) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
              HasSubstr("more than 8 ranks"));
}

TEST(FenReject, TwoDigitsInARow) {
  std::string msg = fen_error("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
  EXPECT_THAT(msg, HasSubstr("two digits in a row"));
  EXPECT_THAT(msg, HasSubstr("character '4' at offset 19"));
}

TEST(FenReject, BadSideField) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"),
              HasSubstr("field 2 (side to move) is \"x\"; expected 'w' or 'b'"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1"),
              HasSubstr("field 2 (side to move)"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR wb KQkq - 0 1"),
              HasSubstr("field 2 (side to move)"));
}

TEST(FenReject, BadCastlingLetter) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1"),
              HasSubstr("field 3 (castling), character 'x' at offset 3: expected '-' or letters from KQkq"));
  // Shredder/X-FEN file letters are not accepted either.
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"),
              HasSubstr("field 3 (castling), character 'H' at offset 0"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w K- - 0 1"),
              HasSubstr("character '-' at offset 1"));
}

TEST(FenReject, RepeatedCastlingLetter) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKq - 0 1"),
              HasSubstr("field 3 (castling), character 'K' at offset 1: repeated"));
}

TEST(FenReject, BadEnPassantText) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1"),
              HasSubstr("field 4 (en passant) \"e9\" is not '-' or a square"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e 0 1"),
              HasSubstr("field 4 (en passant) \"e\""));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq E6 0 1"),
              HasSubstr("field 4 (en passant) \"E6\""));
}

TEST(FenReject, EnPassantOnWrongRank) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1"),
              HasSubstr("en-passant square e3 must be on rank 6 when White is to move"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e6 0 1"),
              HasSubstr("en-passant square e6 must be on rank 3 when Black is to move"));
}

TEST(FenReject, EnPassantWithoutPushedPawn) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1"),
              HasSubstr("en-passant square e3: no white pawn on e4 that could have just moved two squares"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq d6 0 1"),
              HasSubstr("en-passant square d6: no black pawn on d5"));
  // A piece other than a pawn on the fourth rank does not count.
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/4N3/8/PPPPPPPP/R1BQKBNR b KQkq e3 0 1"),
              HasSubstr("no white pawn on e4"));
}

TEST(FenReject, EnPassantWithPassedSquaresOccupied) {
  // A knight on e2: the pawn on e4 cannot have come from there.
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/4P3/8/PPPPNPPP/RNBQKB1R b KQkq e3 0 1"),
              HasSubstr("en-passant square e3: the squares the pawn passed (e3, e2) must be empty"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/4P3/4N3/PPPP1PPP/RNBQKB1R b KQkq e3 0 1"),
              HasSubstr("must be empty"));
}

TEST(FenReject, ClocksNotNumbers) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1"),
              HasSubstr("field 5 (halfmove clock) \"x\" is not a whole number"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - +1 1"),
              HasSubstr("field 5 (halfmove clock) \"+1\" is not a whole number"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 1x 1"),
              HasSubstr("field 5 (halfmove clock) \"1x\" is not a whole number"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1.5"),
              HasSubstr("field 6 (fullmove number) \"1.5\" is not a whole number"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 99999999999999999999"),
              HasSubstr("field 6 (fullmove number)"));
}

TEST(FenReject, ClocksOutOfRange) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1"),
              HasSubstr("field 5 (halfmove clock) \"-1\" is out of range (0 to 65535)"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 65536 1"),
              HasSubstr("field 5 (halfmove clock) \"65536\" is out of range (0 to 65535)"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 65536"),
              HasSubstr("field 6 (fullmove number) \"65536\" is out of range (1 to 65535)"));
}

TEST(FenReject, FullmoveZero) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0"),
              HasSubstr("field 6 (fullmove number) \"0\" is out of range (1 to 65535)"));
}

TEST(FenReject, MissingKing) {
  EXPECT_THAT(fen_error("8/8/8/8/8/8/8/4K3 w - - 0 1"), HasSubstr("Black has no king"));
  EXPECT_THAT(fen_error("4k3/8/8/8/8/8/8/8 b - - 0 1"), HasSubstr("White has no king"));
  EXPECT_THAT(fen_error("8/8/8/8/8/8/8/8 w - - 0 1"), HasSubstr("has no king"));
}

TEST(FenReject, TwoKings) {
  EXPECT_THAT(fen_error("4k3/8/8/8/8/8/8/K3K3 w - - 0 1"), HasSubstr("White has 2 kings"));
  EXPECT_THAT(fen_error("k3k3/8/8/8/8/8/8/4K3 w - - 0 1"), HasSubstr("Black has 2 kings"));
}

TEST(FenReject, PawnOnFirstRank) {
  EXPECT_THAT(fen_error("4k3/8/8/8/8/8/8/P3K3 w - - 0 1"),
              HasSubstr("pawn on a1 (pawns cannot stand on the first or last rank)"));
  EXPECT_THAT(fen_error("4k3/8/8/8/8/8/8/4K2p w - - 0 1"), HasSubstr("pawn on h1"));
}

TEST(FenReject, PawnOnEighthRank) {
  EXPECT_THAT(fen_error("3Pk3/8/8/8/8/8/8/4K3 w - - 0 1"), HasSubstr("pawn on d8"));
  EXPECT_THAT(fen_error("4k2p/8/8/8/8/8/8/4K3 w - - 0 1"), HasSubstr("pawn on h8"));
}

TEST(FenReject, MoreThanEightPawns) {
  EXPECT_THAT(fen_error("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1"), HasSubstr("White has more than 8 pawns"));
  EXPECT_THAT(fen_error("4k3/pppppppp/7p/8/8/8/8/4K3 w - - 0 1"), HasSubstr("Black has more than 8 pawns"));
}

TEST(FenReject, MoreThanSixteenPieces) {
  EXPECT_THAT(fen_error("4k3/8/8/8/8/NNNNNNNN/PPPPPPPP/4K3 w - - 0 1"), HasSubstr("White has more than 16 pieces"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/n7/8/8/8/8/4K3 w - - 0 1"), HasSubstr("Black has more than 16 pieces"));
}

TEST(FenReject, SideNotToMoveInCheck) {
  EXPECT_THAT(fen_error("4k3/8/8/8/8/8/8/4RK2 w - - 0 1"), HasSubstr("Black is in check but it is White to move"));
  EXPECT_THAT(fen_error("4k3/4r3/8/8/8/8/8/4K3 b - - 0 1"), HasSubstr("White is in check but it is Black to move"));
  // Adjacent kings: each attacks the other.
  EXPECT_THAT(fen_error("8/8/8/8/8/8/4k3/4K3 w - - 0 1"), HasSubstr("Black is in check but it is White to move"));
}

TEST(FenReject, TripleCheck) {
  // Rook e1, bishop b5 and knight f6 all give check: no single move could have done that.
  EXPECT_THAT(fen_error("4k3/8/5N2/1B6/8/8/8/K3R3 b - - 0 1"), HasSubstr("Black is checked by more than two pieces"));
}

TEST(FenReject, CastlingRightWithoutKingOnHomeSquare) {
  EXPECT_THAT(fen_error("r3k2r/8/8/8/8/8/8/R4K1R w K - 0 1"),
              HasSubstr("castling right 'K' but no white king on e1"));
  EXPECT_THAT(fen_error("r3k2r/8/8/8/8/8/8/R4K1R w Q - 0 1"),
              HasSubstr("castling right 'Q' but no white king on e1"));
  EXPECT_THAT(fen_error("r2k3r/8/8/8/8/8/8/R3K2R w q - 0 1"),
              HasSubstr("castling right 'q' but no black king on e8"));
  // A bishop on e1 is not a king.
  EXPECT_THAT(fen_error("r3k2r/8/8/8/8/8/8/R2KB2R w K - 0 1"), HasSubstr("no white king on e1"));
}

TEST(FenReject, CastlingRightWithoutRookOnCorner) {
  EXPECT_THAT(fen_error("r3k2r/8/8/8/8/8/8/R3K3 w K - 0 1"),
              HasSubstr("castling right 'K' but no white rook on h1"));
  EXPECT_THAT(fen_error("r3k2r/8/8/8/8/8/8/4K2R w Q - 0 1"),
              HasSubstr("castling right 'Q' but no white rook on a1"));
  EXPECT_THAT(fen_error("4k2r/8/8/8/8/8/8/R3K2R w q - 0 1"),
              HasSubstr("castling right 'q' but no black rook on a8"));
  EXPECT_THAT(fen_error("r3k3/8/8/8/8/8/8/R3K2R w k - 0 1"),
              HasSubstr("castling right 'k' but no black rook on h8"));
  // A rook of the wrong colour does not count.
  EXPECT_THAT(fen_error("r3k2R/8/8/8/8/8/8/R3K3 b k - 0 1"), HasSubstr("no black rook on h8"));
}

TEST(FenReject, TabOrLineBreak) {
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\tw KQkq - 0 1"),
              HasSubstr("contains a tab or line break"));
  EXPECT_THAT(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n"),
              HasSubstr("contains a tab or line break"));
}

TEST(FenReject, Empty) {
  EXPECT_THAT(fen_error(""), HasSubstr("invalid FEN \"\": empty"));
  EXPECT_THAT(fen_error("    "), HasSubstr(": empty"));
}

TEST(FenReject, LongInputIsTruncatedInTheMessage) {
  std::string fen(1000, 'x');
  std::string msg = fen_error(fen);
  EXPECT_THAT(msg, HasSubstr("...\""));
  EXPECT_LT(msg.size(), 400u);
}

TEST(FenReject, ValidatePositionNamesTheInput) {
  Board b = parse_fen("startpos");
  b.remove(4);  // no white king
  try {
    validate_position(b, "my board");
    ADD_FAILURE() << "validate_position accepted a board without a white king";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("invalid my board: White has no king"));
  }
}

// ---------------------------------------------------------------- Zobrist keys

std::uint64_t key_after(std::initializer_list<const char*> moves) {
  Board b = parse_fen("startpos");
  for (const char* m : moves) b.play(parse_uci(b, m));
  EXPECT_EQ(b.key, b.compute_key());
  EXPECT_EQ(parse_fen(to_fen(b)).key, b.key) << to_fen(b);
  return b.key;
}

TEST(Zobrist, StartPositionPolyglotKey) { EXPECT_EQ(parse_fen("startpos").key, 0x463b96181691fc9cULL); }

// The published Polyglot test sequence (http://hgm.nubati.net/book_format.html).
TEST(Zobrist, PolyglotReferenceKeys) {
  EXPECT_EQ(key_after({"e2e4"}), 0x823c9b50fd114196ULL);
  EXPECT_EQ(key_after({"e2e4", "d7d5"}), 0x0756b94461c50fb0ULL);
  EXPECT_EQ(key_after({"e2e4", "d7d5", "e4e5"}), 0x662fafb965db29d4ULL);
  EXPECT_EQ(key_after({"e2e4", "d7d5", "e4e5", "f7f5"}), 0x22a48b5a8e47ff78ULL);
  EXPECT_EQ(key_after({"e2e4", "d7d5", "e4e5", "f7f5", "e1e2"}), 0x652a607ca3f242c1ULL);
  EXPECT_EQ(key_after({"e2e4", "d7d5", "e4e5", "f7f5", "e1e2", "e8f7"}), 0x00fdd303c946bdd9ULL);
}

// The published list has no key after b4c3 alone: 0x5c3f9b829b279560 is the key after
// "... b4c3 a1a3" (FEN rnbqkbnr/p1pppppp/8/8/P6P/R1p5/1P1PPPP1/1NBQKBNR b Kkq - 0 4).
TEST(Zobrist, PolyglotReferenceKeysWithEnPassantCapture) {
  EXPECT_EQ(key_after({"a2a4", "b7b5", "h2h4", "b5b4", "c2c4"}), 0x3c8123ea7b067637ULL);
  EXPECT_EQ(key_after({"a2a4", "b7b5", "h2h4", "b5b4", "c2c4", "b4c3", "a1a3"}), 0x5c3f9b829b279560ULL);
}

TEST(Zobrist, KeyAfterEnPassantCaptureAlone) {
  // Not a published value: it follows from the published key after a1a3 by taking back
  // the rook move (rook a3 -> a1, the Q right restored, White to move again).
  const std::uint64_t after_a1a3 = 0x5c3f9b829b279560ULL;
  const std::uint64_t rook_back = zobrist::piece(make_piece(kWhite, kRook), make_square(0, 2)) ^
                                  zobrist::piece(make_piece(kWhite, kRook), make_square(0, 0)) ^
                                  zobrist::castling(kWhiteOOO) ^ zobrist::side();
  EXPECT_EQ(after_a1a3 ^ rook_back, 0x93d32682782edfaeULL);
  EXPECT_EQ(key_after({"a2a4", "b7b5", "h2h4", "b5b4", "c2c4", "b4c3"}), 0x93d32682782edfaeULL);
  EXPECT_EQ(parse_fen("rnbqkbnr/p1pppppp/8/8/P6P/2p5/1P1PPPP1/RNBQKBNR w KQkq - 0 4").key, 0x93d32682782edfaeULL);
}

TEST(Zobrist, ReferencePositionsFromFen) {
  // The same positions given as FEN (as published with the keys).
  EXPECT_EQ(parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3").key, 0x22a48b5a8e47ff78ULL);
  EXPECT_EQ(parse_fen("rnbqkbnr/p1pppppp/8/8/PpP4P/8/1P1PPPP1/RNBQKBNR b KQkq c3 0 3").key, 0x3c8123ea7b067637ULL);
  EXPECT_EQ(parse_fen("rnbqkbnr/p1pppppp/8/8/P6P/R1p5/1P1PPPP1/1NBQKBNR b Kkq - 0 4").key, 0x5c3f9b829b279560ULL);
}

TEST(Zobrist, IncrementalKeyMatchesRecomputationOnRandomPlayouts) {
  std::mt19937 rng(20240611);
  int plies = 0;
  for (int game = 0; game < 200; ++game) {
    Board b = parse_fen("startpos");
    for (int ply = 0; ply < 60; ++ply) {
      MoveList list;
      legal_moves(b, list);
      if (list.size == 0) break;
      const Move m = list.moves[std::uniform_int_distribution<int>(0, list.size - 1)(rng)];
      const std::string before = to_fen(b);
      b.play(m);
      ++plies;
      ASSERT_EQ(b.key, b.compute_key()) << before << " then " << to_uci(m);
      const std::string fen = to_fen(b);
      ASSERT_EQ(parse_fen(fen).key, b.key) << fen;
      ASSERT_EQ(to_fen(parse_fen(fen)), fen);
    }
  }
  EXPECT_GT(plies, 5000);
}

// Board::play (perft, the search) stops the move counters at their 16-bit limit instead
// of wrapping.
TEST(FenCounters, FullmoveNumberSaturates) {
  Board b = parse_fen("4k3/8/8/8/8/8/8/4K3 b - - 0 65535");
  b.play(parse_uci(b, "e8d8"));
  EXPECT_EQ(b.fullmove, 65535);
  EXPECT_NO_THROW(parse_fen(to_fen(b))) << to_fen(b);
}

TEST(FenCounters, HalfmoveClockSaturates) {
  Board b = parse_fen("4k3/8/8/8/8/8/8/R3K3 w - - 65535 80");
  b.play(parse_uci(b, "a1a2"));
  EXPECT_EQ(b.halfmove, 65535);
}

// play_checked, for every board a user sees, refuses the move instead: a stopped counter
// would repeat a move number (to_pgn would write "65535." twice).
TEST(FenCounters, PlayCheckedRefusesAMovePastTheLimit) {
  Board b = parse_fen("4k3/8/8/8/8/8/8/4K3 b - - 0 65535");
  const Board before = b;
  try {
    play_checked(b, parse_uci(b, "e8d8"));
    ADD_FAILURE() << "played past fullmove 65535: " << to_fen(b);
  } catch (const IllegalMove& e) {
    EXPECT_THAT(e.what(), HasSubstr("move \"e8d8\" in 4k3/8/8/8/8/8/8/4K3 b - - 0 65535 cannot be played: "
                                    "the fullmove number would pass 65535"));
  }
  EXPECT_EQ(to_fen(b), to_fen(before));  // unchanged

  // White's move does not advance the number.
  Board w = parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 65535");
  play_checked(w, parse_uci(w, "e1d1"));
  EXPECT_EQ(to_fen(w), "4k3/8/8/8/8/8/8/3K4 b - - 1 65535");

  // The halfmove clock: a quiet move is refused, a capture or a pawn move resets it.
  const Board h = parse_fen("4k3/8/8/8/8/8/P7/Rn2K3 w - - 65535 80");
  Board quiet = h;
  try {
    play_checked(quiet, parse_uci(quiet, "e1f1"));
    ADD_FAILURE();
  } catch (const IllegalMove& e) {
    EXPECT_THAT(e.what(), HasSubstr("the halfmove clock would pass 65535"));
  }
  Board capture = h, push = h;
  play_checked(capture, parse_uci(capture, "a1b1"));
  play_checked(push, parse_uci(push, "a2a3"));
  EXPECT_EQ(capture.halfmove, 0);
  EXPECT_EQ(push.halfmove, 0);
}

TEST(Zobrist, NullMoveTogglesSideAndClearsEnPassant) {
  Board b = parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3");
  b.play_null();
  EXPECT_EQ(b.ep, kNoSquare);
  EXPECT_EQ(b.side, kBlack);
  EXPECT_EQ(b.key, b.compute_key());
}

}  // namespace
}  // namespace pgmate::chess
