// The position index of a game database: for every position of every game, an entry
// (position key, game, the move played from it, the game's result), kept sorted by key in
// compact blocks. Finding the games that reached a position is a binary search in a few
// blocks; an opening explorer is a pass over one key's entries, with no game replayed.
//
// An entry is 14 bytes (key 8, game 4, move and result 2) before compression; in a block
// (delta-coded: see encode_block) about 8. Blocks are written in runs: one sorted sequence
// of blocks; runs are merged as they accumulate (merge_runs), as an LSM tree does.
//
// A game enters the index once per distinct position: a position repeated within a game
// keeps its first occurrence (and the move played there), so counts are games, not visits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chess/board.h"
#include "gamedb/position_counts.h"

namespace pgmate::gamedb {

// The game's result as two bits.
enum class GameResult : std::uint8_t { kUnknown = 0, kWhiteWins = 1, kBlackWins = 2, kDraw = 3 };

// "1-0", "0-1", "1/2-1/2" or anything else (unknown).
GameResult parse_result(std::string_view result);
std::string_view result_text(GameResult r);

// The move played from a position and the game's result in 16 bits: from, to and the
// promotion piece of the move, the result in the place of its kind (the position tells the
// kind: a pawn reaching the last rank promotes). Move 0 (a1a1) means the game ended here.
struct EntryCode {
  static std::uint16_t make(chess::Move move, GameResult result);
  // The move's from, to and promotion piece, kind normal: a key for grouping.
  static std::uint16_t move_bits(std::uint16_t code);
  // The legal move of `position` the code names. Throws chess::IllegalMove when it names
  // none (a code read against the wrong position).
  static chess::Move move(const chess::Board& position, std::uint16_t code);
  static GameResult result(std::uint16_t code);
  // The same code with another result.
  static std::uint16_t with_result(std::uint16_t code, GameResult result);
  static bool ends_here(std::uint16_t code) { return move_bits(code) == 0; }
};

struct PositionEntry {
  std::uint64_t key = 0;   // Polyglot key of the position
  std::uint32_t game = 0;  // the game's id
  std::uint16_t code = 0;  // EntryCode

  auto operator<=>(const PositionEntry&) const = default;
};

// The largest game id the index holds (ids are stored in 32 bits).
inline constexpr std::uint64_t kMaxGameId = 0xFFFFFFFFu;

// The entries of one game as it is replayed: add() each position with the move played from
// it, then the final one with a null move. A position repeated within the game keeps its
// first occurrence. Shared by append_game_entries and summarize (game_search.h), so that a
// stored game's summary and its index entries can come from one replay.
class GameEntries {
 public:
  GameEntries(std::uint32_t game, GameResult result, std::vector<PositionEntry>& out)
      : game_(game), result_(result), out_(out) {}
  void add(const chess::Board& position, chess::Move played);

 private:
  std::uint32_t game_;
  GameResult result_;
  std::vector<PositionEntry>& out_;
  std::vector<std::uint64_t> keys_;  // by ply
};

// The entries of one game: every distinct position from `start` through the final one, each
// with the move played from it (none for the final position) and `result`. Each move is
// checked: chess::IllegalMove names the first that is not legal.
// Throws std::out_of_range for a game id above kMaxGameId.
void append_game_entries(std::uint64_t game, const chess::Board& start, std::span<const chess::Move> moves,
                         GameResult result, std::vector<PositionEntry>& out);

// ------------------------------------------------------------------------------- blocks

// Bytes of a block as a run writes it: its table row stays just under PostgreSQL's
// 2,032-byte limit for rows stored inline, four to a page.
inline constexpr std::size_t kBlockBytes = 1968;

// Block format 2, little-endian: u32 magic "PIX2", u16 count, then each entry in order:
// its key as a varint delta from the entry before (the first: the key itself), its game as
// a varint (a delta from the game before when the key repeats: entries are sorted by key,
// then game), its code as u16. Sorted hash keys differ from their neighbours in their low
// bits only and popular positions repeat, so an entry takes about 8 bytes instead of
// format 1's 14 (u32 magic "PIX1", u32 count, the keys as u64, the games as u32, the codes
// as u16: still read, no longer written). A block is decoded whole: searches read a few.
std::string encode_block(std::span<const PositionEntry> entries);

// Builds blocks of up to kBlockBytes from sorted entries, one entry at a time.
class BlockBuilder {
 public:
  BlockBuilder();
  // Adds `e` (not below the entry before) and returns true, or returns false when the block
  // is full (then take() it and add `e` to the next). A first entry always fits.
  bool add(const PositionEntry& e);
  bool empty() const { return count_ == 0; }
  std::size_t entries() const { return count_; }
  std::uint64_t first_key() const { return first_key_; }
  std::uint64_t last_key() const { return last_.key; }
  // The block so far; the builder starts the next one.
  std::string take();

  // Past a full block: room for the entry that did not fit, written before its size was
  // known, and for the 8-byte stores that write a number.
  static constexpr std::size_t kSlackBytes = 32;

 private:
  std::array<unsigned char, kBlockBytes + kSlackBytes> buf_;
  std::size_t size_ = 0;  // bytes of buf_ in the block
  std::size_t count_ = 0;
  std::uint64_t first_key_ = 0;
  PositionEntry last_;  // the entry added last
};

// The entries of a stored block, into `out` (its memory reused): what BlockView holds.
// Throws std::invalid_argument for bytes that are not a block or entries out of order.
void decode_block(const void* data, std::size_t size, std::vector<PositionEntry>& out);

// A decoded block; the constructor checks it and throws std::invalid_argument for
// anything that is not a well-formed block of either format (a block is data, never
// trusted blindly).
class BlockView {
 public:
  BlockView(const void* data, std::size_t size);

  std::size_t size() const { return entries_.size(); }
  std::uint64_t key(std::size_t i) const { return entries_[i].key; }
  std::uint32_t game(std::size_t i) const { return entries_[i].game; }
  std::uint16_t code(std::size_t i) const { return entries_[i].code; }
  const PositionEntry& entry(std::size_t i) const { return entries_[i]; }
  std::span<const PositionEntry> entries() const { return entries_; }

  // The range [first, last) of entries with this key.
  std::pair<std::size_t, std::size_t> equal_range(std::uint64_t key) const;

 private:
  std::vector<PositionEntry> entries_;
};

// A sorted vector of entries (sorted and deduplicated by the caller: sort_entries) cut
// into blocks: each with its first and last key, ready to store.
struct EncodedBlock {
  std::uint64_t first_key;
  std::uint64_t last_key;
  std::size_t entries;
  std::string data;
};
std::vector<EncodedBlock> encode_run(std::span<const PositionEntry> sorted);

// Sorts entries and drops exact duplicates (the same game indexed twice).
void sort_entries(std::vector<PositionEntry>& entries);
// The same, with a buffer of the caller's for the radix passes, kept for the next call, so
// that a caller sorting batch after batch does not ask for fresh memory each time.
void sort_entries(std::vector<PositionEntry>& entries, std::vector<PositionEntry>& scratch);

// Merges sorted runs into one sorted run, dropping entries of the games in
// `deleted_games` (sorted) and exact duplicates.
std::vector<PositionEntry> merge_runs(std::span<const std::vector<PositionEntry>> runs,
                                      std::span<const std::uint32_t> deleted_games = {});

// An entry as one number in the entries' order (key, then game, then code): a comparison
// is two machine compares instead of three fields' worth of branches.
using PackedEntry = unsigned __int128;
inline PackedEntry pack(const PositionEntry& e) {
  return (PackedEntry{e.key} << 64) | (std::uint64_t{e.game} << 16) | e.code;
}
inline PositionEntry unpack(PackedEntry p) {
  const auto low = static_cast<std::uint64_t>(p);
  return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint32_t>(low >> 16), static_cast<std::uint16_t>(low)};
}
// What a source holds once it is at its end: above every entry (whose low 64 bits use 48).
inline constexpr PackedEntry kNoEntry = ~PackedEntry{0};

// The k-way merge of sorted sources (runs) as a tournament of losers: taking the smallest
// head and putting its source's next one in its place costs one comparison per level of
// the tree (log2 k), where a binary heap's sift costs two. A bulk import's final merge
// takes a hundred runs at once, and this is its inner loop.
class LoserTree {
 public:
  // Each source's first entry (kNoEntry for an empty source).
  explicit LoserTree(std::span<const PackedEntry> heads);

  bool empty() const { return heads_[winner()] == kNoEntry; }
  std::size_t top_source() const { return winner(); }
  PackedEntry top() const { return heads_[winner()]; }
  // The top source's next entry (kNoEntry at its end) replaces its head.
  void replace_top(PackedEntry next);

 private:
  std::uint32_t winner() const { return losers_[0]; }
  std::size_t leaves_;                  // sources, rounded up to a power of two
  std::vector<PackedEntry> heads_;      // per leaf; kNoEntry past the sources
  std::vector<std::uint32_t> losers_;   // per inner node (1..leaves_-1) its loser; [0] the winner
};

// ------------------------------------------------------------------------------ explorer

// One next move from a position, over the games that reached it (like lichess's opening
// explorer): games, and their results from White's point of view.
struct ExplorerMove {
  std::uint16_t move_bits = 0;  // EntryCode::move_bits; 0 for the games that ended here
  std::uint64_t games = 0;
  std::uint64_t white_wins = 0;
  std::uint64_t draws = 0;
  std::uint64_t black_wins = 0;  // games - white_wins - draws - black_wins: results unknown
  // With the games' own columns (the explorer with filters, or counts): the players'
  // ratings and the latest month played (GameMonth: "2019.06"; unknown dates left out).
  std::uint64_t rated = 0, rating_sum = 0;
  GameMonth last_played;
  // The average rating rounded half up (SQL's avg(int)::int); nullopt without any.
  std::optional<std::int64_t> average_rating() const;
};

// The entries of one key, tallied by move. A game has one entry per position, so each
// entry added is one game.
class ExplorerTally {
 public:
  void add(std::uint16_t code);
  // One game's entry with its players' average rating (nullopt: unknown) and its PGN date
  // (or the month of it).
  void add(std::uint16_t code, std::optional<int> rating, std::string_view date);
  void add(std::uint16_t code, std::optional<int> rating, GameMonth month);
  // Games already counted (PositionCounts' cells): added to the move's.
  void add(const ExplorerMove& counted);
  // The moves, most played first (ties: by move bits).
  std::vector<ExplorerMove> moves() const;
  std::uint64_t games() const { return games_; }

 private:
  std::vector<ExplorerMove> by_move_;  // small: a position has at most 218 moves
  std::uint64_t games_ = 0;
};

}  // namespace pgmate::gamedb
