// Polyglot opening books (.bin): read into memory, looked up by the board's key (which is
// already the Polyglot key), and their moves decoded into pgmate's Move.
//
// The format: 16-byte big-endian entries (key u64, move u16, weight u16, learn u32),
// sorted by key. A move packs to square (bits 0-5), from square (6-11) and promotion
// piece (12-14: none, n, b, r, q); castling is the king taking its own rook (e1h1).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"

namespace pgmate::chess {

struct BookEntry {
  std::uint64_t key;
  std::uint16_t move;  // Polyglot encoding; see decode_book_move
  std::uint16_t weight;
  std::uint32_t learn;
};

// A book move, decoded and checked legal for the position it was looked up for.
struct BookMove {
  Move move;
  std::uint16_t weight;
};

class PolyglotBook {
 public:
  PolyglotBook() = default;

  // Reads a book file. Throws ParseError naming the file when it cannot be read, is empty,
  // is not a whole number of 16-byte entries, or is not sorted by key.
  static PolyglotBook load(const std::string& path);
  // The same checks on a file's bytes; `name` is what errors call it.
  static PolyglotBook parse(std::string_view bytes, const std::string& name);

  std::size_t size() const { return entries_.size(); }
  // Every entry with this key, in file order (books list the heaviest first).
  std::span<const BookEntry> entries(std::uint64_t key) const;
  // The legal moves the book gives for b, with their weights; entries whose move is not
  // legal here (a key collision or a damaged book) are left out.
  std::vector<BookMove> moves(const Board& b) const;

 private:
  std::vector<BookEntry> entries_;
};

// The legal move of b that a Polyglot move stands for, or a null Move when there is none.
// Castling as king-takes-rook (e1h1) becomes pgmate's king move (e1g1, kCastling).
Move decode_book_move(const Board& b, std::uint16_t polyglot_move);
// The same with b's legal moves already listed.
Move decode_book_move(const Board& b, std::uint16_t polyglot_move, const MoveList& legal);

// Debian's gnuchess-book, the default book of pgmate generate.
inline constexpr std::string_view kDefaultBookPath = "/usr/share/games/gnuchess/book.bin";

}  // namespace pgmate::chess
