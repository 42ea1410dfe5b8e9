// Evaluation throughput of pgmate-worker alone (no SQL): loads a fresh network with the
// given configuration, then times evaluate() at each batch size.
// Usage: worker_eval_client SOCKET CONFIG_JSON BATCH [BATCH ...]
// Prints one line per batch size: "batch N: P positions/s (T ms per call)".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "client/worker_client.h"

using namespace pgmate;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SOCKET CONFIG_JSON BATCH [BATCH ...]\n", argv[0]);
    return 2;
  }
  worker::ClientOptions options;
  options.address = argv[1];
  options.request_timeout = std::chrono::minutes(10);
  worker::WorkerClient client(options);
  const std::string config = argv[2];
  worker::NetworkKey network;
  network.id = 1;
  client.load_network(network, config, client.init_network_weights(config, 1));

  // Positions from random games, so batches hold varied boards.
  std::mt19937 rng(1);
  std::vector<chess::Board> positions;
  chess::Board b = chess::parse_fen("startpos");
  while (positions.size() < 4096) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    if (list.size == 0 || b.halfmove > 60) {
      b = chess::parse_fen("startpos");
      continue;
    }
    b.play(list.moves[rng() % list.size]);
    positions.push_back(b);
  }
  for (int i = 3; i < argc; ++i) {
    const int batch = std::atoi(argv[i]);
    std::vector<worker::EvalInput> inputs(batch);
    for (int k = 0; k < batch; ++k) inputs[k].history = {positions[k % positions.size()]};
    client.evaluate(inputs, network);  // warm-up
    const int calls = std::max(2, 256 / batch);
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) client.evaluate(inputs, network);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("batch %d: %.1f positions/s (%.2f ms per call)\n", batch, batch * calls / secs, 1000 * secs / calls);
    std::fflush(stdout);
  }
  return 0;
}
