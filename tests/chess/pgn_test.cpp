// PGN reader and writer: the import-format variants, errors and skip mode, incremental
// feeding, and a to_pgn -> parse_pgn round trip over random games.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "chess/pgn.h"

namespace pgmate::chess {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

// The moves of a game as UCI text, space separated.
std::string uci_line(const std::vector<Move>& moves) {
  std::string s;
  for (Move m : moves) {
    if (!s.empty()) s += ' ';
    s += to_uci(m);
  }
  return s;
}

// The moves of a SAN line, played from `start` (the test's own reference).
std::vector<Move> san_moves(std::string_view line, std::string_view fen = kStartFen) {
  Board b = parse_fen(fen);
  std::vector<Move> moves;
  std::istringstream in{std::string(line)};
  std::string san;
  while (in >> san) {
    Move m = parse_san(b, san);
    b.play(m);
    moves.push_back(m);
  }
  return moves;
}

PgnGame only_game(std::string_view text) {
  std::vector<PgnGame> games = parse_pgn(text);
  EXPECT_EQ(games.size(), 1u) << text;
  return games.empty() ? PgnGame() : games[0];
}

std::string error_of(std::string_view text) {
  try {
    std::vector<PgnGame> games = parse_pgn(text);
    ADD_FAILURE() << "parse_pgn accepted the input (" << games.size() << " games):\n" << text;
  } catch (const PgnError& e) {
    return e.what();
  }
  return "<no error>";
}

// Everything a reader yields when fed in pieces of `chunk` bytes.
std::vector<PgnGame> read_in_chunks(std::string_view text, size_t chunk, PgnErrorMode mode,
                                    int* skipped = nullptr) {
  PgnReader reader(mode);
  std::vector<PgnGame> games;
  PgnGame g;
  for (size_t i = 0; i < text.size(); i += chunk) {
    reader.feed(text.substr(i, chunk));
    while (reader.next(g)) games.push_back(g);
  }
  reader.finish();
  while (reader.next(g)) games.push_back(g);
  if (skipped) *skipped = reader.skipped();
  return games;
}

void expect_same_games(const std::vector<PgnGame>& a, const std::vector<PgnGame>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("game index " + std::to_string(i));
    EXPECT_EQ(a[i].number, b[i].number);
    EXPECT_EQ(a[i].tags, b[i].tags);
    EXPECT_EQ(to_fen(a[i].start), to_fen(b[i].start));
    EXPECT_EQ(uci_line(a[i].moves), uci_line(b[i].moves));
    EXPECT_EQ(a[i].result, b[i].result);
  }
}

constexpr std::string_view kImmortal = R"([Event "London"]
[Site "London ENG"]
[Date "1851.06.21"]
[Round "?"]
[White "Adolf Anderssen"]
[Black "Lionel Adalbert Bagration Felix Kieseritzky"]
[Result "1-0"]
[ECO "C33"]

1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 5. Bxb5 Nf6 6. Nf3 Qh6 7. d3 Nh5 8. Nh4
Qg5 9. Nf5 c6 10. g4 Nf6 11. Rg1 cxb5 12. h4 Qg6 13. h5 Qg5 14. Qf3 Ng8 15. Bxf4
Qf6 16. Nc3 Bc5 17. Nd5 Qxb2 18. Bd6 Bxg1 19. e5 Qxa1+ 20. Ke2 Na6 21. Nxg7+ Kd8
22. Qf6+ Nxf6 23. Be7# 1-0
)";

constexpr std::string_view kImmortalSan =
    "e4 e5 f4 exf4 Bc4 Qh4+ Kf1 b5 Bxb5 Nf6 Nf3 Qh6 d3 Nh5 Nh4 Qg5 Nf5 c6 g4 Nf6 Rg1 cxb5 "
    "h4 Qg6 h5 Qg5 Qf3 Ng8 Bxf4 Qf6 Nc3 Bc5 Nd5 Qxb2 Bd6 Bxg1 e5 Qxa1+ Ke2 Na6 Nxg7+ Kd8 "
    "Qf6+ Nxf6 Be7#";

// ---------------------------------------------------------------- well-formed input

TEST(PgnRead, SevenTagRosterGame) {
  PgnGame g = only_game(kImmortal);
  EXPECT_EQ(g.number, 1);
  EXPECT_EQ(g.result, "1-0");
  ASSERT_EQ(g.tags.size(), 7u);  // Round "?" is the roster's "unknown": left out
  EXPECT_EQ(g.tags[0], (std::pair<std::string, std::string>{"Event", "London"}));
  EXPECT_EQ(g.tag("Round"), nullptr);
  EXPECT_EQ(g.tags[4].first, "Black");
  EXPECT_EQ(g.tags[4].second, "Lionel Adalbert Bagration Felix Kieseritzky");
  EXPECT_EQ(g.tags[6], (std::pair<std::string, std::string>{"ECO", "C33"}));
  ASSERT_NE(g.tag("Date"), nullptr);
  EXPECT_EQ(*g.tag("Date"), "1851.06.21");
  EXPECT_EQ(g.tag("Annotator"), nullptr);
  EXPECT_EQ(to_fen(g.start), kStartFen);
  EXPECT_EQ(uci_line(g.moves), uci_line(san_moves(kImmortalSan)));
  EXPECT_EQ(g.moves.size(), 45u);
}

TEST(PgnRead, MultipleGamesAreNumbered) {
  std::string text = std::string(kImmortal) + "\n" +
                     "[Event \"b\"]\n[Result \"0-1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n" +
                     "[Event \"c\"]\n\n1. d4 d5 1/2-1/2\n";
  std::vector<PgnGame> games = parse_pgn(text);
  ASSERT_EQ(games.size(), 3u);
  EXPECT_EQ(games[0].number, 1);
  EXPECT_EQ(games[1].number, 2);
  EXPECT_EQ(games[2].number, 3);
  EXPECT_EQ(games[1].result, "0-1");
  EXPECT_EQ(uci_line(games[1].moves), "f2f3 e7e5 g2g4 d8h4");
  EXPECT_EQ(games[2].result, "1/2-1/2");
  EXPECT_EQ(*games[2].tag("Event"), "c");
}

TEST(PgnRead, CommentsNagsAnnotationsAndEscapes) {
  PgnGame g = only_game(
      "{A comment before the game,\nover two lines}\n"
      "% an escaped line: 1. h4 [Event \"not a tag\"]\n"
      "[Event \"Test\"]\n"
      "[Site \"; not a comment {nor this}\"]\n"
      "\n"
      "1. e4 {best by test} e5 $1 2. Nf3!? Nc6?! ; rest of line: 3. h4 {\n"
      "3. Bb5!! a6?? $14 $201 4. Ba4 {multi\n\nline\n} Nf6! 5. O-O? Be7 *\n");
  EXPECT_EQ(g.tags.size(), 2u);
  EXPECT_EQ(*g.tag("Site"), "; not a comment {nor this}");
  EXPECT_EQ(uci_line(g.moves), uci_line(san_moves("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7")));
  EXPECT_EQ(g.result, "*");
}

TEST(PgnRead, TagValueEscapes) {
  PgnGame g = only_game(
      "[Event \"He said \\\"mate\\\" \\\\ left\"]\n[Site \"C:\\games\\x\"]\n[Annotator \"\"]\n\n*\n");
  EXPECT_EQ(*g.tag("Event"), "He said \"mate\" \\ left");
  EXPECT_EQ(*g.tag("Site"), "C:\\games\\x");  // not an escape: kept as written
  EXPECT_EQ(*g.tag("Annotator"), "");
  EXPECT_TRUE(g.moves.empty());
  EXPECT_EQ(g.result, "*");
}

TEST(PgnRead, NestedVariationsAreSkipped) {
  PgnGame g = only_game(
      "1. e4 (1. d4 d5 (1... Nf6 2. c4 (2. Nf3 g6 (2... e6)) e6) 2. c4) e5 "
      "2. Nf3 (2. Qh5? (2. Bc4) Nc6 3. Bc4 Nf6?? 4. Qxf7# 1-0) Nc6 ( 2... d6 {comment (not a "
      "variation} ) 3. Bb5 0-1");
  EXPECT_EQ(uci_line(g.moves), uci_line(san_moves("e4 e5 Nf3 Nc6 Bb5")));
  EXPECT_EQ(g.result, "0-1");  // the "1-0" inside the variation does not end the game
}

TEST(PgnRead, MoveNumberForms) {
  PgnGame g = only_game("1.e4 e5 2.Nf3 2...Nc6 3. Bb5 3... a6 4.Ba4 4 .Nf6 5.O-O *");
  EXPECT_EQ(uci_line(g.moves), uci_line(san_moves("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O")));
  g = only_game("1.d4 1...d5 2.c4 2...dxc4 *");
  EXPECT_EQ(uci_line(g.moves), "d2d4 d7d5 c2c4 d5c4");
}


TEST(PgnRead, Castling) {
  PgnGame g = only_game("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. 0-0 d6 5. d3 Bg4 6. Nc3 Qd7 7. Be3 0-0-0 *");
  ASSERT_EQ(g.moves.size(), 14u);
  EXPECT_EQ(to_uci(g.moves[6]), "e1g1");
  EXPECT_EQ(g.moves[6].kind(), kCastling);
  EXPECT_EQ(to_uci(g.moves[13]), "e8c8");
  EXPECT_EQ(g.moves[13].kind(), kCastling);
  g = only_game("1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. O-O O-O+ *");  // a wrong '+' is tolerated
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5 g1f3 g8f6 f1c4 f8c5 e1g1 e8g8");
}

TEST(PgnRead, PromotionEnPassantAndCheckMarks) {
  // En passant marked "e.p.", promotions spelled b8=Q and g1Q, a check left unmarked (4. Qb5).
  PgnGame g = only_game(
      "[SetUp \"1\"]\n[FEN \"4k3/1P6/8/8/5p2/8/4P1P1/4K3 w - - 0 1\"]\n\n"
      "1. g4 fxg3 e.p. 2. e4 g2 3. b8=Q+ Kd7 4. Qb5 Kd6 5. e5+ Kc7 6. e6 g1Q+ 7. Ke2 Qe3+! 1/2-1/2");
  EXPECT_EQ(uci_line(g.moves),
            "g2g4 f4g3 e2e4 g3g2 b7b8q e8d7 b8b5 d7d6 e4e5 d6c7 e5e6 g2g1q e1e2 g1e3");
  EXPECT_EQ(g.moves[1].kind(), kEnPassant);
  EXPECT_EQ(g.moves[4].kind(), kPromotion);
  EXPECT_EQ(g.moves[11].promotion(), kQueen);
  EXPECT_EQ(g.result, "1/2-1/2");

  // "e.p." glued to the move; mate marked '#'.
  g = only_game("1. e4 Nf6 2. e5 d5 3. exd6e.p. Nc6 4. dxc7 e5 5. cxd8=Q+ Kxd8 6. Qh5 *");
  EXPECT_EQ(g.moves[4].kind(), kEnPassant);
  EXPECT_EQ(uci_line(g.moves), "e2e4 g8f6 e4e5 d7d5 e5d6 b8c6 d6c7 e7e5 c7d8q e8d8 d1h5");
  g = only_game("1. f3 e5 2. g4 Qh4# 0-1");
  Board b = g.start;
  for (Move m : g.moves) b.play(m);
  EXPECT_EQ(board_status(b), GameStatus::kCheckmate);

  // Under-promotions, with and without '='.
  g = only_game("[FEN \"1r2k3/P1P5/8/8/8/8/8/4K3 w - - 0 1\"]\n\n1. axb8N Ke7 2. c8=R *");
  EXPECT_EQ(uci_line(g.moves), "a7b8n e8e7 c7c8r");
}

TEST(PgnRead, FenStartWithBlackToMove) {
  constexpr std::string_view kFen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
  PgnGame g = only_game("[Event \"x\"]\n[SetUp \"1\"]\n[FEN \"" + std::string(kFen) +
                        "\"]\n\n1... e5 2. Nf3 Nc6 *");
  EXPECT_EQ(to_fen(g.start), kFen);
  EXPECT_EQ(g.start.side, kBlack);
  EXPECT_EQ(uci_line(g.moves), "e7e5 g1f3 b8c6");
  ASSERT_EQ(g.tags.size(), 3u);
  EXPECT_EQ(g.tags[2].first, "FEN");

  // A FEN tag is honoured without SetUp; the move numbers follow the FEN's.
  g = only_game("[FEN \"4k3/8/8/8/8/8/8/R3K3 b Q - 5 40\"]\n\n40... Kd7 41. O-O-O+ Ke6 *");
  EXPECT_EQ(uci_line(g.moves), "e8d7 e1c1 d7e6");
  EXPECT_EQ(to_pgn(g).substr(to_pgn(g).find("\n\n") + 2), "40... Kd7 41. O-O-O+ Ke6 *\n");
}

TEST(PgnRead, GamesWithoutTagsOrResult) {
  std::vector<PgnGame> games = parse_pgn("1. e4 e5 *\n\n1. d4 d5 2. c4");
  ASSERT_EQ(games.size(), 2u);
  EXPECT_TRUE(games[0].tags.empty());
  EXPECT_EQ(games[0].result, "*");
  EXPECT_EQ(uci_line(games[1].moves), "d2d4 d7d5 c2c4");
  EXPECT_EQ(games[1].result, "*");  // missing at the end of the input
  EXPECT_EQ(games[1].number, 2);

  // A game cut short by the next game's tags; the Result tag supplies the result.
  games = parse_pgn("[Result \"1-0\"]\n\n1. e4 e5\n[Event \"b\"]\n1. d4 0-1\n[Event \"c\"]\n");
  ASSERT_EQ(games.size(), 3u);
  EXPECT_EQ(uci_line(games[0].moves), "e2e4 e7e5");
  EXPECT_EQ(games[0].result, "1-0");
  EXPECT_EQ(games[1].result, "0-1");
  EXPECT_TRUE(games[2].moves.empty());  // tags only
  EXPECT_EQ(games[2].result, "*");

  EXPECT_TRUE(parse_pgn("").empty());
  EXPECT_TRUE(parse_pgn(" \n\n{only a comment}\n; and a line comment\n%escape\n").empty());
}

TEST(PgnRead, BomAndWindowsLineEndings) {
  const std::string text =
      "\xEF\xBB\xBF[Event \"x\"]\r\n[Site \"y\"]\r\n\r\n1. e4 e5\r\n2. Nf3 *\r\n\r\n"
      "[Event \"z\"]\r\n\r\n1. d4 {a\r\ncomment} 1-0\r\n";
  for (size_t chunk : {text.size(), size_t(1), size_t(2)}) {
    std::vector<PgnGame> games = read_in_chunks(text, chunk, PgnErrorMode::kFail);
    ASSERT_EQ(games.size(), 2u);
    EXPECT_EQ(games[0].tags, (PgnTags{{"Event", "x"}, {"Site", "y"}}));
    EXPECT_EQ(uci_line(games[0].moves), "e2e4 e7e5 g1f3");
    EXPECT_EQ(*games[1].tag("Event"), "z");
    EXPECT_EQ(games[1].result, "1-0");
  }
}

// ---------------------------------------------------------------- bad games

TEST(PgnErrors, IllegalMoveNamesGameAndMove) {
  const std::string text = std::string(kImmortal) +
                           "\n[Event \"2\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4\nNxe5 *\n";
  try {
    parse_pgn(text);
    FAIL() << "no error";
  } catch (const PgnError& e) {
    EXPECT_THAT(e.what(), StartsWith("PGN game 2, move 3... Nxe5: illegal move \"Nxe5\" in "));
    EXPECT_THAT(e.what(), HasSubstr("(line 18)"));
    EXPECT_EQ(e.game(), 2);
    EXPECT_EQ(e.line(), 18);
  }
  EXPECT_THAT(error_of("1. e4 e5 2. Ke3 *"), StartsWith("PGN game 1, move 2. Ke3: illegal move \"Ke3\""));
  EXPECT_THAT(error_of("1. e4 e5 2. Qh9 *"),
              StartsWith("PGN game 1, move 2. Qh9: invalid SAN move \"Qh9\": \"h9\" is not a square"));
  EXPECT_THAT(error_of("[FEN \"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1\"]\n1. b8 *"),
              StartsWith("PGN game 1, move 1. b8: illegal move \"b8\""));
  EXPECT_THAT(error_of("1. e4 e5 2. O-O *"), HasSubstr("castling is not legal here"));
}

TEST(PgnErrors, UnreadableTokens) {
  EXPECT_THAT(error_of("1. e4 e5 2. @f3 *"), StartsWith("PGN game 1, move 2: unexpected character '@' (line 1)"));
  EXPECT_THAT(error_of("1. e4 <e5> *"), StartsWith("PGN game 1, move 1...: unexpected character '<'"));
  EXPECT_THAT(error_of("1. e4 e5 2. Xf3 *"), StartsWith("PGN game 1, move 2. Xf3: invalid SAN move \"Xf3\""));
  EXPECT_THAT(error_of("1. e4 - 2. d4 *"), HasSubstr("unexpected character '-'"));
  EXPECT_THAT(error_of("1. e4 \xC2\xA0 e5 *"), HasSubstr("unexpected character byte 0xc2"));
  EXPECT_THAT(error_of("1. e4 $ e5 *"), HasSubstr("'$' must be followed by a NAG number"));
  EXPECT_THAT(error_of("1. e4 " + std::string(300, 'a') + " *"), HasSubstr("token longer than 255 characters"));
  EXPECT_THAT(error_of("1. e4 (1. d4 d5 *"), HasSubstr("unterminated variation '(' at end of input"));
  EXPECT_THAT(error_of("1. e4 {no end *"), StartsWith("PGN game 1, move 1...: comment '{' opened here is not closed"));
  EXPECT_THAT(error_of("1. e4 e5 \"str\" *"), HasSubstr("unexpected quoted string \"str\""));
}

TEST(PgnErrors, BadTags) {
  EXPECT_THAT(error_of("[Event \"x\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n1. e4 *"),
              StartsWith("PGN game 1, FEN tag: invalid FEN \"8/8/8/8/8/8/8/8 w - - 0 1\": White has no king (line 2)"));
  EXPECT_THAT(error_of("[FEN \"startpos x\"]\n*"), StartsWith("PGN game 1, FEN tag: invalid FEN"));
  EXPECT_THAT(error_of("[SetUp \"1\"]\n\n1. e4 *"), StartsWith("PGN game 1, SetUp tag: SetUp \"1\" without a FEN tag"));
  EXPECT_THAT(error_of("[Event \"x]\n\n1. e4 *"), StartsWith("PGN game 1, tags: unterminated tag value"));
  EXPECT_THAT(error_of("[Event x]\n\n1. e4 *"), StartsWith("PGN game 1, tag Event: expected a quoted value, found \"x\""));
  EXPECT_THAT(error_of("[Event \"x\" \"y\"]\n\n1. e4 *"), StartsWith("PGN game 1, tag Event: expected ']'"));
  EXPECT_THAT(error_of("[\"x\"]\n\n1. e4 *"), StartsWith("PGN game 1, tags: expected a tag name after '['"));
  EXPECT_THAT(error_of("[Event \"x\"]\n[Site"), HasSubstr("unterminated tag pair at end of input"));
}

// A Result tag that contradicts the movetext's result wins, as in pgn-extract and
// python-chess; the movetext's result is kept beside it.
TEST(Pgn, ResultTagConflictingWithTheMovetextWins) {
  PgnGame g = only_game("[Result \"1-0\"]\n\n1. e4 e5 0-1\n");
  EXPECT_EQ(g.result, "1-0");
  EXPECT_EQ(g.movetext_result, "0-1");
  g = only_game("[Result \"1-0\"]\n\n1. e4 *\n");
  EXPECT_EQ(g.result, "1-0");
  EXPECT_EQ(g.movetext_result, "*");
  EXPECT_EQ(only_game("[Result \"1-0\"]\n\n1. e4 e5 1/2").movetext_result, "1/2-1/2");
  g = only_game("[Result \"0-1\"]\n\n1. e4 e51-0");
  EXPECT_EQ(g.result, "0-1");
  EXPECT_EQ(g.movetext_result, "1-0");
  // The next game is read as usual.
  const std::vector<PgnGame> two = parse_pgn("[Result \"1-0\"]\n\n1. e4 0-1\n\n1. d4 *\n");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].movetext_result, "");
  EXPECT_EQ(uci_line(two[1].moves), "d2d4");
}

TEST(PgnErrors, ResultTagAgreeingWithTheMovetext) {
  EXPECT_EQ(only_game("[Result \"1-0\"]\n\n1. e4 1-0").result, "1-0");
  EXPECT_EQ(only_game("[Result \"?\"]\n\n1. e4 0-1").result, "0-1");  // not a result: no conflict
  // Skip mode: the game with the conflict is kept, the next one read.
  int skipped = -1;
  std::vector<PgnGame> games =
      parse_pgn("[Result \"1-0\"]\n\n1. e4 e5 0-1\n1. d4 *\n", PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 0);
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(games[1].number, 2);
  EXPECT_EQ(uci_line(games[1].moves), "d2d4");
}

// A repeated tag is an error naming it, not a silent choice of one value.
TEST(PgnErrors, RepeatedTag) {
  EXPECT_THAT(error_of("[Event \"a\"]\n[Site \"s\"]\n[Event \"b\"]\n\n1. e4 *"),
              StartsWith("PGN game 1, tag Event: given twice (\"a\", then \"b\") (line 3)"));
  EXPECT_THAT(error_of("[FEN \"startpos\"]\n[FEN \"startpos\"]\n\n1. e4 *"), HasSubstr("tag FEN: given twice"));
  EXPECT_EQ(only_game("[Event \"a\"]\n[event \"b\"]\n\n*").tags.size(), 2u);  // names are case-sensitive
  int skipped = -1;
  std::vector<PgnGame> games = parse_pgn("[Event \"a\"]\n[Event \"b\"]\n\n1. e4 *\n\n[Event \"c\"]\n\n1. d4 *\n",
                                         PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(*games[0].tag("Event"), "c");
  // The writer refuses what the reader would.
  try {
    to_pgn({{"Event", "a"}, {"Event", "b"}}, parse_fen(kStartFen), {}, "*");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("tag \"Event\" is given twice"));
  }
}

// "T<i>", a tag name of its own for each i.
std::string numbered_name(int i) {
  std::string name = "T";
  name += std::to_string(i);
  return name;
}

// One game of many tags (tags are not limited in number): each still read, and a name
// given twice among them still found, in the index of names as in the first few scanned.
TEST(PgnErrors, RepeatedTagAmongManyTags) {
  constexpr int kTags = 80000;
  std::string tags;
  for (int i = 1; i <= kTags; ++i) tags += "[T" + std::to_string(i) + " \"v" + std::to_string(i) + "\"]\n";
  const PgnGame g = only_game(tags + "\n1. e4 *");
  EXPECT_EQ(g.tags.size(), std::size_t(kTags));
  EXPECT_EQ(g.tags.back().first, "T80000");
  EXPECT_THAT(error_of(tags + "[T40000 \"w\"]\n\n1. e4 *"),
              StartsWith("PGN game 1, tag T40000: given twice (\"v40000\", then \"w\") (line 80001)"));
  EXPECT_THAT(error_of(tags + "[T1 \"w\"]\n\n1. e4 *"), HasSubstr("tag T1: given twice (\"v1\", then \"w\")"));
  EXPECT_THAT(error_of("[A \"a\"]\n[B \"b\"]\n[A \"c\"]\n\n1. e4 *"), HasSubstr("tag A: given twice"));
  // The writer checks its tags the same way.
  PgnTags many;
  for (int i = 1; i <= kTags; ++i) many.emplace_back(numbered_name(i), "v");
  EXPECT_NO_THROW(to_pgn(many, parse_fen(kStartFen), {}, "*"));
  many.emplace_back("T77", "w");
  EXPECT_THROW(to_pgn(many, parse_fen(kStartFen), {}, "*"), std::invalid_argument);
}

// The names are looked up in work linear in their number: a game of n tags must not cost
// n^2 / 2 name comparisons, which hostile input makes seconds of CPU.
TEST(PgnTagNames, WorkIsLinearInTheNumberOfTags) {
  constexpr int kTags = 80000;
  PgnTags tags;
  detail::TagNames names;
  for (int i = 0; i < kTags; ++i) {
    const std::string name = numbered_name(i);
    ASSERT_EQ(names.find(tags, name), -1);
    tags.emplace_back(name, "v");
    names.add(tags);
  }
  EXPECT_EQ(names.size(), std::size_t(kTags));
  EXPECT_EQ(names.find(tags, "T0"), 0);
  EXPECT_EQ(names.find(tags, "T15"), 15);
  EXPECT_EQ(names.find(tags, "T79999"), 79999);
  EXPECT_EQ(names.find(tags, "T80000"), -1);
  EXPECT_LT(names.work(), std::uint64_t(4) * kTags);
  names.clear();
  EXPECT_EQ(names.find(tags, "T0"), -1);  // a new game's names
}

// A result with neither tags nor moves before it is no game: "1. e4 e5 1-0 0-1" used to
// read as two games, the second empty.
TEST(PgnErrors, BareResultIsNoGame) {
  EXPECT_THAT(error_of("1. e4 e5 1-0 0-1"), StartsWith("PGN game 2: result \"0-1\" without tags or moves (line 1)"));
  EXPECT_THAT(error_of("*"), StartsWith("PGN game 1: result \"*\" without tags or moves"));
  int skipped = -1;
  std::vector<PgnGame> games = parse_pgn("1. e4 e5 1-0 0-1\n1. d4 *\n", PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 2u);  // reading goes on right after the stray result
  EXPECT_EQ(uci_line(games[0].moves), "e2e4 e7e5");
  EXPECT_EQ(games[0].result, "1-0");
  EXPECT_EQ(uci_line(games[1].moves), "d2d4");
  EXPECT_EQ(games[1].number, 3);
  // Tags alone still make a game.
  EXPECT_EQ(only_game("[Event \"x\"]\n\n*").result, "*");
}

// Moves past fullmove 65535 cannot be stored in a board: a bad game, not a repeated number.
TEST(PgnErrors, MovePastFullmove65535) {
  EXPECT_THAT(error_of("[FEN \"4k3/8/8/8/8/8/8/4K3 b - - 0 65535\"]\n\n65535... Kd8 *"),
              StartsWith("PGN game 1, move 65535... Kd8: move \"e8d8\" in 4k3/8/8/8/8/8/8/4K3 b - - 0 65535 cannot be "
                         "played: the fullmove number would pass 65535"));
  const Board b = parse_fen("4k3/8/8/8/8/8/8/4K3 b - - 0 65535");
  EXPECT_THROW(to_pgn({}, b, {parse_uci(b, "e8d8")}, "*"), IllegalMove);
}

// Six games: 2 (illegal move), 4 (bad FEN, tag section error) and 6 (unreadable, no result) are bad.
const std::string kMixed =
    "[Event \"1\"]\n\n1. e4 e5 2. Nf3 1-0\n\n"
    "[Event \"2\"]\n[Result \"0-1\"]\n\n1. e4 e5 2. Nf3 Nf3 3. Nc3 (3. d4 1-0) 0-1\n\n"
    "1. d4 d5 *\n\n"
    "[Event \"4\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0\"]\n"
    "[Site \"s\"]\n\n1. e4 *\n"
    "[Event \"5\"]\n\n1. c4 {c} 1/2-1/2\n\n"
    "[Event \"6\"]\n\n1. c4 @ \n";

TEST(PgnErrors, SkipModeCountsAndResynchronises) {
  int skipped = -1;
  std::vector<PgnGame> games = parse_pgn(kMixed, PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 3);
  ASSERT_EQ(games.size(), 3u);
  EXPECT_EQ(games[0].number, 1);
  EXPECT_EQ(games[1].number, 3);
  EXPECT_EQ(uci_line(games[1].moves), "d2d4 d7d5");
  EXPECT_EQ(games[2].number, 5);
  EXPECT_EQ(*games[2].tag("Event"), "5");

  PgnReader reader(PgnErrorMode::kSkip);
  reader.feed(kMixed);
  reader.finish();
  PgnGame g;
  std::vector<std::string> errors;
  int seen = 0;
  while (reader.next(g)) {
    ++seen;
    errors.push_back(reader.last_error());
  }
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(reader.skipped(), 3);
  EXPECT_THAT(errors[1], StartsWith("PGN game 2, move 2... Nf3: illegal move"));
  EXPECT_THAT(errors[2], StartsWith("PGN game 4, FEN tag: invalid FEN"));
  EXPECT_THAT(reader.last_error(), StartsWith("PGN game 6, move 1...: unexpected character '@'"));

  // A malformed tag section: its remaining tags and movetext are skipped up to its result.
  games = parse_pgn("[Event \"a]\n[Site \"b\"]\n\n1. e4 (1. d4 *) e5 *\n[Event \"c\"]\n\n1. d4 *\n",
                    PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(*games[0].tag("Event"), "c");
  EXPECT_EQ(games[0].number, 2);

  // A bad game without a result: the next '[' after a blank line starts the next game.
  games = parse_pgn("1. e4 Ke7 Nf3\n\n[Event \"c\"]\n\n1. d4 *\n", PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(games[0].number, 2);
  // ... or a '[' that cuts an open variation short.
  games = parse_pgn("1. e4 (1. d4\n[Event \"c\"]\n\n1. d4 *\n", PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(*games[0].tag("Event"), "c");
}

TEST(PgnErrors, FailModeThrowsOnceAndCanGoOn) {
  EXPECT_THROW(parse_pgn(kMixed), PgnError);
  PgnReader reader;  // kFail
  reader.feed(kMixed);
  reader.finish();
  PgnGame g;
  std::vector<int> numbers;
  int errors = 0;
  for (;;) {
    try {
      if (!reader.next(g)) break;
      numbers.push_back(g.number);
    } catch (const PgnError& e) {
      ++errors;
      if (errors == 1) {
        EXPECT_EQ(e.game(), 2);
      }
    }
  }
  EXPECT_EQ(numbers, (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(errors, 3);
  EXPECT_EQ(reader.skipped(), 3);
}

// ---------------------------------------------------------------- lenient reading
//
// What PGN found in the wild holds beyond the standard, read as pgn-extract and kokopu read
// it; every main-line move is still checked.

TEST(PgnLenient, NullMovesInVariations) {
  PgnGame g = only_game(
      "1. e4 (1. d4 -- 2. c4 Z0 3. Nf3 0000 4. g3 @@@@ (4. -- Nf6)) e5 2. Nf3 (2. -- d5 3. --) Nc6 *");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5 g1f3 b8c6");
  EXPECT_EQ(g.result, "*");
  // In the main line a null move is an error: the main line must be a legal game.
  EXPECT_THAT(error_of("1. e4 -- 2. d4 *"), StartsWith("PGN game 1, move 1... --: null move \"--\" in the main line"));
  EXPECT_THAT(error_of("1. e4 -- 2. d4 *"), HasSubstr("(line 1)"));
  EXPECT_THAT(error_of("1. e4 e5 2. Z0 *"), StartsWith("PGN game 1, move 2. Z0: null move \"Z0\" in the main line"));
  EXPECT_THAT(error_of("1. e4 0000 *"), StartsWith("PGN game 1, move 1... 0000: null move \"0000\""));
  EXPECT_THAT(error_of("1. @@@@ e5 *"), StartsWith("PGN game 1, move 1. @@@@: null move \"@@@@\""));
  // Other runs of '-' or '@' are still unreadable.
  EXPECT_THAT(error_of("1. e4 (1. d4 ---) e5 *"), HasSubstr("unexpected character '-'"));
  EXPECT_THAT(error_of("1. e4 (1. d4 @@) e5 *"), HasSubstr("unexpected character '@'"));
}

TEST(PgnLenient, UnescapedQuotesInTagValues) {
  PgnGame g = only_game(
      "[Event \"The \"Big\" Open\"]\n[Site \"a \"quoted\"\" ]\n[White \"Kasparov, \"Gary\"\"]\n"
      "[Black \"x\"y\"]\n[Annotator \"\"][Round \"1\"] [Date \"?\"]\n\n1. e4 *");
  EXPECT_EQ(*g.tag("Event"), "The \"Big\" Open");
  EXPECT_EQ(*g.tag("Site"), "a \"quoted\"");
  EXPECT_EQ(*g.tag("White"), "Kasparov, \"Gary\"");
  EXPECT_EQ(*g.tag("Black"), "x\"y");
  EXPECT_EQ(*g.tag("Annotator"), "");
  EXPECT_EQ(*g.tag("Round"), "1");
  EXPECT_EQ(*g.tag("Date"), "?");
  // Fed byte by byte, the same.
  const std::string text = "[Event \"The \"Big\" Open\"]\n[White \"Kasparov, \"Gary\"\"]\n\n1. e4 *";
  const std::vector<PgnGame> bytes = read_in_chunks(text, 1, PgnErrorMode::kFail);
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_EQ(*bytes[0].tag("Event"), "The \"Big\" Open");
  EXPECT_EQ(*bytes[0].tag("White"), "Kasparov, \"Gary\"");
  // A value still ends on its line; a second quoted string is still an error.
  EXPECT_THAT(error_of("[Event \"The \"Big]\n\n1. e4 *"), StartsWith("PGN game 1, tags: unterminated tag value"));
  EXPECT_THAT(error_of("[Event \"x\" \"y\"]\n\n1. e4 *"), StartsWith("PGN game 1, tag Event: expected ']'"));
  // Outside a tag a quote closes its string at once.
  EXPECT_THAT(error_of("1. e4 \"a\"b\" *"), HasSubstr("unexpected quoted string \"a\""));
}

TEST(PgnLenient, HalfPointResults) {
  EXPECT_EQ(only_game("1. e4 e5 1/2").result, "1/2-1/2");
  EXPECT_EQ(only_game("1. e4 e5 \xC2\xBD-\xC2\xBD").result, "1/2-1/2");  // UTF-8
  EXPECT_EQ(only_game("1. e4 e5 \xBD-\xBD\n").result, "1/2-1/2");          // Latin-1
  // A Result tag of "1/2" agrees with any spelling of the draw, and supplies a missing result.
  EXPECT_EQ(only_game("[Result \"1/2\"]\n\n1. e4 e5 1/2-1/2").result, "1/2-1/2");
  EXPECT_EQ(only_game("[Result \"1/2-1/2\"]\n\n1. e4 e5 1/2").result, "1/2-1/2");
  EXPECT_EQ(only_game("[Result \"1/2\"]\n\n1. e4 e5").result, "1/2-1/2");
  // Games one after another.
  std::vector<PgnGame> games = parse_pgn("1. e4 1/2 1. d4 \xC2\xBD-\xC2\xBD 1. c4 1-0");
  ASSERT_EQ(games.size(), 3u);
  EXPECT_EQ(games[1].result, "1/2-1/2");
  EXPECT_EQ(uci_line(games[2].moves), "c2c4");
  // Not a game on its own.
  EXPECT_THAT(error_of("1. e4 1-0 1/2"), StartsWith("PGN game 2: result \"1/2\" without tags or moves"));
  // In a variation it ends nothing.
  EXPECT_EQ(uci_line(only_game("1. e4 (1. d4 1/2) e5 0-1").moves), "e2e4 e7e5");
}

TEST(PgnLenient, MoveRunIntoTheResult) {
  PgnGame g = only_game("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7#1-0");
  EXPECT_EQ(g.moves.size(), 7u);
  EXPECT_EQ(to_uci(g.moves.back()), "h5f7");
  EXPECT_EQ(g.result, "1-0");
  g = only_game("1. e4 e51/2-1/2");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5");
  EXPECT_EQ(g.result, "1/2-1/2");
  g = only_game("1. e41/2");
  EXPECT_EQ(uci_line(g.moves), "e2e4");
  EXPECT_EQ(g.result, "1/2-1/2");
  // R8xg2 names the rook on g8 (the one on g1 takes too).
  g = only_game("[FEN \"6r1/8/8/8/8/8/K5P1/6rk b - - 0 1\"]\n\n1... R8xg20-1");
  EXPECT_EQ(uci_line(g.moves), "g8g2");
  EXPECT_EQ(g.result, "0-1");
  g = only_game("1. e4 e5 2. Nf3 Nf6 3. Bc4 Bc5 4. O-O1/2-1/2");
  EXPECT_EQ(g.moves.back().kind(), kCastling);
  g = only_game("[FEN \"4k3/P7/8/8/8/8/8/4K3 w - - 0 1\"]\n\n1. a8=Q+1-0");
  EXPECT_EQ(uci_line(g.moves), "a7a8q");
  EXPECT_EQ(g.result, "1-0");
  // Skip mode: a bad move run into its result ends the bad game there.
  int skipped = -1;
  std::vector<PgnGame> games = parse_pgn("1. e4 Ke31-0\n1. d4 *\n", PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(uci_line(games[0].moves), "d2d4");
}

TEST(PgnLenient, StrayCommasBracesAndParentheses) {
  PgnGame g = only_game("1. e4, e5 } 2. Nf3 ) Nc6, 3. Bb5 a6 }) *");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6");
  g = only_game("1. e4 e5) *");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5");
  // Inside a variation a ')' still closes it.
  g = only_game("1. e4 (1. d4, d5) e5 ) 2. Nf3 *");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5 g1f3");
  // Between games they make no game.
  std::vector<PgnGame> games = parse_pgn("1. e4 1-0 ) }\n,\n[Event \"b\"]\n\n1. d4 0-1\n");
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(*games[1].tag("Event"), "b");
  EXPECT_EQ(games[1].number, 2);
}

TEST(PgnLenient, CheckSignsApartFromTheMove) {
  PgnGame g = only_game("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7 # 1-0");
  EXPECT_EQ(g.moves.size(), 7u);
  EXPECT_EQ(g.result, "1-0");
  g = only_game("1. e4 d5 2. Bb5 + c6 3. Bxc6 ++ Nxc6 4. Nf3 +- e5 5. Nc3 -+ Nf6 6. d4 = Bb4 +/- *");
  EXPECT_EQ(uci_line(g.moves), "e2e4 d7d5 f1b5 c7c6 b5c6 b8c6 g1f3 e7e5 b1c3 g8f6 d2d4 f8b4");
  EXPECT_THAT(error_of("1. e4 +@ e5 *"), HasSubstr("unexpected character '+'"));
}

// Move numbers are read past however they are written (the lexer skips the usual ones
// without making tokens of them); "0000." stays a null move.
TEST(PgnLenient, MoveNumbersInEverySpelling) {
  const std::string text = "1.e4 e5 2...Nf3 Nc6 3. Bb5 a6 4 . Ba4 Nf6 12.5 O-O 3.... Be7 6.\nRe1 0. b5 00. Bb3 *";
  const PgnGame g = only_game(text);
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3");
  for (size_t chunk : {size_t(1), size_t(2), size_t(3)})
    expect_same_games(read_in_chunks(text, chunk, PgnErrorMode::kFail), {g});
  EXPECT_THAT(error_of("1. e4 0000. *"), HasSubstr("null move \"0000\""));
}

TEST(PgnLenient, LongAlgebraic) {
  PgnGame g = only_game(
      "1. e2-e4 e7-e5 2. Ng1-f3 b8-c6 3. f1c4 Ng8xf6?! 4. 0-0 Bf8-c5 5. d2-d3 d7-d6 6. c1-g5 0-0 "
      "7. Nb1-c3 h7-h6 8. g5xf6 Qd8xf6 9. c3-d5 Qf6-d8 10. Qd1-e2 *");
  EXPECT_EQ(uci_line(g.moves),
            "e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1 f8c5 d2d3 d7d6 c1g5 e8g8 b1c3 h7h6 g5f6 d8f6 c3d5 f6d8 d1e2");
  EXPECT_EQ(g.moves[6].kind(), kCastling);
  // Castling as the king's move, with or without its letter; O-O and 0-0-0.
  g = only_game("[FEN \"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1\"]\n\n1. e1-g1 Ke8-c8 *");
  EXPECT_EQ(uci_line(g.moves), "e1g1 e8c8");
  EXPECT_EQ(g.moves[0].kind(), kCastling);
  EXPECT_EQ(g.moves[1].kind(), kCastling);
  g = only_game("[FEN \"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1\"]\n\n1. O-O 0-0-0 *");
  EXPECT_EQ(uci_line(g.moves), "e1g1 e8c8");
  // Promotions; captures written with ':'; en passant.
  g = only_game("[FEN \"1r2k3/P1P5/8/8/8/8/8/4K3 w - - 0 1\"]\n\n1. c7-c8=Q+ Ke8-e7 2. a7xb8=N Ke7-f6 *");
  EXPECT_EQ(uci_line(g.moves), "c7c8q e8e7 a7b8n e7f6");
  EXPECT_EQ(uci_line(only_game("1. e4 d5 2. e4:d5 Qd8:d5 *").moves), "e2e4 d7d5 e4d5 d8d5");
  g = only_game("1. e2-e4 Ng8-f6 2. e4-e5 d7-d5 3. e5xd6 *");
  EXPECT_EQ(g.moves[4].kind(), kEnPassant);
  // Checked against the legal moves: the piece on the from-square must go there.
  EXPECT_THAT(error_of("1. e2-e4 e7-e5 2. g1-g3 *"),
              StartsWith("PGN game 1, move 2. g1-g3: illegal move \"g1-g3\" in "));
  EXPECT_THAT(error_of("1. Bg1-f3 *"), StartsWith("PGN game 1, move 1. Bg1-f3: illegal move"));
  EXPECT_THAT(error_of("1. e3-e4 *"), StartsWith("PGN game 1, move 1. e3-e4: illegal move"));
  EXPECT_THAT(error_of("1. e1-g1 *"), HasSubstr("castling is not legal here"));
}

TEST(PgnLenient, EnPassantMarks) {
  for (const std::string ep : {"exd6 e.p.", "exd6e.p.", "exd6ep", "exd6 ep", "exd6 e.p", "exd6e.p"}) {
    SCOPED_TRACE(ep);
    PgnGame g = only_game("1. e4 Nf6 2. e5 d5 3. " + ep + " Nc6 *");
    ASSERT_EQ(g.moves.size(), 6u);
    EXPECT_EQ(g.moves[4].kind(), kEnPassant);
    EXPECT_EQ(to_uci(g.moves[5]), "b8c6");
  }
}

TEST(PgnLenient, Windows1252TagValues) {
  // Latin-1 and Windows-1252 values become UTF-8; values already in UTF-8 are kept.
  PgnGame g = only_game(
      "[Event \"\x84Schach\x93 \x96 Turnier \x80 5\"]\n[White \"M\xFCller, J\xF6rg\"]\n"
      "[Black \"M\xC3\xBCller, J\xC3\xB6rg\"]\n[Site \"Cura\xE7" "ao\"]\n\n"
      "1. e4 {Sch\xF6n} e5 ; \xE9t\xE9\n*");
  EXPECT_EQ(*g.tag("Event"), "\u201ESchach\u201C \u2013 Turnier \u20AC 5");
  EXPECT_EQ(*g.tag("White"), "M\u00FCller, J\u00F6rg");
  EXPECT_EQ(*g.tag("Black"), "M\u00FCller, J\u00F6rg");
  EXPECT_EQ(*g.tag("Site"), "Cura\u00E7" "ao");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5");
  // Decided per value: a UTF-8 value beside a Latin-1 one stays as it is.
  g = only_game("[White \"Stra\xDF" "e\"]\n[Black \"Stra\xC3\x9F" "e\"]\n\n*");
  EXPECT_EQ(*g.tag("White"), "Stra\u00DF" "e");
  EXPECT_EQ(*g.tag("Black"), "Stra\u00DF" "e");
  // Bytes Windows-1252 leaves undefined are kept as the C1 controls of Latin-1.
  EXPECT_EQ(*only_game("[Event \"a\x81" "b\"]\n*").tag("Event"), "a\xC2\x81" "b");
}

TEST(PgnLenient, MissingTagsOrResult) {
  // Movetext without tags, ended by a result, the next game's tags, or the end of input.
  std::vector<PgnGame> games = parse_pgn(
      "1. e4 e5 1-0\n"
      "1. d4 d5\n"
      "[Event \"b\"]\n[Result \"0-1\"]\n\n1. c4 c5\n\n"
      "[Event \"c\"]\n\n1. Nf3 Nf6\n");
  ASSERT_EQ(games.size(), 4u);
  EXPECT_TRUE(games[0].tags.empty());
  EXPECT_EQ(games[0].result, "1-0");
  EXPECT_TRUE(games[1].tags.empty());
  EXPECT_EQ(uci_line(games[1].moves), "d2d4 d7d5");
  EXPECT_EQ(games[1].result, "*");
  EXPECT_EQ(uci_line(games[2].moves), "c2c4 c7c5");
  EXPECT_EQ(games[2].result, "0-1");  // the Result tag's
  EXPECT_EQ(uci_line(games[3].moves), "g1f3 g8f6");
  EXPECT_EQ(games[3].result, "*");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(games[i].number, i + 1);
  // A Result tag that is no result gives "*".
  EXPECT_EQ(only_game("[Result \"?\"]\n\n1. e4").result, "*");
}

// Each leniency leaves the main line checked: an illegal move is still a bad game, named
// with its game, move and line.
TEST(PgnLenient, IllegalMainLineMovesAreStillErrors) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {"1. e4 (1. d4 -- 2. c4 @@@@) e5 2. Ke3 *", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"[Event \"The \"Big\" Open\"]\n\n1. e4 e5\n2. Ke3 *", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke3 1/2", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke3 \xBD-\xBD", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke31-0", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke3#1/2-1/2", "PGN game 1, move 2. Ke3#: illegal move \"Ke3#\""},
      {"1. e4, e5 } 2. Ke3 ) *", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke3 + *", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e2-e4 e7-e5 2. e1-e3 *", "PGN game 1, move 2. e1-e3: illegal move \"e1-e3\""},
      {"1. e2-e4 e7-e5 2. Ke1-e3 *", "PGN game 1, move 2. Ke1-e3: illegal move \"Ke1-e3\""},
      {"1. e4 e5 2. exd6ep *", "PGN game 1, move 2. exd6ep: illegal move \"exd6ep\""},
      {"1. e4 e5 2. exd6 e.p. *", "PGN game 1, move 2. exd6: illegal move \"exd6\""},
      {"[White \"M\xFCller\"]\n\n1. e4 e5\n2. Ke3 *", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
      {"1. e4 e5 2. Ke3", "PGN game 1, move 2. Ke3: illegal move \"Ke3\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const int line = 1 + int(std::count(c.text.begin(), c.text.end(), '\n'));
    try {
      parse_pgn("[Event \"first\"]\n\n1. d4 *\n\n" + c.text);
      ADD_FAILURE() << "no error";
    } catch (const PgnError& e) {
      std::string message = c.message;
      message.replace(9, 1, "2");  // the game after the first
      EXPECT_THAT(e.what(), StartsWith(message));
      EXPECT_THAT(e.what(), HasSubstr("(line " + std::to_string(line + 4) + ")"));
      EXPECT_EQ(e.game(), 2);
      EXPECT_EQ(e.line(), line + 4);
    }
  }
}

// Two bad games one right after the other ("1-0|": a bare result, then an unreadable
// character) are reported one by one, however the input is cut.
TEST(PgnErrors, BadGamesInARowAreEachReported) {
  const std::string text = "1. e4 1-0 1-0|\n\n[Event \"x\"]\n\n1. d4 *\n";
  for (size_t chunk : {text.size(), size_t(1), size_t(2), size_t(3), size_t(5)}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    PgnReader reader;
    std::vector<std::string> seen;
    PgnGame g;
    auto drain = [&] {
      for (;;) {
        try {
          if (!reader.next(g)) return;
          seen.push_back("game " + std::to_string(g.number));
        } catch (const PgnError& e) {
          seen.push_back(e.what());
        }
      }
    };
    for (size_t i = 0; i < text.size(); i += chunk) {
      reader.feed(std::string_view(text).substr(i, chunk));
      drain();
    }
    reader.finish();
    drain();
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[0], "game 1");
    EXPECT_THAT(seen[1], StartsWith("PGN game 2: result \"1-0\" without tags or moves (line 1)"));
    EXPECT_THAT(seen[2], StartsWith("PGN game 3, move 1: unexpected character '|' (line 1)"));
    EXPECT_EQ(seen[3], "game 4");
    EXPECT_EQ(reader.skipped(), 2);
  }
}

// ---------------------------------------------------------------- incremental input

TEST(PgnReader, ByteByByteMatchesOneChunk) {
  const std::string good = std::string(kImmortal) + "\n" +
                           "{c}\n% esc\n[Event \"e \\\"q\\\"\"]\n[FEN \"4k3/8/8/8/8/8/8/R3K3 b Q - 5 40\"]\n\n"
                           "40... Kd7 41. O-O-O+ (41. Ra7+ Kc6) Ke6 $3 ; x\n42.Rd2 *\n\n"
                           // The lenient forms, whose tokens the reader reads in place when whole.
                           "[Event \"The \"Big\" Open\"]\n[White \"M\xFCller\"]\n[Black \"Kasparov, \"Gary\"\"]\n\n"
                           "1. e2-e4 (1. d4 -- 2. c4 @@@@) e5, 2. Ng1-f3 + Nc6 } 3. Bb5 a6 ) 4. Ba4 Nf6 "
                           "5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 \xBD-\xBD\n"
                           "1. e4 Nf6 2. e5 d5 3. exd6ep e6 4. dxc7 Qxc7 5. Qh5?? Nxh50-1\n"
                           "1. e4 e5 1/2 1. d4 d5 \xC2\xBD-\xC2\xBD\n\n1. e4 e5 2. Nf3";
  std::vector<PgnGame> whole = parse_pgn(good);
  ASSERT_EQ(whole.size(), 7u);
  for (size_t chunk : {size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), size_t(4096)}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    expect_same_games(read_in_chunks(good, chunk, PgnErrorMode::kFail), whole);
  }
  int skipped_whole = 0;
  whole = parse_pgn(kMixed, PgnErrorMode::kSkip, &skipped_whole);
  for (size_t chunk : {size_t(1), size_t(5)}) {
    int skipped = 0;
    expect_same_games(read_in_chunks(kMixed, chunk, PgnErrorMode::kSkip, &skipped), whole);
    EXPECT_EQ(skipped, skipped_whole);
  }
}

TEST(PgnReader, GamesComeOutAsSoonAsTheyEnd) {
  PgnReader reader;
  PgnGame g;
  reader.feed("[Event \"a\"]\n\n1. e4 e");
  EXPECT_FALSE(reader.next(g));
  reader.feed("5 1-");
  EXPECT_FALSE(reader.next(g));
  reader.feed("0");
  EXPECT_FALSE(reader.next(g));  // "1-0" might go on ("1-0x")
  reader.feed(" 1. d4");
  ASSERT_TRUE(reader.next(g));
  EXPECT_EQ(g.result, "1-0");
  EXPECT_EQ(uci_line(g.moves), "e2e4 e7e5");
  EXPECT_FALSE(reader.next(g));
  reader.finish();
  ASSERT_TRUE(reader.next(g));
  EXPECT_EQ(uci_line(g.moves), "d2d4");
  EXPECT_EQ(g.number, 2);
  EXPECT_FALSE(reader.next(g));
  EXPECT_THROW(reader.feed("x"), std::logic_error);
}

// The poll hook is called while one slice is read, however few games it holds, and what it
// throws stops the reading (a query cancel).
TEST(PgnReader, PollIsCalledWithinASliceAndMayStopIt) {
  std::string text;
  for (int i = 1; i <= 80000; ++i) text += "[T" + std::to_string(i) + " \"v\"]\n";
  text += "\n1. e4 *\n";
  int polls = 0;
  PgnReader counted(PgnErrorMode::kFail, [&] { ++polls; });
  counted.feed(text);
  PgnGame g;
  ASSERT_TRUE(counted.next(g));
  EXPECT_GE(polls, 50);  // four tokens a tag, a poll every few thousand
  EXPECT_LE(polls, 400);
  polls = 0;
  PgnReader cancelled(PgnErrorMode::kFail, [&] {
    if (++polls == 3) throw std::runtime_error("cancelled");
  });
  cancelled.feed(text);
  EXPECT_THROW(cancelled.next(g), std::runtime_error);
  EXPECT_EQ(polls, 3);
}

TEST(PgnReader, LargeInputStaysLinear) {
  // A 4 MB comment fed one byte at a time, then many games in 64 KiB chunks.
  PgnReader reader;
  PgnGame g;
  reader.feed("{");
  const std::string filler(4 << 20, 'x');
  for (char c : filler) {
    reader.feed(std::string_view(&c, 1));
    ASSERT_FALSE(reader.next(g));
  }
  reader.feed("}\n");
  std::string many;
  for (int i = 0; i < 3000; ++i) many += std::string(kImmortal) + "\n";
  int count = 0;
  for (size_t i = 0; i < many.size(); i += 1 << 16) {
    reader.feed(std::string_view(many).substr(i, 1 << 16));
    while (reader.next(g)) {
      ++count;
      ASSERT_EQ(g.moves.size(), 45u);
      ASSERT_EQ(g.number, count);
    }
  }
  reader.finish();
  while (reader.next(g)) ++count;
  EXPECT_EQ(count, 3000);
}

// ---------------------------------------------------------------- writer

TEST(PgnWrite, ExportFormat) {
  std::vector<Move> moves = san_moves("e4 e5 Nf3");
  PgnTags tags = {{"Annotator", "me"}, {"Event", "Test \"q\" \\"}, {"Result", "1-0"}, {"Site", "a\nb"}};
  EXPECT_EQ(to_pgn(tags, parse_fen(kStartFen), moves, "*"),
            "[Event \"Test \\\"q\\\" \\\\\"]\n"
            "[Site \"a b\"]\n"
            "[Date \"????.??.??\"]\n"
            "[Round \"?\"]\n"
            "[White \"?\"]\n"
            "[Black \"?\"]\n"
            "[Result \"*\"]\n"
            "[Annotator \"me\"]\n"
            "\n"
            "1. e4 e5 2. Nf3 *\n");
  EXPECT_THAT(to_pgn({}, parse_fen(kStartFen), {}, "1/2-1/2"), testing::EndsWith("[Result \"1/2-1/2\"]\n\n1/2-1/2\n"));

  // Not the start position: SetUp and FEN from the board, Black's first move numbered "N...".
  const Board start = parse_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 12");
  moves = san_moves("Nf6 Bc4 Bc5", to_fen(start));
  const std::string pgn = to_pgn({{"FEN", "stale"}, {"White", "W"}}, start, moves, "0-1");
  EXPECT_THAT(pgn, HasSubstr("[White \"W\"]\n[Black \"?\"]\n[Result \"0-1\"]\n[SetUp \"1\"]\n"
                             "[FEN \"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 12\"]\n\n"
                             "12... Nf6 13. Bc4 Bc5 0-1\n"));
  PgnGame back = only_game(pgn);
  EXPECT_EQ(to_fen(back.start), to_fen(start));
  EXPECT_EQ(uci_line(back.moves), uci_line(moves));

  EXPECT_THROW(to_pgn({}, start, {Move(parse_square("e2"), parse_square("e4"))}, "*"), std::invalid_argument);
  EXPECT_THROW(to_pgn({}, start, {}, "1-1"), std::invalid_argument);
  EXPECT_THROW(to_pgn({{"Bad Name", "x"}}, start, {}, "*"), std::invalid_argument);
  EXPECT_THROW(to_pgn({{"", "x"}}, start, {}, "*"), std::invalid_argument);
  // Any name the reader takes is written back.
  PgnGame odd = only_game("[White-Elo \"2700\"]\n*");
  EXPECT_EQ(only_game(to_pgn(odd)).tags.back(), (std::pair<std::string, std::string>{"White-Elo", "2700"}));
  EXPECT_THAT(error_of("[Ope.ning \"x\"]\n*"), StartsWith("PGN game 1, tag Ope: expected a quoted value, found \".\""));
}

TEST(PgnWrite, LongGameWrapsAt79Columns) {
  PgnGame g = only_game(kImmortal);
  const std::string pgn = to_pgn(g);
  std::istringstream in(pgn);
  std::string line;
  size_t longest = 0;
  int movetext_lines = 0;
  bool in_movetext = false;
  while (std::getline(in, line)) {
    longest = std::max(longest, line.size());
    if (in_movetext) ++movetext_lines;
    if (line.empty()) in_movetext = true;
  }
  EXPECT_LE(longest, 79u);
  EXPECT_EQ(movetext_lines, 4);  // 45 plies: about 20 per line
  PgnGame back = only_game(pgn);
  EXPECT_EQ(back.tags, g.tags);
  EXPECT_EQ(uci_line(back.moves), uci_line(g.moves));
}

// Random games (some from random start positions, some with Black to move first) written
// with to_pgn and read back, in one piece and in random chunks.
TEST(PgnWrite, RoundTripRandomPlayouts) {
  std::mt19937 rng(20240517);
  const char* kResults[] = {"1-0", "0-1", "1/2-1/2", "*"};
  const char* kNames[] = {"Carlsen, Magnus", "O'Kelly \"The\" Belgian", "back\\slash", "Ñandú"};
  struct Expected {
    PgnTags tags;
    std::string start_fen;
    std::vector<Move> moves;
    std::string result;
  };
  std::vector<Expected> expected;
  std::string text;
  size_t longest = 0;
  for (int i = 0; i < 100; ++i) {
    Board start = parse_fen(kStartFen);
    MoveList list;
    if (i % 3 == 1) {  // a random start position
      for (int k = 1 + int(rng() % 30); k > 0; --k) {
        legal_moves(start, list);
        if (list.size == 0) break;
        start.play(list.moves[rng() % list.size]);
      }
    }
    Board b = start;
    std::vector<Move> moves;
    for (int ply = int(rng() % 201); ply > 0; --ply) {
      legal_moves(b, list);
      if (list.size == 0) break;
      Move m = list.moves[rng() % list.size];
      moves.push_back(m);
      b.play(m);
    }
    const std::string result = kResults[rng() % 4];
    PgnTags tags = {{"Event", "Random " + std::to_string(i)},
                    {"Site", "?"},
                    {"Date", "2024.05.17"},
                    {"Round", std::to_string(i + 1)},
                    {"White", kNames[rng() % 4]},
                    {"Black", kNames[rng() % 4]},
                    {"Result", result}};
    PgnTags expected_tags = tags;
    expected_tags.erase(expected_tags.begin() + 1);  // Site "?": the roster's "unknown", read as missing
    if (to_fen(start) != kStartFen) {
      expected_tags.emplace_back("SetUp", "1");
      expected_tags.emplace_back("FEN", to_fen(start));
    }
    tags.emplace_back("PlyCount", std::to_string(moves.size()));
    expected_tags.emplace_back("PlyCount", std::to_string(moves.size()));

    const std::string pgn = to_pgn(tags, start, moves, result);
    std::istringstream in(pgn);
    for (std::string line; std::getline(in, line);) longest = std::max(longest, line.size());
    if (i) text += '\n';
    text += pgn;
    expected.push_back({expected_tags, to_fen(start), moves, result});
  }
  EXPECT_LE(longest, 79u);

  const std::vector<PgnGame> games = parse_pgn(text);
  ASSERT_EQ(games.size(), expected.size());
  for (size_t i = 0; i < games.size(); ++i) {
    SCOPED_TRACE("game " + std::to_string(i + 1));
    EXPECT_EQ(games[i].number, int(i + 1));
    EXPECT_EQ(games[i].tags, expected[i].tags);
    EXPECT_EQ(to_fen(games[i].start), expected[i].start_fen);
    EXPECT_EQ(uci_line(games[i].moves), uci_line(expected[i].moves));
    EXPECT_EQ(games[i].result, expected[i].result);
    EXPECT_EQ(to_pgn(games[i]), to_pgn(expected[i].tags, games[i].start, expected[i].moves, expected[i].result));
  }
  // Random chunk sizes give the same games.
  PgnReader reader;
  std::vector<PgnGame> chunked;
  PgnGame g;
  for (size_t pos = 0; pos < text.size();) {
    size_t n = 1 + rng() % 300;
    reader.feed(std::string_view(text).substr(pos, n));
    pos += n;
    while (reader.next(g)) chunked.push_back(g);
  }
  reader.finish();
  while (reader.next(g)) chunked.push_back(g);
  expect_same_games(chunked, games);
}

// ---------------------------------------------------------------- a real file

TEST(PgnRead, DebianEcoFile) {
  const std::filesystem::path path = "/usr/share/pgn-extract/eco.pgn";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (Debian package pgn-extract)";
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int skipped = -1;
  std::vector<PgnGame> games = parse_pgn(text, PgnErrorMode::kSkip, &skipped);
  EXPECT_EQ(skipped, 0);
  ASSERT_EQ(games.size(), 2014u);
  EXPECT_EQ(*games[0].tag("ECO"), "A00");
  EXPECT_EQ(uci_line(games[0].moves), "b2b4");
  size_t plies = 0;
  for (const PgnGame& g : games) {
    EXPECT_NE(g.tag("ECO"), nullptr);
    EXPECT_EQ(g.result, "*");
    plies += g.moves.size();
  }
  EXPECT_GT(plies, 10000u);
  // The same in 4 KiB chunks.
  expect_same_games(read_in_chunks(text, 4096, PgnErrorMode::kFail), games);
}

}  // namespace
}  // namespace pgmate::chess

namespace pgmate::chess {
namespace {

TEST(PgnTagsJson, EscapesQuotesBackslashesAndControls) {
  const PgnTags tags = {{"Event", "A \"quoted\" \\ name"}, {"Site", "line\nbreak\x01"}, {"Empty", ""}};
  EXPECT_EQ(tags_json(tags),
            "{\"Event\": \"A \\\"quoted\\\" \\\\ name\", \"Site\": \"line\\nbreak\\u0001\", \"Empty\": \"\"}");
  EXPECT_EQ(tags_json({}), "{}");
}

TEST(PgnTagsJson, InJsonbOrderShorterNamesFirstThenByBytes) {
  // jsonb's own order; a repeated name keeps its copies in the order read, so that a
  // reader keeping the last keeps the same value as from the tags in their order.
  const PgnTags tags = {{"Event", "e"}, {"Site", "s1"}, {"ECO", "B90"}, {"Date", "d"}, {"Site", "s2"}, {"BlackElo", "1"}, {"Black", "b"}};
  std::string json = "x";
  append_tags_json_in_jsonb_order(json, tags);
  EXPECT_EQ(json,
            "x{\"ECO\": \"B90\", \"Date\": \"d\", \"Site\": \"s1\", \"Site\": \"s2\", \"Black\": \"b\", "
            "\"Event\": \"e\", \"BlackElo\": \"1\"}");
  json.clear();
  append_tags_json_in_jsonb_order(json, {});
  EXPECT_EQ(json, "{}");
}

// [%eval] and [%clk] commands of the main line's comments, as lichess and ChessBase write them.
TEST(Pgn, ReadsEvalAndClockComments) {
  PgnGame g = only_game(
      "1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... c5 { [%eval 0.19] [%clk 0:02:58.5] } "
      "2. Nf3 { good move } ( 2. c3 { [%eval 5.0] } ) 2... d6 { [%clk 1:00:01] [%eval -0.3,24] } "
      "3. Bb5+ { [%eval #-3] } 3... Bd7 { [%eval #4] } 4. a3 { [%eval x] } 1-0");
  ASSERT_EQ(g.moves.size(), 7u);
  ASSERT_EQ(g.evals.size(), 7u);
  EXPECT_EQ(g.evals[0], "0.17");
  EXPECT_EQ(g.evals[1], "0.19");
  EXPECT_EQ(g.evals[2], "");  // the variation's comment is not the main line's
  EXPECT_EQ(g.evals[3], "-0.3");
  EXPECT_EQ(g.evals[4], "#-3");
  EXPECT_EQ(g.evals[5], "#4");
  EXPECT_EQ(g.evals[6], "");  // not an evaluation
  ASSERT_EQ(g.clocks.size(), 7u);
  EXPECT_DOUBLE_EQ(g.clocks[0], 180);
  EXPECT_DOUBLE_EQ(g.clocks[1], 178.5);
  EXPECT_DOUBLE_EQ(g.clocks[2], -1);
  EXPECT_DOUBLE_EQ(g.clocks[3], 3601);
  // A line end between a command and its value.
  g = only_game("1. e4 { [%eval\n0.25] [%clk\r\n0:01:00] } *");
  EXPECT_EQ(g.evals[0], "0.25");
  EXPECT_DOUBLE_EQ(g.clocks[0], 60);
  // A comment before the first move, and games without commands, give none.
  g = only_game("{ [%eval 0.3] } 1. e4 { just text } e5 *");
  EXPECT_TRUE(g.evals.empty());
  EXPECT_TRUE(g.clocks.empty());
  // Read the same in chunks of any size.
  const std::string text = "1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... c5 { [%eval -1.25] } *\n";
  for (std::size_t chunk : {1, 2, 3, 7, 100}) {
    const std::vector<PgnGame> games = read_in_chunks(text, chunk, PgnErrorMode::kFail);
    ASSERT_EQ(games.size(), 1u);
    ASSERT_EQ(games[0].evals.size(), 2u) << chunk;
    EXPECT_EQ(games[0].evals[1], "-1.25") << chunk;
    EXPECT_DOUBLE_EQ(games[0].clocks[0], 180) << chunk;
  }
}

// A [%clk] is read exactly or skipped: hours that would overflow, fields beyond H:MM:SS and
// anything but digits leave that move without a clock.
TEST(Pgn, ClockCommandsAreReadExactlyOrSkipped) {
  const char* const clocks[] = {"99999999999:00:00", "4294967296:00:00", "1:2:3:4",  "2147483647:59:59",
                                "0:03:12",           "0:00:09.5",        "1:00:00",  "99999:59:59",
                                "100000:00:00",      "0:60:00",          "0:00:60",  "0:3:2",
                                "00:01:00.25",       "1:00:00.",         "1:00:00x", "-1:00:00",
                                "+1:00:00",          "0:00:1e1",         "0:001:00", "1:00"};
  const double expected[] = {-1, -1, -1, -1, 192, 9.5, 3600, 359999999, -1, -1,
                             -1, 182, 60.25, -1, -1, -1, -1, -1, -1, -1};
  // The knights out and back, a clock after every move.
  const char* const cycle[] = {"Nf3", "Nf6", "Ng1", "Ng8"};
  std::string pgn;
  for (std::size_t i = 0; i < std::size(clocks); ++i)
    pgn += (i % 2 ? std::string() : std::to_string(i / 2 + 1) + ". ") + cycle[i % 4] + " { [%clk " + clocks[i] + "] } ";
  const PgnGame g = only_game(pgn + "*");
  ASSERT_EQ(g.moves.size(), std::size(clocks));
  ASSERT_EQ(g.clocks.size(), std::size(clocks));
  for (std::size_t i = 0; i < std::size(clocks); ++i) EXPECT_EQ(g.clocks[i], expected[i]) << clocks[i];
}

// A SAN move that names two legal moves is read as the one that keeps the game legal to its
// end, as pgn-extract and kokopu do; when both (or none) do, the game is bad.
TEST(Pgn, ResolvesAnAmbiguousMoveByTheRestOfTheGame) {
  // Knights on b1 and f3 both reach d2; only Nbd2 leaves f3's knight to take on g5 later.
  const std::string fen = "[FEN \"4k3/8/8/6p1/8/5N2/8/1N2K3 w - - 0 1\"]\n\n";
  PgnGame g = only_game(fen + "1. Nd2 Kd7 2. Nxg5 *");
  EXPECT_EQ(uci_line(g.moves), "b1d2 e8d7 f3g5");
  ASSERT_EQ(g.resolved.size(), 1u);
  EXPECT_EQ(g.resolved[0], "move 1. Nd2 read as b1d2");
  // The other reading: Na3 needs the knight still on b1.
  g = only_game(fen + "1. Nd2 Kd7 2. Na3 *");
  EXPECT_EQ(uci_line(g.moves), "f3d2 e8d7 b1a3");
  // Both readings legal to the end: refused.
  EXPECT_THAT(error_of(fen + "1. Nd2 Kd7 2. Ke2 *"),
              StartsWith("PGN game 1, move 1. Nd2: ambiguous move: more than one of the moves it could mean"));
  // Neither reading: the later move is the error.
  EXPECT_THAT(error_of(fen + "1. Nd2 Kd7 2. Qh5 *"), HasSubstr("Qh5"));
  // Unambiguous games say nothing.
  EXPECT_TRUE(only_game("1. e4 e5 *").resolved.empty());
}

// Move suffixes and comments written after their moves, read back as the same game with its
// [%eval] and [%clk] values.
TEST(PgnWrite, AnnotationsRoundTrip) {
  const Board start = parse_fen("startpos");
  std::vector<Move> moves;
  Board b = start;
  for (const char* san : {"e4", "c5", "Nf3"}) {
    moves.push_back(parse_san(b, san));
    b.play(moves.back());
  }
  PgnMoveNotes notes;
  notes.suffix = {"", "?!", ""};
  notes.comments = {"[%eval 0.17] [%clk 0:03:00]", "[%eval 0.50] Inaccuracy. e5 was {best}.", ""};
  const std::string text = to_pgn({}, start, moves, "*", notes);
  EXPECT_THAT(text, HasSubstr("1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... c5?! { [%eval 0.50] Inaccuracy. e5\n"
                              "was (best). } 2. Nf3 *"));
  const PgnGame g = only_game(text);
  EXPECT_EQ(uci_line(g.moves), "e2e4 c7c5 g1f3");
  ASSERT_EQ(g.evals.size(), 3u);
  EXPECT_EQ(g.evals[0], "0.17");
  EXPECT_EQ(g.evals[1], "0.50");
  EXPECT_DOUBLE_EQ(g.clocks[0], 180);
  EXPECT_THROW(to_pgn({}, start, moves, "*", PgnMoveNotes{{"", "?"}, {}}), std::invalid_argument);
  EXPECT_THROW(to_pgn({}, start, moves, "*", PgnMoveNotes{{"", "x", ""}, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace pgmate::chess
