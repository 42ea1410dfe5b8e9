#include "link/worker_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "link/protocol.h"
#include "link/socket_util.h"

namespace pgmate::worker {

using protocol::Bytes;
using protocol::ErrorCode;
using protocol::FrameHeader;
using protocol::MessageType;
using protocol::ProtocolError;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(10);

// Replies are bounded by the request item limits; only weights and training states may be
// large.
const protocol::Limits kReplyLimits{64u << 20, 1u << 30, 1u << 30};

protocol::PerftDevice to_wire(Device d) {
  switch (d) {
    case Device::kCpu: return protocol::PerftDevice::kCpu;
    case Device::kGpu: return protocol::PerftDevice::kGpu;
    case Device::kAuto: break;
  }
  return protocol::PerftDevice::kAuto;
}

}  // namespace

struct WorkerClient::Impl {
  ClientOptions options;
  Address address;
  std::string name;  // "pgmate-worker at <address>"
  UniqueFd fd;
  std::uint32_t next_id = 1;

  explicit Impl(ClientOptions o) : options(std::move(o)) {
    try {
      address = parse_address(options.address);
    } catch (const std::invalid_argument& e) {
      throw WorkerUnavailable(std::string("bad pgmate-worker address: ") + e.what());
    }
    name = "pgmate-worker at " + address.display();
  }

  [[noreturn]] void unavailable(const std::string& what) {
    fd.reset();
    throw WorkerUnavailable(name + ": " + what);
  }

  // Runs the caller's poll hook; if it throws, the connection is closed (a reply may still
  // be on its way) and the exception propagates.
  void run_hook() {
    if (!options.poll) return;
    try {
      options.poll();
    } catch (...) {
      fd.reset();
      throw;
    }
  }

  // Waits until fd has `events` (returns the revents) or the deadline passes (0), calling
  // the poll hook every ~10 ms.
  short wait(short events, Clock::time_point deadline) {
    auto next_hook = Clock::now() + kPollSlice;
    for (;;) {
      const auto now = Clock::now();
      if (now >= next_hook) {
        run_hook();
        next_hook = Clock::now() + kPollSlice;
      }
      if (now >= deadline) return 0;
      const auto slice = std::min(deadline, next_hook) - now;
      const int ms = int(std::max<std::int64_t>(
          1, std::chrono::duration_cast<std::chrono::milliseconds>(slice + std::chrono::microseconds(999)).count()));
      pollfd p{fd.get(), events, 0};
      const int n = ::poll(&p, 1, ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        unavailable("poll failed: " + errno_text(errno));
      }
      if (n > 0) return p.revents ? p.revents : events;
    }
  }

  // ---- connecting ----

  void connect_socket(int domain, const sockaddr* addr, socklen_t len, Clock::time_point deadline) {
    fd.reset(::socket(domain, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) unavailable("cannot create a socket: " + errno_text(errno));
    auto refused = [&](int err) {
      fd.reset();
      throw WorkerUnavailable("cannot connect to " + name + ": " + errno_text(err) + " (is pgmate-worker running?)");
    };
    auto timed_out = [&] {
      unavailable("connection timed out after " + std::to_string(options.connect_timeout.count()) + " ms");
    };
    for (;;) {
      if (::connect(fd.get(), addr, len) == 0) return;
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN && domain == AF_UNIX) {
        // The worker's accept backlog is full: try again shortly.
        const auto retry = std::min(deadline, Clock::now() + kPollSlice);
        while (Clock::now() < retry) {
          run_hook();
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (Clock::now() >= deadline) timed_out();
        continue;
      }
      if (err != EINPROGRESS) refused(err);
      break;
    }
    if (wait(POLLOUT, deadline) == 0) timed_out();
    int err = 0;
    socklen_t err_len = sizeof err;
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) err = errno;
    if (err != 0) refused(err);
  }

  void connect() {
    fd.reset();
    const auto deadline = Clock::now() + options.connect_timeout;
    if (!address.tcp) {
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path, address.path.c_str(), address.path.size() + 1);
      connect_socket(AF_UNIX, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, deadline);
    } else {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      hints.ai_flags = AI_NUMERICSERV;
      addrinfo* res = nullptr;
      const std::string port = std::to_string(address.port);
      if (int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &res); rc != 0)
        throw WorkerUnavailable("cannot resolve " + name + ": " + gai_strerror(rc));
      std::string last_error = "no address";
      bool connected = false;
      for (addrinfo* ai = res; ai && !connected; ai = ai->ai_next) {
        try {
          connect_socket(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline);
          connected = true;
        } catch (const WorkerUnavailable& e) {
          last_error = e.what();
        } catch (...) {
          freeaddrinfo(res);
          throw;
        }
      }
      freeaddrinfo(res);
      if (!connected) throw WorkerUnavailable(last_error);
      const int one = 1;
      setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    // HELLO: required on TCP (with the token), and a version check on both.
    protocol::Hello hello;
    hello.token = options.token;
    const auto reply = exchange<protocol::HelloReply>(hello, deadline, "HELLO");
    if (reply.version != protocol::kVersion)
      unavailable("speaks protocol version " + std::to_string(reply.version) + ", this client speaks " +
                  std::to_string(protocol::kVersion));
  }

  // Reconnects when there is no connection, or when the worker closed it (or left
  // unexpected bytes on it) since the last call.
  void ensure_connected() {
    if (fd) {
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) fd.reset();
    }
    if (!fd) connect();
  }

  // ---- one request ----

  void send_frame(const Bytes& frame, Clock::time_point deadline, const char* what) {
    std::size_t sent = 0;
    while (sent < frame.size()) {
      const ssize_t n = ::send(fd.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += std::size_t(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const short re = wait(POLLOUT | POLLIN, deadline);
        if (re == 0) unavailable(std::string(what) + " timed out while sending the request");
        if (re & (POLLIN | POLLHUP | POLLERR)) {
          // The worker answered before reading the whole request: an error (e.g. an
          // oversized frame). Read it and report it; the stream cannot be reused.
          read_early_error(deadline);
          unavailable(std::string("closed the connection while receiving ") + what);
        }
        continue;
      }
      const int err = n < 0 ? errno : EPIPE;
      read_early_error(std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
      unavailable("connection lost while sending " + std::string(what) + ": " + errno_text(err));
    }
  }

  void read_early_error(Clock::time_point deadline) {
    FrameHeader h;
    Bytes payload;
    if (!try_read_frame(deadline, h, payload)) return;
    if (h.type == MessageType::kError) {
      protocol::ErrorReply e;
      try {
        e = protocol::decode_payload<protocol::ErrorReply>(payload);
      } catch (const ProtocolError&) {
        return;
      }
      fd.reset();
      throw_error(e);
    }
  }

  // Reads one frame; false when the connection ends or the deadline passes first (no throw).
  bool try_read_frame(Clock::time_point deadline, FrameHeader& h, Bytes& payload) {
    try {
      read_frame(deadline, h, payload, "");
      return true;
    } catch (const WorkerUnavailable&) {
      return false;
    }
  }

  void read_exact(std::uint8_t* out, std::size_t n, Clock::time_point deadline, const char* what, bool started) {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::recv(fd.get(), out + got, n - got, 0);
      if (r > 0) {
        got += std::size_t(r);
        started = true;
        continue;
      }
      if (r == 0)
        unavailable(started ? "closed the connection in the middle of a reply"
                            : std::string("closed the connection before replying") + (*what ? " to " : "") + what);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (wait(POLLIN, deadline) == 0)
          unavailable(std::string("no reply") + (*what ? " to " : "") + what + " within " +
                      std::to_string(timeout_ms_) + " ms (timed out)");
        continue;
      }
      unavailable("connection lost: " + errno_text(errno));
    }
  }

  void read_frame(Clock::time_point deadline, FrameHeader& h, Bytes& payload, const char* what) {
    std::uint8_t header[protocol::kHeaderSize];
    read_exact(header, sizeof header, deadline, what, false);
    try {
      h = protocol::decode_header(std::span<const std::uint8_t>(header, sizeof header), kReplyLimits);
    } catch (const ProtocolError& e) {
      unavailable(std::string("sent a malformed reply: ") + e.what());
    }
    payload.resize(h.payload_length);
    if (h.payload_length) read_exact(payload.data(), payload.size(), deadline, what, true);
  }

  // `answer`: the error answers this client's request (not a connection-level refusal).
  [[noreturn]] void throw_error(const protocol::ErrorReply& e, bool answer = false) {
    switch (e.code) {
      case ErrorCode::kBusy:
        // An answer (too many training sessions) leaves the connection, and the sessions
        // it holds, as they are; a refused connection (request id 0) is closed.
        if (answer) break;
        [[fallthrough]];
      case ErrorCode::kShuttingDown:
        fd.reset();
        throw WorkerUnavailable(name + ": " + e.message);
      case ErrorCode::kBadFrame:
      case ErrorCode::kUnauthorized:
        fd.reset();  // the worker closes these connections
        break;
      case ErrorCode::kNotLoaded:
        throw NetworkNotLoaded(e.message);
      default:
        break;
    }
    throw WorkerError(e.message);
  }

  // Sends `request` and returns its reply; throws WorkerError for an ERROR reply.
  template <class Reply, class Request>
  Reply exchange(const Request& request, Clock::time_point deadline, const char* what) {
    std::uint32_t id = next_id++;
    if (id == 0) id = next_id++;
    Bytes frame;
    try {
      frame = protocol::encode_frame(id, request);
    } catch (const ProtocolError& e) {
      throw WorkerError(e.what());
    }
    timeout_ms_ = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    send_frame(frame, deadline, what);
    FrameHeader h;
    Bytes payload;
    read_frame(deadline, h, payload, what);
    if (h.type == MessageType::kError && (h.request_id == id || h.request_id == 0)) {
      protocol::ErrorReply e;
      try {
        e = protocol::decode_payload<protocol::ErrorReply>(payload);
      } catch (const ProtocolError& ex) {
        unavailable(std::string("sent a malformed ERROR: ") + ex.what());
      }
      throw_error(e, h.request_id == id);
    }
    if (h.request_id != id)
      unavailable("answered request " + std::to_string(h.request_id) + " while this client waited for " +
                  std::to_string(id));
    if (h.type != Reply::kType)
      unavailable("answered " + std::string(what) + " with " + protocol::type_name(h.type));
    try {
      return protocol::decode_payload<Reply>(payload);
    } catch (const ProtocolError& e) {
      unavailable(std::string("sent a malformed reply: ") + e.what());
    }
  }

  template <class Reply, class Request>
  Reply call(const Request& request, const char* what) {
    ensure_connected();
    return exchange<Reply>(request, Clock::now() + options.request_timeout, what);
  }

  // TRAIN_*: on the connection the sessions belong to (a new connection holds none, so the
  // worker answers "no training session"), and with the training timeout.
  template <class Reply, class Request>
  Reply call_train(const Request& request, const char* what) {
    ensure_connected();
    return exchange<Reply>(request, Clock::now() + options.train_timeout, what);
  }

  std::int64_t timeout_ms_ = 0;  // of the exchange in progress, for messages
};

WorkerClient::WorkerClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->connect();
}

WorkerClient::~WorkerClient() = default;
WorkerClient::WorkerClient(WorkerClient&&) noexcept = default;
WorkerClient& WorkerClient::operator=(WorkerClient&&) noexcept = default;

std::uint64_t WorkerClient::perft(const chess::Board& b, int depth, Device device) {
  if (depth < 0 || depth > protocol::kMaxPerftDepth)
    throw WorkerError("perft depth " + std::to_string(depth) + " out of range (0.." +
                      std::to_string(protocol::kMaxPerftDepth) + ")");
  protocol::PerftRequest req;
  req.board = b;
  req.depth = depth;
  req.device = to_wire(device);
  return impl_->call<protocol::PerftReply>(req, "PERFT").nodes;
}

std::uint64_t WorkerClient::checkers_perft(const checkers::Board& b, int depth, checkers::CaptureRule rule,
                                           Device device) {
  if (depth < 0 || depth > protocol::kMaxPerftDepth)
    throw WorkerError("checkers perft depth " + std::to_string(depth) + " out of range (0.." +
                      std::to_string(protocol::kMaxPerftDepth) + ")");
  protocol::CheckersPerftRequest req;
  req.board = b;
  req.depth = depth;
  req.device = to_wire(device);
  req.rule = rule;
  // An invalid position or rule is refused by the encoder (ProtocolError -> WorkerError).
  return impl_->call<protocol::CheckersPerftReply>(req, "CHECKERS_PERFT").nodes;
}

std::vector<std::vector<chess::Move>> WorkerClient::legal_moves_batch(const std::vector<chess::Board>& boards) {
  std::vector<std::vector<chess::Move>> out;
  out.reserve(boards.size());
  for (std::size_t at = 0; at < boards.size(); at += protocol::kMaxLegalMovesBoards) {
    const std::size_t end = std::min(boards.size(), at + protocol::kMaxLegalMovesBoards);
    protocol::LegalMovesRequest req;
    req.boards.assign(boards.begin() + std::ptrdiff_t(at), boards.begin() + std::ptrdiff_t(end));
    auto reply = impl_->call<protocol::LegalMovesReply>(req, "LEGAL_MOVES");
    if (reply.moves.size() != end - at)
      impl_->unavailable("answered " + std::to_string(end - at) + " positions with " +
                         std::to_string(reply.moves.size()) + " move lists");
    for (auto& m : reply.moves) out.push_back(std::move(m));
  }
  return out;
}

EvalReply WorkerClient::evaluate(const std::vector<EvalInput>& inputs, const NetworkKey& network) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto n = inputs[i].history.size();
    if (n < 1 || n > std::size_t(protocol::kMaxHistory))
      throw WorkerError("evaluate: input " + std::to_string(i) + " has " + std::to_string(n) +
                        " positions (1 to 4: the position, then up to 3 previous ones)");
  }
  EvalReply result;
  result.network = network;
  auto& out = result.outputs;
  out.reserve(inputs.size());
  for (std::size_t at = 0; at < inputs.size(); at += protocol::kMaxEvaluateInputs) {
    const std::size_t end = std::min(inputs.size(), at + protocol::kMaxEvaluateInputs);
    protocol::EvaluateRequest req;
    req.network = network;
    req.inputs.reserve(end - at);
    req.repetitions.reserve(end - at);
    for (std::size_t i = at; i < end; ++i) {
      req.inputs.push_back(inputs[i].history);
      req.repetitions.push_back(std::uint8_t(std::clamp(inputs[i].repetitions, 0, protocol::kMaxRepetitions)));
    }
    auto reply = impl_->call<protocol::EvaluateReply>(req, "EVALUATE");
    if (reply.results.size() != end - at)
      impl_->unavailable("answered " + std::to_string(end - at) + " inputs with " +
                         std::to_string(reply.results.size()) + " results");
    if (!(reply.network == network))
      impl_->unavailable("answered with " + reply.network.describe() + " when asked for " + network.describe());
    for (auto& r : reply.results) {
      EvalOutput o;
      o.win = r.win;
      o.draw = r.draw;
      o.loss = r.loss;
      o.moves = std::move(r.moves);
      o.priors = std::move(r.priors);
      out.push_back(std::move(o));
    }
  }
  return result;
}

void WorkerClient::load_network(const NetworkKey& network, const std::string& config_json,
                                const std::string& weights) {
  protocol::LoadNetworkRequest req;
  req.network = network;
  req.config = config_json;
  req.weights = weights;
  impl_->call<protocol::LoadNetworkReply>(req, "LOAD_NETWORK");
}

std::string WorkerClient::init_network_weights(const std::string& config_json, std::uint64_t seed) {
  protocol::InitWeightsRequest req;
  req.config = config_json;
  req.seed = seed;
  return impl_->call<protocol::InitWeightsReply>(req, "INIT_WEIGHTS").weights;
}

std::string WorkerClient::status_json(std::uint32_t database) {
  protocol::StatusRequest req;
  req.database = database;
  return impl_->call<protocol::StatusReply>(req, "STATUS").json;
}

TrainSessionInfo WorkerClient::train_start(const std::string& config_json, const std::string& weights,
                                           const std::optional<std::string>& reference_weights,
                                           const std::string& options_json, const std::optional<std::string>& state,
                                           const std::optional<std::string>& optimizer) {
  protocol::TrainStartRequest req;
  req.config = config_json;
  req.weights = weights;
  req.reference = reference_weights;
  req.options = options_json;
  req.state = state;
  req.optimizer = optimizer;
  const auto reply = impl_->call_train<protocol::TrainStartReply>(req, "TRAIN_START");
  return TrainSessionInfo{reply.session, reply.steps_done, reply.device};
}

protocol::TrainMetrics WorkerClient::train_step(std::uint32_t session,
                                                const std::vector<std::span<const std::uint8_t>>& samples,
                                                bool evaluate_only) {
  if (samples.empty() || samples.size() > protocol::kMaxTrainSamples)
    throw WorkerError("train_step: " + std::to_string(samples.size()) + " samples (1.." +
                      std::to_string(protocol::kMaxTrainSamples) + " per step)");
  protocol::EncodedTrainStepRequest req;
  req.session = session;
  req.mode = evaluate_only ? protocol::TrainMode::kEvaluate : protocol::TrainMode::kStep;
  req.samples = samples;
  auto reply = impl_->call_train<protocol::TrainStepReply>(req, "TRAIN_STEP");
  if (reply.metrics.positions != samples.size())
    impl_->unavailable("answered a step on " + std::to_string(samples.size()) + " samples with " +
                       std::to_string(reply.metrics.positions) + " positions");
  return reply.metrics;
}

TrainSaved WorkerClient::train_save(std::uint32_t session, bool weights, bool state, bool close) {
  protocol::TrainSaveRequest req;
  req.session = session;
  req.flags = std::uint8_t((weights ? protocol::kTrainSaveWeights : 0) | (state ? protocol::kTrainSaveState : 0) |
                           (close ? protocol::kTrainSaveClose : 0));
  auto reply = impl_->call_train<protocol::TrainSaveReply>(req, "TRAIN_SAVE");
  return TrainSaved{reply.steps_done, std::move(reply.weights), std::move(reply.state)};
}

}  // namespace pgmate::worker
