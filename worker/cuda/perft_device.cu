#include "worker/cuda/perft_device.cuh"

#include <chrono>
#include <memory>
#include <thread>

namespace pgmate::gpu::detail {

namespace {
// Device stack for the recursive checkers perft (the chess kernels need none beyond their
// static frames). Measured frames (ptxas -v, sm_90, CUDA 13) per ply: perft 152-160 B,
// generate_moves 16, generate_moves_for 136, its jump lambda 48, jump_sequences 120 + jump
// 8-16, child 48: about 530 B, plus about 130 B for every further jump of a multi-jump.
// So 640 B per ply, one spare ply, and a 12-jump chain: about 9 KB. Set once, at the first
// checkers perft: it is context-wide, reserves that much local memory for every resident
// thread (about 2.4 GB on an H100), and resizing waits for the device to go idle.
constexpr std::size_t kCheckersStackBytes = 1024 + 640 * (kCheckersStackPlies + 1) + 136 * 12;
}  // namespace

PerftDevice& PerftDevice::instance() {
  static std::mutex init_mutex;
  static PerftDevice* device = nullptr;  // never destroyed: CUDA may be torn down first at exit
  std::lock_guard lock(init_mutex);
  if (!device) device = new PerftDevice();
  return *device;
}

PerftDevice::PerftDevice() {
  // Resources are released by the destructor if a later step throws.
  struct Partial {
    PerftDevice* d;
    bool ok = false;
    ~Partial() {
      if (!ok) d->release_resources();
    }
  } partial{this};
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "get stream priorities");
  // `least` is the lowest priority: the network's batches go first at every block boundary.
  check(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, least), "create perft stream");
  check(cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming), "create perft event");
  void* host = nullptr;
  check(cudaHostAlloc(&host, sizeof(unsigned), cudaHostAllocMapped), "allocate cancel word");
  host_cancel_ = static_cast<volatile unsigned*>(host);
  *host_cancel_ = 0;
  void* dev = nullptr;
  check(cudaHostGetDevicePointer(&dev, host, 0), "map cancel word");
  device_cancel_ = static_cast<unsigned*>(dev);
  partial.ok = true;
}

void PerftDevice::ensure_checkers_stack() {
  if (checkers_stack_set_) return;
  std::size_t stack = 0;
  check(cudaDeviceGetLimit(&stack, cudaLimitStackSize), "get stack size");
  if (stack < kCheckersStackBytes) check(cudaDeviceSetLimit(cudaLimitStackSize, kCheckersStackBytes), "set stack size");
  checkers_stack_set_ = true;
}

PerftDevice::~PerftDevice() { release_resources(); }

void PerftDevice::release_resources() {
  if (host_cancel_) cudaFreeHost(const_cast<unsigned*>(host_cancel_));
  if (done_) cudaEventDestroy(done_);
  if (stream_) cudaStreamDestroy(stream_);
  host_cancel_ = nullptr;
  done_ = nullptr;
  stream_ = nullptr;
}

void PerftDevice::throw_if_cancelled(const std::function<bool()>& cancelled) {
  if (cancelled && cancelled()) *host_cancel_ = 1;
  if (*host_cancel_) throw PerftCancelled();
}

void PerftDevice::wait(const std::function<bool()>& cancelled, const char* what) {
  check(cudaEventRecord(done_, stream_), what);
  if (!cancelled) {
    check(cudaEventSynchronize(done_), what);
  } else {
    auto pause = std::chrono::microseconds(50);
    while (true) {
      const cudaError_t err = cudaEventQuery(done_);
      if (err == cudaSuccess) break;
      if (err != cudaErrorNotReady) check(err, what);
      if (!*host_cancel_ && cancelled()) *host_cancel_ = 1;
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::microseconds(500)) pause *= 2;
    }
  }
  // Launch errors surface here too (the stream is ours, so they are ours).
  check(cudaGetLastError(), what);
  if (*host_cancel_) throw PerftCancelled();
}

}  // namespace pgmate::gpu::detail
