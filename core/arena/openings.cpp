#include "arena/openings.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "chess/fen.h"
#include "chess/pgn.h"
#include "common/text.h"
#include "common/random.h"

namespace pgmate::arena {

std::vector<Opening> start_position_opening() {
  return {Opening{"startpos", chess::parse_fen("startpos"), {}}};
}

std::vector<Opening> parse_epd_openings(std::string_view text) {
  std::vector<Opening> out;
  int line_number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    // EPD: four FEN fields, then operations ("id \"name\";"); clocks default to 0 1.
    std::istringstream fields(line);
    std::string placement, side, castling, ep;
    fields >> placement >> side >> castling >> ep;
    std::string rest;
    std::getline(fields, rest);
    std::string name = "line " + std::to_string(line_number);
    if (const std::size_t id = rest.find("id \""); id != std::string::npos) {
      const std::size_t end = rest.find('"', id + 4);
      if (end != std::string::npos) name = rest.substr(id + 4, end - id - 4);
    }
    try {
      out.push_back(Opening{name, chess::parse_fen(placement + " " + side + " " + castling + " " + ep + " 0 1"), {}});
    } catch (const std::exception& e) {
      throw std::invalid_argument("openings: EPD line " + std::to_string(line_number) + ": " + e.what());
    }
  }
  return out;
}

std::vector<Opening> parse_pgn_openings(std::string_view text) {
  std::vector<Opening> out;
  std::vector<chess::PgnGame> games;
  try {
    games = chess::parse_pgn(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("openings: ") + e.what());
  }
  for (const chess::PgnGame& g : games) {
    std::string name;
    if (const std::string* eco = g.tag("ECO")) name = *eco;
    if (const std::string* opening = g.tag("Opening")) name += (name.empty() ? "" : " ") + *opening;
    if (const std::string* variation = g.tag("Variation")) name += ": " + *variation;
    if (name.empty()) name = "game " + std::to_string(g.number);
    out.push_back(Opening{name, g.start, g.moves});
  }
  return out;
}

std::vector<Opening> read_openings_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("openings: cannot read " + quote_input(path, 200));
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const bool pgn = s.find("[") != std::string::npos || s.find("1.") != std::string::npos;
  std::vector<Opening> out = pgn ? parse_pgn_openings(s) : parse_epd_openings(s);
  if (out.empty()) throw std::invalid_argument("openings: " + quote_input(path, 200) + " holds no opening");
  return out;
}

void shuffle_openings(std::vector<Opening>& openings, std::uint64_t seed) {
  mcts::Rng rng(mcts::mix64(seed ^ 0x6f70656e696e6773ULL));
  for (std::size_t i = openings.size(); i > 1; --i) std::swap(openings[i - 1], openings[rng.below(std::uint32_t(i))]);
}

}  // namespace pgmate::arena
