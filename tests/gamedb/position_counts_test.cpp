// The explorer's per-position counts: their dimensions at each limit, their bytes, and a
// filter answered from counts against the same filter applied game by game as the explorer
// that reads the games does (ratings compared as numbers, not as bands).
#include <gtest/gtest.h>

#include <random>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "gamedb/position_counts.h"
#include "gamedb/position_index.h"

namespace pgmate::gamedb {
namespace {

using chess::Board;

TEST(PositionCounts, SpeedsAndRatingBandsAsLichessNamesThem) {
  EXPECT_EQ(speed_code(""), 0);
  EXPECT_EQ(speed_code("ultraBullet"), 1);
  EXPECT_EQ(speed_code("blitz"), 3);
  EXPECT_EQ(speed_code("correspondence"), 6);
  EXPECT_EQ(speed_code("Blitz"), std::nullopt);
  EXPECT_EQ(rating_band(std::nullopt), kUnrated);
  EXPECT_EQ(rating_band(0), 0);
  EXPECT_EQ(rating_band(999), 0);
  EXPECT_EQ(rating_band(1000), 1);
  EXPECT_EQ(rating_band(1199), 1);
  EXPECT_EQ(rating_band(2199), 6);
  EXPECT_EQ(rating_band(2200), 7);  // 2200-2499 is one band
  EXPECT_EQ(rating_band(2499), 7);
  EXPECT_EQ(rating_band(2500), 8);
  EXPECT_EQ(rating_band(9999), 8);
}

TEST(PositionCounts, MonthsOfPgnDates) {
  EXPECT_EQ(GameMonth::of_date("2019.06.14").text(), "2019.06");
  EXPECT_EQ(GameMonth::of_date("2019.06.??").text(), "2019.06");
  EXPECT_EQ(GameMonth::of_date("2019.??.??").text(), "2019.??");
  EXPECT_EQ(GameMonth::of_date("2019.13.01").text(), "2019.??");
  EXPECT_EQ(GameMonth::of_date("0850.01.01").text(), "0850.01");
  for (const char* unknown : {"", "????.??.??", "19.06.14", "20x9.06.01", "?019.06.01"})
    EXPECT_FALSE(GameMonth::of_date(unknown).known()) << unknown;
  EXPECT_LT(GameMonth(), GameMonth::of_date("0000.01.01"));
  EXPECT_LT(GameMonth::of_date("2019.??.??"), GameMonth::of_date("2019.01.01"));
  EXPECT_LT(GameMonth::of_date("2019.12.31"), GameMonth::of_date("2020.??.??"));
  EXPECT_EQ(GameMonth::of_code(GameMonth::of_date("2019.06.14").code()), GameMonth::of_date("2019.06.01"));
}

TEST(PositionCounts, SinceAndUntilByMonth) {
  EXPECT_FALSE(MonthBound::parse("2019.06.01"));
  EXPECT_FALSE(MonthBound::parse("2019.13"));
  EXPECT_FALSE(MonthBound::parse("19"));
  EXPECT_FALSE(MonthBound::parse("2019-06"));
  const MonthBound june = *MonthBound::parse("2019.06"), year = *MonthBound::parse("2019");
  const auto m = [](const char* date) { return GameMonth::of_date(date); };
  EXPECT_TRUE(june.at_or_before(m("2019.06.01")));
  EXPECT_TRUE(june.at_or_before(m("2020.??.??")));
  EXPECT_FALSE(june.at_or_before(m("2019.05.31")));
  EXPECT_FALSE(june.at_or_before(m("2019.??.??")));  // the bound needs the month
  EXPECT_FALSE(june.at_or_before(m("????.??.??")));
  EXPECT_TRUE(june.at_or_after(m("2019.06.30")));
  EXPECT_TRUE(june.at_or_after(m("2018.??.??")));
  EXPECT_FALSE(june.at_or_after(m("2019.07.01")));
  EXPECT_FALSE(june.at_or_after(m("2019.??.??")));
  EXPECT_TRUE(year.at_or_before(m("2019.??.??")));
  EXPECT_TRUE(year.at_or_after(m("2019.12.31")));
  EXPECT_FALSE(year.at_or_after(m("2020.01.01")));
  EXPECT_FALSE(year.at_or_before(m("2018.12.31")));
}

TEST(PositionCounts, RatingLimitsOnBandLimitsOnly) {
  using Bands = std::optional<std::pair<std::uint8_t, std::uint8_t>>;
  EXPECT_EQ(CountFilter::bands_of(std::nullopt, std::nullopt), (Bands{{0, 8}}));
  EXPECT_EQ(CountFilter::bands_of(2000, std::nullopt), (Bands{{6, 8}}));
  EXPECT_EQ(CountFilter::bands_of(0, 1999), (Bands{{0, 5}}));
  EXPECT_EQ(CountFilter::bands_of(1600, 2499), (Bands{{4, 7}}));
  EXPECT_EQ(CountFilter::bands_of(-50, 10000), (Bands{{0, 8}}));
  EXPECT_EQ(CountFilter::bands_of(2001, std::nullopt), std::nullopt);  // cuts 2000-2199
  EXPECT_EQ(CountFilter::bands_of(std::nullopt, 2000), std::nullopt);
  const Bands none = CountFilter::bands_of(std::nullopt, -1);
  ASSERT_TRUE(none);
  EXPECT_GT(none->first, none->second);
}

TEST(PositionCounts, BytesRoundTripAndGamesTakenAway) {
  const Board start = chess::parse_fen("startpos");
  const std::uint16_t e4 = EntryCode::make(chess::parse_san(start, "e4"), GameResult::kWhiteWins);
  const std::uint16_t d4 = EntryCode::make(chess::parse_san(start, "d4"), GameResult::kDraw);
  PositionCounts counts;
  const GameFacts blitz{1, *speed_code("blitz"), 2100, GameMonth::of_date("2021.03.04")};
  const GameFacts unrated{2, 0, std::nullopt, GameMonth()};
  counts.add(e4, blitz);
  counts.add(e4, blitz);
  counts.add(d4, unrated);
  const std::string bytes = counts.encode();
  const PositionCounts back = PositionCounts::decode(bytes.data(), bytes.size());
  EXPECT_EQ(back.games(), 3);
  EXPECT_EQ(back.encode(), bytes);

  PositionCounts delta;
  delta.add(d4, unrated, -1);
  PositionCounts after = back;
  after.add(delta);
  EXPECT_EQ(after.games(), 2);
  ExplorerTally tally;
  after.tally({}, tally);
  ASSERT_EQ(tally.moves().size(), 1u);  // the emptied cell is gone
  EXPECT_EQ(tally.moves()[0].white_wins, 2u);
  EXPECT_EQ(tally.moves()[0].average_rating(), 2100);
  EXPECT_EQ(tally.moves()[0].last_played.text(), "2021.03");

  PositionCounts wrong;
  wrong.add(e4, blitz, -1);  // a game never counted, taken away
  EXPECT_THROW((void)wrong.encode(), std::invalid_argument);
  for (const std::string& bad : {std::string("PCN1"), std::string("PCN3\x01\x01\x01\x01\x00\x00\x00", 11),
                                 bytes.substr(0, bytes.size() - 1), bytes + '\0'})
    EXPECT_THROW((void)PositionCounts::decode(bad.data(), bad.size()), std::invalid_argument);
}

// The top games: the rated games of highest average rating, ties by the lower number, kept
// through inserts (one by one and as a delta) and through deletes while they can be known.
TEST(PositionCounts, TopGamesAreTheBestRatedWhileKnown) {
  const Board start = chess::parse_fen("startpos");
  const std::uint16_t e4 = EntryCode::make(chess::parse_san(start, "e4"), GameResult::kWhiteWins);
  std::mt19937 rng(48);
  std::vector<TopGame> all;
  PositionCounts counts, delta;
  for (std::uint32_t g = 1; g <= 400; ++g) {
    const std::optional<int> rating = rng() % 4 ? std::optional<int>(1000 + int(rng() % 50)) : std::nullopt;
    const GameFacts facts{g, 3, rating, GameMonth()};
    (g <= 200 ? counts : delta).add(e4, facts);
    if (rating) all.push_back({g, *rating});
  }
  counts.add(delta);
  std::sort(all.begin(), all.end(), [](const TopGame& a, const TopGame& b) {
    return a.rating != b.rating ? a.rating > b.rating : a.game < b.game;
  });
  const std::vector<TopGame> best(all.begin(), all.begin() + kTopGames);
  ASSERT_TRUE(counts.top_games());
  EXPECT_EQ(*counts.top_games(), best);

  // stored and read back; format 1 knows no top games
  const std::string bytes = counts.encode();
  const PositionCounts back = PositionCounts::decode(bytes.data(), bytes.size());
  ASSERT_TRUE(back.top_games());
  EXPECT_EQ(*back.top_games(), best);
  const std::string v1 = std::string("PCN1\x00", 5);
  EXPECT_FALSE(PositionCounts::decode(v1.data(), v1.size()).top_games());

  // a game not among them taken away: still known; one of them: no longer
  PositionCounts after = back;
  PositionCounts other;
  other.add(e4, GameFacts{all.back().game, 3, all.back().rating, GameMonth()}, -1);
  after.add(other);
  ASSERT_TRUE(after.top_games());
  EXPECT_EQ(*after.top_games(), best);
  PositionCounts top;
  top.add(e4, GameFacts{best[1].game, 3, best[1].rating, GameMonth()}, -1);
  after.add(top);
  EXPECT_FALSE(after.top_games());
  const std::string unknown = after.encode();
  EXPECT_FALSE(PositionCounts::decode(unknown.data(), unknown.size()).top_games());

  // fewer rated games than kTopGames: each one taken away leaves the rest known
  PositionCounts few;
  few.add(e4, GameFacts{7, 3, 1500, GameMonth()});
  few.add(e4, GameFacts{8, 3, 1600, GameMonth()});
  few.add(e4, GameFacts{9, 3, std::nullopt, GameMonth()});
  few.add(e4, GameFacts{7, 3, 1500, GameMonth()});  // a position reached twice in one game
  PositionCounts gone;
  gone.add(e4, GameFacts{8, 3, 1600, GameMonth()}, -1);
  few.add(gone);
  ASSERT_TRUE(few.top_games());
  EXPECT_EQ(*few.top_games(), (std::vector<TopGame>{{7, 1500}}));
}

// Games with random speeds, ratings and dates: every filter the counts can answer gives the
// tally of the games that pass it, compared game by game (ratings as numbers).
TEST(PositionCounts, FiltersAgreeWithTheGamesOneByOne) {
  const Board start = chess::parse_fen("startpos");
  chess::MoveList moves;
  chess::legal_moves(start, moves);
  std::mt19937 rng(47);
  struct Game {
    std::uint16_t code;
    GameFacts facts;
  };
  std::vector<Game> games;
  const char* dates[] = {"2019.06.14", "2019.07.01", "2019.??.??", "????.??.??", "2020.01.31", "2018.12.01", ""};
  PositionCounts counts;
  for (std::uint32_t g = 0; g < 3000; ++g) {
    const chess::Move m = moves.moves[rng() % 4];
    const auto result = GameResult(rng() % 4);
    std::optional<int> rating;
    if (rng() % 5) rating = int(rng() % 3200);
    const GameFacts facts{g, std::uint8_t(rng() % kSpeedCodes), rating, GameMonth::of_date(dates[rng() % 7])};
    games.push_back({EntryCode::make(m, result), facts});
    counts.add(games.back().code, facts);
  }
  const std::string bytes = counts.encode();
  const PositionCounts stored = PositionCounts::decode(bytes.data(), bytes.size());
  const std::optional<std::int64_t> limits[] = {std::nullopt, 0, 1000, 1599, 1600, 2199, 2500, 2499};
  const std::optional<MonthBound> bounds[] = {std::nullopt, MonthBound::parse("2019"), MonthBound::parse("2019.07"),
                                              MonthBound::parse("2020")};
  int compared = 0;
  for (std::uint8_t speeds : {0, 1 << 3, (1 << 2) | (1 << 4), 1 << 0})
    for (const auto& low : limits)
      for (const auto& high : limits)
        for (const auto& since : bounds)
          for (const auto& until : bounds) {
            const auto bands = CountFilter::bands_of(low, high);
            if (!bands) continue;
            CountFilter filter{speeds, low || high ? bands : std::nullopt, since, until};
            ExplorerTally from_counts, from_games;
            stored.tally(filter, from_counts);
            for (const Game& g : games) {
              if (speeds && !(speeds & (1 << g.facts.speed))) continue;
              if ((low || high) && !g.facts.rating) continue;
              if (low && *g.facts.rating < *low) continue;
              if (high && *g.facts.rating > *high) continue;
              if (since && !since->at_or_before(g.facts.month)) continue;
              if (until && !until->at_or_after(g.facts.month)) continue;
              from_games.add(g.code, g.facts.rating, g.facts.month.text() == "" ? "" : g.facts.month.text() + ".01");
            }
            const auto a = from_counts.moves(), b = from_games.moves();
            ASSERT_EQ(a.size(), b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
              EXPECT_EQ(a[i].move_bits, b[i].move_bits);
              EXPECT_EQ(a[i].games, b[i].games);
              EXPECT_EQ(a[i].white_wins, b[i].white_wins);
              EXPECT_EQ(a[i].draws, b[i].draws);
              EXPECT_EQ(a[i].black_wins, b[i].black_wins);
              EXPECT_EQ(a[i].average_rating(), b[i].average_rating());
              EXPECT_EQ(a[i].last_played, b[i].last_played);
            }
            ++compared;
          }
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace pgmate::gamedb
