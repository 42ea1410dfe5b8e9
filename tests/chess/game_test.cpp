// Game status: mate, stalemate, the fifty-move rule, insufficient material, threefold
// repetition, and undo.
#include <gtest/gtest.h>

#include <stdexcept>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"

namespace pgmate::chess {
namespace {

GameStatus status_of(const char* fen) { return board_status(parse_fen(fen)); }

void play_uci(Game& g, std::initializer_list<const char*> moves) {
  for (const char* m : moves) g.play(parse_uci(g.board(), m));
}

TEST(GameStatusNames, AllNamed) {
  EXPECT_EQ(status_name(GameStatus::kOngoing), "ongoing");
  EXPECT_EQ(status_name(GameStatus::kCheckmate), "checkmate");
  EXPECT_EQ(status_name(GameStatus::kStalemate), "stalemate");
  EXPECT_EQ(status_name(GameStatus::kFiftyMoves), "fifty_moves");
  EXPECT_EQ(status_name(GameStatus::kThreefoldRepetition), "threefold_repetition");
  EXPECT_EQ(status_name(GameStatus::kInsufficientMaterial), "insufficient_material");
}

TEST(GameStatusTest, StartIsOngoing) {
  Game g(parse_fen("startpos"));
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  EXPECT_EQ(g.repetitions(), 0);
  EXPECT_TRUE(g.moves().empty());
}

TEST(GameStatusTest, FoolsMate) {
  Game g(parse_fen("startpos"));
  play_uci(g, {"f2f3", "e7e5", "g2g4"});
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  play_uci(g, {"d8h4"});
  EXPECT_EQ(g.status(), GameStatus::kCheckmate);
  EXPECT_EQ(board_status(g.board()), GameStatus::kCheckmate);
  EXPECT_EQ(g.moves().size(), 4u);
}

TEST(GameStatusTest, CheckIsNotMate) {
  EXPECT_EQ(status_of("4k3/8/8/8/8/8/8/4R1K1 b - - 1 1"), GameStatus::kOngoing);
}

TEST(GameStatusTest, Stalemate) {
  EXPECT_EQ(status_of("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), GameStatus::kStalemate);
  // The same with White to move is simply ongoing.
  EXPECT_EQ(status_of("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"), GameStatus::kOngoing);
  // Stalemate with insufficient material on the board still reports stalemate.
  EXPECT_EQ(status_of("k7/3N4/1K6/8/8/8/8/8 b - - 0 1"), GameStatus::kStalemate);
}

TEST(GameStatusTest, FiftyMoves) {
  EXPECT_EQ(status_of("4k3/8/8/8/8/8/8/R3K3 w - - 99 80"), GameStatus::kOngoing);
  EXPECT_EQ(status_of("4k3/8/8/8/8/8/8/R3K3 w - - 100 80"), GameStatus::kFiftyMoves);
  EXPECT_EQ(status_of("4k3/8/8/8/8/8/8/R3K3 b - - 150 80"), GameStatus::kFiftyMoves);
  // Mate on the hundredth ply is mate.
  EXPECT_EQ(status_of("R5k1/5ppp/8/8/8/8/8/6K1 b - - 100 80"), GameStatus::kCheckmate);
}

TEST(GameStatusTest, FiftyMovesReachedByPlaying) {
  Game g(parse_fen("4k3/8/8/8/8/8/8/R3K3 w - - 98 80"));
  play_uci(g, {"a1a2"});
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  play_uci(g, {"e8d8"});
  EXPECT_EQ(g.board().halfmove, 100);
  EXPECT_EQ(g.status(), GameStatus::kFiftyMoves);
}

TEST(InsufficientMaterial, KingVersusKing) {
  EXPECT_TRUE(insufficient_material(parse_fen("8/8/8/4k3/8/8/8/4K3 w - - 0 1")));
  EXPECT_EQ(status_of("8/8/8/4k3/8/8/8/4K3 w - - 0 1"), GameStatus::kInsufficientMaterial);
}

TEST(InsufficientMaterial, SingleMinorPiece) {
  EXPECT_TRUE(insufficient_material(parse_fen("8/8/8/4k3/8/8/8/2B1K3 w - - 0 1")));  // KB v K
  EXPECT_TRUE(insufficient_material(parse_fen("8/8/8/4k3/8/8/8/1N2K3 w - - 0 1")));  // KN v K
  EXPECT_TRUE(insufficient_material(parse_fen("8/8/8/4k3/8/8/8/4K1n1 w - - 0 1")));  // K v KN
  EXPECT_TRUE(insufficient_material(parse_fen("8/8/8/4k3/8/8/5b2/4K3 w - - 0 1")));  // K v KB
}

TEST(InsufficientMaterial, BishopsOnSameColour) {
  // c1 and f8 are both dark squares.
  EXPECT_TRUE(insufficient_material(parse_fen("4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1")));
  // Any number of bishops, both sides, all on light squares (d7, c4, f1).
  EXPECT_TRUE(insufficient_material(parse_fen("4k3/3b4/8/8/2B5/8/8/4KB2 w - - 0 1")));
  EXPECT_EQ(status_of("4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1"), GameStatus::kInsufficientMaterial);
}

TEST(InsufficientMaterial, BishopsOnOppositeColours) {
  // c1 is dark, c8 is light.
  EXPECT_FALSE(insufficient_material(parse_fen("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1")));
  // Two bishops of one side on both colours.
  EXPECT_FALSE(insufficient_material(parse_fen("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1")));
  EXPECT_EQ(status_of("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1"), GameStatus::kOngoing);
}

TEST(InsufficientMaterial, TwoKnightsAreNotInsufficient) {
  // Under the rule implemented (no sequence of legal moves can mate), KNN v K can be mated
  // with the defender's help, so it is not insufficient material.
  EXPECT_FALSE(insufficient_material(parse_fen("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1")));
  // Knight against knight, knight against bishop: mates exist.
  EXPECT_FALSE(insufficient_material(parse_fen("4kn2/8/8/8/8/8/8/1N2K3 w - - 0 1")));
  EXPECT_FALSE(insufficient_material(parse_fen("4kb2/8/8/8/8/8/8/1N2K3 w - - 0 1")));
}

TEST(InsufficientMaterial, PawnsRooksQueensAreSufficient) {
  EXPECT_FALSE(insufficient_material(parse_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")));
  EXPECT_FALSE(insufficient_material(parse_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")));
  EXPECT_FALSE(insufficient_material(parse_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")));
  EXPECT_FALSE(insufficient_material(parse_fen("startpos")));
}

TEST(Repetition, ThreefoldByShufflingKnights) {
  Game g(parse_fen("startpos"));
  const auto cycle = {"g1f3", "g8f6", "f3g1", "f6g8"};
  play_uci(g, cycle);
  EXPECT_EQ(g.repetitions(), 1);  // the start position, seen once before
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  play_uci(g, {"g1f3", "g8f6", "f3g1"});
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  play_uci(g, {"f6g8"});
  EXPECT_EQ(g.repetitions(), 2);
  EXPECT_EQ(g.status(), GameStatus::kThreefoldRepetition);
  EXPECT_EQ(board_status(g.board()), GameStatus::kOngoing);  // the board alone does not know
}

TEST(Repetition, IntermediatePositionsRepeatToo) {
  Game g(parse_fen("startpos"));
  play_uci(g, {"g1f3", "g8f6", "f3g1", "f6g8", "g1f3"});
  EXPECT_EQ(g.repetitions(), 1);  // the position after 1.Nf3
  play_uci(g, {"g8f6", "f3g1", "f6g8", "g1f3"});
  EXPECT_EQ(g.repetitions(), 2);
  EXPECT_EQ(g.status(), GameStatus::kThreefoldRepetition);
}

TEST(Repetition, IrreversibleMoveResetsTheStretch) {
  // Each cycle returns to the same pieces, but a pawn move between cycles means the
  // positions before it can never recur.
  Game g(parse_fen("startpos"));
  play_uci(g, {"g1f3", "g8f6", "f3g1", "f6g8", "e2e3", "b8c6", "g1f3", "c6b8", "f3g1"});
  EXPECT_EQ(g.repetitions(), 1);  // the position after 1.e3, seen once before
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
}

TEST(Repetition, CastlingRightsMakePositionsDifferent) {
  // Rook out and back: the pieces stand where they stood, but the K right is gone.
  Game g(parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"));
  play_uci(g, {"h1h2", "h8h7", "h2h1", "h7h8"});
  EXPECT_EQ(g.repetitions(), 0);
  play_uci(g, {"h1h2", "h8h7", "h2h1", "h7h8"});
  EXPECT_EQ(g.repetitions(), 1);
  play_uci(g, {"h1h2", "h8h7", "h2h1", "h7h8"});
  EXPECT_EQ(g.repetitions(), 2);
  EXPECT_EQ(g.status(), GameStatus::kThreefoldRepetition);
}

TEST(Undo, RestoresTheBoard) {
  const Board start = parse_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
  Game g(start);
  std::vector<std::string> fens{to_fen(g.board())};
  std::vector<std::uint64_t> keys{g.board().key};
  for (const char* m : {"e1g1", "a6e2", "c3e2", "h3g2", "g1g2", "b4b3", "a2a4", "b3c2"}) {
    g.play(parse_uci(g.board(), m));
    fens.push_back(to_fen(g.board()));
    keys.push_back(g.board().key);
  }
  EXPECT_EQ(g.moves().size(), 8u);
  while (!g.moves().empty()) {
    g.undo();
    fens.pop_back();
    keys.pop_back();
    EXPECT_EQ(to_fen(g.board()), fens.back());
    EXPECT_EQ(g.board().key, keys.back());
  }
  EXPECT_EQ(to_fen(g.board()), to_fen(start));
  EXPECT_EQ(to_fen(g.start()), to_fen(start));
  EXPECT_THROW(g.undo(), std::logic_error);
}

TEST(Undo, UndoThenReplayKeepsRepetitionCount) {
  Game g(parse_fen("startpos"));
  play_uci(g, {"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"});
  EXPECT_EQ(g.status(), GameStatus::kThreefoldRepetition);
  g.undo();
  EXPECT_EQ(g.status(), GameStatus::kOngoing);
  EXPECT_EQ(g.repetitions(), 1);
  play_uci(g, {"f6g8"});
  EXPECT_EQ(g.status(), GameStatus::kThreefoldRepetition);
}

// A game refuses a move past fullmove 65535 and is left as it was.
TEST(GameCounters, NoMovePastTheLimit) {
  Game g(parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 65535"));
  play_uci(g, {"e1d1"});
  EXPECT_THROW(play_uci(g, {"e8d8"}), IllegalMove);
  EXPECT_EQ(g.moves().size(), 1u);
  EXPECT_EQ(to_fen(g.board()), "4k3/8/8/8/8/8/8/3K4 b - - 1 65535");
  g.undo();
  EXPECT_EQ(to_fen(g.board()), to_fen(g.start()));
}

}  // namespace
}  // namespace pgmate::chess
