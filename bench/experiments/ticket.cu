// Prototype: softmax of long rows as chunks taken by ticket. Each block takes
// the next chunk of CHUNK = THREADS x EPT elements (an atomic ticket: row-major
// order over every row's chunks), loads it into registers (one DRAM read),
// publishes its (max, sum) pair to its row's workspace entry, waits until the
// row's every chunk has published, combines the row's pairs, writes its chunk
// out and ends. No block waits for a chunk whose ticket comes later than a
// resident block's, so the kernel cannot hang while the device holds at least
// as many blocks as a row has chunks (the tickets, not the block index, fix
// the order). COPY_ONLY: the same tickets, loads and stores, y = x.
//
// Workspace (u32, zero before the first launch, zero after each launch that
// completes): [0] the ticket, then per row 32 + 2 K words: [0] the row's
// counter (K arrivals, then K departures; the last departure zeroes it), from
// word 32 on the K (max, sum) pairs.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef THREADS
#define THREADS 256
#endif
#ifndef EPT
#define EPT 32
#endif
#ifndef DT
#define DT 0
#endif
// SEPT: elements per thread staged in shared memory (cp.async) besides the
// EPT held in registers. RECOMP: the registers keep the input and the
// output recomputes its exp (fewer registers for 16-bit input).
#ifndef SEPT
#define SEPT 0
#endif
// SONLINE: one pass over the stage for its (max, sum) instead of two.
// BULK: the stage filled by one cp.async.bulk (completion on an mbarrier)
// instead of a cp.async per thread and vector. SLEEP: ns between polls.
#ifndef SLEEP
#define SLEEP 64
#endif
#ifndef LDHINT
#define LDHINT 0
#endif
#ifndef STHINT
#define STHINT 1
#endif
#if DT == 0
typedef float elem;
#define VEC 4
#else
typedef __nv_bfloat16 elem;
#define VEC 8
#endif
#define CHUNK (THREADS * (EPT + SEPT))
#define NV (EPT / VEC)
#define NS (SEPT / VEC)
#define WARPS (THREADS / 32)
#define LOG2E 1.4426950408889634f
#ifndef KNAME
#define KNAME ticket_softmax
#endif

__device__ __forceinline__ float ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ void combine(float &m, float &s, float mo,
                                        float so) {
  float nm = fmaxf(m, mo);
  if (nm == -INFINITY) // both empty
    return;
  s = s * ex2((m - nm) * LOG2E) + so * ex2((mo - nm) * LOG2E);
  m = nm;
}
__device__ __forceinline__ void warp_combine(float &m, float &s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float mo = __shfl_xor_sync(0xffffffffu, m, o);
    float so = __shfl_xor_sync(0xffffffffu, s, o);
    combine(m, s, mo, so);
  }
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
               : "=r"(v)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ unsigned add_release(unsigned *p, unsigned v) {
  unsigned old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(v)
               : "memory");
  return old;
}
#ifdef BULK
#define STAGE_BAR (unsigned)__cvta_generic_to_shared(&sBar)
#else
#define STAGE_BAR 0u
#endif
// Waits for the stage: the mbarrier's phase 0 (BULK) or this thread's
// cp.async groups (then the block's, through a barrier, is not needed: each
// thread reads back only what it copied).
__device__ __forceinline__ void wait_stage(unsigned bar) {
#ifdef BULK
  unsigned done;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(bar)
                 : "memory");
  } while (!done);
#else
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
__device__ __forceinline__ uint4 load(const uint4 *p) {
#if LDHINT
  return __ldcs(p);
#else
  return *p;
#endif
}
__device__ __forceinline__ void store(uint4 *p, uint4 v) {
#if STHINT
  __stcs(p, v);
#else
  *p = v;
#endif
}
__device__ __forceinline__ void unpack(uint4 v, float *f) {
#if DT == 0
  f[0] = __uint_as_float(v.x);
  f[1] = __uint_as_float(v.y);
  f[2] = __uint_as_float(v.z);
  f[3] = __uint_as_float(v.w);
#else
  unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
#endif
}
__device__ __forceinline__ uint4 pack(const float *f) {
#if DT == 0
  return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]),
                    __float_as_uint(f[2]), __float_as_uint(f[3]));
#else
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    w[i] = *reinterpret_cast<unsigned *>(&h);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
#endif
}

#if SEPT
// Calls f(values) with the VEC values of each of this thread's staged
// vectors, two vectors unrolled at a time (more keeps them all in
// registers).
template <class F>
__device__ __forceinline__ void for_staged(const uint4 *stage, int tid, F f) {
#pragma unroll 2
  for (int i = 0; i < NS; ++i) {
    float g[VEC];
    unpack(stage[i * THREADS + tid], g);
    f(g, i);
  }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
    KNAME(const elem *__restrict__ x, elem *__restrict__ y, long long rows,
          long long cols, unsigned *__restrict__ ws) {
  __shared__ unsigned sTicket;
  __shared__ float2 sPair[WARPS];
  __shared__ float2 sRow;
#ifdef BULK
  __shared__ __align__(8) unsigned long long sBar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(&sBar))
                 : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
#endif
  const unsigned K = (unsigned)(cols / CHUNK);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#ifdef NO_TICKET
  const unsigned t = blockIdx.x;
#else
  if (tid == 0)
    sTicket = atomicInc(ws, (unsigned)(rows * K) - 1);
  __syncthreads();
  const unsigned t = sTicket;
#endif
  const unsigned row = t / K, chunk = t % K;
  const long long base = (long long)row * cols + (long long)chunk * CHUNK;
  const uint4 *src = reinterpret_cast<const uint4 *>(x + base);
  uint4 *dst = reinterpret_cast<uint4 *>(y + base);
#if SEPT
  extern __shared__ uint4 stage[];
#ifdef BULK
  const unsigned bar = (unsigned)__cvta_generic_to_shared(&sBar);
  if (tid == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     bar),
                 "r"(THREADS * NS * 16)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
                 "bytes [%0], [%1], %2, [%3];" ::"r"(
                     (unsigned)__cvta_generic_to_shared(stage)),
                 "l"(src + NV * THREADS), "r"(THREADS * NS * 16), "r"(bar)
                 : "memory");
  }
#else
#pragma unroll
  for (int i = 0; i < NS; ++i)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(stage + i * THREADS +
                                                        tid)),
                 "l"(src + (NV + i) * THREADS + tid)
                 : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
#endif
  uint4 v[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i)
    v[i] = load(src + i * THREADS + tid);
#ifdef COPY_ONLY
#pragma unroll
  for (int i = 0; i < NV; ++i)
    store(dst + i * THREADS + tid, v[i]);
#if SEPT
  wait_stage(STAGE_BAR);
#pragma unroll
  for (int i = 0; i < NS; ++i)
    store(dst + (NV + i) * THREADS + tid, stage[i * THREADS + tid]);
#endif
#else
  float f[EPT];
#pragma unroll
  for (int i = 0; i < NV; ++i)
    unpack(v[i], f + i * VEC);
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < EPT; ++i)
    m = fmaxf(m, f[i]);
#if SEPT && !defined(SONLINE)
  wait_stage(STAGE_BAR);
  for_staged(stage, tid, [&](const float *g, int) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      m = fmaxf(m, g[j]);
  });
#endif
  float s = 0.f;
  const float ms = m * LOG2E;
#ifdef SONLINE
  float m2 = -INFINITY, s2 = 0.f;
#endif
#pragma unroll
  for (int i = 0; i < EPT; ++i) {
#ifdef RECOMP
    s += ex2(fmaf(f[i], LOG2E, -ms));
#else
    f[i] = ex2(fmaf(f[i], LOG2E, -ms));
    s += f[i];
#endif
  }
#if SEPT && defined(SONLINE)
  // The stage's (max, sum) in one pass, folded into the registers' pair.
  wait_stage(STAGE_BAR);
  for_staged(stage, tid, [&](const float *g, int) {
    float gm = g[0];
#pragma unroll
    for (int j = 1; j < VEC; ++j)
      gm = fmaxf(gm, g[j]);
    float gs = 0.f;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      gs += ex2((g[j] - gm) * LOG2E);
    combine(m2, s2, gm, gs);
  });
#elif SEPT
  asm volatile("" ::: "memory"); // read the stage again, not registers
  for_staged(stage, tid, [&](const float *g, int) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      s += ex2(fmaf(g[j], LOG2E, -ms));
  });
#endif
#if SEPT && defined(SONLINE)
  combine(m2, s2, m, s);
  float bm = m2, bs = s2;
#else
  float bm = m, bs = s;
#endif
#ifdef RECOMP
  // Keep the packed input, not its unpacked values, until the output.
#pragma unroll
  for (int i = 0; i < NV; ++i)
    asm volatile("" : "+r"(v[i].x), "+r"(v[i].y), "+r"(v[i].z), "+r"(v[i].w));
#endif
  warp_combine(bm, bs);
  if (lane == 0)
    sPair[warp] = make_float2(bm, bs);
  __syncthreads();
  unsigned *counter = ws + 32 + (size_t)row * (32 + 2 * K);
  float2 *pairs = reinterpret_cast<float2 *>(counter + 32);
  if (warp == 0) {
    float wm = lane < WARPS ? sPair[lane].x : -INFINITY;
    float wsum = lane < WARPS ? sPair[lane].y : 0.f;
    warp_combine(wm, wsum);
    if (lane == 0) {
      __stcg(pairs + chunk, make_float2(wm, wsum));
      add_release(counter, 1);
    }
    // Every lane polls (one request per warp), so that each lane's later
    // loads of the pairs follow its own acquire.
    while (ld_acquire(counter) < K)
      if (SLEEP)
        __nanosleep(SLEEP);
    float rm = -INFINITY, rs = 0.f;
    for (unsigned j = lane; j < K; j += 32) {
      float2 p = __ldcg(pairs + j);
      combine(rm, rs, p.x, p.y);
    }
    warp_combine(rm, rs);
    if (lane == 0) {
      sRow = make_float2(rm, rs);
      if (atomicAdd(counter, 1) == 2 * K - 1)
        atomicExch(counter, 0);
    }
  }
  __syncthreads();
  const float2 r = sRow;
  const float inv = 1.f / r.y;
#ifdef RECOMP
  const float rm = r.x * LOG2E;
#pragma unroll
  for (int i = 0; i < NV; ++i) {
    float o[VEC];
    unpack(v[i], o);
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      o[j] = ex2(fmaf(o[j], LOG2E, -rm)) * inv;
    store(dst + i * THREADS + tid, pack(o));
  }
#else
  const float scale = ex2((m - r.x) * LOG2E) * inv;
#pragma unroll
  for (int i = 0; i < NV; ++i) {
    float o[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      o[j] = f[i * VEC + j] * scale;
    store(dst + i * THREADS + tid, pack(o));
  }
#endif
#if SEPT
  {
    asm volatile("" ::: "memory");
    const float rm2 = r.x * LOG2E;
    for_staged(stage, tid, [&](const float *g, int i) {
      float o[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        o[j] = ex2(fmaf(g[j], LOG2E, -rm2)) * inv;
      store(dst + (NV + i) * THREADS + tid, pack(o));
    });
  }
#endif
#endif
}
