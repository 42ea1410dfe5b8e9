#include "chess/game_generator.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "chess/synthetic_tags.h"
#include "common/random.h"

namespace pgmate::chess {

namespace {

constexpr int kValue[6] = {100, 320, 330, 500, 900, 0};
// A king "attacks" last: it takes only undefended pieces.
constexpr int kAttackerValue[6] = {100, 320, 330, 500, 900, 10000};
constexpr int kMateScore = 1000000;

// 0 at the corners up to 6 in the four centre squares.
constexpr int centrality(Square s) {
  const int f = file_of(s), r = rank_of(s);
  return (14 - (std::abs(2 * f - 7) + std::abs(2 * r - 7))) / 2;
}

// Where a piece likes to stand, in centipawns: central minor pieces, advanced (central)
// pawns, the king tucked away until the endgame and central after it.
int placement(PieceType t, Color c, Square s, bool endgame) {
  const int rel_rank = c == kWhite ? rank_of(s) : 7 - rank_of(s);
  const int file = file_of(s);
  switch (t) {
    case kPawn:
      if (endgame) return 15 * rel_rank;
      return 4 * rel_rank + ((file == 3 || file == 4) ? 10 * std::min(rel_rank, 3) : 0);
    case kKnight: return 8 * centrality(s);
    case kBishop: return 5 * centrality(s);
    case kRook: return (rel_rank == 6 ? 20 : 0) + 2 * centrality(s);
    case kQueen: return 2 * centrality(s);
    case kKing:
      if (endgame) return 8 * centrality(s);
      return rel_rank == 0 ? ((file <= 2 || file >= 6) ? 20 : 0) : -25 * rel_rank;
    default: return 0;
  }
}

int least_attacker(const Board& b, Bitboard attackers) {
  for (int t = kPawn; t <= kKing; ++t)
    if (attackers & b.by_type[t]) return kAttackerValue[t];
  return 0;
}

// What the owner of a piece worth `value` on s loses to the cheapest capture there, looking
// one exchange deep: all of it when undefended, the difference to a cheaper attacker
// otherwise.
int exposure(const Board& b, Square s, Color owner, int value) {
  const Bitboard occ = b.occupied();
  const Bitboard attackers = b.attackers_to(s, ~owner, occ);
  if (!attackers) return 0;
  if (!b.attackers_to(s, owner, occ)) return value;
  return std::max(0, value - least_attacker(b, attackers));
}

int non_pawn_material(const Board& b) {
  return kValue[kKnight] * popcount(b.pieces(kKnight)) + kValue[kBishop] * popcount(b.pieces(kBishop)) +
         kValue[kRook] * popcount(b.pieces(kRook)) + kValue[kQueen] * popcount(b.pieces(kQueen));
}

// The most the owner of pieces in b loses to one capture: its most exposed piece.
int worst_exposure(const Board& b, Color owner) {
  int worst = 0;
  for (Bitboard pieces = b.pieces(owner) & ~b.pieces(kKing); pieces;) {
    const Square s = pop_lsb(pieces);
    worst = std::max(worst, exposure(b, s, owner, kValue[type_of(b.piece_on(s))]));
  }
  return worst;
}

// One ply of simple features: material won and exposed (captures, promotions, hanging the
// moved piece, rescuing an attacked one), checks and mates, where pieces stand.
class MoveScorer {
 public:
  explicit MoveScorer(const Board& b) : b_(b), us_(b.side) {
    endgame_ = non_pawn_material(b) <= 1700;
    lead_ = material_balance(b) * (us_ == kWhite ? 1 : -1);
    few_defenders_ = popcount(b.pieces(~us_)) <= 3;
    for (Bitboard ours = b.pieces(us_) & ~b.pieces(kKing); ours;) {
      const Square s = pop_lsb(ours);
      threatened_[s] = exposure(b, s, us_, kValue[type_of(b.piece_on(s))]);
    }
  }

  int score(Move m) const {
    const Square from = m.from(), to = m.to();
    const PieceType moving = type_of(b_.piece_on(from));
    const PieceType placed = m.kind() == kPromotion ? m.promotion() : moving;
    int s = 0;
    if (m.kind() == kEnPassant)
      s += kValue[kPawn];
    else if (m.kind() != kCastling && b_.piece_on(to) != kNoPiece)
      s += kValue[type_of(b_.piece_on(to))];
    if (m.kind() == kPromotion) s += kValue[placed] - kValue[kPawn];

    Board next = b_;
    next.play<false>(m);
    if (next.in_check()) {
      if (count_legal_moves(next) == 0) return kMateScore;
      s += 30;
    } else if (few_defenders_ && count_legal_moves(next) == 0) {
      s += lead_ > 0 ? -5000 : 2000;  // stalemate: a draw, welcome only to the side behind
    }

    s += moved_piece_safety(m, next);
    if (m.kind() == kCastling) {
      s += 40;
    } else {
      s += placement(placed, us_, to, endgame_) - placement(moving, us_, from, endgame_);
      if (moving == kQueen && b_.fullmove < 10) s -= 15;  // no early queen sorties
    }
    return s;
  }

  // The cheap part of score's safety term: the moved piece alone, rescued from its old
  // square and exposed on its new one. A closer look at a few candidates replaces it
  // with the worst exposure of any piece (worst_exposure).
  int moved_piece_safety(Move m, const Board& next) const {
    const PieceType placed = type_of(next.piece_on(m.to()));
    return threatened_[m.from()] - (placed == kKing ? 0 : exposure(next, m.to(), us_, kValue[placed]));
  }

 private:
  const Board& b_;
  Color us_;
  bool endgame_;
  bool few_defenders_;
  int lead_;
  int threatened_[64] = {};
};

// How a player's rating shows in the moves: the randomness added to the scores
// (centipawns: 70 at 1850, doubling every 80 points below and halving above, from 5 to
// 1000, so the weakest play almost at random), how many of the best-looking moves get the
// closer look (1 to 7), and how often, per mille, that look includes the opponent's mate
// in one. Together they make the higher-rated player score about 58% at the pool's
// typical rating gaps (130 points), and the draw rate rise with the ratings (25% below
// 1600, 50% above 2400), as in real databases.
int noise_range(int elo) {
  const int d = 1850 - elo;
  const int doublings = d >= 0 ? d / 80 : -((-d + 79) / 80);
  const int rest = d - doublings * 80;                   // 0..79
  std::int64_t v = std::int64_t(70) * (80 + rest) / 80;  // 2^(rest/80), linearly
  v = doublings >= 0 ? v << std::min(doublings, 16) : v >> std::min(-doublings, 16);
  return 5 + int(std::min<std::int64_t>(v, 1000));
}
int candidates(int elo) { return std::clamp(1 + (elo - 1000) / 150, 1, 7); }
int vigilance(int elo) { return std::clamp(850 + (elo - 1200) * 150 / 1400, 850, 1000); }
// The first move's advantage, as rating points of play: White scores about 54%.
constexpr int kWhiteBonus = 50;

// True when the side to move in b can mate at once.
bool has_mate_in_one(const Board& b) {
  MoveList replies;
  legal_moves(b, replies);
  for (Move r : replies) {
    Board next = b;
    next.play<false>(r);
    if (next.in_check() && count_legal_moves(next) == 0) return true;
  }
  return false;
}

// Scores every move cheaply (with the player's noise), then looks closer at the best few:
// what the move leaves hanging anywhere, and whether it allows mate.
Move heuristic_move(const Board& b, const MoveList& legal, mcts::Rng& rng, int elo) {
  const MoveScorer scorer(b);
  const int noise = noise_range(elo);
  long scores[kMaxMoves];
  for (int i = 0; i < legal.size; ++i)
    scores[i] = long(scorer.score(legal.moves[i])) + long(rng.below(std::uint32_t(noise)));
  const int looks = std::min(candidates(elo), legal.size);
  const bool careful = int(rng.below(1000)) < vigilance(elo);
  int chosen = -1;
  long chosen_score = LONG_MIN;
  for (int k = 0; k < looks; ++k) {
    int best = 0;
    for (int i = 1; i < legal.size; ++i)
      if (scores[i] > scores[best]) best = i;
    const Move m = legal.moves[best];
    long refined = scores[best];
    scores[best] = LONG_MIN;  // taken
    if (refined < kMateScore) {
      Board next = b;
      next.play<false>(m);
      refined -= worst_exposure(next, b.side) + scorer.moved_piece_safety(m, next);
      if (careful && has_mate_in_one(next)) refined -= kMateScore;
    }
    if (refined > chosen_score) {
      chosen_score = refined;
      chosen = best;
    }
  }
  return legal.moves[chosen];
}

// A book move with probability proportional to its weight; a null Move when the book
// has nothing (with weight) for b.
Move book_move(const PolyglotBook& book, const Board& b, mcts::Rng& rng) {
  const std::vector<BookMove> moves = book.moves(b);
  std::uint32_t total = 0;
  for (const BookMove& m : moves) total += m.weight;
  if (total == 0) return Move();
  std::uint32_t pick = rng.below(total);
  for (const BookMove& m : moves) {
    if (pick < m.weight) return m.move;
    pick -= m.weight;
  }
  return Move();
}

const Board& start_board() {
  static const Board start = parse_fen(kStartFen);
  return start;
}

// Repetition as Game::repetitions counts it: earlier positions with the same side to
// move inside the reversible stretch.
int repetitions(const std::vector<std::uint64_t>& keys, int halfmove) {
  const int n = int(keys.size());
  const int limit = std::min(halfmove, n - 1);
  int count = 0;
  for (int back = 2; back <= limit; back += 2)
    if (keys[n - 1 - back] == keys[n - 1]) ++count;
  return count;
}

// Game's status rules, from the legal moves already listed.
GameStatus status_of(const Board& b, const MoveList& legal, const std::vector<std::uint64_t>& keys) {
  if (legal.size == 0) return b.in_check() ? GameStatus::kCheckmate : GameStatus::kStalemate;
  if (repetitions(keys, b.halfmove) >= 2) return GameStatus::kThreefoldRepetition;
  if (insufficient_material(b)) return GameStatus::kInsufficientMaterial;
  if (b.halfmove >= 100) return GameStatus::kFiftyMoves;
  return GameStatus::kOngoing;
}

}  // namespace

int material_balance(const Board& b) {
  static constexpr int kPawns[5] = {1, 3, 3, 5, 9};
  int balance = 0;
  for (int t = kPawn; t <= kQueen; ++t)
    balance += kPawns[t] * (popcount(b.pieces(kWhite, PieceType(t))) - popcount(b.pieces(kBlack, PieceType(t))));
  return balance;
}

GeneratedGame generate_game(const PolyglotBook& book, std::uint64_t seed, std::uint64_t index,
                            const GeneratorOptions& options) {
  // Counter-based: the game's random streams come from (seed, index) alone. Tags and play
  // have separate streams, so changing how moves are chosen keeps every game's players.
  const std::uint64_t game_seed = mcts::mix64(mcts::mix64(seed) + index);
  mcts::Rng tag_rng(game_seed);
  mcts::Rng rng(game_seed ^ 0x6d6f766573ULL);

  GeneratedGame game;
  GameHeader header = synthetic_header(tag_rng, options.first_year, options.last_year);
  game.tags = std::move(header.tags);

  const int book_span = std::max(0, options.max_book_plies - options.min_book_plies);
  int book_cap = options.min_book_plies + int(rng.below(std::uint32_t(book_span + 1)));
  const double drawn = options.mean_plies + options.plies_spread * rng.normal();
  game.target_plies = std::clamp(int(std::lround(drawn)), options.min_plies, options.max_plies);
  const int elo[2] = {header.white_elo + kWhiteBonus, header.black_elo};

  Board b = start_board();
  std::vector<std::uint64_t> keys{b.key};
  game.moves.reserve(game.target_plies);
  MoveList legal;
  for (;;) {
    legal_moves(b, legal);
    game.status = status_of(b, legal, keys);
    if (game.status != GameStatus::kOngoing || int(game.moves.size()) >= game.target_plies) break;
    Move m;
    if (int(game.moves.size()) < book_cap) {
      m = book_move(book, b, rng);
      if (m.is_null())
        book_cap = 0;  // out of book: never back in
      else
        ++game.book_plies;
    }
    if (m.is_null()) m = heuristic_move(b, legal, rng, elo[b.side]);
    b.play(m);
    game.moves.push_back(m);
    keys.push_back(b.key);
  }

  switch (game.status) {
    case GameStatus::kCheckmate: game.result = b.side == kWhite ? "0-1" : "1-0"; break;
    case GameStatus::kOngoing: {
      const int balance = material_balance(b);
      game.result = balance >= options.adjudication_pawns    ? "1-0"
                    : balance <= -options.adjudication_pawns ? "0-1"
                                                             : "1/2-1/2";
      break;
    }
    default: game.result = "1/2-1/2";
  }
  return game;
}

std::string to_pgn(const GeneratedGame& game) {
  return to_pgn(game.tags, start_board(), game.moves, game.result);
}

}  // namespace pgmate::chess
