// Evaluation throughput of pgmate-worker alone (no SQL): loads a fresh network with the
// given configuration, then times evaluate() at each batch size.
// Usage: worker_eval_client [--alternate] [--connections C] [--seconds S] SOCKET CONFIG_JSON BATCH [BATCH ...]
// Prints one line per batch size: "batch N: P positions/s (T ms per call)", then with
// --connections the worker's mean batch over that size's calls: "..., mean batch M".
// --connections C: C connections call at once (C x N positions in flight, so the worker can
// merge them and overlap one batch's host work with another's GPU work).
// --seconds S: time each batch size for at least S seconds (default 0: 256 positions' worth).
// --alternate: two networks of that configuration, calls alternating between them, against
// calls to one network in the same run; prints both rates, their ratio, what one load of
// the weights costs, and how many loads the worker made (2 when it holds both).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "link/worker_client.h"

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
  bool alternate = false;
  int connections = 1;
  double min_seconds = 0;
  const char* program = argv[0];
  for (;;) {
    if (argc > 1 && std::strcmp(argv[1], "--alternate") == 0) {
      alternate = true;
      --argc;
      ++argv;
    } else if (argc > 2 && std::strcmp(argv[1], "--connections") == 0) {
      connections = std::max(1, std::atoi(argv[2]));
      argc -= 2;
      argv += 2;
    } else if (argc > 2 && std::strcmp(argv[1], "--seconds") == 0) {
      min_seconds = std::atof(argv[2]);
      argc -= 2;
      argv += 2;
    } else {
      break;
    }
  }
  if (argc < 4 || (alternate && connections > 1)) {
    std::fprintf(stderr, "usage: %s [--alternate | --connections C] [--seconds S] SOCKET CONFIG_JSON BATCH [BATCH ...]\n",
                 program);
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
      long made = 0;
      for (; made < calls || seconds_since(t0) < min_seconds; ++made)
        client.evaluate(inputs, both && made % 2 ? second : first);
      return batch * made / seconds_since(t0);
    };
    if (connections > 1) {
      // C clients call at once until the time is up; the worker's counters give its batches.
      std::vector<worker::WorkerClient> clients;
      for (int c = 0; c < connections; ++c) clients.emplace_back(options);
      for (auto& c : clients) c.evaluate(inputs, first);  // warm-up
      const long batches0 = status_number(client.status_json(), "batches_run");
      const long positions0 = status_number(client.status_json(), "positions_evaluated");
      std::atomic<long> positions{0};
      const auto t0 = std::chrono::steady_clock::now();
      const double seconds = std::max(min_seconds, 0.2);
      std::vector<std::thread> threads;
      for (auto& c : clients)
        threads.emplace_back([&, &c = c] {
          while (seconds_since(t0) < seconds) {
            c.evaluate(inputs, first);
            positions += batch;
          }
        });
      for (auto& t : threads) t.join();
      const double r = positions / seconds_since(t0);
      const long batches = status_number(client.status_json(), "batches_run") - batches0;
      const long worker_positions = status_number(client.status_json(), "positions_evaluated") - positions0;
      std::printf("batch %d: %.1f positions/s (%.2f ms per call), mean batch %.1f\n", batch, r,
                  1000.0 * batch * connections / r, batches > 0 ? double(worker_positions) / double(batches) : 0.0);
    } else if (!alternate) {
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
