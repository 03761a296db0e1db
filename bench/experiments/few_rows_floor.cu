// few_rows_floor.cu: hand-written one-read softmax kernels for a few long
// rows, the floor that bench/experiments/few_rows_floor.py measures the
// compiler's kernels against. Not part of the compiler: the smallest kernels
// that read a row once, meet across the blocks that hold it and write it.
//
//   cluster_<t>_e<E>_c<C>: a row over a cluster of C blocks of 256 threads,
//     E elements a thread in registers; the blocks' (max, sum) pairs meet in
//     distributed shared memory (one cluster barrier before, one arrive
//     after reading and its wait before the exit).
//   grid_<t>_e<E>: a row over B = ceil(N / (256 E)) plain blocks; the pairs
//     meet in global memory (a store, one release atomic on the row's
//     counter, thread 0 spinning on an acquire load); every block of the
//     launch must be resident at once (the script launches at most two per
//     SM, which __launch_bounds__ guarantees).
//
// Rows are contiguous, N a multiple of the 16-byte vector.
//
//   nvcc -arch=sm_90a -O3 -cubin few_rows_floor.cu -o few_rows_floor.cubin

#include <cuda_bf16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

struct Pair {
  float m, s;
};

__device__ __forceinline__ Pair combine(Pair a, Pair b) {
  float m = fmaxf(a.m, b.m);
  if (m == -INFINITY)
    return {m, 0.f};
  return {m, a.s * ex2((a.m - m) * kLog2e) + b.s * ex2((b.m - m) * kLog2e)};
}

__device__ __forceinline__ Pair warpPair(Pair p) {
#pragma unroll
  for (int o = 16; o; o >>= 1)
    p = combine(p,
                {__shfl_xor_sync(~0u, p.m, o), __shfl_xor_sync(~0u, p.s, o)});
  return p;
}

/// The block's pair, in every thread.
__device__ __forceinline__ Pair blockPair(Pair p) {
  __shared__ Pair warps[kWarps];
  int lane = threadIdx.x % 32;
  p = warpPair(p);
  if (lane == 0)
    warps[threadIdx.x / 32] = p;
  __syncthreads();
  return warpPair(lane < kWarps ? warps[lane] : Pair{-INFINITY, 0.f});
}

__device__ __forceinline__ void unpack(float4 v, float *o) {
  o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
}
__device__ __forceinline__ void unpack(uint4 v, float *o) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    o[2 * i] = __uint_as_float(w[i] << 16);
    o[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}
__device__ __forceinline__ void pack(const float *o, float4 &v) {
  v = make_float4(o[0], o[1], o[2], o[3]);
}
__device__ __forceinline__ void pack(const float *o, uint4 &v) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h = __floats2bfloat162_rn(o[2 * i], o[2 * i + 1]);
    w[i] = *reinterpret_cast<uint32_t *>(&h);
  }
  v = make_uint4(w[0], w[1], w[2], w[3]);
}

template <typename T> struct Vec;
template <> struct Vec<float> {
  static constexpr int kWidth = 4;
  using Type = float4;
};
template <> struct Vec<__nv_bfloat16> {
  static constexpr int kWidth = 8;
  using Type = uint4;
};

/// This block's slice [start, end) of its row, for rows of `n` held by
/// `blocks` consecutive blocks each: E elements a thread, as vectors
/// interleaved across the threads so that a warp's accesses coalesce.
template <typename T, int E> struct Slice {
  static constexpr int kWidth = Vec<T>::kWidth, kVectors = E / kWidth;
  using V = typename Vec<T>::Type;
  size_t row;
  int start, end;
  float v[E];

  __device__ __forceinline__ Slice(int n, int blocks)
      : row(blockIdx.x / blocks), start(blockIdx.x % blocks * E * kThreads),
        end(min(n, start + E * kThreads)) {}

  __device__ __forceinline__ int column(int j) const {
    return start + (j * kThreads + threadIdx.x) * kWidth;
  }

  /// Loads the slice of `x`; returns the thread's (max, sum) pair.
  __device__ __forceinline__ Pair load(const T *x, int n) {
    const T *rowStart = x + row * n;
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      int col = column(j);
      if (col < end) {
        unpack(*reinterpret_cast<const V *>(rowStart + col), v + j * kWidth);
      } else {
#pragma unroll
        for (int k = 0; k < kWidth; ++k)
          v[j * kWidth + k] = -INFINITY;
      }
    }
    float m = -INFINITY, s = 0.f;
#pragma unroll
    for (int e = 0; e < E; ++e)
      m = fmaxf(m, v[e]);
    if (m != -INFINITY) {
#pragma unroll
      for (int e = 0; e < E; ++e)
        s += ex2((v[e] - m) * kLog2e);
    }
    return {m, s};
  }

  /// Stores the softmax of the slice against the row's pair `p` into `y`.
  __device__ __forceinline__ void store(T *y, int n, Pair p) {
    T *rowStart = y + row * n;
    float inv = 1.f / p.s;
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      int col = column(j);
      if (col >= end)
        continue;
      float o[kWidth];
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        o[k] = ex2((v[j * kWidth + k] - p.m) * kLog2e) * inv;
      V out;
      pack(o, out);
      *reinterpret_cast<V *>(rowStart + col) = out;
    }
  }
};

template <typename T, int E, int C>
__device__ __forceinline__ void clusterRow(const T *x, T *y, int n) {
  __shared__ Pair slot;
  Slice<T, E> slice(n, C);
  Pair p = blockPair(slice.load(x, n));
  if (threadIdx.x == 0)
    slot = p;
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
  Pair q{-INFINITY, 0.f};
  int lane = threadIdx.x % 32;
  if (lane < C) {
    uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(&slot));
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(local), "r"(lane));
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
                 : "=f"(q.m), "=f"(q.s)
                 : "r"(remote)
                 : "memory");
  }
  q = warpPair(q);
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  slice.store(y, n, q);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <typename T, int E>
__device__ __forceinline__ void gridRow(const T *x, T *y, int n, int blocks,
                                        Pair *ws, unsigned *counters,
                                        unsigned target) {
  __shared__ Pair total;
  Slice<T, E> slice(n, blocks);
  Pair p = blockPair(slice.load(x, n));
  size_t row = slice.row;
  unsigned *counter = counters + row;
  if (threadIdx.x == 0) {
    ws[row * blocks + blockIdx.x % blocks] = p;
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter)
                 : "memory");
    unsigned seen;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                   : "=r"(seen)
                   : "l"(counter)
                   : "memory");
    } while (seen < target);
  }
  if (threadIdx.x < 32) {
    // The other lanes wait for lane 0's acquire here: a block barrier would
    // count warp 0 in once its other lanes arrived.
    __syncwarp();
    Pair q{-INFINITY, 0.f};
    for (int i = threadIdx.x; i < blocks; i += 32) {
      float2 e =
          __ldcg(reinterpret_cast<const float2 *>(ws + row * blocks + i));
      q = combine(q, {e.x, e.y});
    }
    q = warpPair(q);
    if (threadIdx.x == 0)
      total = q;
  }
  __syncthreads();
  slice.store(y, n, total);
}

} // namespace

#define CLUSTER(T, NAME, E, C)                                                 \
  extern "C" __global__ void __cluster_dims__(C, 1, 1)                         \
      __launch_bounds__(kThreads)                                              \
          cluster_##NAME##_e##E##_c##C(const T *x, T *y, int n) {              \
    clusterRow<T, E, C>(x, y, n);                                              \
  }
#define GRID(T, NAME, E)                                                       \
  extern "C" __global__ void __launch_bounds__(kThreads, 2)                    \
      grid_##NAME##_e##E(const T *x, T *y, int n, int blocks, Pair *ws,        \
                         unsigned *counters, unsigned target) {                \
    gridRow<T, E>(x, y, n, blocks, ws, counters, target);                      \
  }
#define BOTH(T, NAME)                                                          \
  CLUSTER(T, NAME, 16, 8)                                                      \
  CLUSTER(T, NAME, 32, 8)                                                      \
  CLUSTER(T, NAME, 64, 8)                                                      \
  CLUSTER(T, NAME, 16, 16)                                                     \
  CLUSTER(T, NAME, 32, 16)                                                     \
  CLUSTER(T, NAME, 64, 16)                                                     \
  GRID(T, NAME, 8)                                                             \
  GRID(T, NAME, 16)                                                            \
  GRID(T, NAME, 32)

BOTH(float, f32)
BOTH(__nv_bfloat16, bf16)

extern "C" __global__ void empty() {}
