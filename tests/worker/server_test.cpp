// The worker end to end, in process: a Server on a temporary Unix socket (and TCP) with a
// fake backend, and WorkerClient talking to it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <thread>

#include "../checkers/perft_counts.h"
#include "../checkers/playouts.h"
#include "checkers/fen.h"
#include "checkers/movegen.h"
#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/perft.h"
#include "link/worker_client.h"
#include "link/worker_evaluator.h"
#include "mcts/selfplay.h"
#include "link/protocol.h"
#include "link/socket_util.h"
#include "worker/server/server.h"
#include "worker_test_util.h"
#ifdef PGMATE_HAVE_CUDA
#include "worker/cuda/checkers_perft_kernel.h"
#include "worker/cuda/perft_kernel.h"
#endif

namespace pgmate::worker {
namespace {

using namespace std::chrono_literals;
using protocol::Bytes;
using protocol::ErrorCode;
using protocol::MessageType;
using testing::FakeBackend;
using testing::FakeState;
using testing::ms_since;
using testing::TempDir;

const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const char* kPosition3 = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const char* kPosition4 = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";

struct TestServer {
  TempDir dir;
  std::shared_ptr<FakeState> state = std::make_shared<FakeState>();
  ServerConfig config;
  std::unique_ptr<Server> server;
  std::mutex log_mutex;
  std::vector<std::string> logs;

  explicit TestServer(std::function<void(ServerConfig&)> tweak = nullptr) {
    config.socket_path = dir.file("worker.sock");
    config.threads = 4;
    config.batcher.deadline = std::chrono::microseconds(1000);
    config.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      logs.push_back(line);
    };
    if (tweak) tweak(config);
    server = std::make_unique<Server>(config, std::make_unique<FakeBackend>(state));
    server->start();
    client().load_network(testing::test_network(), testing::kTestNetworkConfig, testing::fake_weights());
  }
  ~TestServer() {
    if (server) server->stop();
  }
  ClientOptions options() const {
    ClientOptions o;
    o.address = config.socket_path;
    o.connect_timeout = 2000ms;
    o.request_timeout = 20000ms;
    return o;
  }
  WorkerClient client() const { return WorkerClient(options()); }
};

void expect_eval(const std::vector<EvalInput>& inputs, const std::vector<EvalOutput>& out) {
  ASSERT_EQ(out.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto want = testing::expected_result(inputs[i].history);
    EXPECT_EQ(out[i].win, want.win);
    EXPECT_EQ(out[i].draw, want.draw);
    EXPECT_EQ(out[i].loss, want.loss);
    EXPECT_EQ(out[i].moves, want.moves);
    EXPECT_EQ(out[i].priors, want.priors);
  }
}

std::vector<EvalInput> to_inputs(const std::vector<std::vector<chess::Board>>& histories) {
  std::vector<EvalInput> out;
  for (const auto& h : histories) out.push_back(EvalInput{h});
  return out;
}

std::vector<EvalOutput> eval(WorkerClient& client, const std::vector<EvalInput>& inputs,
                             const NetworkKey& network = testing::test_network()) {
  return client.evaluate(inputs, network).outputs;
}

// ---- raw sockets, for what a well-behaved client never sends ----

UniqueFd raw_unix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return UniqueFd();
  return fd;
}

UniqueFd raw_tcp(std::uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return UniqueFd();
  return fd;
}

void send_bytes(int fd, const Bytes& b) {
  std::size_t at = 0;
  while (at < b.size()) {
    const ssize_t n = send(fd, b.data() + at, b.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += std::size_t(n);
  }
}

// Reads exactly n bytes; false on EOF / error / 3 s without data.
bool recv_exact(int fd, std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 3000) <= 0) return false;
    const ssize_t r = recv(fd, out + got, n - got, 0);
    if (r <= 0) return false;
    got += std::size_t(r);
  }
  return true;
}

struct RawFrame {
  protocol::FrameHeader header;
  Bytes payload;
};

std::optional<RawFrame> recv_frame(int fd) {
  std::uint8_t h[protocol::kHeaderSize];
  if (!recv_exact(fd, h, sizeof h)) return std::nullopt;
  RawFrame f;
  f.header = protocol::decode_header(std::span<const std::uint8_t>(h, sizeof h));
  f.payload.resize(f.header.payload_length);
  if (!recv_exact(fd, f.payload.data(), f.payload.size())) return std::nullopt;
  return f;
}

protocol::ErrorReply expect_error(int fd) {
  auto f = recv_frame(fd);
  EXPECT_TRUE(f.has_value());
  if (!f) return {};
  EXPECT_EQ(f->header.type, MessageType::kError);
  if (f->header.type != MessageType::kError) return {};
  return protocol::decode_payload<protocol::ErrorReply>(f->payload);
}

bool closed_by_peer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 3000) <= 0) return false;
  std::uint8_t b;
  return recv(fd, &b, 1, 0) <= 0;
}

// ---- tests ----

TEST(WorkerServer, SocketFileIsPrivateAndRemovedOnStop) {
  auto ts = std::make_unique<TestServer>();
  struct stat st;
  ASSERT_EQ(lstat(ts->config.socket_path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string path = ts->config.socket_path;
  ts->server->stop();
  EXPECT_NE(lstat(path.c_str(), &st), 0) << "socket file left behind";
  ts->server.reset();
}

TEST(WorkerServer, RefusesASecondWorkerAndReplacesAStaleSocket) {
  TestServer ts;
  try {
    Server second(ts.config, std::make_unique<FakeBackend>(ts.state));
    ADD_FAILURE() << "a second worker started on the same socket";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another pgmate-worker"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ts.client().status_json().front(), '{');  // the first one still serves

  // A socket file nobody listens on (a worker that died) is replaced.
  TempDir dir;
  const std::string stale = dir.file("stale.sock");
  {
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, stale.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ServerConfig c = ts.config;
  c.socket_path = stale;
  {
    Server s(c, std::make_unique<FakeBackend>(std::make_shared<FakeState>()));
    s.start();
    ClientOptions o;
    o.address = stale;
    EXPECT_EQ(WorkerClient(o).status_json().front(), '{');
    s.stop();
  }
  // A path that is not a socket is left alone.
  const std::string file = dir.file("file");
  FILE* f = std::fopen(file.c_str(), "w");
  std::fclose(f);
  c.socket_path = file;
  EXPECT_THROW(Server(c, std::make_unique<FakeBackend>(std::make_shared<FakeState>())), std::runtime_error);
  struct stat st;
  EXPECT_EQ(lstat(file.c_str(), &st), 0);
}

TEST(WorkerServer, ConcurrentClientsGetBatchedAndTheirOwnResults) {
  TestServer ts([](ServerConfig& c) { c.batcher.deadline = std::chrono::microseconds(2000); });
  constexpr int kClients = 32, kRounds = 15;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t)
    threads.emplace_back([&, t] {
      try {
        WorkerClient client = ts.client();
        for (int r = 0; r < kRounds; ++r) {
          const auto inputs = to_inputs(testing::random_histories(977 * t + r, 1 + (t + r) % 3));
          expect_eval(inputs, eval(client, inputs));
        }
      } catch (const std::exception& e) {
        ++errors;
        ADD_FAILURE() << "client " << t << ": " << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, 0);
  const auto sizes = ts.state->sizes();
  int largest = 0, total = 0;
  for (int s : sizes) {
    largest = std::max(largest, s);
    total += s;
  }
  EXPECT_GT(largest, 1) << "the backend never saw a batch of more than one position";
  EXPECT_LT(sizes.size(), std::size_t(kClients * kRounds)) << "no request was merged with another";
  const std::string status = ts.client().status_json();
  EXPECT_NE(status.find("\"batches_run\":" + std::to_string(sizes.size())), std::string::npos) << status;
  EXPECT_NE(status.find("\"positions_evaluated\":" + std::to_string(total)), std::string::npos) << status;
  EXPECT_NE(status.find("\"device\":\"fake\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"connected_clients\":1"), std::string::npos) << status;
}

// While another client is connected and could still send, a lone request waits for the
// deadline, which then runs it.
TEST(WorkerServer, DeadlineFlushesALoneRequestWhileAnotherClientIsIdle) {
  TestServer ts([](ServerConfig& c) { c.batcher.deadline = std::chrono::microseconds(30000); });
  WorkerClient idle = ts.client();
  (void)idle.status_json();  // connected and answered: idle from here on
  WorkerClient client = ts.client();
  const auto inputs = to_inputs(testing::random_histories(11, 1));
  eval(client, inputs);  // warm up
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_eval(inputs, eval(client, inputs));
    best = std::min(best, ms_since(t0));
  }
  EXPECT_GE(best, 27.0);  // it did wait for the deadline
  EXPECT_LT(best, 2000.0);
  EXPECT_EQ(ts.state->sizes().back(), 1);
}

// When every connected client is waiting for an answer, nothing more can join the batch:
// it runs at once, whatever the deadline.
TEST(WorkerServer, ALoneClientsRequestRunsWithoutWaitingForTheDeadline) {
  TestServer ts([](ServerConfig& c) { c.batcher.deadline = std::chrono::microseconds(5000000); });
  const auto inputs = to_inputs(testing::random_histories(11, 1));
  WorkerClient client = ts.client();
  // The constructor's client may not be closed on the server's side yet: until it is, a
  // request still waits for the deadline. Its going is seen within moments.
  for (int i = 0; i < 100 && ts.server->connected_clients() > 1; ++i) std::this_thread::sleep_for(10ms);
  const auto t0 = std::chrono::steady_clock::now();
  expect_eval(inputs, eval(client, inputs));
  EXPECT_LT(ms_since(t0), 2500.0);  // half the deadline
  EXPECT_EQ(ts.state->sizes().back(), 1);
}

TEST(WorkerServer, EvaluateEdgeCases) {
  TestServer ts([](ServerConfig& c) { c.batcher.max_batch = 64; });
  WorkerClient client = ts.client();
  EXPECT_TRUE(eval(client, {}).empty());
  // Larger than a batch and than one request (the client splits at 8192 inputs).
  const auto big = to_inputs(testing::random_histories(3, 9000));
  expect_eval(big, eval(client, big));
  for (int s : ts.state->sizes()) EXPECT_LE(s, 64);
  // Positions without legal moves.
  const auto mate = chess::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
  const auto out = eval(client, {EvalInput{{mate}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].moves.empty());
  EXPECT_TRUE(out[0].priors.empty());
  // Bad inputs are refused before they leave the client.
  EXPECT_THROW(eval(client, {EvalInput{}}), WorkerError);
  EXPECT_THROW(eval(client, {EvalInput{std::vector<chess::Board>(5, mate)}}), WorkerError);
}

// A dead GPU context fails every later GPU call: the request gets a clear error, and the
// server stops by itself so that the process exits (status 3) and a fresh one starts.
TEST(WorkerServer, ALostDeviceStopsTheServer) {
  TestServer ts;
  WorkerClient client = ts.client();
  const auto inputs = to_inputs(testing::random_histories(4, 3));
  expect_eval(inputs, eval(client, inputs));
  EXPECT_FALSE(ts.server->device_lost());
  ts.state->lose_device = true;
  try {
    eval(client, inputs);
    ADD_FAILURE() << "no error after the device was lost";
  } catch (const WorkerError& e) {
    EXPECT_NE(std::string(e.what()).find("the worker restarts"), std::string::npos) << e.what();
  }
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::filesystem::exists(ts.config.socket_path) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(std::filesystem::exists(ts.config.socket_path)) << "the server went on serving";
  EXPECT_TRUE(ts.server->device_lost());
  std::lock_guard lock(ts.log_mutex);
  EXPECT_TRUE(std::any_of(ts.logs.begin(), ts.logs.end(),
                          [](const std::string& l) { return l.find("the GPU failed for good") != std::string::npos; }));
}

TEST(WorkerServer, PerftMatchesCore) {
  TestServer ts;
  WorkerClient client = ts.client();
  for (const char* fen : {"startpos", kKiwipete, kPosition3, kPosition4}) {
    const chess::Board b = chess::parse_fen(fen);
    for (int depth = 0; depth <= 4; ++depth)
      EXPECT_EQ(client.perft(b, depth, Device::kCpu), chess::perft(b, depth)) << fen << " depth " << depth;
    EXPECT_EQ(client.perft(b, 3), chess::perft(b, 3)) << fen;
  }
  // Deep enough to be split over the pool by root move.
  EXPECT_EQ(client.perft(chess::parse_fen(kPosition3), 6, Device::kCpu), 11030083u);
  EXPECT_THROW(client.perft(chess::parse_fen("startpos"), 21), WorkerError);

  std::string why = "built without CUDA";
  bool gpu = false;
#ifdef PGMATE_HAVE_CUDA
  gpu = gpu::cuda_device_available(&why);
#endif
  if (!gpu) {
    try {
      client.perft(chess::parse_fen("startpos"), 3, Device::kGpu);
      ADD_FAILURE() << "device=gpu accepted without a GPU";
    } catch (const WorkerError& e) {
      EXPECT_NE(std::string(e.what()).find("no GPU available"), std::string::npos) << e.what();
    }
  } else {
    EXPECT_EQ(client.perft(chess::parse_fen(kKiwipete), 4, Device::kGpu), 4085603u);
  }
  // The connection survives an ERROR reply.
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 2, Device::kAuto), 400u);
}

TEST(WorkerServer, AbandonedPerftIsCancelled) {
  TestServer ts;
  ClientOptions o = ts.options();
  o.request_timeout = 200ms;
  WorkerClient client(o);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    client.perft(chess::parse_fen("startpos"), 12, Device::kCpu);  // would take hours
    ADD_FAILURE() << "perft 12 returned";
  } catch (const WorkerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_LT(ms_since(t0), 1500);
  // The client closed its connection; the worker stops computing soon after.
  WorkerClient observer = ts.client();
  bool idle = false;
  for (int i = 0; i < 300 && !idle; ++i) {
    idle = observer.status_json().find("\"perft_running\":0") != std::string::npos;
    if (!idle) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(idle) << observer.status_json();
}

// ---- checkers ----

constexpr checkers::CaptureRule kBothRules[] = {checkers::CaptureRule::kAny, checkers::CaptureRule::kLongest};

// Positions with kings: crafted ones (a king's loop, kings on every back-row square, a
// crowned man among men) and late positions of random games.
std::vector<checkers::Board> checkers_king_positions() {
  std::vector<checkers::Board> out;
  for (const char* fen : {"W:WK3,21:B12,K30", "W:WK22:B9,10,17,18", "B:W26,27:BK22", "B:WK1,K2,K3,K4:BK29,K30,K31,K32",
                          "W:W18,22,K25,27:B5,K9,11,14,K31"})
    out.push_back(checkers::parse_fen(fen));
  int taken = 0;
  for (const checkers::Board& b : checkers::testing::playout_positions(2024, 40))
    if (checkers::popcount(b.kings) >= 2 && checkers::has_legal_move(b) && ++taken % 7 == 0 && out.size() < 12)
      out.push_back(b);
  return out;
}

// One connection's deep perft is split into many short tasks, and the pool serves the
// connections in turn: another connection's small perft is answered while the deep one is
// still running (with first-come first-served it would wait for all of the deep one's tasks).
TEST(WorkerServer, PerftSharesThePoolBetweenConnections) {
  TestServer ts([](ServerConfig& c) { c.threads = 2; });
  std::atomic<bool> stop_deep{false}, deep_returned{false};
  struct Stopped {};
  std::thread deep([&] {
    ClientOptions o = ts.options();
    o.request_timeout = 600000ms;
    o.poll = [&] {
      if (stop_deep) throw Stopped{};
    };
    WorkerClient c(o);
    try {
      c.perft(chess::parse_fen(kKiwipete), 7, Device::kCpu);  // hundreds of seconds on two threads
    } catch (const Stopped&) {
    }
    deep_returned = true;
  });
  WorkerClient observer = ts.client();
  for (int i = 0; i < 500; ++i) {
    if (observer.status_json().find("\"perft_running\":2") != std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  ClientOptions o = ts.options();
  o.request_timeout = 120000ms;
  WorkerClient small(o);
  EXPECT_EQ(small.perft(chess::parse_fen("startpos"), 5, Device::kCpu), 4865609u);
  EXPECT_FALSE(deep_returned.load()) << "the deep perft ended first: the test proves nothing";
  stop_deep = true;
  deep.join();
}

TEST(WorkerServer, CheckersPerftMatchesCore) {
  TestServer ts;
  WorkerClient client = ts.client();
  const checkers::Board start = checkers::Board::start();
  for (auto rule : kBothRules) {
    // Depth 8 is split over the pool (CPU), the shallower ones run as one task.
    for (int depth = 0; depth <= 8; ++depth)
      EXPECT_EQ(client.checkers_perft(start, depth, rule, Device::kCpu), checkers::perft(start, depth, rule))
          << "depth " << depth << " rule " << int(rule);
    EXPECT_EQ(client.checkers_perft(start, 5, rule), checkers::perft(start, 5, rule));  // auto
  }
  for (int depth = 1; depth <= 8; ++depth)
    EXPECT_EQ(client.checkers_perft(start, depth, checkers::CaptureRule::kAny, Device::kCpu),
              checkers::testing::kStartPerft[depth - 1])
        << depth;
  // The rule reaches the worker: it prunes from the start by depth 8.
  EXPECT_LT(client.checkers_perft(start, 8, checkers::CaptureRule::kLongest, Device::kCpu),
            checkers::testing::kStartPerft[7]);
  // Deep enough to be split two plies down (the root has only 7 moves).
  EXPECT_EQ(client.checkers_perft(start, 10, checkers::CaptureRule::kAny, Device::kCpu),
            checkers::testing::kStartPerft[9]);

  const auto kings = checkers_king_positions();
  ASSERT_GE(kings.size(), 8u);
  for (const checkers::Board& b : kings)
    for (auto rule : kBothRules) {
      for (int depth = 1; depth <= 5; ++depth)
        EXPECT_EQ(client.checkers_perft(b, depth, rule, Device::kCpu), checkers::perft(b, depth, rule))
            << checkers::to_fen(b) << " depth " << depth << " rule " << int(rule);
    }
  // Split runs on positions with kings.
  for (std::size_t i = 0; i < 3; ++i)
    for (auto rule : kBothRules)
      EXPECT_EQ(client.checkers_perft(kings[i], 8, rule, Device::kCpu), checkers::perft(kings[i], 8, rule))
          << checkers::to_fen(kings[i]) << " rule " << int(rule);
  // No moves: perft 0 is 1, deeper ones 0.
  const checkers::Board lost = checkers::parse_fen("W:W:B1");
  EXPECT_EQ(client.checkers_perft(lost, 0, checkers::CaptureRule::kAny, Device::kCpu), 1u);
  EXPECT_EQ(client.checkers_perft(lost, 9, checkers::CaptureRule::kAny, Device::kCpu), 0u);

  // Refused before anything is sent: depth out of range, an invalid position.
  EXPECT_THROW(client.checkers_perft(start, 21), WorkerError);
  EXPECT_THROW(client.checkers_perft(start, -1), WorkerError);
  checkers::Board bad = start;
  bad.kings = checkers::bit(checkers::lsb(~start.occupied()));
  try {
    client.checkers_perft(bad, 3);
    ADD_FAILURE() << "an invalid checkers board was sent";
  } catch (const WorkerError& e) {
    EXPECT_NE(std::string(e.what()).find("king mark"), std::string::npos) << e.what();
  }

  std::string why = "built without CUDA";
  bool gpu = false;
#ifdef PGMATE_HAVE_CUDA
  gpu = gpu::cuda_device_available(&why);
#endif
  if (!gpu) {
    for (auto rule : kBothRules) {
      try {
        client.checkers_perft(start, 6, rule, Device::kGpu);
        ADD_FAILURE() << "device=gpu accepted without a GPU";
      } catch (const WorkerError& e) {
        EXPECT_NE(std::string(e.what()).find("no GPU available"), std::string::npos) << e.what();
      }
    }
    // Auto falls back to the CPU, deep or not.
    EXPECT_EQ(client.checkers_perft(start, 9, checkers::CaptureRule::kAny, Device::kAuto),
              checkers::testing::kStartPerft[8]);
  } else {
    for (auto rule : kBothRules) {
      for (int depth = 1; depth <= 9; ++depth)
        EXPECT_EQ(client.checkers_perft(start, depth, rule, Device::kGpu), checkers::perft(start, depth, rule))
            << "GPU depth " << depth << " rule " << int(rule);
      for (std::size_t i = 0; i < 4; ++i)
        EXPECT_EQ(client.checkers_perft(kings[i], 7, rule, Device::kGpu), checkers::perft(kings[i], 7, rule))
            << "GPU " << checkers::to_fen(kings[i]);
    }
    EXPECT_EQ(client.checkers_perft(start, 11, checkers::CaptureRule::kAny, Device::kAuto),
              checkers::testing::kStartPerft[10]);
  }
  // The connection survives the ERROR replies; chess perft still works beside checkers.
  EXPECT_EQ(client.checkers_perft(start, 3), 302u);
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 2), 400u);
}

TEST(WorkerServer, CheckersPerftBadPayloadsGetAnErrorAndTheConnectionKeepsWorking) {
  TestServer ts;
  UniqueFd fd = raw_unix(ts.config.socket_path);
  ASSERT_TRUE(fd);
  const Bytes good = protocol::encode_frame(
      11, protocol::CheckersPerftRequest{checkers::Board::start(), 4, protocol::PerftDevice::kCpu,
                                         checkers::CaptureRule::kAny});
  struct Corruption {
    std::size_t at;  // payload byte
    std::uint8_t value;
    const char* expect;
  };
  for (Corruption c : {Corruption{12, 3, "side to move code 3"}, Corruption{13, 40, "depth 40 out of range"},
                       Corruption{14, 7, "unknown device code 7"}, Corruption{15, 9, "unknown capture rule code 9"},
                       Corruption{8, 0x04, "king mark"}}) {
    Bytes bad = good;
    bad[protocol::kHeaderSize + c.at] = c.value;
    send_bytes(fd.get(), bad);
    const auto e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadRequest);
    EXPECT_NE(e.message.find(c.expect), std::string::npos) << e.message;
  }
  send_bytes(fd.get(), good);
  auto f = recv_frame(fd.get());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.type, MessageType::kCheckersPerftReply);
  EXPECT_EQ(f->header.request_id, 11u);
  EXPECT_EQ(protocol::decode_payload<protocol::CheckersPerftReply>(f->payload).nodes, 1469u);
}

TEST(WorkerServer, AbandonedCheckersPerftIsCancelled) {
  TestServer ts;
  for (auto rule : kBothRules) {
    ClientOptions o = ts.options();
    o.request_timeout = 200ms;
    WorkerClient client(o);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      client.checkers_perft(checkers::Board::start(), 20, rule, Device::kCpu);  // would take weeks
      ADD_FAILURE() << "checkers perft 20 returned";
    } catch (const WorkerUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    }
    EXPECT_LT(ms_since(t0), 1500);
    // The client closed its connection; every split task stops soon after.
    WorkerClient observer = ts.client();
    bool idle = false;
    for (int i = 0; i < 300 && !idle; ++i) {
      idle = observer.status_json().find("\"perft_running\":0") != std::string::npos;
      if (!idle) std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(idle) << observer.status_json();
    // And the pool is free again: a quick perft answers at once.
    EXPECT_EQ(observer.checkers_perft(checkers::Board::start(), 6, rule, Device::kCpu),
              checkers::perft(checkers::Board::start(), 6, rule));
  }
}

TEST(WorkerServer, LegalMovesBatchMatchesCore) {
  TestServer ts;
  WorkerClient client = ts.client();
  auto boards = testing::random_positions(77, 600);
  boards.push_back(chess::parse_fen(kKiwipete));
  boards.push_back(chess::parse_fen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"));
  auto check = [&](const std::vector<chess::Board>& bs) {
    const auto moves = client.legal_moves_batch(bs);
    ASSERT_EQ(moves.size(), bs.size());
    for (std::size_t i = 0; i < bs.size(); ++i) {
      chess::MoveList list;
      chess::legal_moves(bs[i], list);
      ASSERT_EQ(moves[i], std::vector<chess::Move>(list.begin(), list.end())) << chess::to_fen(bs[i]);
    }
  };
  check(boards);
  check({});
  // More than one request's worth (16384): the client splits.
  std::vector<chess::Board> many;
  while (many.size() < 20000) many.insert(many.end(), boards.begin(), boards.end());
  check(many);
}

TEST(WorkerServer, NetworkManagement) {
  TestServer ts;
  WorkerClient client = ts.client();
  const std::string cfg = "{\"blocks\":4,\"filters\":32}";
  const std::string weights = client.init_network_weights(cfg, 99);
  EXPECT_EQ(weights, "fake-weights:" + cfg + ":99");
  NetworkKey seven = testing::test_network(7, 0xab);
  seven.database = 16384;
  client.load_network(seven, cfg, weights);
  const std::string status = client.status_json();
  EXPECT_NE(status.find("{\"database\":16384,\"id\":7,\"sha256\":\"abab"), std::string::npos) << status;
  EXPECT_NE(status.find("\"config\":" + cfg), std::string::npos) << status;
  EXPECT_NE(status.find("\"networks_held\":2"), std::string::npos) << status;
  // Another database's status does not show it.
  EXPECT_EQ(client.status_json(16385).find("\"id\":7"), std::string::npos);
  const auto inputs = to_inputs(testing::random_histories(5, 3));
  const EvalReply reply = client.evaluate(inputs, seven);
  expect_eval(inputs, reply.outputs);
  EXPECT_EQ(reply.network, seven);
  // The same id in another database or with other weights is not served.
  for (NetworkKey other : {testing::test_network(7, 0xab), testing::test_network(7, 0xac), testing::test_network(8, 0xab)}) {
    other.database = other.sha256[0] == 0xab && other.id == 7 ? 16385 : 16384;
    EXPECT_THROW(client.evaluate(inputs, other), NetworkNotLoaded) << other.describe();
  }
  try {
    client.load_network(testing::test_network(9), cfg, "not weights");
    ADD_FAILURE() << "bad weights accepted";
  } catch (const WorkerError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load network 9"), std::string::npos) << e.what();
  }
  bool logged = false;
  {
    std::lock_guard lock(ts.log_mutex);
    for (const auto& l : ts.logs) logged |= l.find("holds network 7 (database 16384") != std::string::npos;
  }
  EXPECT_TRUE(logged);
}

// MCTS through the worker: priors land on the right moves, a network the worker does not
// serve is loaded through the callback, and a self-play run of 6 games at once sends the
// worker batches of about 6 positions.
TEST(WorkerServer, WorkerEvaluatorServesSelfPlay) {
  TestServer ts;
  WorkerClient client = ts.client();
  int loads = 0;
  WorkerEvaluator evaluator(client, testing::test_network(5), [&](const NetworkKey& key) {
    ++loads;
    client.load_network(key, "{}", client.init_network_weights("{}", 1));
  });
  EXPECT_EQ(evaluator.name(), "network 5");
  const auto histories = testing::random_histories(4, 2);
  std::vector<mcts::EvalRequest> requests;
  for (const auto& h : histories) {
    mcts::EvalRequest r;
    r.history = h;
    chess::MoveList list;
    chess::legal_moves(h.front(), list);
    r.moves.assign(list.begin(), list.end());
    std::reverse(r.moves.begin(), r.moves.end());  // another order than the worker's
    requests.push_back(r);
  }
  std::vector<mcts::EvalResult> results(requests.size());
  evaluator.evaluate(requests, results);
  EXPECT_EQ(loads, 1);
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto want = testing::expected_result(histories[i]);
    EXPECT_FLOAT_EQ(results[i].win, want.win);
    ASSERT_EQ(results[i].priors.size(), want.moves.size());
    for (size_t j = 0; j < want.moves.size(); ++j)
      EXPECT_NEAR(results[i].priors[requests[i].moves.size() - 1 - j], want.priors[j], 1e-6f);
  }

  const size_t batches_before = ts.state->sizes().size();
  mcts::SelfPlayConfig config;
  config.games = 6;
  config.parallel = 6;
  config.search.simulations = 6;
  config.max_plies = 8;
  mcts::SelfPlayRunner runner(config, evaluator);
  int games = 0;
  runner.run([&](mcts::FinishedGame& g) {
    ++games;
    EXPECT_EQ(g.moves.size(), 8u);
  });
  EXPECT_EQ(games, 6);
  EXPECT_EQ(loads, 1);
  const auto sizes = ts.state->sizes();
  int positions = 0;
  for (size_t i = batches_before; i < sizes.size(); ++i) positions += sizes[i];
  EXPECT_EQ(positions, runner.stats().evaluations);
  EXPECT_GT(runner.stats().mean_batch(), 4.0);
}

// A network answer that is not a distribution (NaN, infinity, a WDL not summing to 1)
// never reaches the search: WorkerEvaluator refuses it, naming the position.
TEST(WorkerServer, WorkerEvaluatorRefusesBrokenAnswers) {
  TestServer ts;
  WorkerClient client = ts.client();
  WorkerEvaluator evaluator(client, testing::test_network(), nullptr);
  const auto histories = testing::random_histories(9, 3);
  std::vector<mcts::EvalRequest> requests;
  for (const auto& h : histories) {
    mcts::EvalRequest r;
    r.history = h;
    chess::MoveList list;
    chess::legal_moves(h.front(), list);
    r.moves.assign(list.begin(), list.end());
    requests.push_back(r);
  }
  std::vector<mcts::EvalResult> results(requests.size());
  evaluator.evaluate(requests, results);  // sound answers pass
  for (int spoil : {1, 2, 3}) {
    SCOPED_TRACE("spoil " + std::to_string(spoil));
    ts.state->spoil = spoil;
    try {
      evaluator.evaluate(requests, results);
      ADD_FAILURE() << "a broken answer was accepted";
    } catch (const WorkerError& e) {
      EXPECT_NE(std::string(e.what()).find("for position 2 of 3"), std::string::npos) << e.what();
    }
  }
  ts.state->spoil = 0;
  evaluator.evaluate(requests, results);
  for (const auto& r : results) EXPECT_NEAR(r.win + r.draw + r.loss, 1.0f, 1e-5f);
}

TEST(WorkerServer, OversizedWeightsAreRefusedWithAClearError) {
  TestServer ts([](ServerConfig& c) { c.limits.max_large_payload = 1u << 20; });
  WorkerClient client = ts.client();
  try {
    client.load_network(testing::test_network(), "{}", std::string(3u << 20, 'w'));
    ADD_FAILURE() << "a 3 MiB frame passed a 1 MiB limit";
  } catch (const WorkerError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the limit"), std::string::npos) << e.what();
  }
  // The worker closed that connection; the client reconnects.
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 2), 400u);
}

TEST(WorkerServer, UnservedSocketIsUnavailableQuickly) {
  TempDir dir;
  ClientOptions o;
  o.address = dir.file("nobody.sock");
  auto t0 = std::chrono::steady_clock::now();
  try {
    WorkerClient c(o);
    ADD_FAILURE() << "connected to nothing";
  } catch (const WorkerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(o.address), std::string::npos) << e.what();
  }
  EXPECT_LT(ms_since(t0), 1500);  // a bound on hanging, not a speed test

  // A stale socket file: connection refused.
  {
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, o.address.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(WorkerClient{o}, WorkerUnavailable);
  EXPECT_LT(ms_since(t0), 1500);  // a bound on hanging, not a speed test

  // TCP: a port nobody listens on.
  UniqueFd probe(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(probe.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  o.address = "tcp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));  // bound, not listening
  t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(WorkerClient{o}, WorkerUnavailable);
  EXPECT_LT(ms_since(t0), 1500);  // a bound on hanging, not a speed test

  o.address = "tcp://nowhere";
  EXPECT_THROW(WorkerClient{o}, WorkerUnavailable);
}

TEST(WorkerServer, ServerKilledMidRequestGivesUnavailable) {
  TempDir dir;
  const std::string path = dir.file("dying.sock");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      auto state = std::make_shared<FakeState>();
      state->delay_ms = 30000;
      ServerConfig c;
      c.socket_path = path;
      c.threads = 2;
      Server s(c, std::make_unique<FakeBackend>(state));
      s.run();
    } catch (...) {
    }
    _exit(0);
  }
  ClientOptions o;
  o.address = path;
  std::unique_ptr<WorkerClient> client;
  for (int i = 0; i < 500 && !client; ++i) {
    try {
      client = std::make_unique<WorkerClient>(o);
    } catch (const WorkerUnavailable&) {
      std::this_thread::sleep_for(10ms);
    }
  }
  ASSERT_TRUE(client) << "the forked worker never came up";
  client->load_network(testing::test_network(), testing::kTestNetworkConfig, testing::fake_weights());
  std::thread killer([pid] {
    std::this_thread::sleep_for(200ms);
    kill(pid, SIGKILL);
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    eval(*client, to_inputs(testing::random_histories(1, 2)));
    ADD_FAILURE() << "evaluate returned from a killed worker";
  } catch (const WorkerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("closed the connection"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_LT(ms_since(t0), 3000);
  killer.join();
  int status = 0;
  waitpid(pid, &status, 0);
  // The next call finds nobody (the socket file is stale now).
  EXPECT_THROW(client->status_json(), WorkerUnavailable);
}

TEST(WorkerServer, EofInTheMiddleOfAReply) {
  // A fake worker that answers half a header and disappears.
  TempDir dir;
  const std::string path = dir.file("half.sock");
  UniqueFd listener(socket(AF_UNIX, SOCK_STREAM, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener.get(), 4), 0);
  std::thread fake([&] {
    UniqueFd c(accept(listener.get(), nullptr, nullptr));
    auto hello = recv_frame(c.get());
    if (!hello) return;
    send_bytes(c.get(), protocol::encode_frame(hello->header.request_id, protocol::HelloReply{}));
    auto req = recv_frame(c.get());
    if (!req) return;
    const Bytes reply = protocol::encode_frame(req->header.request_id, protocol::PerftReply{5});
    send_bytes(c.get(), Bytes(reply.begin(), reply.begin() + 20));
  });
  ClientOptions o;
  o.address = path;
  WorkerClient client(o);
  try {
    client.perft(chess::parse_fen("startpos"), 1);
    ADD_FAILURE();
  } catch (const WorkerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("in the middle of a reply"), std::string::npos) << e.what();
  }
  fake.join();
}

TEST(WorkerServer, PollHookThrowingAbortsTheWait) {
  TestServer ts;
  ts.state->delay_ms = 1000;
  struct Cancelled {};
  ClientOptions o = ts.options();
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  o.poll = [&] {
    ++calls;
    if (ms_since(t0) > 50) throw Cancelled{};
  };
  WorkerClient client(o);
  EXPECT_THROW(eval(client, to_inputs(testing::random_histories(2, 1))), Cancelled);
  EXPECT_LT(ms_since(t0), 1500);  // a bound on hanging, not a speed test
  EXPECT_GE(calls, 3);  // every ~10 ms
  // The connection was closed; the next call reconnects and works.
  ts.state->delay_ms = 0;
  o.poll = nullptr;
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 3), 8902u);
}

TEST(WorkerServer, RequestTimeout) {
  TestServer ts;
  ts.state->delay_ms = 600;
  ClientOptions o = ts.options();
  o.request_timeout = 150ms;
  WorkerClient client(o);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    eval(client, to_inputs(testing::random_histories(2, 1)));
    ADD_FAILURE();
  } catch (const WorkerUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  const double ms = ms_since(t0);
  EXPECT_GE(ms, 140);
  EXPECT_LT(ms, 1000);
}

TEST(WorkerServer, TcpNeedsTheToken) {
  TestServer ts([](ServerConfig& c) {
    c.tcp = "127.0.0.1:0";
    c.token = "s3cret-token";
  });
  const std::uint16_t port = ts.server->tcp_port();
  ASSERT_NE(port, 0);
  ClientOptions o;
  o.address = "tcp://127.0.0.1:" + std::to_string(port);
  o.token = "wrong";
  try {
    WorkerClient c(o);
    ADD_FAILURE() << "wrong token accepted";
  } catch (const WorkerError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong token"), std::string::npos) << e.what();
  }
  o.token = "";
  EXPECT_THROW(WorkerClient{o}, WorkerError);
  o.token = "s3cret-token";
  WorkerClient good(o);
  EXPECT_EQ(good.perft(chess::parse_fen("startpos"), 3), 8902u);
  const auto inputs = to_inputs(testing::random_histories(8, 2));
  expect_eval(inputs, eval(good, inputs));

  // A raw TCP client skipping HELLO is refused and disconnected.
  UniqueFd raw = raw_tcp(port);
  ASSERT_TRUE(raw);
  send_bytes(raw.get(), protocol::encode_frame(1, protocol::StatusRequest{}));
  EXPECT_EQ(expect_error(raw.get()).code, ErrorCode::kUnauthorized);
  EXPECT_TRUE(closed_by_peer(raw.get()));
  // Nor may it send a large frame first: refused from the header, before any payload.
  UniqueFd raw2 = raw_tcp(port);
  Bytes hdr(protocol::kHeaderSize);
  protocol::encode_header(protocol::FrameHeader{MessageType::kLoadNetwork, 2, 10u << 20}, hdr.data());
  send_bytes(raw2.get(), hdr);
  EXPECT_EQ(expect_error(raw2.get()).code, ErrorCode::kUnauthorized);
  EXPECT_TRUE(closed_by_peer(raw2.get()));
  // The Unix socket needs no token.
  EXPECT_EQ(ts.client().perft(chess::parse_fen("startpos"), 1), 20u);
}

TEST(WorkerServer, MalformedFrames) {
  TestServer ts;
  {
    // Bad magic: ERROR, then the connection is closed.
    UniqueFd fd = raw_unix(ts.config.socket_path);
    ASSERT_TRUE(fd);
    send_bytes(fd.get(), Bytes(16, 'x'));
    const auto e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadFrame);
    EXPECT_NE(e.message.find("magic"), std::string::npos) << e.message;
    EXPECT_TRUE(closed_by_peer(fd.get()));
  }
  {
    // Oversized length: refused from the header alone.
    UniqueFd fd = raw_unix(ts.config.socket_path);
    protocol::FrameHeader h{MessageType::kEvaluate, 3, 200u << 20};
    Bytes hdr(protocol::kHeaderSize);
    protocol::encode_header(h, hdr.data());
    send_bytes(fd.get(), hdr);
    const auto e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadFrame);
    EXPECT_NE(e.message.find("exceeds the limit"), std::string::npos) << e.message;
    EXPECT_TRUE(closed_by_peer(fd.get()));
  }
  {
    // Bad payloads: ERROR, and the connection keeps working.
    UniqueFd fd = raw_unix(ts.config.socket_path);
    Bytes status = protocol::encode_frame(5, protocol::StatusRequest{});
    status[12] = 5;  // payload length 5 ...
    status.push_back(0);  // ... one byte more than STATUS expects
    send_bytes(fd.get(), status);
    auto e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadRequest);
    EXPECT_NE(e.message.find("trailing"), std::string::npos) << e.message;

    Bytes legal = protocol::encode_frame(6, protocol::LegalMovesRequest{{chess::parse_fen("startpos")}});
    legal[protocol::kHeaderSize + 4 + 31] = 9;  // reserved byte of the packed board
    send_bytes(fd.get(), legal);
    e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadRequest);
    EXPECT_NE(e.message.find("invalid packed board"), std::string::npos) << e.message;

    send_bytes(fd.get(), protocol::encode_frame(7, protocol::PerftReply{1}));  // a reply, from a client
    e = expect_error(fd.get());
    EXPECT_EQ(e.code, ErrorCode::kBadRequest);

    // Two requests in one write, answered in order.
    Bytes two = protocol::encode_frame(8, protocol::StatusRequest{});
    const Bytes perft = protocol::encode_frame(9, protocol::PerftRequest{chess::parse_fen("startpos"), 2,
                                                                          protocol::PerftDevice::kCpu});
    two.insert(two.end(), perft.begin(), perft.end());
    send_bytes(fd.get(), two);
    auto f = recv_frame(fd.get());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.type, MessageType::kStatusReply);
    EXPECT_EQ(f->header.request_id, 8u);
    f = recv_frame(fd.get());
    ASSERT_TRUE(f);
    EXPECT_EQ(f->header.request_id, 9u);
    EXPECT_EQ(protocol::decode_payload<protocol::PerftReply>(f->payload).nodes, 400u);
  }
  {
    // A frame trickling in byte by byte still works.
    UniqueFd fd = raw_unix(ts.config.socket_path);
    const Bytes perft = protocol::encode_frame(10, protocol::PerftRequest{chess::parse_fen(kKiwipete), 1,
                                                                           protocol::PerftDevice::kCpu});
    for (std::uint8_t b : perft) {
      send_bytes(fd.get(), Bytes{b});
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    auto f = recv_frame(fd.get());
    ASSERT_TRUE(f);
    EXPECT_EQ(protocol::decode_payload<protocol::PerftReply>(f->payload).nodes, 48u);
  }
  // The server is fine.
  EXPECT_EQ(ts.client().perft(chess::parse_fen("startpos"), 1), 20u);
}

TEST(WorkerServer, ShutdownFailsQueuedRequestsAndAnswersTheRunningBatch) {
  auto ts = std::make_unique<TestServer>();
  ts->state->delay_ms = 400;
  std::atomic<int> got_result{0}, got_unavailable{0}, other{0};
  auto run_client = [&](int seed) {
    try {
      WorkerClient c = ts->client();
      eval(c, to_inputs(testing::random_histories(seed, 1)));
      ++got_result;
    } catch (const WorkerUnavailable& e) {
      ++got_unavailable;
    } catch (...) {
      ++other;
    }
  };
  std::thread a(run_client, 1);
  std::this_thread::sleep_for(100ms);  // a's batch is running in the backend
  std::thread b(run_client, 2);         // b waits in the queue
  std::this_thread::sleep_for(100ms);
  const auto t0 = std::chrono::steady_clock::now();
  ts->server->stop();
  a.join();
  b.join();
  EXPECT_LT(ms_since(t0), 3000);
  EXPECT_EQ(got_result, 1);
  EXPECT_EQ(got_unavailable, 1);
  EXPECT_EQ(other, 0);
  struct stat st;
  EXPECT_NE(lstat(ts->config.socket_path.c_str(), &st), 0);
  bool logged = false;
  for (const auto& l : ts->logs) logged |= l.find("stopped after") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(WorkerServer, ClientReconnectsAfterAWorkerRestart) {
  TempDir dir;
  ServerConfig c;
  c.socket_path = dir.file("restart.sock");
  c.threads = 2;
  auto first = std::make_unique<Server>(c, std::make_unique<FakeBackend>(std::make_shared<FakeState>()));
  first->start();
  ClientOptions o;
  o.address = c.socket_path;
  WorkerClient client(o);
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 2), 400u);
  first.reset();
  auto second = std::make_unique<Server>(c, std::make_unique<FakeBackend>(std::make_shared<FakeState>()));
  second->start();
  EXPECT_EQ(client.perft(chess::parse_fen("startpos"), 2), 400u);
}

TEST(WorkerServer, ManySimultaneousConnections) {
  TestServer ts;
  std::vector<WorkerClient> clients;
  for (int i = 0; i < 300; ++i) clients.push_back(ts.client());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 10; ++t)
    threads.emplace_back([&, t] {
      for (int i = t; i < 300; i += 10)
        if (clients[i].perft(chess::parse_fen("startpos"), 1) == 20u) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 300);
  EXPECT_EQ(ts.server->connected_clients(), 300);
  clients.clear();
  for (int i = 0; i < 200 && ts.server->connected_clients() != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ts.server->connected_clients(), 0);
}

// Not a correctness test: prints the round-trip latency of a 1-position evaluate and the
// throughput of 32 concurrent clients, with the fake backend.
TEST(WorkerServer, LatencyAndThroughput) {
  for (int deadline_us : {0, 1000}) {
    TestServer ts([&](ServerConfig& c) { c.batcher.deadline = std::chrono::microseconds(deadline_us); });
    WorkerClient client = ts.client();
    const auto one = to_inputs(testing::random_histories(1, 1));
    for (int i = 0; i < 20; ++i) eval(client, one);
    std::vector<double> samples;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      eval(client, one);
      samples.push_back(ms_since(t0) * 1000);
    }
    std::sort(samples.begin(), samples.end());
    std::cout << "[ perf     ] deadline " << deadline_us << " us: 1-position evaluate round trip median "
              << samples[samples.size() / 2] << " us, p90 " << samples[samples.size() * 9 / 10] << " us\n";

    constexpr int kClients = 32;
    const auto run_for = 1500ms;
    std::atomic<long> requests{0};
    std::atomic<bool> go{true};
    std::vector<std::thread> threads;
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < kClients; ++t)
      threads.emplace_back([&, t] {
        WorkerClient c = ts.client();
        const auto in = to_inputs(testing::random_histories(100 + t, 1));
        while (go) {
          eval(c, in);
          ++requests;
        }
      });
    std::this_thread::sleep_for(run_for);
    go = false;
    for (auto& t : threads) t.join();
    const double s = ms_since(t0) / 1000;
    const auto sizes = ts.state->sizes();
    double mean = 0;
    for (int x : sizes) mean += x;
    mean /= std::max<std::size_t>(1, sizes.size());
    std::cout << "[ perf     ] deadline " << deadline_us << " us: 32 clients x 1-position evaluate: "
              << long(double(requests) / s) << " requests/s, mean batch " << mean << "\n";
    EXPECT_GT(requests.load(), 0);
  }
}

}  // namespace
}  // namespace pgmate::worker
