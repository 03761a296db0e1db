// Prototype: the online softmax over clusters for rows of 1048576 bf16, its
// share of each row in a ring of RING tile slots filled by cp.async.bulk.
// The last warp to finish a slot in pass 2 refills it with the tile RING
// tiles later (1-2 rows ahead). COPY_ONLY: the same loads, y = x.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef THREADS
#define THREADS 1024
#endif
#ifndef TILE
#define TILE 16384
#endif
#ifndef RING
#define RING 7
#endif
#ifndef CLUSTER
#define CLUSTER 16
#endif
#define N_COLS 1048576
#ifndef CHUNK
#define CHUNK (N_COLS / CLUSTER)
#endif
// Column of element e of block r's share: the share is the chunks
// j * CLUSTER + r of CHUNK elements.
#define SHARE_COL(r, e)                                                       \
  ((((long long)(e) / CHUNK) * CLUSTER + (r)) * CHUNK + (long long)(e) % CHUNK)
#define SHARE (N_COLS / CLUSTER)
#define TPS (SHARE / TILE)
#define WARPS (THREADS / 32)
#define VPT (TILE / 8 / THREADS)
#ifndef KNAME
#define KNAME softmax_bf16_auto_n1048576_kernel0
#endif
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ uint32_t sm(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
__device__ __forceinline__ void arm(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   bar),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ float ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
// A special register's value (PTX `mov.u32 r, %reg`).
#define SPECIAL_REGISTER(fn, reg)                                             \
  __device__ __forceinline__ uint32_t fn() {                                  \
    uint32_t r;                                                               \
    asm("mov.u32 %0, %%" reg ";" : "=r"(r));                                  \
    return r;                                                                 \
  }
SPECIAL_REGISTER(cluster_rank, "cluster_ctarank")
SPECIAL_REGISTER(cluster_id, "clusterid.x")
SPECIAL_REGISTER(num_clusters, "nclusterid.x")
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
__device__ __forceinline__ void combine(float &m, float &s, float mo,
                                        float so) {
  float nm = fmaxf(m, mo);
  s = s * ex2(m - nm) + so * ex2(mo - nm);
  m = nm;
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)
    __launch_bounds__(THREADS, 1)
        KNAME(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y,
              long long rows, long long cols, long long sx, long long sy) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) uint64_t full[RING];
  __shared__ unsigned cnt[RING];
  __shared__ __align__(8) uint64_t xbar[2];
  __shared__ __align__(8) float2 xent[2][CLUSTER];
  __shared__ float2 red[2][WARPS];

  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const unsigned rank = cluster_rank(), cid = cluster_id(),
                 ncl = num_clusters();
  const long long nk =
      rows > cid ? (rows - cid + ncl - 1) / ncl : 0; // rows of this cluster
  const long long ntiles = nk * TPS;

  auto issue = [&](long long g) {
    long long k = g / TPS;
    int t = (int)(g % TPS), s = (int)(g % RING);
    long long row = cid + k * ncl;
    uint32_t bar = sm(&full[s]);
    arm(bar, TILE * 2);
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
                 : "=l"(pol));
    constexpr int piece = CHUNK < TILE ? CHUNK : TILE;
#pragma unroll 1
    for (int i = 0; i < TILE / piece; ++i) {
      const __nv_bfloat16 *src =
          x + row * sx + SHARE_COL(rank, (long long)t * TILE + i * piece);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
          "bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
              sm(ring + (size_t)s * TILE * 2 + (size_t)i * piece * 2)),
          "l"(src), "r"(piece * 2), "r"(bar), "l"(pol)
          : "memory");
    }
  };

  if (tid == 0) {
    for (int i = 0; i < RING; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sm(&full[i])));
      cnt[i] = 0;
    }
    for (int i = 0; i < 2; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sm(&xbar[i])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();
  if (tid == 0)
    for (long long g = 0; g < RING && g < ntiles; ++g)
      issue(g);

  for (long long k = 0; k < nk; ++k) {
    const long long row = cid + k * ncl;
    float M = 0.f, invS = 1.f;
#ifndef COPY_ONLY
    float m = -INFINITY, s = 0.f;
    for (int t = 0; t < TPS; ++t) {
      long long g = k * TPS + t;
      int slot = (int)(g % RING);
      wait_parity(sm(&full[slot]), (uint32_t)((g / RING) & 1));
      const uint4 *tile =
          reinterpret_cast<const uint4 *>(ring + (size_t)slot * TILE * 2);
      float v[VPT * 8];
#pragma unroll
      for (int j = 0; j < VPT; ++j) {
        uint4 q = tile[j * THREADS + tid];
        const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&q);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float2 f = __bfloat1622float2(h[e]);
          v[j * 8 + 2 * e] = f.x * LOG2E;
          v[j * 8 + 2 * e + 1] = f.y * LOG2E;
        }
      }
      float mt = v[0];
#pragma unroll
      for (int i = 1; i < VPT * 8; ++i)
        mt = fmaxf(mt, v[i]);
      float nm = fmaxf(m, mt);
      float acc = 0.f;
#pragma unroll
      for (int i = 0; i < VPT * 8; ++i)
        acc += ex2(v[i] - nm);
      s = s * ex2(m - nm) + acc;
      m = nm;
    }
#pragma unroll
    for (int off = 16; off; off /= 2)
      combine(m, s, __shfl_xor_sync(~0u, m, off), __shfl_xor_sync(~0u, s, off));
    const int buf = (int)(k & 1);
    if (lane == 0)
      red[buf][warp] = make_float2(m, s);
    __syncthreads();
    if (warp == 0) {
      float2 p = lane < WARPS ? red[buf][lane] : make_float2(-INFINITY, 0.f);
      m = p.x;
      s = p.y;
#pragma unroll
      for (int off = 16; off; off /= 2)
        combine(m, s, __shfl_xor_sync(~0u, m, off),
                __shfl_xor_sync(~0u, s, off));
      if (lane == 0)
        arm(sm(&xbar[buf]), CLUSTER * 8);
      if (lane < CLUSTER) {
        uint32_t ra, rb;
        asm("mapa.shared::cluster.u32 %0, %1, %2;"
            : "=r"(ra)
            : "r"(sm(&xent[buf][rank])), "r"(lane));
        asm("mapa.shared::cluster.u32 %0, %1, %2;"
            : "=r"(rb)
            : "r"(sm(&xbar[buf])), "r"(lane));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2."
                     "f32 [%0], {%1, %2}, [%3];" ::"r"(ra),
                     "f"(m), "f"(s), "r"(rb)
                     : "memory");
      }
    }
    wait_parity(sm(&xbar[buf]), (uint32_t)((k >> 1) & 1));
    {
      float2 p = xent[buf][lane % CLUSTER];
      m = p.x;
      s = p.y;
#pragma unroll
      for (int off = CLUSTER / 2; off; off /= 2)
        combine(m, s, __shfl_xor_sync(~0u, m, off),
                __shfl_xor_sync(~0u, s, off));
      M = m;
      invS = 1.f / s;
    }
#endif
    __nv_bfloat16 *out = y + row * sy;
    for (int t = 0; t < TPS; ++t) {
      long long g = k * TPS + t;
      int slot = (int)(g % RING);
#ifdef COPY_ONLY
      wait_parity(sm(&full[slot]), (uint32_t)((g / RING) & 1));
#endif
      const uint4 *tile =
          reinterpret_cast<const uint4 *>(ring + (size_t)slot * TILE * 2);
#pragma unroll
      for (int j = 0; j < VPT; ++j) {
        uint4 q = tile[j * THREADS + tid];
#ifndef COPY_ONLY
        __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&q);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float2 f = __bfloat1622float2(h[e]);
          f.x = ex2(f.x * LOG2E - M) * invS;
          f.y = ex2(f.y * LOG2E - M) * invS;
          h[e] = __float22bfloat162_rn(f);
        }
#endif
        uint4 *dst = reinterpret_cast<uint4 *>(
            out + SHARE_COL(rank, (long long)t * TILE +
                                      (long long)(j * THREADS + tid) * 8));
#ifdef STORE_PLAIN
        *dst = q;
#else
        __stcs(dst, q);
#endif
      }
      __syncwarp();
      if (lane == 0) {
        __threadfence_block();
        unsigned old = atomicAdd(&cnt[slot], 1u);
        if (old == WARPS - 1) {
          cnt[slot] = 0;
          __threadfence_block();
          if (g + RING < ntiles)
            issue(g + RING);
        }
      }
    }
  }
  cluster_sync();
}
