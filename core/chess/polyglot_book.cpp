#include "chess/polyglot_book.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pgmate::chess {

namespace {

constexpr std::size_t kEntryBytes = 16;

std::uint64_t big_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

std::string book_name(const std::string& name) { return "Polyglot book \"" + name + "\""; }

}  // namespace

PolyglotBook PolyglotBook::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(book_name(path) + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ParseError(book_name(path) + ": cannot read: " + std::strerror(errno));
  return parse(bytes, path);
}

PolyglotBook PolyglotBook::parse(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) throw ParseError(book_name(name) + ": empty file, no entries");
  if (bytes.size() % kEntryBytes != 0)
    throw ParseError(book_name(name) + ": " + std::to_string(bytes.size()) +
                     " bytes is not a whole number of 16-byte entries");
  PolyglotBook book;
  book.entries_.resize(bytes.size() / kEntryBytes);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < book.entries_.size(); ++i, p += kEntryBytes) {
    BookEntry& e = book.entries_[i];
    e.key = big_endian(p, 8);
    e.move = std::uint16_t(big_endian(p + 8, 2));
    e.weight = std::uint16_t(big_endian(p + 10, 2));
    e.learn = std::uint32_t(big_endian(p + 12, 4));
    // Lookups are binary searches: an unsorted file would silently miss positions.
    if (i > 0 && e.key < book.entries_[i - 1].key)
      throw ParseError(book_name(name) + ": entry " + std::to_string(i + 1) +
                       " is out of order (entries must be sorted by key)");
  }
  return book;
}

std::span<const BookEntry> PolyglotBook::entries(std::uint64_t key) const {
  auto lo = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const BookEntry& e, std::uint64_t k) { return e.key < k; });
  auto hi = lo;
  while (hi != entries_.end() && hi->key == key) ++hi;
  return {lo, hi};
}

std::vector<BookMove> PolyglotBook::moves(const Board& b) const {
  std::vector<BookMove> out;
  const auto found = entries(b.key);
  if (found.empty()) return out;
  MoveList legal;
  legal_moves(b, legal);
  for (const BookEntry& e : found) {
    const Move m = decode_book_move(b, e.move, legal);
    if (!m.is_null()) out.push_back({m, e.weight});
  }
  return out;
}

Move decode_book_move(const Board& b, std::uint16_t polyglot_move) {
  MoveList legal;
  legal_moves(b, legal);
  return decode_book_move(b, polyglot_move, legal);
}

Move decode_book_move(const Board& b, std::uint16_t polyglot_move, const MoveList& legal) {
  const Square from = (polyglot_move >> 6) & 63;
  Square to = polyglot_move & 63;
  const int promotion = (polyglot_move >> 12) & 7;  // 0 none, 1 n, 2 b, 3 r, 4 q
  if (promotion > 4) return Move();
  const Piece moving = b.piece_on(from);
  if (moving == kNoPiece) return Move();
  // King takes own rook: castling, which pgmate writes as the king's two-square move.
  if (type_of(moving) == kKing && b.piece_on(to) == make_piece(color_of(moving), kRook))
    to = to > from ? from + 2 : from - 2;
  for (Move m : legal) {
    if (m.from() != from || m.to() != to) continue;
    if (m.kind() == kPromotion ? promotion != 0 && m.promotion() == PieceType(kPawn + promotion)
                               : promotion == 0)
      return m;
  }
  return Move();
}

}  // namespace pgmate::chess
