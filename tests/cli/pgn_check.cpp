// pgn_check FILE: reads FILE with the PGN reader pgmate import uses (every move checked)
// and prints "N games"; exit 1 with the reader's message at the first bad game.
#include <fstream>
#include <iostream>

#include "chess/pgn.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: pgn_check FILE.pgn\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "pgn_check: cannot open " << argv[1] << "\n";
    return 2;
  }
  pgmate::chess::PgnReader reader;
  pgmate::chess::PgnGame game;
  long games = 0;
  try {
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      reader.feed(std::string_view(buf, size_t(in.gcount())));
      while (reader.next(game)) ++games;
    }
    reader.finish();
    while (reader.next(game)) ++games;
  } catch (const std::exception& e) {
    std::cerr << "pgn_check: " << e.what() << "\n";
    return 1;
  }
  std::cout << games << " games\n";
  return 0;
}
