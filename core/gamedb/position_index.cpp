#include "gamedb/position_index.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <stdexcept>

#include "chess/notation.h"

namespace pgmate::gamedb {

namespace {

constexpr std::uint32_t kBlockMagic = 0x31584950;  // "PIX1"
constexpr std::size_t kHeader = 8;
constexpr std::size_t kEntryBytes = 8 + 4 + 2;
constexpr std::uint16_t kResultMask = 3u << 12;

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // little-endian hosts only (x86-64, aarch64)
  return v;
}

template <typename T>
void store(std::string& out, std::size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}

}  // namespace

GameResult parse_result(std::string_view result) {
  if (result == "1-0") return GameResult::kWhiteWins;
  if (result == "0-1") return GameResult::kBlackWins;
  if (result == "1/2-1/2") return GameResult::kDraw;
  return GameResult::kUnknown;
}

std::string_view result_text(GameResult r) {
  switch (r) {
    case GameResult::kWhiteWins: return "1-0";
    case GameResult::kBlackWins: return "0-1";
    case GameResult::kDraw: return "1/2-1/2";
    case GameResult::kUnknown: break;
  }
  return "*";
}

std::uint16_t EntryCode::make(chess::Move move, GameResult result) {
  const unsigned promotion = move.kind() == chess::kPromotion ? move.bits() & 0xC000u : 0;
  return static_cast<std::uint16_t>(move.from() | (move.to() << 6) | promotion | (static_cast<unsigned>(result) << 12));
}

std::uint16_t EntryCode::with_result(std::uint16_t code, GameResult result) {
  return static_cast<std::uint16_t>((code & ~kResultMask) | (static_cast<unsigned>(result) << 12));
}

std::uint16_t EntryCode::move_bits(std::uint16_t code) { return static_cast<std::uint16_t>(code & ~kResultMask); }

chess::Move EntryCode::move(const chess::Board& position, std::uint16_t code) {
  const chess::Move plain(move_bits(code) & 0x0FFFu);
  const bool promotes = (position.pieces(chess::kPawn) & (1ULL << plain.from())) != 0 &&
                        (chess::rank_of(plain.to()) == 0 || chess::rank_of(plain.to()) == 7);
  if (!promotes) return chess::resolve_move(position, plain);
  return chess::resolve_move(position, chess::Move(plain.from(), plain.to(), chess::kPromotion,
                                                   static_cast<chess::PieceType>(chess::kKnight + (code >> 14))));
}

GameResult EntryCode::result(std::uint16_t code) { return static_cast<GameResult>((code >> 12) & 3); }

void append_game_entries(std::uint64_t game, const chess::Board& start, std::span<const chess::Move> moves,
                         GameResult result, std::vector<PositionEntry>& out) {
  if (game > kMaxGameId)
    throw std::out_of_range("game id " + std::to_string(game) + " is above the position index's limit " +
                            std::to_string(kMaxGameId));
  GameEntries entries(static_cast<std::uint32_t>(game), result, out);
  chess::Board b = start;
  for (const chess::Move given : moves) {
    const chess::Move m = chess::resolve_move(b, given);
    entries.add(b, m);
    chess::play_checked(b, m);
  }
  entries.add(b, chess::Move());
}

void GameEntries::add(const chess::Board& b, chess::Move played) {
  // A position can only come back while the halfmove clock runs: a pawn move or a capture
  // (which reset it) can never be undone. So each position is looked for among the
  // positions since the last reset with the same side to move, a few plies at most.
  const std::size_t ply = keys_.size(), back = std::min<std::size_t>(b.halfmove, ply);
  bool is_new = true;
  for (std::size_t d = 2; d <= back && is_new; d += 2) is_new = keys_[ply - d] != b.key;
  if (is_new) out_.push_back({b.key, game_, EntryCode::make(played, result_)});
  keys_.push_back(b.key);
}

std::string encode_block(std::span<const PositionEntry> entries) {
  const std::size_t n = entries.size();
  std::string out(kHeader + n * kEntryBytes, '\0');
  store<std::uint32_t>(out, 0, kBlockMagic);
  store<std::uint32_t>(out, 4, static_cast<std::uint32_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    store<std::uint64_t>(out, kHeader + 8 * i, entries[i].key);
    store<std::uint32_t>(out, kHeader + 8 * n + 4 * i, entries[i].game);
    store<std::uint16_t>(out, kHeader + 12 * n + 2 * i, entries[i].code);
  }
  return out;
}

BlockView::BlockView(const void* data, std::size_t size) : data_(static_cast<const unsigned char*>(data)) {
  if (size < kHeader || load<std::uint32_t>(data_) != kBlockMagic)
    throw std::invalid_argument("position index block: not a block (" + std::to_string(size) + " bytes)");
  count_ = load<std::uint32_t>(data_ + 4);
  if (count_ > (size - kHeader) / kEntryBytes || kHeader + count_ * kEntryBytes != size)
    throw std::invalid_argument("position index block: " + std::to_string(size) + " bytes for " +
                                std::to_string(count_) + " entries");
}

std::uint64_t BlockView::key(std::size_t i) const { return load<std::uint64_t>(data_ + kHeader + 8 * i); }
std::uint32_t BlockView::game(std::size_t i) const {
  return load<std::uint32_t>(data_ + kHeader + 8 * count_ + 4 * i);
}
std::uint16_t BlockView::code(std::size_t i) const {
  return load<std::uint16_t>(data_ + kHeader + 12 * count_ + 2 * i);
}

std::pair<std::size_t, std::size_t> BlockView::equal_range(std::uint64_t k) const {
  std::size_t lo = 0, hi = count_;
  while (lo < hi) {  // first key >= k
    const std::size_t mid = (lo + hi) / 2;
    if (key(mid) < k) lo = mid + 1;
    else hi = mid;
  }
  std::size_t end = lo;
  while (end < count_ && key(end) == k) ++end;
  return {lo, end};
}

std::vector<EncodedBlock> encode_run(std::span<const PositionEntry> sorted) {
  std::vector<EncodedBlock> blocks;
  blocks.reserve((sorted.size() + kBlockEntries - 1) / kBlockEntries);
  for (std::size_t at = 0; at < sorted.size(); at += kBlockEntries) {
    const auto part = sorted.subspan(at, std::min(kBlockEntries, sorted.size() - at));
    blocks.push_back({part.front().key, part.back().key, part.size(), encode_block(part)});
  }
  return blocks;
}

void sort_entries(std::vector<PositionEntry>& entries) {
  std::vector<PositionEntry> scratch;
  sort_entries(entries, scratch);
}

void sort_entries(std::vector<PositionEntry>& entries, std::vector<PositionEntry>& scratch) {
  // Keys are hashes, spread evenly: one counting pass on their top 16 bits leaves small
  // buckets to sort, about three times faster than one sort of millions of entries.
  constexpr int kBucketBits = 16;
  if (entries.size() < (std::size_t{1} << kBucketBits)) {
    std::sort(entries.begin(), entries.end());
  } else {
    constexpr std::size_t kBuckets = std::size_t{1} << kBucketBits;
    auto bucket = [](const PositionEntry& e) { return static_cast<std::size_t>(e.key >> (64 - kBucketBits)); };
    std::vector<std::size_t> start(kBuckets + 1, 0);
    for (const PositionEntry& e : entries) ++start[bucket(e) + 1];
    for (std::size_t i = 1; i <= kBuckets; ++i) start[i] += start[i - 1];
    std::vector<PositionEntry>& sorted = scratch;
    sorted.resize(entries.size());
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (const PositionEntry& e : entries) sorted[fill[bucket(e)]++] = e;
    for (std::size_t i = 0; i < kBuckets; ++i) std::sort(sorted.begin() + start[i], sorted.begin() + start[i + 1]);
    entries.swap(sorted);
  }
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
}

std::vector<PositionEntry> merge_runs(std::span<const std::vector<PositionEntry>> runs,
                                      std::span<const std::uint32_t> deleted_games) {
  std::size_t total = 0;
  for (const auto& r : runs) total += r.size();
  std::vector<PositionEntry> out;
  out.reserve(total);
  // (entry, run, index) in a min-heap: k-way merge without concatenating and re-sorting.
  using Head = std::pair<PositionEntry, std::size_t>;
  auto later = [](const Head& a, const Head& b) { return b.first < a.first; };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  std::vector<std::size_t> next(runs.size(), 0);
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!runs[r].empty()) heads.push({runs[r][0], r}), next[r] = 1;
  while (!heads.empty()) {
    const auto [e, r] = heads.top();
    heads.pop();
    if (next[r] < runs[r].size()) heads.push({runs[r][next[r]++], r});
    if (!out.empty() && out.back() == e) continue;
    if (std::binary_search(deleted_games.begin(), deleted_games.end(), e.game)) continue;
    out.push_back(e);
  }
  return out;
}

void ExplorerTally::add(std::uint16_t code) {
  const std::uint16_t move = EntryCode::move_bits(code);
  auto it = std::find_if(by_move_.begin(), by_move_.end(), [&](const ExplorerMove& m) { return m.move_bits == move; });
  if (it == by_move_.end()) {
    by_move_.push_back({move, 0, 0, 0, 0});
    it = by_move_.end() - 1;
  }
  ++it->games;
  ++games_;
  switch (EntryCode::result(code)) {
    case GameResult::kWhiteWins: ++it->white_wins; break;
    case GameResult::kBlackWins: ++it->black_wins; break;
    case GameResult::kDraw: ++it->draws; break;
    case GameResult::kUnknown: break;
  }
}

std::vector<ExplorerMove> ExplorerTally::moves() const {
  std::vector<ExplorerMove> sorted = by_move_;
  std::sort(sorted.begin(), sorted.end(), [](const ExplorerMove& a, const ExplorerMove& b) {
    return a.games != b.games ? a.games > b.games : a.move_bits < b.move_bits;
  });
  return sorted;
}

}  // namespace pgmate::gamedb
