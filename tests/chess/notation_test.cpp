// UCI and SAN: output, the tolerated input variants, the errors, and a round trip over
// every legal move of every perft-suite position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"

#ifndef PGMATE_TEST_DATA_DIR
#error "PGMATE_TEST_DATA_DIR must name the tests/data directory"
#endif

namespace pgmate::chess {
namespace {

using testing::HasSubstr;

Square sq(const char* name) { return parse_square(name); }

std::string uci_error(const Board& b, std::string_view text) {
  try {
    Move m = parse_uci(b, text);
    ADD_FAILURE() << "parse_uci accepted \"" << text << "\" as " << to_uci(m);
    return "<no error>";
  } catch (const ParseError& e) {
    return e.what();
  }
}

std::string san_error(const Board& b, std::string_view text) {
  try {
    Move m = parse_san(b, text);
    ADD_FAILURE() << "parse_san accepted \"" << text << "\" as " << to_uci(m);
    return "<no error>";
  } catch (const ParseError& e) {
    return e.what();
  }
}

// SAN of a UCI move in the position.
std::string san(const char* fen, const char* uci) {
  Board b = parse_fen(fen);
  return to_san(b, parse_uci(b, uci));
}

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

constexpr const char* kPromo = "k7/4P3/8/8/8/8/8/4K3 w - - 0 1";
constexpr const char* kCastle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
constexpr const char* kEpD6 = "rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3";

// ---------------------------------------------------------------- UCI

TEST(Uci, ToUci) {
  EXPECT_EQ(to_uci(Move(sq("e2"), sq("e4"))), "e2e4");
  EXPECT_EQ(to_uci(Move(sq("g8"), sq("f6"))), "g8f6");
  EXPECT_EQ(to_uci(Move(sq("e7"), sq("e8"), kPromotion, kQueen)), "e7e8q");
  EXPECT_EQ(to_uci(Move(sq("e7"), sq("e8"), kPromotion, kRook)), "e7e8r");
  EXPECT_EQ(to_uci(Move(sq("e7"), sq("d8"), kPromotion, kBishop)), "e7d8b");
  EXPECT_EQ(to_uci(Move(sq("b2"), sq("a1"), kPromotion, kKnight)), "b2a1n");
  EXPECT_EQ(to_uci(Move(sq("e1"), sq("g1"), kCastling)), "e1g1");
  EXPECT_EQ(to_uci(Move(sq("e5"), sq("d6"), kEnPassant)), "e5d6");
  EXPECT_EQ(to_uci(Move()), "0000");
}

TEST(Uci, ParseNormalMove) {
  Board b = parse_fen("startpos");
  Move m = parse_uci(b, "e2e4");
  EXPECT_EQ(m, Move(sq("e2"), sq("e4")));
  EXPECT_EQ(m.kind(), kNormal);
  EXPECT_EQ(parse_uci(b, "g1f3"), Move(sq("g1"), sq("f3")));
}

TEST(Uci, ParsePromotion) {
  Board b = parse_fen(kPromo);
  for (const char* text : {"e7e8q", "e7e8r", "e7e8b", "e7e8n"}) {
    Move m = parse_uci(b, text);
    EXPECT_EQ(m.kind(), kPromotion) << text;
    EXPECT_EQ(m.from(), sq("e7"));
    EXPECT_EQ(m.to(), sq("e8"));
    EXPECT_EQ(to_uci(m), text);
  }
  EXPECT_EQ(parse_uci(b, "e7e8q").promotion(), kQueen);
  EXPECT_EQ(parse_uci(b, "e7e8n").promotion(), kKnight);
}

TEST(Uci, ParseCastling) {
  Board b = parse_fen(kCastle);
  Move oo = parse_uci(b, "e1g1");
  EXPECT_EQ(oo.kind(), kCastling);
  EXPECT_EQ(oo, Move(sq("e1"), sq("g1"), kCastling));
  Move ooo = parse_uci(b, "e1c1");
  EXPECT_EQ(ooo.kind(), kCastling);
  b.play(oo);
  EXPECT_EQ(parse_uci(b, "e8c8").kind(), kCastling);
  // The rook now on f1 attacks f8: Black may not castle through it.
  EXPECT_THAT(uci_error(b, "e8g8"), HasSubstr("illegal move \"e8g8\""));
  EXPECT_EQ(parse_uci(b, "e8d8").kind(), kNormal);
}

TEST(Uci, ParseEnPassant) {
  Board b = parse_fen(kEpD6);
  Move m = parse_uci(b, "e5d6");
  EXPECT_EQ(m.kind(), kEnPassant);
  EXPECT_EQ(m, Move(sq("e5"), sq("d6"), kEnPassant));
  EXPECT_EQ(to_uci(m), "e5d6");
}

TEST(Uci, SyntaxOnly) {
  EXPECT_EQ(parse_uci_syntax("e2e4"), Move(sq("e2"), sq("e4")));
  EXPECT_EQ(parse_uci_syntax("a7a8q"), Move(sq("a7"), sq("a8"), kPromotion, kQueen));
  // No board: castling comes back as a plain king move.
  EXPECT_EQ(parse_uci_syntax("e1g1").kind(), kNormal);
  try {
    parse_uci_syntax("e2e2");
    ADD_FAILURE() << "e2e2 accepted";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), HasSubstr("from and to are the same square"));
  }
}

TEST(UciReject, IllegalMove) {
  Board b = parse_fen("startpos");
  std::string msg = uci_error(b, "e2e5");
  EXPECT_THAT(msg, HasSubstr("illegal move \"e2e5\""));
  EXPECT_THAT(msg, HasSubstr(std::string(kStartFen)));
  EXPECT_THAT(uci_error(b, "e7e5"), HasSubstr("illegal move"));  // not White's pawn
  EXPECT_THAT(uci_error(b, "e1g1"), HasSubstr("illegal move"));  // castling blocked
  EXPECT_THAT(uci_error(b, "e2e3q"), HasSubstr("illegal move"));  // not a promotion
}

TEST(UciReject, PromotionNeedsItsPiece) {
  Board b = parse_fen(kPromo);
  EXPECT_THAT(uci_error(b, "e7e8"), HasSubstr("a promotion needs its piece, e.g. e7e8q"));
}

TEST(UciReject, TooShort) {
  Board b = parse_fen("startpos");
  EXPECT_THAT(uci_error(b, "e2"), HasSubstr("expected 4 or 5 characters"));
  EXPECT_THAT(uci_error(b, ""), HasSubstr("expected 4 or 5 characters"));
  EXPECT_THAT(uci_error(b, "e2e4q1"), HasSubstr("expected 4 or 5 characters"));
}

TEST(UciReject, BadSquare) {
  Board b = parse_fen("startpos");
  EXPECT_THAT(uci_error(b, "z2e4"), HasSubstr("\"z2\" is not a square"));
  EXPECT_THAT(uci_error(b, "e2e9"), HasSubstr("\"e9\" is not a square"));
  EXPECT_THAT(uci_error(b, "E2E4"), HasSubstr("\"E2\" is not a square"));
}

TEST(UciReject, BadPromotionLetter) {
  Board b = parse_fen("startpos");
  EXPECT_THAT(uci_error(b, "e2e4x"), HasSubstr("promotion piece must be one of n, b, r, q"));
  Board p = parse_fen(kPromo);
  EXPECT_THAT(uci_error(p, "e7e8k"), HasSubstr("promotion piece must be one of n, b, r, q"));
  EXPECT_THAT(uci_error(p, "e7e8p"), HasSubstr("promotion piece must be one of n, b, r, q"));
  EXPECT_THAT(uci_error(p, "e7e8Q"), HasSubstr("promotion piece must be one of n, b, r, q"));
}

TEST(Uci, IsLegal) {
  Board b = parse_fen("startpos");
  EXPECT_TRUE(is_legal(b, Move(sq("e2"), sq("e4"))));
  EXPECT_FALSE(is_legal(b, Move(sq("e2"), sq("e5"))));
  EXPECT_FALSE(is_legal(b, Move(sq("e2"), sq("e4"), kPromotion, kQueen)));
  EXPECT_FALSE(is_legal(b, Move()));
}

// ---------------------------------------------------------------- SAN output

TEST(SanOut, PlainMoves) {
  EXPECT_EQ(san(kStartFen.data(), "e2e4"), "e4");
  EXPECT_EQ(san(kStartFen.data(), "g1f3"), "Nf3");
  EXPECT_EQ(san(kStartFen.data(), "b1c3"), "Nc3");
}

TEST(SanOut, DisambiguateByFile) {
  const char* fen = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
  EXPECT_EQ(san(fen, "b1d2"), "Nbd2");
  EXPECT_EQ(san(fen, "f1d2"), "Nfd2");
  EXPECT_EQ(san(fen, "b1c3"), "Nc3");  // only one knight reaches c3
  EXPECT_EQ(san(fen, "f1g3"), "Ng3");
}

TEST(SanOut, DisambiguateByRank) {
  const char* fen = "4k3/8/8/R7/8/8/8/R3K3 w - - 0 1";
  EXPECT_EQ(san(fen, "a1a3"), "R1a3");
  EXPECT_EQ(san(fen, "a5a3"), "R5a3");
  EXPECT_EQ(san(fen, "a1b1"), "Rb1");
}

TEST(SanOut, DisambiguateByFileAndRank) {
  // Queens on e4, h4 and h1 all reach e1.
  const char* fen = "2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1";
  EXPECT_EQ(san(fen, "h4e1"), "Qh4e1");
  EXPECT_EQ(san(fen, "e4e1"), "Qee1");
  EXPECT_EQ(san(fen, "h1e1"), "Q1e1");
}

TEST(SanOut, PinnedPieceDoesNotNeedDisambiguation) {
  // The knight on e2 is pinned by the rook on e8, so Nc3 is unambiguous.
  EXPECT_EQ(san("4r1k1/8/8/8/8/8/4N3/1N2K3 w - - 0 1", "b1c3"), "Nc3");
}

TEST(SanOut, Captures) {
  const char* fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
  EXPECT_EQ(san(fen, "e4d5"), "exd5");
  EXPECT_EQ(san("rnbqkb1r/pppppppp/5n2/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 1 2", "f6e4"), "Nxe4");
  EXPECT_EQ(san("4k3/8/8/8/8/8/3p4/4K3 w - - 0 1", "e1d2"), "Kxd2");
}

TEST(SanOut, EnPassant) {
  EXPECT_EQ(san(kEpD6, "e5d6"), "exd6");
  EXPECT_EQ(san("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "e5f6"), "exf6");
}

TEST(SanOut, Promotions) {
  const char* fen = "8/4P2k/8/8/8/8/8/K7 w - - 0 1";
  EXPECT_EQ(san(fen, "e7e8q"), "e8=Q");
  EXPECT_EQ(san(fen, "e7e8r"), "e8=R");
  EXPECT_EQ(san(fen, "e7e8b"), "e8=B");
  EXPECT_EQ(san(fen, "e7e8n"), "e8=N");
  const char* capture = "3r4/4Pk2/8/8/8/8/8/K7 w - - 0 1";
  EXPECT_EQ(san(capture, "e7d8n"), "exd8=N+");
  EXPECT_EQ(san(capture, "e7d8q"), "exd8=Q");
  EXPECT_EQ(san(capture, "e7e8q"), "e8=Q+");
}

TEST(SanOut, CheckAndMate) {
  Board b = parse_fen("startpos");
  for (const char* m : {"f2f3", "e7e5", "g2g4"}) b.play(parse_uci(b, m));
  EXPECT_EQ(to_san(b, parse_uci(b, "d8h4")), "Qh4#");
  EXPECT_EQ(san("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "a1a8"), "Ra8+");
  // Back-rank mate.
  EXPECT_EQ(san("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"), "Ra8#");
}

TEST(SanOut, Castling) {
  EXPECT_EQ(san(kCastle, "e1g1"), "O-O");
  EXPECT_EQ(san(kCastle, "e1c1"), "O-O-O");
  EXPECT_EQ(san("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8g8"), "O-O");
  EXPECT_EQ(san("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8"), "O-O-O");
  // The rook gives check from f1.
  EXPECT_EQ(san("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"), "O-O+");
}

// ---------------------------------------------------------------- SAN input

TEST(SanIn, CastlingWithZeros) {
  Board b = parse_fen(kCastle);
  EXPECT_EQ(parse_san(b, "0-0"), Move(sq("e1"), sq("g1"), kCastling));
  EXPECT_EQ(parse_san(b, "0-0-0"), Move(sq("e1"), sq("c1"), kCastling));
  EXPECT_EQ(parse_san(b, "O-O"), Move(sq("e1"), sq("g1"), kCastling));
  EXPECT_EQ(parse_san(b, "O-O-O"), Move(sq("e1"), sq("c1"), kCastling));
  EXPECT_EQ(parse_san(b, "O-O+"), Move(sq("e1"), sq("g1"), kCastling));
}

TEST(SanIn, PromotionVariants) {
  Board b = parse_fen(kPromo);
  const Move q(sq("e7"), sq("e8"), kPromotion, kQueen);
  EXPECT_EQ(parse_san(b, "e8Q"), q);
  EXPECT_EQ(parse_san(b, "e8=Q"), q);
  EXPECT_EQ(parse_san(b, "e8=Q+"), q);
  EXPECT_EQ(parse_san(b, "e8=q"), q);
  EXPECT_EQ(parse_san(b, "e8(Q)"), q);
  EXPECT_EQ(parse_san(b, "e7e8q"), q);  // UCI
  EXPECT_EQ(parse_san(b, "e8N"), Move(sq("e7"), sq("e8"), kPromotion, kKnight));
  EXPECT_EQ(parse_san(b, "e8=B"), Move(sq("e7"), sq("e8"), kPromotion, kBishop));
  EXPECT_EQ(parse_san(b, "e8=b"), Move(sq("e7"), sq("e8"), kPromotion, kBishop));
  EXPECT_EQ(parse_san(b, "e8R"), Move(sq("e7"), sq("e8"), kPromotion, kRook));
}

TEST(SanIn, CheckMarksAndAnnotations) {
  Board b = parse_fen("startpos");
  const Move nf3(sq("g1"), sq("f3"));
  EXPECT_EQ(parse_san(b, "Nf3"), nf3);
  EXPECT_EQ(parse_san(b, "Nf3+"), nf3);
  EXPECT_EQ(parse_san(b, "Nf3#"), nf3);
  EXPECT_EQ(parse_san(b, "Nf3!?"), nf3);
  EXPECT_EQ(parse_san(b, "Nf3!!"), nf3);
  EXPECT_EQ(parse_san(b, "Nf3?"), nf3);
  EXPECT_EQ(parse_san(b, " Nf3 "), nf3);
  EXPECT_EQ(parse_san(b, "Ngf3"), nf3);
  EXPECT_EQ(parse_san(b, "Ng1f3"), nf3);
  EXPECT_EQ(parse_san(b, "Ng1-f3"), nf3);
}

TEST(SanIn, MateMark) {
  Board b = parse_fen("startpos");
  for (const char* m : {"f3", "e5", "g4"}) b.play(parse_san(b, m));
  EXPECT_EQ(parse_san(b, "Qh4#"), Move(sq("d8"), sq("h4")));
  EXPECT_EQ(parse_san(b, "Qh4"), Move(sq("d8"), sq("h4")));
  EXPECT_EQ(parse_san(b, "Qh4+"), Move(sq("d8"), sq("h4")));
}

TEST(SanIn, PawnLetterAndCaptures) {
  Board b = parse_fen("startpos");
  EXPECT_EQ(parse_san(b, "Pe4"), Move(sq("e2"), sq("e4")));
  EXPECT_EQ(parse_san(b, "e4"), Move(sq("e2"), sq("e4")));
  Board c = parse_fen("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
  EXPECT_EQ(parse_san(c, "exd5"), Move(sq("e4"), sq("d5")));
  EXPECT_EQ(parse_san(c, "ed5"), Move(sq("e4"), sq("d5")));
  EXPECT_EQ(parse_san(c, "e:d5"), Move(sq("e4"), sq("d5")));
  EXPECT_EQ(parse_san(c, "Pxd5"), Move(sq("e4"), sq("d5")));
}

TEST(SanIn, EnPassantSuffix) {
  Board b = parse_fen(kEpD6);
  const Move ep(sq("e5"), sq("d6"), kEnPassant);
  EXPECT_EQ(parse_san(b, "exd6 e.p."), ep);
  EXPECT_EQ(parse_san(b, "exd6e.p."), ep);
  EXPECT_EQ(parse_san(b, "exd6"), ep);
  EXPECT_EQ(parse_san(b, "e5d6"), ep);
}

TEST(SanIn, UciTextAccepted) {
  Board b = parse_fen("startpos");
  EXPECT_EQ(parse_san(b, "e2e4"), Move(sq("e2"), sq("e4")));
  EXPECT_EQ(parse_san(b, "g1f3"), Move(sq("g1"), sq("f3")));
  Board c = parse_fen(kCastle);
  EXPECT_EQ(parse_san(c, "e1g1"), Move(sq("e1"), sq("g1"), kCastling));
}

TEST(SanReject, Ambiguous) {
  Board b = parse_fen("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
  EXPECT_THAT(san_error(b, "Nd2"), HasSubstr("ambiguous"));
  Board r = parse_fen("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1");
  EXPECT_THAT(san_error(r, "Ra3"), HasSubstr("ambiguous"));
  Board q = parse_fen("2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1");
  EXPECT_THAT(san_error(q, "Qhe1"), HasSubstr("ambiguous"));
  EXPECT_THAT(san_error(q, "Q4e1"), HasSubstr("ambiguous"));
  EXPECT_EQ(parse_san(q, "Qh4e1"), Move(sq("h4"), sq("e1")));
}

TEST(SanReject, IllegalMove) {
  Board b = parse_fen("startpos");
  std::string msg = san_error(b, "Nf4");
  EXPECT_THAT(msg, HasSubstr("illegal move \"Nf4\""));
  EXPECT_THAT(msg, HasSubstr("no legal move matches"));
  EXPECT_THAT(san_error(b, "e5"), HasSubstr("illegal move"));
  EXPECT_THAT(san_error(b, "Ke2"), HasSubstr("illegal move"));
  EXPECT_THAT(san_error(b, "exd3"), HasSubstr("illegal move"));
  EXPECT_THAT(san_error(b, "O-O"), HasSubstr("castling is not legal here"));
  EXPECT_THAT(san_error(b, "e4=Q"), HasSubstr("illegal move"));  // not a promotion
}

TEST(SanReject, Garbage) {
  Board b = parse_fen("startpos");
  EXPECT_THAT(san_error(b, "hello"), HasSubstr("invalid SAN move \"hello\""));
  EXPECT_THAT(san_error(b, "N"), HasSubstr("no destination square"));
  EXPECT_THAT(san_error(b, "Nz3"), HasSubstr("is not a square"));
  EXPECT_THAT(san_error(b, "nf3"), HasSubstr("unexpected \"n\""));
  EXPECT_THAT(san_error(b, ""), HasSubstr("invalid SAN move \"\": empty"));
  EXPECT_THAT(san_error(b, "+!?"), HasSubstr("empty"));
  EXPECT_THAT(san_error(b, "Nxxf3"), HasSubstr("invalid SAN move"));
}

// SQL reports an illegal move as 22023 and unreadable text as 22P02: the exception types
// tell them apart (IllegalMove is a ParseError, so one catch still takes both).
TEST(MoveErrors, IllegalMoveIsItsOwnType) {
  const Board b = parse_fen("startpos");
  const Board ambiguous = parse_fen("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
  EXPECT_THROW(parse_uci(b, "e2e5"), IllegalMove);
  EXPECT_THROW(resolve_move(b, Move(sq("e1"), sq("e2"))), IllegalMove);
  EXPECT_THROW(parse_san(b, "Nf4"), IllegalMove);
  EXPECT_THROW(parse_san(b, "O-O"), IllegalMove);
  EXPECT_THROW(parse_san(b, "e2e5"), IllegalMove);  // UCI text through parse_san
  EXPECT_THROW(parse_san(ambiguous, "Nd2"), IllegalMove);
  EXPECT_THROW(parse_san(parse_fen(kPromo), "e8"), IllegalMove);  // a promotion needs its piece
  for (std::string_view text : {"Qx", "hello", "", "Nz3", "e8=K", "e2e9"}) {
    try {
      parse_san(b, text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const IllegalMove& e) {
      ADD_FAILURE() << text << " is not a move at all, yet: " << e.what();
    } catch (const ParseError&) {
    }
  }
  try {
    parse_uci(b, "e2e2");
    ADD_FAILURE();
  } catch (const IllegalMove& e) {
    ADD_FAILURE() << e.what();
  } catch (const ParseError&) {
  }
}

TEST(SanReject, PromotionWithoutPiece) {
  Board b = parse_fen(kPromo);
  EXPECT_THAT(san_error(b, "e8"), HasSubstr("a promotion needs its piece, e.g. e8=Q"));
  EXPECT_THAT(san_error(b, "e8+"), HasSubstr("a promotion needs its piece"));
  EXPECT_THAT(san_error(b, "e8=K"), HasSubstr("cannot promote to a king"));
}

// ---------------------------------------------------------------- long algebraic

TEST(SanIn, LongAlgebraic) {
  Board b = parse_fen("startpos");
  EXPECT_EQ(parse_san(b, "Ng1-f3"), Move(sq("g1"), sq("f3")));
  EXPECT_EQ(parse_san(b, "g1-f3"), Move(sq("g1"), sq("f3")));  // the piece on g1
  EXPECT_EQ(parse_san(b, "g1xf3"), Move(sq("g1"), sq("f3")));
  EXPECT_EQ(parse_san(b, "e2-e4"), Move(sq("e2"), sq("e4")));
  EXPECT_EQ(parse_san(b, "Pe2-e4"), Move(sq("e2"), sq("e4")));
  EXPECT_THAT(san_error(b, "Bg1-f3"), HasSubstr("no legal move matches"));
  EXPECT_THAT(san_error(b, "g1-g3"), HasSubstr("illegal move \"g1-g3\""));
  EXPECT_THAT(san_error(b, "e3-e4"), HasSubstr("no legal move matches"));  // an empty from-square
  Board p = parse_fen(kPromo);
  EXPECT_EQ(parse_san(p, "e7-e8=Q"), Move(sq("e7"), sq("e8"), kPromotion, kQueen));
  EXPECT_EQ(parse_san(p, "e7-e8N"), Move(sq("e7"), sq("e8"), kPromotion, kKnight));
  EXPECT_THAT(san_error(p, "e7-e8"), HasSubstr("a promotion needs its piece"));
  Board c = parse_fen(kCastle);
  EXPECT_EQ(parse_san(c, "Ke1-g1"), Move(sq("e1"), sq("g1"), kCastling));
  EXPECT_EQ(parse_san(c, "e1-c1"), Move(sq("e1"), sq("c1"), kCastling));
  EXPECT_EQ(parse_san(c, "Ke1-f1"), Move(sq("e1"), sq("f1")));
  Board e = parse_fen(kEpD6);
  EXPECT_EQ(parse_san(e, "e5xd6"), Move(sq("e5"), sq("d6"), kEnPassant));
  EXPECT_EQ(parse_san(e, "exd6ep"), Move(sq("e5"), sq("d6"), kEnPassant));
  EXPECT_EQ(parse_san(e, "exd6e.p"), Move(sq("e5"), sq("d6"), kEnPassant));
}

// ---------------------------------------------------------------- the targeted lookup

// parse_san looks only at the pieces that reach the destination; the reference lists
// every legal move. Both must give the same move, or the same error, for every text.
std::string outcome(Move (*parse)(const Board&, std::string_view), const Board& b, std::string_view text) {
  try {
    return "move " + to_uci(parse(b, text));
  } catch (const IllegalMove& e) {
    return std::string("IllegalMove: ") + e.what();
  } catch (const ParseError& e) {
    return std::string("ParseError: ") + e.what();
  }
}

void compare_with_listing(const Board& b, long& texts) {
  MoveList list;
  legal_moves(b, list);
  std::set<std::string> candidates;
  std::set<Square> targets;
  for (Move m : list) {
    targets.insert(m.to());
    const std::string from = square_name(m.from()), to = square_name(m.to());
    const std::string san = to_san(b, m);
    candidates.insert(san);
    candidates.insert(from + "-" + to);
    candidates.insert(from + "x" + to);
    const char letter = "PNBRQK"[type_of(b.piece_on(m.from()))];
    candidates.insert(std::string(1, letter) + from + "-" + to);
    candidates.insert(std::string(1, letter) + to);
    candidates.insert(std::string(1, letter) + from.substr(0, 1) + to);
    candidates.insert(std::string(1, letter) + from.substr(1) + to);
    // The shapes parse_san reads without the general splitter, with their marks.
    candidates.insert(std::string(1, letter) + "x" + to + "+");
    candidates.insert(std::string(1, letter) + from.substr(0, 1) + "x" + to);
    candidates.insert(std::string(1, letter) + from.substr(1) + "x" + to + "#");
    candidates.insert(std::string(1, letter) + "xx" + to);
    candidates.insert(to + "+");
    candidates.insert(from.substr(0, 1) + to);
    candidates.insert(from.substr(0, 1) + "x" + to);
    candidates.insert(to);
    for (const char* promo : {"=Q", "=N", "=b", "R", "(Q)", "=K"}) candidates.insert(to + promo);
    candidates.insert(from.substr(0, 1) + "x" + to + "=Q");
    candidates.insert(san + "ep");
  }
  for (Square t : targets)
    for (const char* letter : {"", "N", "B", "R", "Q", "K", "P"}) {
      candidates.insert(letter + square_name(t));
      for (char f = 'a'; f <= 'h'; ++f) candidates.insert(letter + std::string(1, f) + square_name(t));
      for (char r = '1'; r <= '8'; ++r) candidates.insert(letter + std::string(1, r) + square_name(t));
    }
  for (const char* castle : {"O-O", "O-O-O", "0-0", "e1-g1", "e8-c8", "Ke1-c1", "Ke8-g8"}) candidates.insert(castle);
  for (const std::string& text : candidates) {
    ASSERT_EQ(outcome(parse_san, b, text), outcome(detail::parse_san_by_list, b, text))
        << to_fen(b) << " \"" << text << "\"";
    ++texts;
  }
}

TEST(SanLookup, SameAsListingTheLegalMoves) {
  long texts = 0;
  for (const std::string& fen : perft_suite_fens()) {
    Board b = parse_fen(fen);
    ASSERT_NO_FATAL_FAILURE(compare_with_listing(b, texts));
    MoveList list;
    legal_moves(b, list);
    for (int i = 0; i < list.size; i += 5) {  // every fifth child: promotions, en passant, checks
      Board next = b;
      next.play(list.moves[i]);
      ASSERT_NO_FATAL_FAILURE(compare_with_listing(next, texts)) << fen << " " << to_uci(list.moves[i]);
    }
  }
  for (const char* fen : {kPromo, kCastle, kEpD6, "2k5/8/8/8/4Q2Q/8/8/K6Q w - - 0 1",
                          "8/8/8/KPp4r/8/8/8/7k w - c6 0 1",        // en passant would expose the king
                          "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 1",
                          "4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1",      // a pinned knight
                          "4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1"}) {
    ASSERT_NO_FATAL_FAILURE(compare_with_listing(parse_fen(fen), texts)) << fen;
  }
  EXPECT_GT(texts, 100000) << texts;
}

// resolve_move tests the one move it is given (its piece's reach, then the king's safety);
// the reference lists every legal move. Every from-to pair, with and without each promotion
// piece, must give the same move (kind included) or the same error.
std::string resolved_by_list(const Board& b, Move wanted) {
  MoveList list;
  legal_moves(b, list);
  for (Move m : list)
    if (m.from() == wanted.from() && m.to() == wanted.to() &&
        (m.kind() == kPromotion) == (wanted.kind() == kPromotion) &&
        (m.kind() != kPromotion || m.promotion() == wanted.promotion()))
      return "move " + to_uci(m) + " kind " + std::to_string(m.kind());
  return "illegal";
}

std::string resolved(const Board& b, Move wanted) {
  try {
    const Move m = resolve_move(b, wanted);
    return "move " + to_uci(m) + " kind " + std::to_string(m.kind());
  } catch (const IllegalMove&) {
    return "illegal";
  }
}

void compare_resolution(const Board& b, long& pairs) {
  for (int from = 0; from < 64; ++from)
    for (int to = 0; to < 64; ++to) {
      if (from == to) continue;
      std::vector<Move> wanted = {Move(Square(from), Square(to))};
      // From an empty or enemy square, every move is illegal: the plain one is enough.
      if (b.pieces(b.side) & (1ULL << from))
        for (PieceType p : {kKnight, kBishop, kRook, kQueen})
          wanted.push_back(Move(Square(from), Square(to), kPromotion, p));
      for (Move w : wanted) {
        ASSERT_EQ(resolved(b, w), resolved_by_list(b, w)) << to_fen(b) << " " << to_uci(w);
        ++pairs;
      }
    }
}

TEST(ResolveMove, SameAsListingTheLegalMoves) {
  long pairs = 0;
  for (const std::string& fen : perft_suite_fens()) {
    Board b = parse_fen(fen);
    ASSERT_NO_FATAL_FAILURE(compare_resolution(b, pairs));
    MoveList list;
    legal_moves(b, list);
    for (int i = 0; i < list.size; i += 11) {
      Board next = b;
      next.play(list.moves[i]);
      ASSERT_NO_FATAL_FAILURE(compare_resolution(next, pairs)) << fen << " " << to_uci(list.moves[i]);
    }
  }
  for (const char* fen : {kPromo, kCastle, kEpD6, "8/8/8/KPp4r/8/8/8/7k w - c6 0 1",
                          "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 1", "4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1"})
    ASSERT_NO_FATAL_FAILURE(compare_resolution(parse_fen(fen), pairs)) << fen;
  EXPECT_GT(pairs, 100000) << pairs;
}

// ---------------------------------------------------------------- round trips

void check_round_trip(const Board& b, int& moves_checked) {
  MoveList list;
  legal_moves(b, list);
  std::set<std::string> sans, ucis;
  for (Move m : list) {
    const std::string s = to_san(b, m);
    ASSERT_TRUE(sans.insert(s).second) << "duplicate SAN " << s << " in " << to_fen(b);
    Move back;
    try {
      back = parse_san(b, s);
    } catch (const ParseError& e) {
      FAIL() << e.what();
    }
    ASSERT_EQ(back, m) << to_fen(b) << " " << s << " -> " << to_uci(back) << " instead of " << to_uci(m);
    const std::string u = to_uci(m);
    ASSERT_TRUE(ucis.insert(u).second) << "duplicate UCI " << u << " in " << to_fen(b);
    ASSERT_EQ(parse_uci(b, u), m) << to_fen(b) << " " << u;
    ++moves_checked;
  }
}

TEST(NotationRoundTrip, EveryMoveOfThePerftSuite) {
  const auto fens = perft_suite_fens();
  ASSERT_GE(fens.size(), 100u);
  int moves_checked = 0;
  for (const std::string& fen : fens) {
    Board b = parse_fen(fen);
    ASSERT_NO_FATAL_FAILURE(check_round_trip(b, moves_checked)) << fen;
  }
  EXPECT_GT(moves_checked, 1000);
}

TEST(NotationRoundTrip, EveryMoveOneMoveDeeperInThePerftSuite) {
  // The children reach more promotions, en-passant captures and checks than the roots.
  const auto fens = perft_suite_fens();
  int moves_checked = 0;
  for (const std::string& fen : fens) {
    Board b = parse_fen(fen);
    MoveList list;
    legal_moves(b, list);
    for (Move m : list) {
      Board next = b;
      next.play(m);
      ASSERT_NO_FATAL_FAILURE(check_round_trip(next, moves_checked)) << fen << " " << to_uci(m);
    }
  }
  EXPECT_GT(moves_checked, 20000);
}

}  // namespace
}  // namespace pgmate::chess
