// make_torch_backend: the EvalBackend that serves the LibTorch network (network.h).
//
// Device: "cpu"; "cuda" / "cuda:N" (std::runtime_error when LibTorch has no CUDA or no such
// device); "auto" (cuda:0 when torch::cuda::is_available(), else cpu); anything else throws
// std::invalid_argument.
//
// Precision: the weights are converted once, at load, to the precision the network runs in:
// "fp32", "bf16" or "fp16" ("auto": bf16 on CUDA, fp32 on the CPU). No autocast, which would
// cast every weight again on every batch. fp32 on CUDA turns TF32 off (process-wide), so
// results agree with the CPU's. WDL and priors are always softmaxed in fp32. On CUDA each
// calling thread runs its batches on its own high-priority stream (torch_compat.h).
//
// Input encoding ("host", "device" or "auto"; see eval_backend.h): with "device" the backend
// takes boards (InputForm::kBoards). On CUDA they go to the GPU in one pinned asynchronous
// copy and the GPU encoder (cuda/encode_kernel.h) writes the planes on the batch's stream,
// straight into the network's input; on the CPU the host encoder writes them into the input
// tensor. Both give the host encoder's planes exactly. A CUDA backend checks that when it is
// made, on a few positions with history and repetitions: "device" then throws on a
// difference, "auto" falls back to host encoding and says so in device().
//
// CUDA graphs (cuda_graphs, off unless asked): each network captures its forward pass once
// per batch size rounded up to a power of two (8 .. 4096 rows) and replays it, one launch
// instead of one per kernel. A capture that fails turns graphs off for that network, which
// runs eagerly, and says so on stderr.
//
// Threads: the first backend made sets LibTorch's intra-op threads (process-wide) to
// PGMATE_NN_THREADS when that is a positive integer; else leaves LibTorch's choice when
// OMP_NUM_THREADS or MKL_NUM_THREADS is set; else std::thread::hardware_concurrency() for a
// CPU backend, at most 4 for a CUDA one. Never more than hardware_concurrency(). On a host
// whose cores are busy with other work, fewer threads is much faster (OpenMP barriers wait
// for descheduled threads): set PGMATE_NN_THREADS there. A CPU batch of fewer than
// kOneThreadBelow positions runs on the calling thread alone.
//
// Weights: load() takes the safetensors bytes of network.h (load_network); init_weights()
// refuses, before building anything, a configuration whose weights would exceed the
// backend's max_weight_bytes (pgmate-worker passes its --max-weights-mb).
//
// Concurrency: run() and load() may be called from several threads; a loaded network is
// immutable and runs on whichever thread asks.
#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "nn/encoding.h"
#include "worker/nn/network.h"
#include "worker/nn/torch_compat.h"
#include "worker/backend/eval_backend.h"

// The GPU encoder needs this build's CUDA kernels and a CUDA LibTorch.
#if PGMATE_TORCH_CUDA && PGMATE_HAVE_CUDA
#define PGMATE_GPU_ENCODER 1
#include "worker/cuda/encode_kernel.h"
#else
#define PGMATE_GPU_ENCODER 0
#endif

namespace pgmate::worker {
namespace {

using nn::kBoardSquares;
using nn::kInputPlanes;
using nn::kPolicySize;
using nn::kWdlSize;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 4096) return fallback;
  return static_cast<int>(n);
}

// LibTorch's intra-op threads are process-wide: set once, by the first backend made.
void configure_threads_once(bool cuda) {
  static std::once_flag once;
  std::call_once(once, [cuda] {
    const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int threads = env_int("PGMATE_NN_THREADS", 0);
    if (threads <= 0 && (std::getenv("OMP_NUM_THREADS") || std::getenv("MKL_NUM_THREADS"))) return;  // LibTorch honours them
    if (threads <= 0) threads = cuda ? std::min(hardware, 4) : hardware;  // on CUDA the CPU only feeds the GPU
    torch::set_num_threads(std::min(threads, hardware));
  });
}

// The forward pass allocates and frees the same large CPU buffers (convolution workspaces,
// activations) every batch. Left to itself, glibc serves them with mmap and unmaps them on
// free, so every batch faults its pages in again: the seed's network ran at about half speed
// (batch 8: 150 against 335 positions/s on one thread) until something happened to raise
// glibc's dynamic thresholds. Keep freed blocks of up to 256 MiB in the heap, and trim it
// only above 1 GiB. PGMATE_NN_KEEP_MEMORY=0 leaves glibc's defaults.
void configure_allocator_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (env_int("PGMATE_NN_KEEP_MEMORY", 1) == 0) return;
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
}

torch::Device parse_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "auto") {
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  }
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (name.size() > 5) {
      const std::string digits = name.substr(5);
      if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("torch backend: bad device \"" + name + "\"");
      }
      index = std::stoi(digits);
    }
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("torch backend: device \"" + name +
                               "\" requested but LibTorch has no CUDA device (this build or machine is CPU-only)");
    }
    if (index >= static_cast<int>(torch::cuda::device_count())) {
      throw std::runtime_error("torch backend: no CUDA device " + std::to_string(index));
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw std::invalid_argument("torch backend: unknown device \"" + name + "\" (expected cpu, cuda, cuda:N or auto)");
}

#if PGMATE_TORCH_CUDA
// One forward pass captured as a CUDA graph for batches padded to a fixed number of rows:
// a replay is one launch instead of one per kernel (about 150 for the seed's network). Its
// input and outputs are fixed tensors, so one replay runs at a time: the caller holds
// `mutex` from copying its input in until it has read the outputs.
struct CapturedForward {
  std::mutex mutex;
  at::cuda::CUDAGraph graph;
  torch::Tensor input, wdl, policy;
};

// Batches up to this many rows replay a graph (padded to the next power of two, at least 8).
constexpr std::int64_t kLargestGraph = 4096;

std::int64_t graph_rows(std::int64_t n) {
  std::int64_t rows = 8;
  while (rows < n) rows *= 2;
  return rows <= kLargestGraph ? rows : 0;
}
#endif

class TorchNetwork final : public LoadedNetwork {
 public:
  TorchNetwork(nn::Network network, const nn::NetworkConfig& config)
      : network_(std::move(network)), config_(config), parameters_(nn::count_parameters(*network_)) {
    for (const auto& p : network_->parameters()) bytes_ += p.nbytes();
    for (const auto& b : network_->buffers()) bytes_ += b.nbytes();
  }
  std::string config_json() const override { return nn::to_json(config_); }
  std::int64_t parameters() const override { return parameters_; }
  std::size_t memory_bytes() const override { return bytes_; }
  // forward() is not const in LibTorch; the weights are never changed.
  nn::NetworkOutput forward(const torch::Tensor& input) const {
    nn::Network network = network_;  // a holder copy
    return network->forward(input);
  }

#if PGMATE_TORCH_CUDA
  // The forward pass for `rows` rows as a CUDA graph, captured on first use on the calling
  // thread's stream. Null once a capture failed for this network, which then runs eagerly
  // (rows rows are independent: no layer mixes positions, so padding changes nothing).
  std::shared_ptr<CapturedForward> captured(std::int64_t rows, const torch::TensorOptions& input_options) const {
    std::lock_guard lock(graphs_mutex_);
    if (graphs_failed_) return nullptr;
    if (auto it = graphs_.find(rows); it != graphs_.end()) return it->second;
    auto c = std::make_shared<CapturedForward>();
    try {
      c->input = torch::zeros({rows, kInputPlanes, 8, 8}, input_options);
      // Once outside the capture, so that cuBLAS and cuDNN make this thread's handles and
      // workspaces before it.
      (void)forward(c->input);
      torch_compat::synchronize(input_options.device());
      torch_compat::capture_begin(c->graph);
      try {
        const nn::NetworkOutput out = forward(c->input);
        c->graph.capture_end();
        c->wdl = out.wdl;
        c->policy = out.policy;
      } catch (...) {
        try {
          c->graph.capture_end();  // leaves capture mode (and the graph's memory pool)
        } catch (...) {
        }
        throw;
      }
    } catch (const std::exception& e) {
      graphs_failed_ = true;
      const std::string message = e.what();
      std::fprintf(stderr, "pgmate-worker: CUDA graphs off for a network (%s): the capture at %lld rows failed: %s\n",
                   config_json().c_str(), static_cast<long long>(rows), message.substr(0, message.find('\n')).c_str());
      return nullptr;
    }
    graphs_.emplace(rows, c);
    return c;
  }
#endif

 private:
  nn::Network network_;
  nn::NetworkConfig config_;
  std::int64_t parameters_ = 0;
  std::size_t bytes_ = 0;
#if PGMATE_TORCH_CUDA
  mutable std::mutex graphs_mutex_;
  mutable std::map<std::int64_t, std::shared_ptr<CapturedForward>> graphs_;
  mutable bool graphs_failed_ = false;
#endif
};

torch::ScalarType parse_precision(const std::string& name, const torch::Device& device) {
  if (name == "auto") return device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
  if (name == "fp32") return torch::kFloat32;
  if (name == "bf16" || name == "fp16") {
    if (!device.is_cuda())
      throw std::invalid_argument("torch backend: precision " + name + " needs a CUDA device (the CPU runs fp32)");
    return name == "bf16" ? torch::kBFloat16 : torch::kHalf;
  }
  throw std::invalid_argument("torch backend: unknown precision \"" + name + "\" (expected auto, fp32, bf16 or fp16)");
}

// Whether the backend encodes its inputs from boards (see the top of the file).
bool parse_encode(const std::string& name, const torch::Device& device) {
  if (name == "host") return false;
  if (name == "auto") return device.is_cuda() && PGMATE_GPU_ENCODER;
  if (name == "device") {
    if (device.is_cuda() && !PGMATE_GPU_ENCODER)
      throw std::invalid_argument("torch backend: encode \"device\" on CUDA needs the GPU encoder, which this build "
                                  "lacks (built without nvcc or without a CUDA LibTorch)");
    return true;
  }
  throw std::invalid_argument("torch backend: unknown encode \"" + name + "\" (expected auto, host or device)");
}

// A boards batch's planes by the host encoder, into out (size x 72 x 64 floats).
void encode_on_host(const EvalBatch& batch, float* out) {
  const std::size_t plane_floats = std::size_t(kInputPlanes) * kBoardSquares;
  for (std::size_t i = 0; i < std::size_t(batch.size); ++i)
    ::pgmate::nn::encode(batch.boards.data() + i * kBoardsPerInput, batch.history_counts[i], out + i * plane_floats,
                         batch.repetitions[i]);
}

// CPU batches smaller than this run on one intra-op thread: waking the others for each
// operation of the forward pass costs more than they save. The shipped network on 2 cores,
// positions/s on one thread against two: batch 1 914 against 142, 8 3,313 against 1,568,
// 32 4,386 against 4,206, 64 4,554-4,612 against 4,217-5,133, 128 4,751-4,812 against
// 5,016-6,167 (bench/RESULTS.md, "worker_eval").
constexpr std::int64_t kOneThreadBelow = 64;

// omp_set_num_threads of the OpenMP runtime LibTorch runs on, looked up at run time (this
// code is not built with OpenMP and must not bring a second runtime); null when LibTorch
// has none. Unlike at::set_num_threads it sets the calling thread's count only: the other
// threads, and those that start later, keep LibTorch's.
using SetThreads = void (*)(int);
SetThreads openmp_set_num_threads() {
  static const SetThreads f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return f;
}

const char* precision_name(torch::ScalarType t) {
  return t == torch::kBFloat16 ? "bf16" : t == torch::kHalf ? "fp16" : "fp32";
}

class TorchBackend final : public EvalBackend {
 public:
  TorchBackend(torch::Device device, std::uint64_t max_weight_bytes, torch::ScalarType dtype, bool encode_boards,
               bool encode_required, bool cuda_graphs)
      : device_(device),
        max_weight_bytes_(max_weight_bytes),
        dtype_(dtype),
        cuda_graphs_(cuda_graphs && device.is_cuda()),
        encode_boards_(encode_boards) {
    configure_threads_once(device.is_cuda());
    cpu_threads_ = torch::get_num_threads();
    configure_allocator_once();
    if (device.is_cuda() && dtype == torch::kFloat32) torch_compat::allow_tf32(false);
    if (encode_boards_ && device.is_cuda()) {
      const std::string difference = check_encoder();
      if (!difference.empty()) {
        if (encode_required) throw std::runtime_error("torch backend: the GPU encoder " + difference);
        encode_boards_ = false;
        encoder_note_ = ", host encoding: the GPU encoder " + difference;
      }
    }
  }

  std::string device() const override {
    if (!device_.is_cuda()) return device_.str();
    return device_.str() + " " + precision_name(dtype_) + " (LibTorch " + torch_compat::version() + ", " +
           torch_compat::cuda_versions() + encoder_note_ + (cuda_graphs_ ? ", CUDA graphs" : "") + ")";
  }

  InputForm input_form() const override { return encode_boards_ ? InputForm::kBoards : InputForm::kPlanes; }

  std::shared_ptr<const LoadedNetwork> load(const std::string& config_json, const std::string& weights) override {
    const nn::NetworkConfig config = nn::parse_network_config(config_json);
    nn::Network network = nn::load_network(config, weights);
    network->to(device_, dtype_);
    network->eval();
    auto loaded = std::make_shared<TorchNetwork>(std::move(network), config);
    if (device_.is_cuda()) warm_up(*loaded);
    return loaded;
  }

  std::string init_weights(const std::string& config_json, std::uint64_t seed) override {
    return nn::init_network_bytes(nn::parse_network_config(config_json), seed, max_weight_bytes_);
  }

  EvalBatchResult run(const LoadedNetwork& loaded, const EvalBatch& batch) override {
    try {
      return run_batch(loaded, batch);
    } catch (const std::invalid_argument&) {
      throw;
    } catch (const std::exception& e) {
      std::string cause;
      if (device_.is_cuda() && torch_compat::cuda_context_lost(&cause)) {
        const std::string message = e.what();  // LibTorch's carry a backtrace: its first line is enough
        throw DeviceLost(cause + " (" + message.substr(0, message.find('\n')) + ")");
      }
      throw;
    }
  }

 private:
  EvalBatchResult run_batch(const LoadedNetwork& loaded, const EvalBatch& batch) {
    const auto* network = dynamic_cast<const TorchNetwork*>(&loaded);
    if (!network) throw std::invalid_argument("torch backend: a network loaded by another backend");
    validate(batch);
    EvalBatchResult result;
    const std::int64_t n = batch.size;
    if (n == 0) return result;

    c10::InferenceMode inference;
    torch_compat::StreamScope stream(device_);
    if (!device_.is_cuda())
      if (const SetThreads set_threads = openmp_set_num_threads()) set_threads(n < kOneThreadBelow ? 1 : cpu_threads_);
    const torch::Tensor input = encode_boards_ ? input_from_boards(batch) : input_from_planes(batch);

    // Each position's legal slots, padded to the longest list, then the lengths: one int64
    // buffer (pinned on CUDA) and one asynchronous copy, queued before the forward pass.
    std::size_t longest = 0;
    for (const auto& slots : batch.legal_slots) longest = std::max(longest, slots.size());
    const auto width = static_cast<std::int64_t>(longest);
    torch::Tensor slots_t, lengths_t;
    if (width > 0) {
      const auto longs = torch::TensorOptions().dtype(torch::kInt64);
      torch::Tensor host = torch::empty({n * width + n}, longs.pinned_memory(device_.is_cuda()));
      std::int64_t* h = host.data_ptr<std::int64_t>();
      for (std::int64_t i = 0; i < n; ++i) {
        const auto& slots = batch.legal_slots[static_cast<std::size_t>(i)];
        std::int64_t* row = h + i * width;
        std::copy(slots.begin(), slots.end(), row);
        std::fill(row + slots.size(), row + width, std::int64_t{0});
        h[n * width + i] = static_cast<std::int64_t>(slots.size());
      }
      const torch::Tensor on_device = device_.is_cuda() ? host.to(device_, torch::kInt64, /*non_blocking=*/true) : host;
      slots_t = on_device.narrow(0, 0, n * width).view({n, width});
      lengths_t = on_device.narrow(0, n * width, n).view({n, 1});
    }

    nn::NetworkOutput out;
#if PGMATE_TORCH_CUDA
    std::shared_ptr<CapturedForward> graph;
    if (cuda_graphs_ && graph_rows(n) > 0) graph = network->captured(graph_rows(n), input.options());
    std::unique_lock<std::mutex> replaying;  // until the answer is read: the graph's outputs are shared
    if (graph) {
      replaying = std::unique_lock<std::mutex>(graph->mutex);
      graph->input.narrow(0, 0, n).copy_(input);
      graph->graph.replay();
      out.wdl = graph->wdl.narrow(0, 0, n);
      out.policy = graph->policy.narrow(0, 0, n);
    } else {
      out = network->forward(input);
    }
#else
    out = network->forward(input);
#endif

    // WDL: softmax over the 3 logits. Priors: each position's legal slots gathered on the
    // device, padding masked to -inf, softmax there. Both come back in one copy: [n, 3 + longest].
    torch::Tensor answer = torch::softmax(out.wdl.to(torch::kFloat32), 1);
    if (width > 0) {
      const auto padding = torch::arange(width, slots_t.options()).unsqueeze(0) >= lengths_t;  // [n, width]
      const auto legal = out.policy.gather(1, slots_t).to(torch::kFloat32)
                             .masked_fill(padding, -std::numeric_limits<float>::infinity());
      answer = torch::cat({answer, torch::softmax(legal, 1)}, 1);
    }
    answer = answer.to(torch::kCPU).contiguous();
    const float* a = answer.data_ptr<float>();
    const std::int64_t stride = kWdlSize + width;
    result.wdl.resize(static_cast<std::size_t>(n * kWdlSize));
    result.priors.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const float* row = a + i * stride;
      std::copy(row, row + kWdlSize, result.wdl.begin() + i * kWdlSize);
      result.priors[static_cast<std::size_t>(i)].assign(row + kWdlSize,
                                                        row + kWdlSize + batch.legal_slots[static_cast<std::size_t>(i)].size());
    }
    return result;
  }

  torch::Tensor input_from_planes(const EvalBatch& batch) const {
    const std::int64_t n = batch.size;
    const auto cpu_floats = torch::TensorOptions().dtype(torch::kFloat32);
    if (device_.is_cuda()) {
      // Through pinned memory: an asynchronous copy at full bus speed. The host allocator
      // keeps the block until the copy on this stream is done.
      auto staging = torch::empty({n, kInputPlanes, 8, 8}, cpu_floats.pinned_memory(true));
      std::memcpy(staging.data_ptr<float>(), batch.planes.data(), batch.planes.size() * sizeof(float));
      return staging.to(device_, dtype_, /*non_blocking=*/true);
    }
    // The planes stay owned by the batch, read-only.
    return torch::from_blob(const_cast<float*>(batch.planes.data()), {n, kInputPlanes, 8, 8}, cpu_floats);
  }

  torch::Tensor input_from_boards(const EvalBatch& batch) const {
    const torch::Tensor planes = planes_from_boards(batch);
    return planes.scalar_type() == dtype_ ? planes : planes.to(dtype_);
  }

  // fp32 planes on the backend's device.
  torch::Tensor planes_from_boards(const EvalBatch& batch) const {
    const std::int64_t n = batch.size;
    if (!device_.is_cuda()) {
      torch::Tensor planes = torch::empty({n, kInputPlanes, 8, 8}, torch::kFloat32);
      encode_on_host(batch, planes.data_ptr<float>());
      return planes;
    }
#if PGMATE_GPU_ENCODER
    // Boards, counts and repetitions in one pinned buffer (boards first: 8-byte aligned),
    // one asynchronous copy, and the encoder on this thread's stream writes the planes.
    const std::size_t board_bytes = batch.boards.size() * sizeof(chess::Board);
    const std::size_t bytes = board_bytes + 2 * batch.history_counts.size();
    auto staging = torch::empty({static_cast<std::int64_t>(bytes)},
                                torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
    auto* host = staging.data_ptr<std::uint8_t>();
    std::memcpy(host, batch.boards.data(), board_bytes);
    std::memcpy(host + board_bytes, batch.history_counts.data(), batch.history_counts.size());
    std::memcpy(host + board_bytes + batch.history_counts.size(), batch.repetitions.data(), batch.repetitions.size());
    const torch::Tensor on_device = staging.to(device_, torch::kUInt8, /*non_blocking=*/true);
    const std::uint8_t* d = on_device.data_ptr<std::uint8_t>();
    torch::Tensor planes = torch::empty({n, kInputPlanes, 8, 8}, torch::TensorOptions().device(device_).dtype(torch::kFloat32));
    gpu::encode_on_device(reinterpret_cast<const chess::Board*>(d), d + board_bytes,
                          d + board_bytes + batch.history_counts.size(), static_cast<int>(n), planes.data_ptr<float>(),
                          torch_compat::current_stream(device_));
    return planes;
#else
    throw std::logic_error("torch backend: boards on CUDA without the GPU encoder");  // parse_encode refuses it
#endif
  }

  // "" when the backend's boards path gives the host encoder's planes on a small batch: the
  // start position, its children with their parent as history, and a knight shuffle with
  // four boards and each repetition count. Else what differs (or failed).
  std::string check_encoder() const {
    EvalBatch batch;
    const auto add = [&batch](const std::vector<chess::Board>& history, int repetitions) {
      for (int k = 0; k < kBoardsPerInput; ++k)
        batch.boards.push_back(history[std::min<std::size_t>(std::size_t(k), history.size() - 1)]);
      batch.history_counts.push_back(std::uint8_t(history.size()));
      batch.repetitions.push_back(std::uint8_t(repetitions));
      ++batch.size;
    };
    const chess::Board start = chess::parse_fen(chess::kStartFen);
    add({start}, 0);
    chess::MoveList moves;
    chess::legal_moves(start, moves);
    for (chess::Move m : moves) {
      chess::Board child = start;
      child.play(m);
      add({child, start}, 0);
    }
    std::vector<chess::Board> shuffle = {start};
    for (const char* uci : {"g1f3", "g8f6", "f3g1", "f6g8"}) {
      chess::Board next = shuffle.back();
      chess::legal_moves(next, moves);
      for (chess::Move m : moves)
        if (chess::to_uci(m) == uci) next.play(m);
      shuffle.push_back(next);
    }
    const std::vector<chess::Board> newest_first(shuffle.rbegin(), shuffle.rbegin() + kBoardsPerInput);
    for (int repetitions = 0; repetitions <= 2; ++repetitions) add(newest_first, repetitions);

    const std::size_t plane_floats = std::size_t(kInputPlanes) * kBoardSquares;
    std::vector<float> host(std::size_t(batch.size) * plane_floats);
    encode_on_host(batch, host.data());
    try {
      c10::InferenceMode inference;
      torch_compat::StreamScope stream(device_);
      const torch::Tensor planes = planes_from_boards(batch).to(torch::kCPU).contiguous();
      const float* got = planes.data_ptr<float>();
      for (std::size_t j = 0; j < host.size(); ++j)
        if (got[j] != host[j])
          return "differs from the host encoder at input " + std::to_string(j / plane_floats) + ", plane " +
                 std::to_string(j % plane_floats / kBoardSquares);
    } catch (const std::exception& e) {
      const std::string message = e.what();
      return "failed (" + message.substr(0, message.find('\n')) + ")";
    }
    return "";
  }

  // The first batches after a load pay for cuDNN's set-up and lazy module loading: pay it
  // here, once per network, with a small and a large batch.
  void warm_up(const TorchNetwork& network) {
    c10::InferenceMode inference;
    torch_compat::StreamScope stream(device_);
    for (std::int64_t n : {8, 256}) {
      auto input = torch::zeros({n, kInputPlanes, 8, 8}, torch::TensorOptions().device(device_).dtype(dtype_));
      (void)network.forward(input).wdl.to(torch::kCPU);
    }
  }

  void validate(const EvalBatch& batch) const {
    if (batch.size < 0) throw std::invalid_argument("torch backend: negative batch size");
    const auto n = static_cast<std::size_t>(batch.size);
    const std::size_t plane_floats = static_cast<std::size_t>(kInputPlanes) * kBoardSquares;
    if (encode_boards_) {
      if (batch.boards.size() != n * kBoardsPerInput || batch.history_counts.size() != n || batch.repetitions.size() != n)
        throw std::invalid_argument("torch backend: batch of " + std::to_string(n) + " needs " +
                                    std::to_string(n * kBoardsPerInput) + " boards and " + std::to_string(n) +
                                    " history counts and repetitions, got " + std::to_string(batch.boards.size()) +
                                    ", " + std::to_string(batch.history_counts.size()) + " and " +
                                    std::to_string(batch.repetitions.size()));
      for (std::size_t i = 0; i < n; ++i) {
        if (batch.history_counts[i] < 1 || batch.history_counts[i] > kBoardsPerInput || batch.repetitions[i] > 2)
          throw std::invalid_argument("torch backend: input " + std::to_string(i) + " has " +
                                      std::to_string(batch.history_counts[i]) + " boards (1..4) and repetition count " +
                                      std::to_string(batch.repetitions[i]) + " (0..2)");
      }
    } else if (batch.planes.size() != n * plane_floats) {
      throw std::invalid_argument("torch backend: batch of " + std::to_string(n) + " needs " +
                                  std::to_string(n * plane_floats) + " plane floats, got " +
                                  std::to_string(batch.planes.size()));
    }
    if (batch.legal_slots.size() != n) {
      throw std::invalid_argument("torch backend: batch of " + std::to_string(n) + " has " +
                                  std::to_string(batch.legal_slots.size()) + " legal-slot lists");
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (int slot : batch.legal_slots[i]) {
        if (slot < 0 || slot >= kPolicySize) {
          throw std::invalid_argument("torch backend: position " + std::to_string(i) + " has policy slot " +
                                      std::to_string(slot) + " outside 0.." + std::to_string(kPolicySize - 1));
        }
      }
    }
  }

  const torch::Device device_;
  const std::uint64_t max_weight_bytes_;
  const torch::ScalarType dtype_;
  const bool cuda_graphs_;
  int cpu_threads_ = 1;       // intra-op threads for a CPU batch of kOneThreadBelow or more
  bool encode_boards_;        // set once, in the constructor
  std::string encoder_note_;  // why a CUDA backend asked for "auto" encodes on the host
};

}  // namespace

std::unique_ptr<EvalBackend> make_torch_backend(const std::string& device, std::uint64_t max_weight_bytes,
                                                const std::string& precision, const std::string& encode,
                                                bool cuda_graphs) {
  const torch::Device d = parse_device(device);
  // "auto" that found no GPU runs fp32 whatever precision was asked for the GPU.
  const std::string effective = device == "auto" && !d.is_cuda() ? "fp32" : precision;
  if (effective != precision) (void)parse_precision(precision, torch::Device(torch::kCUDA, 0));  // still refuse a typo
  if (cuda_graphs && device == "cpu")
    throw std::invalid_argument("torch backend: CUDA graphs need a CUDA device");
  return std::make_unique<TorchBackend>(d, max_weight_bytes, parse_precision(effective, d), parse_encode(encode, d),
                                        encode == "device", cuda_graphs);
}

}  // namespace pgmate::worker
