// The pgmate-worker server: listens on a Unix socket (mode 0600) and optionally on TCP
// (token required), reads framed requests from every connection in one poll() loop, and
// hands the work to the batcher (EVALUATE, LEGAL_MOVES), the perft pool (PERFT,
// CHECKERS_PERFT), a control thread (LOAD_NETWORK, INIT_WEIGHTS) or the training thread
// (TRAIN_START, TRAIN_STEP, TRAIN_SAVE). Replies come back to the loop through a completion
// queue, so no worker thread ever blocks on a slow client.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "link/protocol.h"
#include "worker/server/batcher.h"
#include "worker/backend/eval_backend.h"
#include "worker/server/perft_runner.h"
#include "worker/server/thread_pool.h"
#include "worker/backend/train_backend.h"
#include "worker/server/train_sessions.h"

namespace pgmate::worker {

struct ServerConfig {
  std::string socket_path;  // required: the Unix socket
  std::string tcp;          // "" (no TCP), "host:port", "[v6]:port" or "port" (127.0.0.1)
  std::string token;        // required with tcp; HELLO must carry it
  BatcherConfig batcher;
  int threads = 0;          // perft pool size; 0 = hardware concurrency
  bool gpu_allowed = true;  // false with --device cpu: perft stays off the GPU too
  protocol::Limits limits;
  int max_connections = 4096;
  int max_inflight_per_connection = 64;            // requests read but not yet answered
  int max_train_sessions = TrainSessions::kDefaultMaxSessions;  // open at once, all connections
  std::chrono::milliseconds hello_timeout{10000};  // TCP: HELLO must arrive within this
  std::chrono::milliseconds shutdown_flush{2000};  // time given to deliver the last replies
  std::function<void(const std::string&)> log;     // one line per event; null: silent
};

class Server {
 public:
  // Binds and listens (so clients may connect as soon as this returns). Throws
  // std::runtime_error when it cannot: another worker answers on the socket, the path
  // exists and is not a socket, bind fails, a TCP address without a token, ...
  // `train_backend` null: TRAIN_* requests are answered with kUnavailable.
  Server(ServerConfig config, std::unique_ptr<EvalBackend> backend,
         std::unique_ptr<TrainBackend> train_backend = nullptr);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until request_stop(); then stops accepting, fails queued requests with ERROR,
  // delivers the last replies, closes every connection and removes the socket file.
  void run();
  void start();  // run() on a background thread
  // Async-signal-safe; may be called from any thread, any number of times. `signal`, when
  // not 0, is named in the log line ("stopping on SIGTERM").
  void request_stop(int signal = 0);
  // request_stop() and wait for run() to return (the background thread, if started).
  void stop();

  std::uint16_t tcp_port() const { return tcp_port_; }  // 0 when TCP is off
  const std::string& socket_path() const { return config_.socket_path; }
  // `database` 0: every database's networks; else only that database's.
  std::string status_json(std::uint32_t database = 0) const;
  int connected_clients() const { return connections_.load(); }
  int training_sessions() const { return training_ ? training_->sessions() : 0; }
  // True once the GPU failed for good (a dead CUDA context, from perft or a network
  // batch): the server then stops by itself, and the process should exit so that a fresh
  // one can use the GPU (pgmate-worker exits with status 3).
  bool device_lost() const { return device_lost_.load(); }

 private:
  struct Conn;
  struct Completion {
    std::uint64_t conn;
    protocol::Bytes frame;
    bool counted;  // answers a request that counted against the in-flight limit
  };

  void setup_unix();
  void setup_tcp();
  void log(const std::string& line) const;
  void on_device_lost(const std::string& what);

  // Loop-thread helpers.
  void accept_all(int listen_fd, bool tcp);
  void handle_readable(Conn& c);
  void process_input(Conn& c);
  void dispatch(Conn& c, const protocol::FrameHeader& h, std::span<const std::uint8_t> payload);
  void queue_frame(Conn& c, protocol::Bytes frame);
  void reply_error(Conn& c, std::uint32_t request_id, protocol::ErrorCode code, const std::string& message,
                   bool close_after);
  void flush(Conn& c);
  void drain_completions();
  void start_request(Conn& c);  // a request read: counted against the connection until answered
  void close_conn(std::uint64_t id);
  void shutdown_sequence();
  void close_listeners();    // close the listening sockets, remove our socket file
  void release_resources();  // idempotent: stop workers, close sockets, remove the socket file

  // Any thread: hand a reply to the loop.
  void post(std::uint64_t conn, protocol::Bytes frame, bool counted);
  void post_error(std::uint64_t conn, std::uint32_t request_id, protocol::ErrorCode code, const std::string& message);
  void wake();

  ServerConfig config_;
  const Clock::time_point started_ = Clock::now();
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<ThreadPool> pool_;     // perft
  std::unique_ptr<ThreadPool> control_;  // network loads, weight initialisation
  std::unique_ptr<PerftRunner> perft_;
  std::unique_ptr<TrainSessions> training_;

  int unix_fd_ = -1, tcp_fd_ = -1, wake_fd_ = -1;
  std::uint64_t socket_dev_ = 0, socket_ino_ = 0;  // the socket file we created
  std::uint16_t tcp_port_ = 0;
  std::string tcp_display_;

  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> device_lost_{false};
  std::atomic<int> stop_signal_{0};
  std::atomic<bool> stopping_{false};  // watched by running perfts
  std::atomic<bool> ran_{false};
  bool released_ = false;
  std::atomic<int> connections_{0};
  // Connections with no request unanswered: while there are none, the batcher need not wait
  // for more requests (BatcherConfig::all_clients_waiting).
  std::atomic<int> idle_connections_{0};
  std::atomic<std::uint64_t> requests_{0};
  std::thread thread_;

  std::mutex completions_mutex_;
  std::vector<Completion> completions_;

  // Loop-thread state.
  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns_;
  std::uint64_t next_conn_id_ = 1;
  Clock::time_point accept_paused_until_{};
};

}  // namespace pgmate::worker
