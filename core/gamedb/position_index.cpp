#include "gamedb/position_index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "chess/notation.h"

namespace pgmate::gamedb {

namespace {

constexpr std::uint32_t kBlockMagic = 0x31584950;   // "PIX1": format 1, read only
constexpr std::size_t kHeader = 8;
constexpr std::size_t kEntryBytes = 8 + 4 + 2;
constexpr std::uint32_t kBlockMagic2 = 0x32584950;  // "PIX2"
constexpr std::size_t kHeader2 = 6;
constexpr std::size_t kMinEntry2 = 1 + 1 + 2;
constexpr std::size_t kMaxEntry2 = 10 + 5 + 2;

// Orders entries against a bare key, both ways (std::equal_range).
struct KeyOrder {
  bool operator()(const PositionEntry& e, std::uint64_t k) const { return e.key < k; }
  bool operator()(std::uint64_t k, const PositionEntry& e) const { return k < e.key; }
};
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

namespace {

// A number as a varint at `p`; the end. With BMI2, one below 2^56 (every key delta but a
// block's first key, every game) is written by one pdep and one 8-byte store, so `p` needs
// 8 bytes of room whatever the number's length.
unsigned char* put_varint(unsigned char* p, std::uint64_t v) {
#if defined(PGMATE_USE_PEXT)
  if constexpr (std::endian::native == std::endian::little) {
    if (v < (std::uint64_t{1} << 56)) {
      const int bytes = v == 0 ? 1 : (std::bit_width(v) + 6) / 7;
      // The 7-bit groups spread over the bytes, each byte but the last marked "more".
      const std::uint64_t word =
          _pdep_u64(v, 0x7f7f7f7f7f7f7f7fULL) | (0x8080808080808080ULL & ((std::uint64_t{1} << (8 * (bytes - 1))) - 1));
      std::memcpy(p, &word, 8);
      return p + bytes;
    }
  }
#endif
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return p;
}

// An entry in format 2 at `p`, after `before` (none for a block's first); the end.
unsigned char* put_entry(unsigned char* p, const PositionEntry& e, const PositionEntry* before) {
  if (before && e < *before) throw std::invalid_argument("position index block: entries out of order");
  const bool same_key = before && e.key == before->key;
  p = put_varint(p, before ? e.key - before->key : e.key);
  p = put_varint(p, same_key ? e.game - before->game : e.game);
  std::memcpy(p, &e.code, 2);
  return p + 2;
}

// Reads a varint of at most 64 bits at `p` (below `end`); throws for a truncated or
// overlong one.
std::uint64_t get_varint(const unsigned char*& p, const unsigned char* end) {
#if defined(PGMATE_USE_PEXT)
  // With eight bytes there, a number of up to eight bytes (56 bits: every key delta but the
  // first of a block, every game) is read at once: its end from the bytes' high bits, its
  // 7-bit groups gathered by one pext. Longer ones, and a block's last bytes, go below.
  if constexpr (std::endian::native == std::endian::little) {
    if (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      if (const std::uint64_t stops = ~word & 0x8080808080808080ULL) {
        const int bits = std::countr_zero(stops) + 1;  // through the last byte's high bit
        p += bits / 8;
        return _pext_u64(bits == 64 ? word : word & ((std::uint64_t{1} << bits) - 1), 0x7f7f7f7f7f7f7f7fULL);
      }
    }
  }
#endif
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) throw std::invalid_argument("position index block: truncated");
    const unsigned char b = *p++;
    if (shift == 63 && b > 1) break;
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw std::invalid_argument("position index block: a number out of range");
}

void decode_format1(const unsigned char* data, std::size_t size, std::vector<PositionEntry>& out) {
  const std::size_t count = load<std::uint32_t>(data + 4);
  if (count > (size - kHeader) / kEntryBytes || kHeader + count * kEntryBytes != size)
    throw std::invalid_argument("position index block: " + std::to_string(size) + " bytes for " +
                                std::to_string(count) + " entries");
  out.resize(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = {load<std::uint64_t>(data + kHeader + 8 * i), load<std::uint32_t>(data + kHeader + 8 * count + 4 * i),
              load<std::uint16_t>(data + kHeader + 12 * count + 2 * i)};
}

void decode_format2(const unsigned char* data, std::size_t size, std::vector<PositionEntry>& out) {
  const std::size_t count = load<std::uint16_t>(data + 4);
  const unsigned char* p = data + kHeader2;
  const unsigned char* end = data + size;
  if (count > (size - kHeader2) / kMinEntry2)
    throw std::invalid_argument("position index block: " + std::to_string(size) + " bytes for " +
                                std::to_string(count) + " entries");
  out.resize(count);
  std::uint64_t key = 0;
  std::uint32_t game = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t delta = get_varint(p, end);
    if (i > 0 && delta > ~key) throw std::invalid_argument("position index block: a key out of range");
    const bool same_key = i > 0 && delta == 0;
    key = i == 0 ? delta : key + delta;
    const std::uint64_t g = get_varint(p, end);
    const std::uint64_t next_game = same_key ? game + g : g;
    if (next_game > kMaxGameId) throw std::invalid_argument("position index block: a game out of range");
    game = static_cast<std::uint32_t>(next_game);
    if (end - p < 2) throw std::invalid_argument("position index block: truncated");
    const std::uint16_t code = load<std::uint16_t>(p);
    // Deltas keep keys and a key's games in order; only a repeated game's codes can fall.
    if (same_key && g == 0 && code < out[i - 1].code) throw std::invalid_argument("position index block: entries out of order");
    out[i] = {key, game, code};
    p += 2;
  }
  if (p != end) throw std::invalid_argument("position index block: " + std::to_string(end - p) + " bytes left over");
}

}  // namespace

static_assert(kMaxEntry2 + 8 <= BlockBuilder::kSlackBytes);

BlockBuilder::BlockBuilder() = default;

bool BlockBuilder::add(const PositionEntry& e) {
  if (count_ == 0xffff) return false;
  if (count_ == 0) {
    std::memcpy(buf_.data(), &kBlockMagic2, 4);
    size_ = kHeader2;
    first_key_ = e.key;
  }
  // Written in place, then taken back (not counted) when it does not fit: a first entry
  // always does.
  const std::size_t end = static_cast<std::size_t>(put_entry(buf_.data() + size_, e, count_ > 0 ? &last_ : nullptr) - buf_.data());
  if (end > kBlockBytes && count_ > 0) return false;
  size_ = end;
  ++count_;
  // Field by field: a whole-entry copy is two overlapping 8-byte stores, and the next
  // call's load of the key then waits for both to reach the cache.
  last_.key = e.key;
  last_.game = e.game;
  last_.code = e.code;
  return true;
}

std::string BlockBuilder::take() {
  std::string block;
  if (count_ > 0) {
    const auto count = static_cast<std::uint16_t>(count_);
    std::memcpy(buf_.data() + 4, &count, 2);
    block.assign(reinterpret_cast<const char*>(buf_.data()), size_);
  }
  size_ = 0;
  count_ = 0;
  return block;
}

std::string encode_block(std::span<const PositionEntry> entries) {
  // One block whatever its size (a block rewritten without some of its entries may grow:
  // an entry whose key no longer repeats the one before costs more).
  if (entries.size() > 0xffff) throw std::invalid_argument("position index block: more than 65,535 entries");
  std::string out(kHeader2 + entries.size() * kMaxEntry2 + 8, '\0');  // 8: put_varint's stores
  store<std::uint32_t>(out, 0, kBlockMagic2);
  store<std::uint16_t>(out, 4, static_cast<std::uint16_t>(entries.size()));
  auto* start = reinterpret_cast<unsigned char*>(out.data());
  unsigned char* p = start + kHeader2;
  for (std::size_t i = 0; i < entries.size(); ++i) p = put_entry(p, entries[i], i > 0 ? &entries[i - 1] : nullptr);
  out.resize(static_cast<std::size_t>(p - start));
  return out;
}

void decode_block(const void* data, std::size_t size, std::vector<PositionEntry>& out) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  const std::uint32_t magic = size >= 4 ? load<std::uint32_t>(bytes) : 0;
  if (magic == kBlockMagic2 && size >= kHeader2) {
    decode_format2(bytes, size, out);  // checks the order as it goes
  } else if (magic == kBlockMagic && size >= kHeader) {
    decode_format1(bytes, size, out);
    for (std::size_t i = 1; i < out.size(); ++i)
      if (out[i] < out[i - 1]) throw std::invalid_argument("position index block: entries out of order");
  } else {
    throw std::invalid_argument("position index block: not a block (" + std::to_string(size) + " bytes)");
  }
}

BlockView::BlockView(const void* data, std::size_t size) { decode_block(data, size, entries_); }

std::pair<std::size_t, std::size_t> BlockView::equal_range(std::uint64_t k) const {
  const auto [lo, hi] = std::equal_range(entries_.begin(), entries_.end(), k, KeyOrder{});
  return {static_cast<std::size_t>(lo - entries_.begin()), static_cast<std::size_t>(hi - entries_.begin())};
}

std::vector<EncodedBlock> encode_run(std::span<const PositionEntry> sorted) {
  std::vector<EncodedBlock> blocks;
  BlockBuilder builder;
  const auto finish = [&] {
    const std::uint64_t first = builder.first_key(), last = builder.last_key();
    const std::size_t n = builder.entries();
    blocks.push_back({first, last, n, builder.take()});
  };
  for (const PositionEntry& e : sorted) {
    if (!builder.add(e)) {
      finish();
      builder.add(e);
    }
  }
  if (!builder.empty()) finish();
  return blocks;
}

void sort_entries(std::vector<PositionEntry>& entries) {
  std::vector<PositionEntry> scratch;
  sort_entries(entries, scratch);
}

void sort_entries(std::vector<PositionEntry>& entries, std::vector<PositionEntry>& scratch) {
  // Keys are hashes, spread evenly: two stable counting passes on their top 32 bits, 16 at
  // a time, the lower half first. What is left out of order then is each stretch of keys
  // that agree in those bits: a popular position's entries, in order already when they came
  // game by game (a statement's new games), and the rare pair of keys that agree in their
  // top 32 bits. A last pass finds the stretches out of order and sorts them.
  // Measured on a statement's 812,624 entries, this took 0.72-0.80 of the time of two
  // passes on the top 16 bits, 8 at a time, followed by a sort of each bucket (11 or 8 bits
  // a pass over the top 32 were no faster than those).
  const std::size_t n = entries.size();
  if (n < 4096) {
    std::sort(entries.begin(), entries.end());
  } else {
    constexpr int kDigitBits = 16, kDigits = 2, kFirstBit = 64 - kDigits * kDigitBits;
    constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
    std::vector<std::array<std::size_t, kBuckets>> counts(kDigits);
    for (auto& c : counts) c.fill(0);
    for (const PositionEntry& e : entries)
      for (int d = 0; d < kDigits; ++d) ++counts[d][(e.key >> (kFirstBit + d * kDigitBits)) & (kBuckets - 1)];
    scratch.resize(n);
    PositionEntry* from = entries.data();
    PositionEntry* to = scratch.data();
    for (int d = 0; d < kDigits; ++d) {
      const int shift = kFirstBit + d * kDigitBits;
      if (counts[d][(from[0].key >> shift) & (kBuckets - 1)] == n) continue;  // one value: nothing moves
      std::vector<PositionEntry*> place(kBuckets);
      PositionEntry* p = to;
      for (std::size_t b = 0; b < kBuckets; ++b) {
        place[b] = p;
        p += counts[d][b];
      }
      for (const PositionEntry* e = from; e != from + n; ++e) {
        // Field by field (see BlockBuilder::add): a whole-entry copy was slower.
        PositionEntry* out = place[(e->key >> shift) & (kBuckets - 1)]++;
        out->key = e->key;
        out->game = e->game;
        out->code = e->code;
      }
      std::swap(from, to);
    }
    if (from != entries.data()) entries.swap(scratch);
    PositionEntry* a = entries.data();
    for (std::size_t i = 1; i < n; ++i) {
      if (!(a[i] < a[i - 1])) continue;
      const std::uint64_t top = a[i].key >> kFirstBit;
      std::size_t first = i - 1, last = i + 1;
      while (first > 0 && a[first - 1].key >> kFirstBit == top) --first;
      while (last < n && a[last].key >> kFirstBit == top) ++last;
      std::sort(a + first, a + last);
      i = last - 1;
    }
  }
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
}

std::vector<PositionEntry> merge_runs(std::span<const std::vector<PositionEntry>> runs,
                                      std::span<const std::uint32_t> deleted_games) {
  std::size_t total = 0;
  std::vector<PackedEntry> heads;
  for (const auto& r : runs) {
    total += r.size();
    heads.push_back(r.empty() ? kNoEntry : pack(r[0]));
  }
  std::vector<PositionEntry> out;
  out.reserve(total);
  std::vector<std::size_t> next(runs.size(), 1);
  for (LoserTree tree(heads); !tree.empty();) {
    const PositionEntry e = unpack(tree.top());
    const std::size_t r = tree.top_source();
    tree.replace_top(next[r] < runs[r].size() ? pack(runs[r][next[r]++]) : kNoEntry);
    if (!out.empty() && out.back() == e) continue;
    if (std::binary_search(deleted_games.begin(), deleted_games.end(), e.game)) continue;
    out.push_back(e);
  }
  return out;
}

namespace {
std::size_t tree_leaves(std::size_t sources) {
  if (sources > (std::size_t{1} << 31)) throw std::invalid_argument("LoserTree: too many sources");
  return std::bit_ceil(std::max<std::size_t>(sources, 1));
}
}  // namespace

LoserTree::LoserTree(std::span<const PackedEntry> heads)
    : leaves_(tree_leaves(heads.size())), heads_(leaves_, kNoEntry), losers_(leaves_, 0) {
  std::copy(heads.begin(), heads.end(), heads_.begin());
  // Play the tournament bottom-up: each inner node keeps the loser of its two subtrees'
  // winners and passes the winner up. winners[leaves_ + i] is leaf i.
  std::vector<std::uint32_t> winners(2 * leaves_);
  for (std::size_t i = 0; i < leaves_; ++i) winners[leaves_ + i] = static_cast<std::uint32_t>(i);
  for (std::size_t node = leaves_ - 1; node >= 1; --node) {
    const std::uint32_t a = winners[2 * node], b = winners[2 * node + 1];
    const bool b_wins = heads_[b] < heads_[a];
    winners[node] = b_wins ? b : a;
    losers_[node] = b_wins ? a : b;
  }
  losers_[0] = winners[1];
}

void LoserTree::replace_top(PackedEntry next) {
  std::uint32_t w = winner();
  heads_[w] = next;
  // Replay the leaf's matches up to the root: at each node the stored loser plays the
  // climbing entry, and the smaller one climbs on. Selects, not branches: with keys that
  // are hashes, a branch on who wins is a coin toss.
  PackedEntry* const heads = heads_.data();
  std::uint32_t* const losers = losers_.data();
  PackedEntry climbing = next;
  for (std::size_t node = (leaves_ + w) >> 1; node >= 1; node >>= 1) {
    const std::uint32_t l = losers[node];
    const PackedEntry challenger = heads[l];
    const std::uint32_t swap = 0u - static_cast<std::uint32_t>(challenger < climbing);  // all ones or none
    const std::uint32_t both = (l ^ w) & swap;
    losers[node] = l ^ both;
    w ^= both;
    climbing = challenger < climbing ? challenger : climbing;
  }
  losers[0] = w;
}

std::optional<std::int64_t> ExplorerMove::average_rating() const {
  if (rated == 0) return std::nullopt;
  return std::int64_t((2 * rating_sum + rated) / (2 * rated));
}

void ExplorerTally::add(std::uint16_t code) { add(code, std::nullopt, GameMonth()); }

void ExplorerTally::add(std::uint16_t code, std::optional<int> rating, std::string_view date) {
  add(code, rating, GameMonth::of_date(date));
}

void ExplorerTally::add(std::uint16_t code, std::optional<int> rating, GameMonth month) {
  ExplorerMove m;
  m.move_bits = EntryCode::move_bits(code);
  m.games = 1;
  switch (EntryCode::result(code)) {
    case GameResult::kWhiteWins: m.white_wins = 1; break;
    case GameResult::kBlackWins: m.black_wins = 1; break;
    case GameResult::kDraw: m.draws = 1; break;
    case GameResult::kUnknown: break;
  }
  if (rating && *rating >= 0) {
    m.rated = 1;
    m.rating_sum = std::uint64_t(*rating);
  }
  m.last_played = month;
  add(m);
}

void ExplorerTally::add(const ExplorerMove& counted) {
  auto it = std::find_if(by_move_.begin(), by_move_.end(),
                         [&](const ExplorerMove& m) { return m.move_bits == counted.move_bits; });
  if (it == by_move_.end()) {
    by_move_.push_back(counted);
  } else {
    it->games += counted.games;
    it->white_wins += counted.white_wins;
    it->draws += counted.draws;
    it->black_wins += counted.black_wins;
    it->rated += counted.rated;
    it->rating_sum += counted.rating_sum;
    it->last_played = std::max(it->last_played, counted.last_played);
  }
  games_ += counted.games;
}

std::vector<ExplorerMove> ExplorerTally::moves() const {
  std::vector<ExplorerMove> sorted = by_move_;
  std::sort(sorted.begin(), sorted.end(), [](const ExplorerMove& a, const ExplorerMove& b) {
    return a.games != b.games ? a.games > b.games : a.move_bits < b.move_bits;
  });
  return sorted;
}

}  // namespace pgmate::gamedb
