#include "gamedb/position_counts.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "gamedb/position_index.h"

namespace pgmate::gamedb {

namespace {

constexpr std::array<std::string_view, kSpeedCodes> kSpeedNames = {"",      "ultraBullet", "bullet",        "blitz",
                                                                   "rapid", "classical",   "correspondence"};
constexpr char kMagic[4] = {'P', 'C', 'N', '2'};
constexpr char kMagicWithoutTop[4] = {'P', 'C', 'N', '1'};


bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
int number(std::string_view s) {
  int n = 0;
  for (char c : s) n = n * 10 + (c - '0');
  return n;
}

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

std::uint64_t get_varint(const unsigned char*& p, const unsigned char* end) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) throw std::invalid_argument("position counts: truncated");
    const unsigned char b = *p++;
    v |= std::uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return v;
  }
  throw std::invalid_argument("position counts: a number longer than 64 bits");
}

}  // namespace

bool ranks_above(const TopGame& a, const TopGame& b) {
  return a.rating != b.rating ? a.rating > b.rating : a.game < b.game;
}

std::optional<std::uint8_t> speed_code(std::string_view name) {
  for (std::size_t i = 0; i < kSpeedNames.size(); ++i)
    if (kSpeedNames[i] == name) return std::uint8_t(i);
  return std::nullopt;
}

std::uint8_t rating_band(std::optional<int> average_rating) {
  if (!average_rating || *average_rating < 0) return kUnrated;
  std::size_t band = 0;
  while (band + 1 < kRatingBands.size() && *average_rating >= kRatingBands[band + 1]) ++band;
  return std::uint8_t(band);
}

GameMonth GameMonth::of_date(std::string_view date) {
  if (date.size() < 4 || !digits(date.substr(0, 4))) return GameMonth();
  const int year = number(date.substr(0, 4));
  int month = 0;
  if (date.size() >= 7 && date[4] == '.' && digits(date.substr(5, 2))) {
    month = number(date.substr(5, 2));
    if (month < 1 || month > 12) month = 0;
  }
  return GameMonth(std::uint32_t(year + 1) * 13 + std::uint32_t(month));
}

std::string GameMonth::text() const {
  if (!known()) return "";
  std::string y = std::to_string(year());
  y.insert(0, 4 - std::min<std::size_t>(4, y.size()), '0');
  if (month() == 0) return y + ".??";
  return y + (month() < 10 ? ".0" : ".") + std::to_string(month());
}

std::optional<MonthBound> MonthBound::parse(std::string_view text) {
  if (text.size() == 4 && digits(text)) return MonthBound{number(text), 0};
  if (text.size() == 7 && digits(text.substr(0, 4)) && text[4] == '.' && digits(text.substr(5, 2))) {
    const int month = number(text.substr(5, 2));
    if (month >= 1 && month <= 12) return MonthBound{number(text.substr(0, 4)), month};
  }
  return std::nullopt;
}

bool MonthBound::at_or_before(GameMonth m) const {
  if (!m.known()) return false;
  if (m.year() != year || month == 0) return m.year() >= year;
  return m.month() != 0 && m.month() >= month;
}

bool MonthBound::at_or_after(GameMonth m) const {
  if (!m.known()) return false;
  if (m.year() != year || month == 0) return m.year() <= year;
  return m.month() != 0 && m.month() <= month;
}

bool CountFilter::passes(std::uint8_t speed, std::uint8_t band, GameMonth month) const {
  if (speeds != 0 && !(speeds & (1u << speed))) return false;
  if (bands && (band == kUnrated || band < bands->first || band > bands->second)) return false;
  if (since && !since->at_or_before(month)) return false;
  if (until && !until->at_or_after(month)) return false;
  return true;
}

std::optional<std::pair<std::uint8_t, std::uint8_t>> CountFilter::bands_of(std::optional<std::int64_t> min_rating,
                                                                           std::optional<std::int64_t> max_rating) {
  // A rating is 0 to 9999 (four digits at most): limits beyond that cut no band.
  constexpr std::int64_t kTop = 9999;
  std::uint8_t first = 0, last = std::uint8_t(kRatingBands.size() - 1);
  if (min_rating && *min_rating > 0) {
    if (*min_rating > kTop) return std::pair<std::uint8_t, std::uint8_t>{1, 0};
    const auto at = std::find(kRatingBands.begin(), kRatingBands.end(), *min_rating);
    if (at == kRatingBands.end()) return std::nullopt;
    first = std::uint8_t(at - kRatingBands.begin());
  }
  if (max_rating && *max_rating < kTop) {
    if (*max_rating < 0) return std::pair<std::uint8_t, std::uint8_t>{1, 0};
    const auto at = std::find(kRatingBands.begin() + 1, kRatingBands.end(), *max_rating + 1);
    if (at == kRatingBands.end()) return std::nullopt;
    last = std::uint8_t(at - kRatingBands.begin() - 1);
  }
  return std::pair{first, last};
}

std::uint64_t PositionCounts::key(std::uint16_t move, std::uint8_t speed, std::uint8_t band, GameMonth month) {
  return std::uint64_t(move) << 32 | std::uint64_t(speed & 0xF) << 28 | std::uint64_t(band & 0xF) << 24 |
         (month.code() & 0xFFFFFF);
}

void PositionCounts::add(std::uint16_t code, const GameFacts& facts, int sign) {
  const std::uint8_t band = rating_band(facts.rating);
  Cell& c = cells_[key(EntryCode::move_bits(code), facts.speed, band, facts.month)];
  c.games += sign;
  switch (EntryCode::result(code)) {
    case GameResult::kWhiteWins: c.white_wins += sign; break;
    case GameResult::kBlackWins: c.black_wins += sign; break;
    case GameResult::kDraw: c.draws += sign; break;
    case GameResult::kUnknown: break;
  }
  if (band != kUnrated) c.rating_sum += sign * std::int64_t(*facts.rating);
  if (sign > 0 && band != kUnrated) offer({facts.game, *facts.rating});
  if (sign < 0) {
    take_away(facts.game);
    removed_.push_back(facts.game);
  }
}

void PositionCounts::offer(const TopGame& g) {
  if (!top_whole_) return;  // a game better than the best kept may be missing already
  if (std::any_of(top_.begin(), top_.end(), [&](const TopGame& t) { return t.game == g.game; })) return;
  top_.insert(std::upper_bound(top_.begin(), top_.end(), g, ranks_above), g);
  if (top_.size() > kTopGames) top_.pop_back();
}

void PositionCounts::take_away(std::uint32_t game) {
  const auto at = std::find_if(top_.begin(), top_.end(), [&](const TopGame& t) { return t.game == game; });
  if (at == top_.end()) return;
  // A full list loses a game whose successor is not known; a shorter one held every rated game.
  if (top_.size() == kTopGames) top_whole_ = false;
  top_.erase(at);
}

std::optional<std::vector<TopGame>> PositionCounts::top_games() const {
  if (!top_whole_) return std::nullopt;
  return top_;
}

void PositionCounts::add(const PositionCounts& other) {
  for (const std::uint32_t game : other.removed_) take_away(game);
  if (!other.top_whole_) top_whole_ = false;
  for (const TopGame& g : other.top_) offer(g);
  for (const auto& [k, o] : other.cells_) {
    Cell& c = cells_[k];
    c.games += o.games;
    c.white_wins += o.white_wins;
    c.draws += o.draws;
    c.black_wins += o.black_wins;
    c.rating_sum += o.rating_sum;
  }
}

std::string PositionCounts::encode() const {
  std::vector<std::pair<std::uint64_t, Cell>> cells;
  for (const auto& [k, c] : cells_) {
    if (c.games < 0 || c.white_wins < 0 || c.draws < 0 || c.black_wins < 0 || c.rating_sum < 0 ||
        c.white_wins + c.draws + c.black_wins > c.games)
      throw std::invalid_argument("position counts: a cell below zero (a game taken away that was never counted)");
    if (c.games > 0) cells.emplace_back(k, c);
  }
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out(kMagic, sizeof kMagic);
  put_varint(out, cells.size());
  std::uint64_t before = 0;
  for (const auto& [k, c] : cells) {
    put_varint(out, k - before);
    before = k;
    for (std::int64_t v : {c.games, c.white_wins, c.draws, c.black_wins, c.rating_sum}) put_varint(out, std::uint64_t(v));
  }
  put_varint(out, top_whole_ ? 1 : 0);
  put_varint(out, top_.size());
  for (const TopGame& g : top_) {
    put_varint(out, g.game);
    put_varint(out, std::uint64_t(std::max(g.rating, 0)));
  }
  return out;
}

PositionCounts PositionCounts::decode(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  if (size < sizeof kMagic ||
      (std::memcmp(p, kMagic, sizeof kMagic) != 0 && std::memcmp(p, kMagicWithoutTop, sizeof kMagic) != 0))
    throw std::invalid_argument("position counts: not format 2 or 1 (magic PCN2, PCN1)");
  const bool with_top = std::memcmp(p, kMagic, sizeof kMagic) == 0;
  p += sizeof kMagic;
  const std::uint64_t n = get_varint(p, end);
  if (n > size) throw std::invalid_argument("position counts: more cells than bytes");
  PositionCounts counts;
  counts.cells_.reserve(n);
  std::uint64_t k = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t delta = get_varint(p, end);
    if (i > 0 && delta == 0) throw std::invalid_argument("position counts: cells out of order");
    k += delta;
    Cell c;
    for (std::int64_t* v : {&c.games, &c.white_wins, &c.draws, &c.black_wins, &c.rating_sum}) {
      const std::uint64_t x = get_varint(p, end);
      if (x > std::uint64_t(INT64_MAX)) throw std::invalid_argument("position counts: a count out of range");
      *v = std::int64_t(x);
    }
    counts.cells_.emplace(k, c);
  }
  counts.top_whole_ = false;
  if (with_top) {
    const std::uint64_t whole = get_varint(p, end), games = get_varint(p, end);
    if (whole > 1 || games > kTopGames) throw std::invalid_argument("position counts: bad top games");
    counts.top_whole_ = whole == 1;
    for (std::uint64_t i = 0; i < games; ++i) {
      const std::uint64_t game = get_varint(p, end), rating = get_varint(p, end);
      if (game > UINT32_MAX || rating > 100000) throw std::invalid_argument("position counts: bad top games");
      const TopGame g{std::uint32_t(game), int(rating)};
      if (!counts.top_.empty() && !ranks_above(counts.top_.back(), g))
        throw std::invalid_argument("position counts: top games out of order");
      counts.top_.push_back(g);
    }
  }
  if (p != end) throw std::invalid_argument("position counts: bytes after the last cell");
  return counts;
}

std::int64_t PositionCounts::games() const {
  std::int64_t n = 0;
  for (const auto& [k, c] : cells_) n += c.games;
  return n;
}

void PositionCounts::tally(const CountFilter& filter, ExplorerTally& tally) const {
  for (const auto& [k, c] : cells_) {
    if (c.games <= 0) continue;
    const auto speed = std::uint8_t(k >> 28 & 0xF), band = std::uint8_t(k >> 24 & 0xF);
    const GameMonth month = GameMonth::of_code(std::uint32_t(k & 0xFFFFFF));
    if (!filter.passes(speed, band, month)) continue;
    ExplorerMove m;
    m.move_bits = std::uint16_t(k >> 32);
    m.games = std::uint64_t(c.games);
    m.white_wins = std::uint64_t(c.white_wins);
    m.draws = std::uint64_t(c.draws);
    m.black_wins = std::uint64_t(c.black_wins);
    m.rated = band == kUnrated ? 0 : std::uint64_t(c.games);
    m.rating_sum = std::uint64_t(c.rating_sum);
    m.last_played = month;
    tally.add(m);
  }
}

}  // namespace pgmate::gamedb
