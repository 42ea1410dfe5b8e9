// Polyglot books: the real gnuchess book's start position, move decoding (castling as
// king-takes-rook, promotions), and the errors for files that are not books.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "chess/notation.h"
#include "chess/polyglot_book.h"

namespace pgmate::chess {
namespace {

// A Polyglot move: to (bits 0-5), from (6-11), promotion piece (12-14).
std::uint16_t pg_move(const char* from, const char* to, int promotion = 0) {
  return std::uint16_t(parse_square(to) | (parse_square(from) << 6) | (promotion << 12));
}

std::string entry_bytes(std::uint64_t key, std::uint16_t move, std::uint16_t weight) {
  std::string s;
  for (int i = 7; i >= 0; --i) s += char((key >> (8 * i)) & 0xFF);
  s += char(move >> 8);
  s += char(move & 0xFF);
  s += char(weight >> 8);
  s += char(weight & 0xFF);
  s += std::string(4, '\0');  // learn
  return s;
}

TEST(PolyglotBookFile, StartPositionHasTheMainMoves) {
  const std::string path(kDefaultBookPath);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (Debian package gnuchess-book)";
  const PolyglotBook book = PolyglotBook::load(path);
  EXPECT_GT(book.size(), 100000u);
  const Board start = parse_fen("startpos");
  ASSERT_EQ(start.key, 0x463b96181691fc9cULL);
  EXPECT_FALSE(book.entries(start.key).empty());
  std::vector<std::string> moves;
  for (const BookMove& m : book.moves(start)) {
    EXPECT_TRUE(is_legal(start, m.move));
    moves.push_back(to_uci(m.move));
  }
  EXPECT_NE(std::find(moves.begin(), moves.end(), "e2e4"), moves.end());
  EXPECT_NE(std::find(moves.begin(), moves.end(), "d2d4"), moves.end());
  // Positions after book moves are in the book too (the keys agree with Polyglot's).
  Board after_e4 = start;
  after_e4.play(parse_uci(start, "e2e4"));
  EXPECT_FALSE(book.moves(after_e4).empty());
  // A position no book holds.
  EXPECT_TRUE(book.moves(parse_fen("8/8/8/3k4/8/8/8/K5Q1 w - - 0 1")).empty());
}

TEST(PolyglotBookFile, BookCastlingBecomesAKingMove) {
  const std::string path(kDefaultBookPath);
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (Debian package gnuchess-book)";
  const PolyglotBook book = PolyglotBook::load(path);
  // 1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Ba4 Nf6: the book castles here.
  Board b = parse_fen("startpos");
  for (const char* uci : {"e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"})
    b.play(parse_uci(b, uci));
  bool castles = false;
  for (const BookMove& m : book.moves(b))
    if (m.move.kind() == kCastling) {
      castles = true;
      EXPECT_EQ(to_uci(m.move), "e1g1");
    }
  EXPECT_TRUE(castles);
}

TEST(PolyglotBookDecode, CastlingIsKingTakesRook) {
  const Board b = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
  EXPECT_EQ(decode_book_move(b, pg_move("e1", "h1")), Move(parse_square("e1"), parse_square("g1"), kCastling));
  EXPECT_EQ(decode_book_move(b, pg_move("e1", "a1")), Move(parse_square("e1"), parse_square("c1"), kCastling));
  const Board black = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1");
  EXPECT_EQ(to_uci(decode_book_move(black, pg_move("e8", "h8"))), "e8g8");
  EXPECT_EQ(to_uci(decode_book_move(black, pg_move("e8", "a8"))), "e8c8");
  // Without the right, no castling move.
  const Board no_rights = parse_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w kq - 0 1");
  EXPECT_TRUE(decode_book_move(no_rights, pg_move("e1", "h1")).is_null());
}

TEST(PolyglotBookDecode, NormalPromotionAndIllegal) {
  const Board start = parse_fen("startpos");
  EXPECT_EQ(to_uci(decode_book_move(start, pg_move("g1", "f3"))), "g1f3");
  EXPECT_TRUE(decode_book_move(start, pg_move("e2", "e5")).is_null());  // not legal
  EXPECT_TRUE(decode_book_move(start, pg_move("e4", "e5")).is_null());  // empty square
  const Board promo = parse_fen("8/P6k/8/8/8/8/8/K7 w - - 0 1");
  EXPECT_EQ(to_uci(decode_book_move(promo, pg_move("a7", "a8", 4))), "a7a8q");
  EXPECT_EQ(to_uci(decode_book_move(promo, pg_move("a7", "a8", 1))), "a7a8n");
  EXPECT_TRUE(decode_book_move(promo, pg_move("a7", "a8")).is_null());     // needs its piece
  EXPECT_TRUE(decode_book_move(promo, pg_move("a7", "a8", 5)).is_null());  // no such piece
  EXPECT_TRUE(decode_book_move(start, pg_move("e2", "e4", 4)).is_null());  // not a promotion
}

TEST(PolyglotBookParse, EntriesByKeyAndWeights) {
  const Board start = parse_fen("startpos");
  const std::string bytes = entry_bytes(1, pg_move("a2", "a3"), 5) + entry_bytes(start.key, pg_move("e2", "e4"), 7) +
                            entry_bytes(start.key, pg_move("e2", "e5"), 9) +  // illegal: left out
                            entry_bytes(start.key, pg_move("d2", "d4"), 3) + entry_bytes(~0ULL, 0, 1);
  const PolyglotBook book = PolyglotBook::parse(bytes, "test.bin");
  EXPECT_EQ(book.size(), 5u);
  EXPECT_EQ(book.entries(start.key).size(), 3u);
  EXPECT_EQ(book.entries(2).size(), 0u);
  const auto moves = book.moves(start);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(to_uci(moves[0].move), "e2e4");
  EXPECT_EQ(moves[0].weight, 7);
  EXPECT_EQ(to_uci(moves[1].move), "d2d4");
  EXPECT_EQ(moves[1].weight, 3);
}

TEST(PolyglotBookParse, MalformedFilesAreNamed) {
  try {
    PolyglotBook::parse(std::string(40, '\0'), "/tmp/short.bin");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("\"/tmp/short.bin\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a whole number of 16-byte entries"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PolyglotBook::parse("", "empty.bin"), ParseError);
  const std::string unsorted = entry_bytes(5, 0, 1) + entry_bytes(4, 0, 1);
  try {
    PolyglotBook::parse(unsorted, "unsorted.bin");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("\"unsorted.bin\": entry 2 is out of order"), std::string::npos) << e.what();
  }
}

TEST(PolyglotBookParse, MissingAndMalformedFiles) {
  const std::string missing = ::testing::TempDir() + "pgmate_no_such_book.bin";
  std::filesystem::remove(missing);
  try {
    PolyglotBook::load(missing);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("\"" + missing + "\": cannot open"), std::string::npos) << e.what();
  }
  const std::string odd = ::testing::TempDir() + "pgmate_odd_book.bin";
  std::ofstream(odd, std::ios::binary) << std::string(17, 'x');
  try {
    PolyglotBook::load(odd);
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("\"" + odd + "\": 17 bytes"), std::string::npos) << e.what();
  }
  std::filesystem::remove(odd);
}

}  // namespace
}  // namespace pgmate::chess
