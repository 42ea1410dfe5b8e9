#include "chess/synthetic_tags.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace pgmate::chess {

namespace {

// 64 x 64 names: every (surname, given name) pair is one player.
constexpr std::array<const char*, 64> kSurnames = {
    "Andersen",  "Bauer",     "Becker",    "Bianchi",   "Novak",     "Carlsen",   "Castro",    "Chen",
    "Costa",     "Dubois",    "Eriksson",  "Fischer",   "Fontaine",  "Garcia",    "Gomez",     "Gupta",
    "Hansen",    "Hoffmann",  "Horvath",   "Ivanov",    "Jansen",    "Kaminski",  "Kim",       "Kovacs",
    "Kowalski",  "Kuznetsov", "Larsen",    "Lefebvre",  "Lindqvist", "Lopez",     "Martin",    "Meyer",
    "Moreau",    "Morozov",   "Nielsen",   "Nowak",     "Olsen",     "Papadopoulos", "Petrov", "Popescu",
    "Rao",       "Rossi",     "Ruiz",      "Santos",    "Schmidt",   "Schneider", "Sharma",    "Silva",
    "Smirnov",   "Sokolov",   "Suzuki",    "Szabo",     "Tanaka",    "Varga",     "Volkov",    "Wagner",
    "Wang",      "Weber",     "Wojcik",    "Yilmaz",    "Zhang",     "Zielinski", "Nakamura",  "Okafor"};
constexpr std::array<const char*, 64> kGivenNames = {
    "Adam",   "Alexei",  "Alice",   "Ana",    "Anders", "Anna",    "Arjun",   "Boris",  "Carla",   "Carlos",
    "Chen",   "Clara",   "Daniel",  "David",  "Dmitri", "Elena",   "Emil",    "Erik",   "Eva",     "Fatima",
    "Felix",  "Hana",    "Hugo",    "Igor",   "Irina",  "Ivan",    "Jan",     "Julia",  "Kai",     "Karin",
    "Lars",   "Laura",   "Lei",     "Lena",   "Leon",   "Lucas",   "Magnus",  "Maria",  "Marta",   "Mateo",
    "Maxim",  "Mei",     "Mikhail", "Nadia",  "Nikola", "Nina",    "Olga",    "Omar",   "Pablo",   "Paula",
    "Peter",  "Priya",   "Rafael",  "Rahul",  "Sara",   "Sergei",  "Sofia",   "Stefan", "Tamara",  "Tomas",
    "Vera",   "Viktor",  "Yuki",    "Zoran"};

struct City {
  const char* name;
  const char* country;  // FIDE federation code, as Site tags write it
};
constexpr std::array<City, 40> kCities = {{
    {"Amsterdam", "NED"}, {"Athens", "GRE"},     {"Baku", "AZE"},      {"Barcelona", "ESP"}, {"Belgrade", "SRB"},
    {"Berlin", "GER"},    {"Biel", "SUI"},       {"Bucharest", "ROU"}, {"Budapest", "HUN"},  {"Buenos Aires", "ARG"},
    {"Chennai", "IND"},   {"Copenhagen", "DEN"}, {"Dortmund", "GER"},  {"Dubai", "UAE"},     {"Gibraltar", "GIB"},
    {"Hastings", "ENG"},  {"Helsinki", "FIN"},   {"Istanbul", "TUR"},  {"Kolkata", "IND"},   {"Krakow", "POL"},
    {"Lisbon", "POR"},    {"London", "ENG"},     {"Madrid", "ESP"},    {"Montreal", "CAN"},  {"Moscow", "RUS"},
    {"Oslo", "NOR"},      {"Paris", "FRA"},      {"Prague", "CZE"},    {"Reykjavik", "ISL"}, {"Riga", "LAT"},
    {"Rome", "ITA"},      {"Saint Louis", "USA"}, {"Sao Paulo", "BRA"}, {"Shanghai", "CHN"}, {"Sofia", "BUL"},
    {"Stockholm", "SWE"}, {"Tbilisi", "GEO"},    {"Tokyo", "JPN"},     {"Vienna", "AUT"},    {"Wijk aan Zee", "NED"},
}};
constexpr std::array<const char*, 8> kEventKinds = {"Open",    "Championship", "Masters",     "Festival",
                                                    "Cup",     "Rapid",        "Invitational", "Memorial"};
constexpr int kDaysInMonth[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

constexpr int kMinRating = 1200, kMaxRating = 2800, kDayJitter = 20;

std::vector<SyntheticPlayer> build_pool() {
  static_assert(kSurnames.size() * kGivenNames.size() == kSyntheticPlayers);
  std::vector<SyntheticPlayer> pool(kSyntheticPlayers);
  for (int p = 0; p < kSyntheticPlayers; ++p) {
    // An odd multiplier permutes 0..4095, so names are unique and unrelated to strength.
    const unsigned q = (unsigned(p) * 2654435761u) & (kSyntheticPlayers - 1);
    pool[p].name = std::string(kSurnames[q >> 6]) + ", " + kGivenNames[q & 63];
    // Seeded by the player alone: the pool does not depend on a corpus's seed.
    mcts::Rng rng(0x706c6179657273ULL + std::uint64_t(p));
    int rating;
    do rating = int(std::lround(1850 + 330 * rng.normal()));
    while (rating < kMinRating + kDayJitter || rating > kMaxRating - kDayJitter);
    pool[p].rating = rating;
  }
  std::stable_sort(pool.begin(), pool.end(),
                   [](const SyntheticPlayer& a, const SyntheticPlayer& b) { return a.rating < b.rating; });
  return pool;
}

}  // namespace

const SyntheticPlayer& synthetic_player(int rank) {
  static const std::vector<SyntheticPlayer> pool = build_pool();
  return pool[std::clamp(rank, 0, kSyntheticPlayers - 1)];
}

GameHeader synthetic_header(mcts::Rng& rng, int first_year, int last_year) {
  // Opponents near each other in the rating list (130 points apart on average): an open
  // tournament's pairings, not a lottery.
  const int white = int(rng.below(kSyntheticPlayers));
  int offset = int(std::lround(rng.normal() * 600));
  if (offset == 0) offset = rng.below(2) ? 1 : -1;
  int black = white + offset;
  if (black < 0) black = -black;
  if (black >= kSyntheticPlayers) black = 2 * (kSyntheticPlayers - 1) - black;
  black = std::clamp(black, 0, kSyntheticPlayers - 1);
  if (black == white) black = white == 0 ? 1 : white - 1;

  GameHeader h;
  h.white_elo = synthetic_player(white).rating + int(rng.below(2 * kDayJitter + 1)) - kDayJitter;
  h.black_elo = synthetic_player(black).rating + int(rng.below(2 * kDayJitter + 1)) - kDayJitter;

  const int year = first_year + int(rng.below(std::uint32_t(std::max(1, last_year - first_year + 1))));
  const int month = 1 + int(rng.below(12));
  const int day = 1 + int(rng.below(std::uint32_t(kDaysInMonth[month - 1])));
  char date[48];
  std::snprintf(date, sizeof date, "%04d.%02d.%02d", year, month, day);
  const City& city = kCities[rng.below(kCities.size())];
  const char* kind = kEventKinds[rng.below(kEventKinds.size())];

  h.tags = {{"Event", std::string(city.name) + " " + kind + " " + std::to_string(year)},
            {"Site", std::string(city.name) + " " + city.country},
            {"Date", date},
            {"Round", std::to_string(1 + rng.below(9))},
            {"White", synthetic_player(white).name},
            {"Black", synthetic_player(black).name},
            {"WhiteElo", std::to_string(h.white_elo)},
            {"BlackElo", std::to_string(h.black_elo)}};
  return h;
}

}  // namespace pgmate::chess
