// The position index's entries, blocks, runs and explorer tally, checked against plain
// recomputation from replayed games.
#include "gamedb/position_index.h"

#include <bit>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"

namespace pgmate::gamedb {
namespace {

using chess::Board;
using chess::Move;

std::vector<Move> line(const Board& start, std::initializer_list<const char*> sans) {
  std::vector<Move> moves;
  Board b = start;
  for (const char* s : sans) {
    moves.push_back(chess::parse_san(b, s));
    chess::play_checked(b, moves.back());
  }
  return moves;
}

// A random legal game of up to `plies` plies.
std::vector<Move> random_game(std::mt19937_64& rng, int plies) {
  std::vector<Move> moves;
  Board b = chess::parse_fen("startpos");
  for (int i = 0; i < plies; ++i) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    if (list.size == 0) break;
    moves.push_back(list.moves[rng() % list.size]);
    chess::play_checked(b, moves.back());
  }
  return moves;
}

TEST(PositionIndex, EntryCodeKeepsMoveAndResult) {
  const Board b = chess::parse_fen("4k3/1P6/8/8/8/8/8/4K2R w K - 0 1");
  for (const char* san : {"b8=N", "b8=Q", "O-O", "Kd2"}) {
    const Move m = chess::parse_san(b, san);
    for (GameResult r : {GameResult::kUnknown, GameResult::kWhiteWins, GameResult::kBlackWins, GameResult::kDraw}) {
      const std::uint16_t code = EntryCode::make(m, r);
      EXPECT_EQ(EntryCode::result(code), r);
      EXPECT_EQ(EntryCode::move(b, code), m) << san;
      EXPECT_FALSE(EntryCode::ends_here(code));
    }
  }
  EXPECT_TRUE(EntryCode::ends_here(EntryCode::make(Move(), GameResult::kDraw)));
  EXPECT_EQ(parse_result("1/2-1/2"), GameResult::kDraw);
  EXPECT_EQ(parse_result("*"), GameResult::kUnknown);
  EXPECT_EQ(result_text(parse_result("0-1")), "0-1");
}

// Repetitions are looked for only since the last pawn move or capture; against a plain
// set of every key seen, on random games that mostly shuffle pieces (many repetitions).
TEST(PositionIndex, RepeatedPositionsAreFoundAsWithASet) {
  std::mt19937 rng(11);
  int repeats = 0;
  for (const char* fen : {"startpos", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "r3k3/1p6/8/8/8/8/6P1/4K2R b Kq - 37 80"}) {
    for (int game = 0; game < 200; ++game) {
      const Board start = chess::parse_fen(fen);
      Board b = start;
      std::vector<Move> moves;
      for (int ply = 0; ply < 120; ++ply) {
        chess::MoveList list;
        chess::legal_moves(b, list);
        if (list.size == 0) break;
        Move m = list.moves[rng() % list.size];
        // Mostly non-pawn, non-capturing moves, so that positions come back.
        for (int tries = 0; tries < 8 && (b.piece_on(m.to()) != chess::kNoPiece ||
                                         chess::type_of(b.piece_on(m.from())) == chess::kPawn); ++tries)
          m = list.moves[rng() % list.size];
        moves.push_back(m);
        b.play(m);
      }
      std::vector<PositionEntry> entries;
      append_game_entries(1, start, moves, GameResult::kDraw, entries);
      std::vector<std::uint64_t> expected;
      std::set<std::uint64_t> seen;
      Board r = start;
      for (std::size_t i = 0; i <= moves.size(); ++i) {
        if (seen.insert(r.key).second) expected.push_back(r.key);
        if (i < moves.size()) r.play(moves[i]);
      }
      repeats += static_cast<int>(moves.size() + 1 - expected.size());
      ASSERT_EQ(entries.size(), expected.size()) << fen << " game " << game;
      for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(entries[i].key, expected[i]) << fen << " game " << game;
    }
  }
  EXPECT_GT(repeats, 300);
}

// Large runs are sorted by buckets of the key's top bits: the same order and the same
// duplicates removed as one plain sort.
TEST(PositionIndex, SortingLargeRunsMatchesAPlainSort) {
  std::mt19937_64 rng(5);
  std::vector<PositionEntry> entries;
  for (int i = 0; i < 300000; ++i) {
    // Few distinct keys in part of the range: equal keys sort by game, then code.
    const std::uint64_t key = i % 3 ? rng() : (rng() % 50) << 58;
    entries.push_back({key, static_cast<std::uint32_t>(rng() % 1000), static_cast<std::uint16_t>(rng() % 4)});
  }
  std::vector<PositionEntry> expected = entries;
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  sort_entries(entries);
  ASSERT_LT(expected.size(), 300000u);
  EXPECT_EQ(entries, expected);
}

TEST(PositionIndex, GameEntriesAreTheDistinctPositionsInOrder) {
  const Board start = chess::parse_fen("startpos");
  // Knights out and back: the start position comes back at ply 4 and is kept once, with
  // the move first played from it.
  const auto moves = line(start, {"Nf3", "Nf6", "Ng1", "Ng8", "e4"});
  std::vector<PositionEntry> entries;
  append_game_entries(7, start, moves, GameResult::kWhiteWins, entries);
  ASSERT_EQ(entries.size(), 5u);  // 6 positions, one of them repeated
  EXPECT_EQ(entries[0].key, start.key);
  EXPECT_EQ(EntryCode::move(start, entries[0].code), moves[0]);
  EXPECT_TRUE(EntryCode::ends_here(entries.back().code));
  for (const auto& e : entries) {
    EXPECT_EQ(e.game, 7u);
    EXPECT_EQ(EntryCode::result(e.code), GameResult::kWhiteWins);
  }
  EXPECT_THROW(append_game_entries(kMaxGameId + 1, start, moves, GameResult::kDraw, entries), std::out_of_range);
  const std::vector<Move> illegal{Move(12, 36)  /* e2e5 */};
  EXPECT_THROW(append_game_entries(1, start, illegal, GameResult::kDraw, entries), chess::IllegalMove);
}

TEST(PositionIndex, BlocksRoundTripAndSearch) {
  std::vector<PositionEntry> entries;
  std::mt19937_64 rng(3);
  // Keys repeating (a few small ones) and spread over 64 bits, games from small to the largest.
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t key = i % 3 == 0 ? rng() % 50 : rng();
    const std::uint32_t game = i % 7 == 0 ? static_cast<std::uint32_t>(kMaxGameId - rng() % 3) : static_cast<std::uint32_t>(rng() % 1000);
    entries.push_back({key, game, static_cast<std::uint16_t>(rng())});
  }
  entries.push_back({0, 0, 0});
  entries.push_back({~std::uint64_t{0}, static_cast<std::uint32_t>(kMaxGameId), 0xffff});
  sort_entries(entries);
  const auto blocks = encode_run(entries);
  ASSERT_GT(blocks.size(), 1u);
  std::size_t at = 0;
  for (const auto& b : blocks) {
    EXPECT_LE(b.data.size(), kBlockBytes);
    const BlockView v(b.data.data(), b.data.size());
    ASSERT_EQ(v.size(), b.entries);
    EXPECT_EQ(v.key(0), b.first_key);
    EXPECT_EQ(v.key(v.size() - 1), b.last_key);
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v.entry(i), entries[at + i]);
    for (std::size_t i = 0; i < v.size(); i += 17) {
      const std::uint64_t k = v.key(i);
      const auto [lo, hi] = v.equal_range(k);
      std::size_t expected = 0;
      for (std::size_t j = 0; j < v.size(); ++j) expected += v.key(j) == k;
      EXPECT_EQ(hi - lo, expected);
      for (std::size_t j = lo; j < hi; ++j) EXPECT_EQ(v.key(j), k);
    }
    const auto [lo, hi] = v.equal_range(b.last_key == ~std::uint64_t{0} ? 0 : b.last_key + 1);
    EXPECT_EQ(lo, hi);
    // A block encoded whole equals the one the builder made.
    const std::vector<PositionEntry> part(entries.begin() + static_cast<std::ptrdiff_t>(at),
                                          entries.begin() + static_cast<std::ptrdiff_t>(at + v.size()));
    EXPECT_EQ(encode_block(part), b.data);
    at += v.size();
  }
  EXPECT_EQ(at, entries.size());
}

TEST(PositionIndex, BlocksAreDeltaCoded) {
  // A popular position: one key, games close together, about 4 bytes an entry.
  std::vector<PositionEntry> popular;
  for (std::uint32_t g = 1; g <= 400; ++g) popular.push_back({0x9d39247e33776d41ULL, 1000 + 3 * g, 0x0123});
  const auto blocks = encode_run(popular);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_LE(blocks[0].data.size(), 6 + 10 + 3 + 2 + 399 * 4u);
  // Spread keys (every entry a new position) still save on the key: well under 14 bytes.
  std::mt19937_64 rng(5);
  std::vector<PositionEntry> spread;
  for (int i = 0; i < 140; ++i) spread.push_back({rng() >> 20, static_cast<std::uint32_t>(rng() % 1000000), 0});
  sort_entries(spread);
  EXPECT_LT(encode_block(spread).size(), 140 * 11u);
}

TEST(PositionIndex, BlockNumbersOfEveryLength) {
  // Key deltas and games of every bit width, each a varint of ceil(width / 7) bytes (one
  // for zero): the block's size counts them, and decoding gives the entries back.
  std::vector<PositionEntry> entries{{0, 0, 1}};
  std::size_t expected = 6 + 1 + 1 + 2;
  const auto varint_bytes = [](std::uint64_t v) { return v == 0 ? std::size_t{1} : (std::bit_width(v) + 6) / 7u; };
  std::uint64_t key = 0;
  for (int width = 0; width <= 63; ++width) {
    const std::uint64_t delta = width == 0 ? 1 : (std::uint64_t{1} << width) - 1 + (width % 2);
    if (delta > ~key) break;
    key += delta;
    const std::uint32_t game = static_cast<std::uint32_t>((std::uint64_t{1} << (width % 33)) - 1);
    entries.push_back({key, game, static_cast<std::uint16_t>(width)});
    expected += varint_bytes(delta) + varint_bytes(game) + 2;
  }
  // A repeated key: its game as a delta from the game before.
  entries.push_back({key, entries.back().game + 300, 7});
  expected += 1 + 2 + 2;
  const std::string block = encode_block(entries);
  EXPECT_EQ(block.size(), expected);
  const BlockView v(block.data(), block.size());
  ASSERT_EQ(v.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(v.entry(i), entries[i]) << i;
  // The last entry's game delta, 300, as LEB128: 0xac 0x02, then its code.
  EXPECT_EQ(block.substr(block.size() - 5), std::string("\x00\xac\x02\x07\x00", 5));
  const auto built = encode_run(entries);
  ASSERT_EQ(built.size(), 1u);
  EXPECT_EQ(built[0].data, block);
}

TEST(PositionIndex, FormatOneBlocksAreStillRead) {
  // "PIX1", count 2, keys, games, codes: as pgmate 0.8 development versions wrote them.
  const std::vector<PositionEntry> entries{{5, 7, 9}, {5, 8, 10}};
  std::string block(8 + 2 * 14, '\0');
  const std::uint32_t magic = 0x31584950, count = 2;
  std::memcpy(block.data(), &magic, 4);
  std::memcpy(block.data() + 4, &count, 4);
  for (std::size_t i = 0; i < 2; ++i) {
    std::memcpy(block.data() + 8 + 8 * i, &entries[i].key, 8);
    std::memcpy(block.data() + 8 + 16 + 4 * i, &entries[i].game, 4);
    std::memcpy(block.data() + 8 + 24 + 2 * i, &entries[i].code, 2);
  }
  const BlockView v(block.data(), block.size());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.entry(0), entries[0]);
  EXPECT_EQ(v.entry(1), entries[1]);
  EXPECT_THROW(BlockView(block.data(), block.size() - 1), std::invalid_argument);
}

TEST(PositionIndex, CorruptBlocksAreRefused) {
  const std::vector<PositionEntry> two{{1, 2, 3}, {1, 5, 4}};
  std::string block = encode_block(two);
  EXPECT_NO_THROW(BlockView(block.data(), block.size()));
  EXPECT_THROW(BlockView(block.data(), block.size() - 1), std::invalid_argument);  // truncated
  EXPECT_THROW(BlockView((block + "x").data(), block.size() + 1), std::invalid_argument);  // left over
  EXPECT_THROW(BlockView(block.data(), 3), std::invalid_argument);
  std::string bad = block;
  bad[0] = 'x';
  EXPECT_THROW(BlockView(bad.data(), bad.size()), std::invalid_argument);
  std::string huge = block;
  huge[5] = '\x7f';  // a count far beyond the bytes given
  EXPECT_THROW(BlockView(huge.data(), huge.size()), std::invalid_argument);
  std::string endless(6, '\0');  // a varint that never ends
  std::memcpy(endless.data(), block.data(), 6);
  endless[4] = 1;
  endless += std::string(12, '\xff');
  EXPECT_THROW(BlockView(endless.data(), endless.size()), std::invalid_argument);
  std::string wrapped(6, '\0');  // a key delta past 2^64
  std::memcpy(wrapped.data(), block.data(), 6);
  wrapped[4] = 2;
  wrapped += std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00\x00\x00", 13);
  wrapped += std::string("\x01\x00\x00\x00", 4);
  EXPECT_THROW(BlockView(wrapped.data(), wrapped.size()), std::invalid_argument);
  // One game's two entries of a key with their codes swapped: the deltas are all 0, so
  // only the codes are out of order.
  const std::vector<PositionEntry> one_game{{1, 2, 3}, {1, 2, 5}};
  std::string swapped = encode_block(one_game);
  ASSERT_EQ(swapped.size(), 6u + 4 + 4);
  EXPECT_NO_THROW(BlockView(swapped.data(), swapped.size()));
  std::swap(swapped[8], swapped[12]);
  EXPECT_THROW(BlockView(swapped.data(), swapped.size()), std::invalid_argument);
  const std::vector<PositionEntry> unordered{{2, 1, 0}, {1, 1, 0}};
  EXPECT_THROW(encode_block(unordered), std::invalid_argument);
  BlockBuilder builder;
  EXPECT_TRUE(builder.add({2, 1, 0}));
  EXPECT_THROW(builder.add({1, 1, 0}), std::invalid_argument);
}

TEST(PositionIndex, MergedRunsEqualOneSortedRunWithoutDeletedGames) {
  std::mt19937_64 rng(11);
  std::vector<std::vector<PositionEntry>> runs(4);
  std::vector<PositionEntry> all;
  for (std::uint32_t game = 1; game <= 200; ++game) {
    auto& run = runs[game % runs.size()];
    append_game_entries(game, chess::parse_fen("startpos"), random_game(rng, 40), GameResult::kDraw, run);
  }
  for (auto& r : runs) {
    sort_entries(r);
    all.insert(all.end(), r.begin(), r.end());
  }
  runs.push_back(runs[1]);  // a run seen twice: its entries are kept once
  const std::vector<std::uint32_t> deleted{3, 50, 199};
  std::vector<PositionEntry> expected;
  for (const auto& e : all)
    if (e.game != 3 && e.game != 50 && e.game != 199) expected.push_back(e);
  sort_entries(expected);
  EXPECT_EQ(merge_runs(runs, deleted), expected);
}

// The radix passes against one plain sort, on what they could get wrong: duplicates to
// drop, one key in many games out of order (a bucket too large for the small sort), keys
// sharing their top 16 bits, batches below and above the size where the passes start.
TEST(PositionIndex, SortEntriesEqualsOneSortWithoutDuplicates) {
  std::mt19937_64 rng(23);
  std::vector<PositionEntry> scratch;  // reused from call to call, as the trigger does
  // Games in any order, or never going down (a statement's new games), or never going down
  // but for the last entry, which repeats a key from the middle with game 0.
  enum class Games { kAnyOrder, kInOrder, kInOrderButTheLast };
  for (Games games : {Games::kAnyOrder, Games::kInOrder, Games::kInOrderButTheLast}) {
    for (std::size_t n : {10, 4095, 4096, 50000, 200000}) {
      for (int shape = 0; shape < 5; ++shape) {
        std::vector<PositionEntry> entries;
        for (std::size_t i = 0; i < n; ++i) {
          // Spread keys; one key; keys apart in their low bits only; keys that all agree in
          // their top 32 bits; a few values of the top 32 bits, low bits spread.
          const std::uint64_t key = shape == 0   ? rng()
                                    : shape == 1 ? 0x9d39247e33776d41ULL
                                    : shape == 2 ? (0xABCDull << 48) | (rng() % 5000)
                                    : shape == 3 ? 0x12345678'00000000ULL | (rng() & 0xffffffffULL)
                                                 : ((rng() % 3) << 40) | (rng() & 0xffffffffULL);
          const auto game = static_cast<std::uint32_t>(games == Games::kAnyOrder ? rng() % (n / 2 + 1) : i / 40);
          entries.push_back({key, game, static_cast<std::uint16_t>(rng() % 4)});
          if (i % 7 == 0) entries.push_back(entries.back());  // the same game indexed twice
        }
        if (games == Games::kInOrderButTheLast) entries.push_back({entries[n / 2].key, 0, 0});
        std::vector<PositionEntry> expected = entries;
        std::sort(expected.begin(), expected.end());
        expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
        sort_entries(entries, scratch);
        EXPECT_EQ(entries, expected) << n << " entries, shape " << shape << ", games " << static_cast<int>(games);
      }
    }
  }
}

TEST(PositionIndex, PackedEntriesKeepTheEntriesOrder) {
  std::mt19937_64 rng(5);
  std::vector<PositionEntry> entries;
  for (int i = 0; i < 2000; ++i) {
    // Few distinct keys and games, so that ties on the key and on the game are common.
    entries.push_back({rng() % 4 == 0 ? ~std::uint64_t{0} - rng() % 3 : rng() % 50, static_cast<std::uint32_t>(rng() % 7),
                       static_cast<std::uint16_t>(rng())});
  }
  entries.push_back({~std::uint64_t{0}, 0xFFFFFFFFu, 0xFFFF});  // the largest entry is still below kNoEntry
  for (std::size_t i = 1; i < entries.size(); ++i) {
    const PositionEntry& a = entries[i - 1];
    const PositionEntry& b = entries[i];
    EXPECT_EQ(unpack(pack(a)), a);
    EXPECT_EQ(a < b, pack(a) < pack(b)) << i;
    EXPECT_EQ(a == b, pack(a) == pack(b)) << i;
    EXPECT_LT(pack(b), kNoEntry);
  }
}

// Runs of every size from none to 131 (past a power of two), some empty, with entries
// shared between runs: the tree gives every entry of every run once, in order.
TEST(PositionIndex, LoserTreeMergesLikeOneSort) {
  std::mt19937_64 rng(17);
  for (std::size_t k : {0, 1, 2, 3, 7, 8, 9, 64, 100, 131}) {
    std::vector<std::vector<PositionEntry>> runs(k);
    std::vector<PositionEntry> all;
    for (auto& run : runs) {
      const std::size_t n = rng() % 5 == 0 ? 0 : rng() % 300;
      for (std::size_t i = 0; i < n; ++i)
        run.push_back({rng() % 1000, static_cast<std::uint32_t>(rng() % 20), static_cast<std::uint16_t>(rng() % 3)});
      std::sort(run.begin(), run.end());
      all.insert(all.end(), run.begin(), run.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<PackedEntry> heads;
    for (const auto& run : runs) heads.push_back(run.empty() ? kNoEntry : pack(run[0]));
    std::vector<std::size_t> next(k, 1);
    std::vector<PositionEntry> merged;
    for (LoserTree tree(heads); !tree.empty();) {
      const std::size_t r = tree.top_source();
      ASSERT_LT(r, k);
      merged.push_back(unpack(tree.top()));
      tree.replace_top(next[r] < runs[r].size() ? pack(runs[r][next[r]++]) : kNoEntry);
    }
    EXPECT_EQ(merged, all) << k << " runs";
  }
}

TEST(PositionIndex, ExplorerTallyMatchesTheGames) {
  // Games from the start: the tally of the position after 1.e4 equals a count over the
  // replayed games of the move each played next.
  std::mt19937_64 rng(5);
  const Board start = chess::parse_fen("startpos");
  Board after_e4 = start;
  chess::play_checked(after_e4, chess::parse_san(start, "e4"));
  std::vector<PositionEntry> entries;
  std::map<std::uint16_t, std::array<int, 4>> expected;  // move -> games by result
  for (std::uint32_t game = 1; game <= 300; ++game) {
    std::vector<Move> moves{chess::parse_san(start, "e4")};
    Board b = after_e4;
    const int plies = static_cast<int>(rng() % 3);  // 0: the game ends after 1.e4
    for (int i = 0; i < plies; ++i) {
      chess::MoveList list;
      chess::legal_moves(b, list);
      moves.push_back(list.moves[rng() % 5]);
      chess::play_checked(b, moves.back());
    }
    const auto result = static_cast<GameResult>(rng() % 4);
    append_game_entries(game, start, moves, result, entries);
    const std::uint16_t next = plies > 0 ? EntryCode::move_bits(EntryCode::make(moves[1], result)) : 0;
    ++expected[next][static_cast<int>(result)];
  }
  sort_entries(entries);
  ExplorerTally tally;
  for (const auto& block : encode_run(entries)) {
    const BlockView v(block.data.data(), block.data.size());
    const auto [lo, hi] = v.equal_range(after_e4.key);
    for (std::size_t i = lo; i < hi; ++i) tally.add(v.code(i));
  }
  EXPECT_EQ(tally.games(), 300u);
  const auto moves = tally.moves();
  ASSERT_EQ(moves.size(), expected.size());
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const auto& want = expected.at(moves[i].move_bits);
    EXPECT_EQ(moves[i].white_wins, static_cast<std::uint64_t>(want[1]));
    EXPECT_EQ(moves[i].black_wins, static_cast<std::uint64_t>(want[2]));
    EXPECT_EQ(moves[i].draws, static_cast<std::uint64_t>(want[3]));
    EXPECT_EQ(moves[i].games, static_cast<std::uint64_t>(want[0] + want[1] + want[2] + want[3]));
    if (i > 0) {
      EXPECT_GE(moves[i - 1].games, moves[i].games);
    }
  }
}

TEST(PositionIndex, ExplorerTallyAveragesRatingsAndKeepsTheLatestMonth) {
  // The explorer with filters adds each game's players' average rating and its date.
  const Board start = chess::parse_fen("startpos");
  const std::uint16_t e4 = EntryCode::make(chess::parse_san(start, "e4"), GameResult::kWhiteWins);
  const std::uint16_t d4 = EntryCode::make(chess::parse_san(start, "d4"), GameResult::kDraw);
  ExplorerTally tally;
  tally.add(e4, 1500, "2019.06.01");
  tally.add(e4, 1501, "2021.??.??");
  tally.add(e4, std::nullopt, "????.??.??");  // unknown rating and date count as a game only
  tally.add(d4, std::nullopt, "");
  const auto moves = tally.moves();
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].move_bits, EntryCode::move_bits(e4));
  EXPECT_EQ(moves[0].games, 3u);
  EXPECT_EQ(moves[0].white_wins, 3u);
  EXPECT_EQ(moves[0].average_rating(), 1501);  // 1500.5 rounds up, as avg(int)::int does
  EXPECT_EQ(moves[0].last_played.text(), "2021.??");  // 2021, its month unknown, is after 2019.06
  EXPECT_EQ(moves[1].average_rating(), std::nullopt);
  EXPECT_EQ(moves[1].last_played.text(), "");
  EXPECT_EQ(moves[1].draws, 1u);
}

}  // namespace
}  // namespace pgmate::gamedb
