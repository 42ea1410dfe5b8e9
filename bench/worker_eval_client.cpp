// Evaluation throughput of pgmate-worker alone (no SQL): loads a fresh network with the
// given configuration, then times evaluate() at each batch size.
// Usage: worker_eval_client [--alternate] SOCKET CONFIG_JSON BATCH [BATCH ...]
// Prints one line per batch size: "batch N: P positions/s (T ms per call)".
// --alternate: two networks of that configuration, calls alternating between them, against
// calls to one network in the same run; prints both rates, their ratio, what one load of
// the weights costs, and how many loads the worker made (2 when it holds both).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "client/worker_client.h"

using namespace pgmate;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Positions from random games, so batches hold varied boards.
std::vector<chess::Board> random_positions() {
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
  return positions;
}

// The number after "key": in the worker's status JSON.
long status_number(const std::string& json, const char* key) {
  const std::string k = std::string("\"") + key + "\":";
  const auto at = json.find(k);
  return at == std::string::npos ? -1 : std::atol(json.c_str() + at + k.size());
}

}  // namespace

int main(int argc, char** argv) {
  const bool alternate = argc > 1 && std::strcmp(argv[1], "--alternate") == 0;
  if (alternate) {
    --argc;
    ++argv;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s [--alternate] SOCKET CONFIG_JSON BATCH [BATCH ...]\n", argv[0]);
    return 2;
  }
  worker::ClientOptions options;
  options.address = argv[1];
  options.request_timeout = std::chrono::minutes(10);
  worker::WorkerClient client(options);
  const std::string config = argv[2];
  worker::NetworkKey first, second;
  first.id = 1;
  second.id = 2;
  second.sha256.fill(2);
  const std::string weights = client.init_network_weights(config, 1);
  auto t_load = std::chrono::steady_clock::now();
  client.load_network(first, config, weights);
  const double load_seconds = seconds_since(t_load);
  if (alternate) client.load_network(second, config, client.init_network_weights(config, 2));

  const std::vector<chess::Board> positions = random_positions();
  for (int i = 3; i < argc; ++i) {
    const int batch = std::atoi(argv[i]);
    std::vector<worker::EvalInput> inputs(batch);
    for (int k = 0; k < batch; ++k) inputs[k].history = {positions[k % positions.size()]};
    const int calls = std::max(2, 256 / batch);
    auto rate = [&](bool both) {
      client.evaluate(inputs, first);  // warm-up
      if (both) client.evaluate(inputs, second);
      const auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) client.evaluate(inputs, both && c % 2 ? second : first);
      return batch * calls / seconds_since(t0);
    };
    if (!alternate) {
      const double r = rate(false);
      std::printf("batch %d: %.1f positions/s (%.2f ms per call)\n", batch, r, 1000.0 * batch / r);
    } else {
      const double one = rate(false), two = rate(true);
      std::printf("batch %d: one network %.1f positions/s, two alternating %.1f positions/s, ratio %.2f; "
                  "a load costs %.1f ms (%.1f calls' worth)\n",
                  batch, one, two, two / one, 1000 * load_seconds, load_seconds * one / batch);
    }
    std::fflush(stdout);
  }
  if (alternate) std::printf("network loads by the worker: %ld\n", status_number(client.status_json(), "network_loads"));
  return 0;
}
