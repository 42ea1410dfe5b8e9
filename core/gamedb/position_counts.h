// Per-position counts for the opening explorer, as lichess's explorer keeps them: for one
// position, for each move played from it, the games and their results by the game's speed,
// the players' rating band and the month played. The explorer with speed, rating and date
// filters then sums a few thousand counts instead of reading every game of the position.
//
// The dimensions are small closed sets, so that a filter on them is exact: a filter that
// cuts a band or a month in two cannot be answered from counts (the explorer reads the
// games instead).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pgmate::gamedb {

class ExplorerTally;

// ------------------------------------------------------------------ the dimensions

// lichess's speeds (time_control.h), with 0 for a game without one.
inline constexpr int kSpeedCodes = 7;
// "" (none) 0, "ultraBullet" 1, "bullet" 2, "blitz" 3, "rapid" 4, "classical" 5,
// "correspondence" 6; nullopt for any other name.
std::optional<std::uint8_t> speed_code(std::string_view name);

// lichess's rating groups of the players' average rating: below 1000, 1000-1199, ...,
// 2200-2499, 2500 and above; kUnrated for a game without a rating.
inline constexpr std::array<int, 9> kRatingBands = {0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500};
inline constexpr std::uint8_t kUnrated = 9;
std::uint8_t rating_band(std::optional<int> average_rating);

// The month of a PGN date: its year when the date begins with four digits, and its month
// when those are followed by '.' and 01 to 12. Ordered: unknown < a year alone < its months.
class GameMonth {
 public:
  GameMonth() = default;
  static GameMonth of_date(std::string_view pgn_date);
  static GameMonth of_code(std::uint32_t code) { return GameMonth(code); }

  std::uint32_t code() const { return code_; }
  bool known() const { return code_ != 0; }
  int year() const { return known() ? int(code_ / 13) - 1 : 0; }
  int month() const { return known() ? int(code_ % 13) : 0; }  // 0: not known
  // "2019.06", "2019.??" (a year alone), "" (unknown).
  std::string text() const;
  auto operator<=>(const GameMonth&) const = default;

 private:
  explicit GameMonth(std::uint32_t code) : code_(code) {}
  std::uint32_t code_ = 0;  // 0 unknown, else (year + 1) * 13 + month
};

// A since or until filter: "2019" or "2019.06". A game passes `since` when its month is at or
// after it (a year alone: the year is); `until`, at or before it. A game whose month the
// bound needs but is unknown (a year alone against a bound in that year's months, or no year)
// does not pass.
struct MonthBound {
  int year = 0;
  int month = 0;  // 0: the whole year
  // nullopt for any other text.
  static std::optional<MonthBound> parse(std::string_view text);
  bool at_or_before(GameMonth m) const;  // since
  bool at_or_after(GameMonth m) const;   // until
};

// What the counts know of one game.
struct GameFacts {
  std::uint32_t game = 0;
  std::uint8_t speed = 0;               // speed_code
  std::optional<int> rating;            // the players' average
  GameMonth month;
};

// ------------------------------------------------------------------ one position's counts

// A filter the counts can answer: speeds (none: any), a range of rating bands (none: any
// game, rated or not; set: only rated games in those bands), since and until months.
struct CountFilter {
  std::uint8_t speeds = 0;  // a bit per speed_code; 0: any
  std::optional<std::pair<std::uint8_t, std::uint8_t>> bands;  // first and last band, both included
  std::optional<MonthBound> since, until;

  bool passes(std::uint8_t speed, std::uint8_t band, GameMonth month) const;
  // The band range of min_rating and max_rating (the players' average, both included), when
  // both fall on lichess's band limits; nullopt when a band would be cut in two. An empty
  // range (no band passes) is first > last.
  static std::optional<std::pair<std::uint8_t, std::uint8_t>> bands_of(std::optional<std::int64_t> min_rating,
                                                                       std::optional<std::int64_t> max_rating);
};

// A game of a position's top games: its number and the players' average rating.
struct TopGame {
  std::uint32_t game = 0;
  int rating = 0;
  bool operator==(const TopGame&) const = default;
};
// How many top games a position keeps (lichess's explorer shows four).
inline constexpr std::size_t kTopGames = 4;
// The order of top games: the higher rating first, then the lower number.
bool ranks_above(const TopGame& a, const TopGame& b);

// The counts of one position: for each move (EntryCode::move_bits, 0 for the games that
// ended there), speed, band and month, the games, their results and their ratings' sum;
// and its top games, the rated games of highest average rating (ties: the lower number).
// Games may be added and taken away (a deleted game); the stored counts never go below zero.
class PositionCounts {
 public:
  struct Cell {
    std::int64_t games = 0, white_wins = 0, draws = 0, black_wins = 0, rating_sum = 0;
  };

  // One game's entry (EntryCode) with its facts; sign -1 takes it away.
  void add(std::uint16_t code, const GameFacts& facts, int sign = 1);
  // Adds another position's counts (a delta, or stored counts): its games taken away first,
  // then its top games offered.
  void add(const PositionCounts& other);

  // Format 2: u32 magic "PCN2", a varint count, then each cell by key ascending: its key
  // as a varint delta from the one before, then games, white wins, draws, black wins and the
  // ratings' sum as varints; then the top games: 1 when the list is known whole (else 0), a
  // varint count, and each game's number and rating as varints. Cells with no games are left
  // out. Throws std::invalid_argument for a cell below zero (counts that were never stored).
  // Format 1 ("PCN1", without the top games) is read as counts whose top games are unknown.
  std::string encode() const;
  // Throws std::invalid_argument for bytes that are not such counts.
  static PositionCounts decode(const void* data, std::size_t size);

  // The games counted (all cells).
  std::int64_t games() const;
  bool empty() const { return cells_.empty(); }
  // The cells that pass the filter, into the explorer's tally.
  void tally(const CountFilter& filter, ExplorerTally& tally) const;
  // The top games, best first; nullopt once a game of a full list was taken away (the next
  // best is not known here: a refresh finds it again).
  std::optional<std::vector<TopGame>> top_games() const;

 private:
  // move_bits << 32 | speed << 28 | band << 24 | month code (below 2^24)
  static std::uint64_t key(std::uint16_t move, std::uint8_t speed, std::uint8_t band, GameMonth month);
  void offer(const TopGame& g);
  void take_away(std::uint32_t game);
  std::unordered_map<std::uint64_t, Cell> cells_;
  std::vector<TopGame> top_;            // best first, at most kTopGames
  bool top_whole_ = true;               // top_ is the position's top games
  std::vector<std::uint32_t> removed_;  // a delta's games taken away, for add(other)
};

}  // namespace pgmate::gamedb
