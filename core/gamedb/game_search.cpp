#include "gamedb/game_search.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "chess/fen.h"
#include "chess/notation.h"
#include "common/text.h"

namespace pgmate::gamedb {

namespace {

constexpr std::string_view kLetters = "QRBNP";  // Material::counts order
constexpr chess::PieceType kTypes[5] = {chess::kQueen, chess::kRook, chess::kBishop, chess::kKnight, chess::kPawn};

[[noreturn]] void bad(std::string_view what, std::string_view text, const std::string& why) {
  throw chess::ParseError("invalid " + std::string(what) + " " + quote_input(text, 80) + ": " + why);
}

}  // namespace

Material Material::of(const chess::Board& b) {
  Material m;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 5; ++i)
      m.counts[c][i] = static_cast<std::uint8_t>(chess::popcount(b.pieces(chess::Color(c), kTypes[i])));
  return m;
}

Material Material::parse(std::string_view text) {
  const std::size_t v = text.find('v');
  if (v == std::string_view::npos || text.find('v', v + 1) != std::string_view::npos)
    bad("material", text, "expected White's men, 'v', Black's, e.g. KRPvKR");
  Material m;
  for (int c = 0; c < 2; ++c) {
    const std::string_view side = c == 0 ? text.substr(0, v) : text.substr(v + 1);
    const char* name = c == 0 ? "White" : "Black";
    if (side.empty() || side[0] != 'K') bad("material", text, std::string(name) + "'s men must start with K");
    for (const char ch : side.substr(1)) {
      const std::size_t i = kLetters.find(ch);
      if (i == std::string_view::npos)
        bad("material", text, std::string("'") + ch + "' is not Q, R, B, N or P (" + name + "'s men)");
      if (++m.counts[c][i] > (i == 4 ? 8 : 10)) bad("material", text, std::string(name) + " has too many " + ch);
    }
  }
  return m;
}

std::string Material::text() const {
  std::string s;
  for (int c = 0; c < 2; ++c) {
    if (c == 1) s += 'v';
    s += 'K';
    for (int i = 0; i < 5; ++i) s.append(counts[c][i], kLetters[i]);
  }
  return s;
}

int Material::men(int color) const {
  int n = 0;
  for (const std::uint8_t k : counts[color]) n += k;
  return n;
}

Pattern Pattern::parse(std::string_view text) {
  Pattern p;
  int rank = 7, file = 0;
  for (const char ch : text) {
    if (ch == '/') {
      if (file != 8) bad("pattern", text, "rank " + std::to_string(rank + 1) + " has " + std::to_string(file) + " squares, not 8");
      if (--rank < 0) bad("pattern", text, "more than 8 ranks");
      file = 0;
      continue;
    }
    const bool digit = ch >= '1' && ch <= '8';
    const int width = digit ? ch - '0' : 1;
    if (file + width > 8) bad("pattern", text, "rank " + std::to_string(rank + 1) + " has more than 8 squares");
    const chess::Bitboard square = chess::Bitboard{1} << chess::make_square(file, rank);
    if (ch == '.') {
      p.empty_ |= square;
    } else if (ch != '?' && !digit) {
      const std::size_t i = std::string_view("PNBRQKpnbrqk").find(ch);
      if (i == std::string_view::npos)
        bad("pattern", text, std::string("'") + ch + "' is not a piece letter, '.', '?' or a digit 1-8");
      p.pieces_[i] |= square;
    }
    file += width;
  }
  if (rank != 0 || file != 8) bad("pattern", text, "expected 8 ranks of 8 squares, '/' between them");
  // A pawn reaches (file, rank) from the squares at least as many ranks behind it as files
  // aside. A side has at most 8 pawns, so a pattern asking more never matches: pawns past
  // the 16th in all get no cone (a cone fewer only prunes less).
  for (int c = 0; c < 2; ++c) {
    for (chess::Bitboard want = p.pieces_[c * 6 + chess::kPawn]; want && p.cones_ < p.pawn_cones_.size();) {
      const chess::Square target = chess::pop_lsb(want);
      chess::Bitboard cone = 0;
      for (int r = 0; r < 8; ++r) {
        const int behind = c == 0 ? chess::rank_of(target) - r : r - chess::rank_of(target);
        if (behind < 0) continue;
        for (int f = 0; f < 8; ++f)
          if (std::abs(f - chess::file_of(target)) <= behind) cone |= chess::Bitboard{1} << chess::make_square(f, r);
      }
      p.pawn_cones_[p.cones_++] = cone;
    }
    if (c == 0) p.white_cones_ = p.cones_;
  }
  return p;
}

bool Pattern::still_possible(const chess::Board& b) const {
  const chess::Bitboard white = b.pieces(chess::kWhite, chess::kPawn), black = b.pieces(chess::kBlack, chess::kPawn);
  for (std::uint8_t i = 0; i < cones_; ++i)
    if (!(pawn_cones_[i] & (i < white_cones_ ? white : black))) return false;
  return true;
}

bool Pattern::matches(const chess::Board& b) const {
  if (b.occupied() & empty_) return false;
  for (int i = 0; i < 12; ++i) {
    const chess::Bitboard want = pieces_[i];
    if (want && (b.pieces(chess::Color(i / 6), chess::PieceType(i % 6)) & want) != want) return false;
  }
  return true;
}

bool Pattern::may_match(const SquareSignature& visited) const {
  for (int i = 0; i < 12; ++i) {
    const chess::Bitboard want = pieces_[i];
    const chess::Bitboard stood = visited.visited[(i / 6) * 3 + SquareSignature::kind(chess::PieceType(i % 6))];
    if ((want & stood) != want) return false;
  }
  return true;
}

void SquareSignature::add(const chess::Board& b) {
  for (int c = 0; c < 2; ++c) {
    const chess::Bitboard men = b.pieces(chess::Color(c));
    const chess::Bitboard king = men & b.pieces(chess::kKing), pawns = men & b.pieces(chess::kPawn);
    visited[c * 3 + kKing] |= king;
    visited[c * 3 + kPawns] |= pawns;
    visited[c * 3 + kPieces] |= men & ~king & ~pawns;
  }
}

std::array<std::uint8_t, SquareSignature::kBytes> SquareSignature::bytes() const {
  std::array<std::uint8_t, kBytes> out{};
  for (std::size_t i = 0; i < kBytes; ++i) out[i] = std::uint8_t(visited[i / 8] >> (8 * (i % 8)));
  return out;
}

SquareSignature SquareSignature::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kBytes)
    throw chess::ParseError("invalid square signature: " + std::to_string(bytes.size()) + " bytes, expected " +
                            std::to_string(kBytes));
  SquareSignature s;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(s.visited.data(), bytes.data(), kBytes);  // the stored order is the host's: one copy per row
  } else {
    for (std::size_t i = 0; i < kBytes; ++i) s.visited[i / 8] |= chess::Bitboard{bytes[i]} << (8 * (i % 8));
  }
  return s;
}

namespace {
constexpr int kPromotedBit = 40;
}  // namespace

GameSummary summarize(const chess::Board& start, std::span<const chess::Move> moves,
                      std::vector<PositionEntry>* entries) {
  GameSummary summary;
  chess::Board b = start;
  bool promoted = false;
  summary.squares.add(b);
  std::vector<PositionEntry> unused;
  const std::size_t entries_before = entries ? entries->size() : 0;
  GameEntries positions(0, GameResult::kUnknown, entries ? *entries : unused);
  try {
    for (const chess::Move given : moves) {
      const chess::Move m = chess::resolve_move(b, given);
      promoted |= m.kind() == chess::kPromotion;
      if (entries) positions.add(b, m);
      chess::play_checked(b, m);
      summary.squares.add(b);
    }
    if (entries) positions.add(b, chess::Move());
  } catch (const chess::IllegalMove&) {
    if (entries) entries->resize(entries_before);
    return GameSummary{};
  }
  summary.legal = true;
  const Material final_material = Material::of(b);
  std::uint64_t signature = promoted ? std::uint64_t{1} << kPromotedBit : 0;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 5; ++i)
      signature |= std::uint64_t{std::min<std::uint8_t>(final_material.counts[c][i], 15)} << (4 * (5 * c + i));
  summary.material_signature = signature;
  return summary;
}

std::uint64_t material_signature(const chess::Board& start, std::span<const chess::Move> moves) {
  const GameSummary summary = summarize(start, moves);
  if (!summary.legal) {
    chess::Board b = start;  // replayed again only to say which move is illegal
    for (const chess::Move given : moves) chess::play_checked(b, chess::resolve_move(b, given));
  }
  return summary.material_signature;
}

bool may_reach(std::uint64_t signature, const Material& material) {
  const bool promoted = (signature >> kPromotedBit) & 1;
  for (int c = 0; c < 2; ++c) {
    int final_men = 0;
    for (int i = 0; i < 5; ++i) {
      const int final_count = static_cast<int>((signature >> (4 * (5 * c + i))) & 15);
      final_men += final_count;
      // Pawns never come back; other pieces only by promotion.
      if ((i == 4 || !promoted) && final_count > material.counts[c][i]) return false;
    }
    if (final_men > material.men(c)) return false;
  }
  return true;
}

bool reaches_material(const chess::Board& start, std::span<const chess::Move> moves, const Material& material) {
  const int white = material.men(0), black = material.men(1);
  // Material changes only with a capture or a promotion: counted again only then.
  auto check = [&](const chess::Board& b) {
    const Material here = Material::of(b);
    if (here == material) return 1;
    // Fewer men than wanted on a side: no later position has enough again.
    return here.men(0) < white || here.men(1) < black ? -1 : 0;
  };
  int state = check(start);
  chess::Board b = start;
  for (std::size_t i = 0; i < moves.size() && state == 0; ++i) {
    const chess::Move m = chess::resolve_move(b, moves[i]);
    const bool changes = b.piece_on(m.to()) != chess::kNoPiece || m.kind() == chess::kEnPassant ||
                         m.kind() == chess::kPromotion;
    chess::play_checked<false>(b, m);  // material and patterns never read the key
    if (changes) state = check(b);
  }
  return state == 1;
}

bool reaches_pattern(const chess::Board& start, std::span<const chess::Move> moves, const Pattern& pattern) {
  chess::Board b = start;
  for (std::size_t i = 0;; ++i) {
    if (pattern.matches(b)) return true;
    if (i == moves.size() || !pattern.still_possible(b)) return false;
    chess::play_checked<false>(b, chess::resolve_move(b, moves[i]));
  }
}

}  // namespace pgmate::gamedb
