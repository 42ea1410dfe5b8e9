// pgmate-worker on a GPU, as PostgreSQL and the CLI use it: the real binary on a private
// Unix socket, asked over the protocol. One worker runs with --device cuda, another with
// --device cpu; the same network and positions must give the same answers (fp32), and GPU
// perft the CPU's counts. Skipped when the worker sees no CUDA device.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checkers/fen.h"
#include "checkers/perft.h"
#include "chess/fen.h"
#include "chess/movegen.h"
#include "link/worker_client.h"

extern char** environ;

namespace {

using namespace pgmate;
using worker::WorkerClient;

// A pgmate-worker child process serving a socket in a fresh temporary directory.
class WorkerProcess {
 public:
  explicit WorkerProcess(const std::vector<std::string>& extra) {
    char dir_template[] = "/tmp/pgmate-gpu-test-XXXXXX";
    dir_ = mkdtemp(dir_template);
    socket_ = dir_ + "/worker.sock";
    std::vector<std::string> args = {PGMATE_WORKER_BIN, "--socket", socket_, "--max-weights-mb", "256"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    for (int i = 0; i < 600 && pid_ > 0 && !std::filesystem::exists(socket_); ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {  // it could not start
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~WorkerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  WorkerClient connect() const {
    worker::ClientOptions options;
    options.address = socket_;
    options.request_timeout = std::chrono::minutes(5);
    return WorkerClient(options);
  }

 private:
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

std::vector<chess::Board> random_positions(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<chess::Board> positions;
  chess::Board b = chess::parse_fen("startpos");
  while (int(positions.size()) < n) {
    chess::MoveList list;
    chess::legal_moves(b, list);
    if (list.size == 0 || b.halfmove > 50) {
      b = chess::parse_fen("startpos");
      continue;
    }
    b.play(list.moves[rng() % list.size]);
    positions.push_back(b);
  }
  return positions;
}

class WorkerOnGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gpu_ = new WorkerProcess({"--device", "cuda", "--precision", "fp32"});
  }
  static void TearDownTestSuite() {
    delete gpu_;
    gpu_ = nullptr;
  }
  void SetUp() override {
    try {
      WorkerClient client = gpu_->connect();
      status_ = client.status_json();
    } catch (const std::exception& e) {
      GTEST_SKIP() << "pgmate-worker --device cuda did not start (no CUDA LibTorch or no device): " << e.what();
    }
  }
  static WorkerProcess* gpu_;
  std::string status_;
};
WorkerProcess* WorkerOnGpu::gpu_ = nullptr;

TEST_F(WorkerOnGpu, StatusNamesTheGpu) {
  EXPECT_NE(status_.find("\"device\":\"cuda:0 fp32"), std::string::npos) << status_;
  // The GPU encoder is built with the CUDA kernels and is the default there.
  EXPECT_NE(status_.find("\"input_encoding\":\"device\""), std::string::npos) << status_;
  std::printf("worker status: %s\n", status_.c_str());
}

TEST_F(WorkerOnGpu, EvaluatesAsTheCpuWorkerDoes) {
  WorkerProcess cpu({"--device", "cpu"});
  WorkerClient on_gpu = gpu_->connect(), on_cpu = cpu.connect();
  for (const std::string config : {std::string(R"({"filters":32,"blocks":2})"), std::string("{}")}) {
    SCOPED_TRACE(config);
    const std::string weights = on_cpu.init_network_weights(config, 5);
    worker::NetworkKey key;
    key.id = 1;
    key.sha256.fill(config.size() % 251);
    on_gpu.load_network(key, config, weights);
    on_cpu.load_network(key, config, weights);
    const std::vector<chess::Board> boards = random_positions(300, 9);
    std::vector<worker::EvalInput> inputs(boards.size());
    for (std::size_t i = 0; i < boards.size(); ++i) {
      inputs[i].history.push_back(boards[i]);
      if (i > 0 && i % 3) inputs[i].history.push_back(boards[i - 1]);  // some with history
      inputs[i].repetitions = int(i % 3);
    }
    const worker::EvalReply a = on_gpu.evaluate(inputs, key), b = on_cpu.evaluate(inputs, key);
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.outputs.size(); ++i) {
      const auto &x = a.outputs[i], &y = b.outputs[i];
      ASSERT_EQ(x.moves, y.moves) << "position " << i;
      worst = std::max({worst, double(std::fabs(x.win - y.win)), double(std::fabs(x.draw - y.draw)),
                        double(std::fabs(x.loss - y.loss))});
      ASSERT_EQ(x.priors.size(), y.priors.size());
      for (std::size_t k = 0; k < x.priors.size(); ++k) worst = std::max(worst, double(std::fabs(x.priors[k] - y.priors[k])));
    }
    EXPECT_LT(worst, 1e-4);
    std::printf("[ %s ] worker on the GPU vs on the CPU: max |difference| %.3g over %zu positions\n", config.c_str(),
                worst, a.outputs.size());
  }
}

TEST_F(WorkerOnGpu, PerftOnTheGpuCountsAsTheCpu) {
  WorkerClient client = gpu_->connect();
  struct Case {
    const char* fen;
    int depth;
    std::uint64_t nodes;
  };
  const Case cases[] = {
      {"startpos", 6, 119060324ull},
      {"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 5, 193690690ull},
      {"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 7, 178633661ull},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fen);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(client.perft(chess::parse_fen(c.fen), c.depth, worker::Device::kGpu), c.nodes);
    std::printf("GPU perft %s depth %d: %.3f s\n", c.fen, c.depth,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const checkers::Board start = checkers::parse_fen("startpos");
  EXPECT_EQ(client.checkers_perft(start, 12, checkers::CaptureRule::kAny, worker::Device::kGpu),
            checkers::perft_parallel(start, 12, checkers::CaptureRule::kAny, 8));
}

TEST_F(WorkerOnGpu, LegalMovesBatchAsTheCpu) {
  WorkerClient client = gpu_->connect();
  const std::vector<chess::Board> boards = random_positions(2000, 3);
  const auto moves = client.legal_moves_batch(boards);
  ASSERT_EQ(moves.size(), boards.size());
  for (std::size_t i = 0; i < boards.size(); ++i) {
    chess::MoveList list;
    chess::legal_moves(boards[i], list);
    EXPECT_EQ(moves[i], std::vector<chess::Move>(list.begin(), list.end())) << chess::to_fen(boards[i]);
  }
}

}  // namespace
