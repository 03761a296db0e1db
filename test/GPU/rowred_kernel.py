"""Loads one generated kernel (.ptx + .json) and launches it through the ABI.

Shared by the GPU suite (test/GPU/check_kernels.py) and the benchmarks
(bench/bench.py, bench/sweep.py), so that every harness sizes the persistent
grid the way docs/abi.md says:

* fused / online: min(ceil(rows / rows_per_block), SMs x resident blocks per
  SM), from the driver's occupancy calculator;
* cluster: clusters of `cluster_blocks` blocks (the size is compiled into the
  PTX), min(rows, co-resident clusters from cuOccupancyMaxActiveClusters)
  clusters, so that every cluster is resident at once;
* `grid` "rows" in the metadata: one block (or cluster) per row group
  instead, however many fit at once;
* `grid` "chunks": min(rows x chunks per row, resident blocks) blocks that
  take the chunks of `chunk_elements` by ticket, launched cooperatively with
  a zeroed workspace of 128 + rows x (128 + 8 x chunks per row, rounded up
  to 128) bytes; a row's chunks must all fit on the device at once.
"""
import ctypes
import json
import os
import re

import cupy as cp
import numpy as np


class _LaunchConfig(ctypes.Structure):
    """CUlaunchConfig of the CUDA driver API."""
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


_LIBCUDA = None


def _libcuda():
    """The CUDA driver library, loaded once."""
    global _LIBCUDA
    if _LIBCUDA is None:
        _LIBCUDA = ctypes.CDLL("libcuda.so.1")
    return _LIBCUDA


def launch_cooperative(function_ptr, grid, threads, shared, args):
    """cuLaunchCooperativeKernel on the current stream: every block of the
    grid is resident at once, or the launch fails."""
    values = [ctypes.c_uint64(int(a) & (2**64 - 1)) for a in args]
    params = (ctypes.c_void_p * len(values))(
        *[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
    rc = _libcuda().cuLaunchCooperativeKernel(
        ctypes.c_void_p(function_ptr), grid, 1, 1, threads, 1, 1, shared,
        ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
    if rc != 0:
        raise RuntimeError(f"cuLaunchCooperativeKernel failed with {rc}")


def max_active_clusters(function_ptr, cluster, threads, dynamic_shared=0):
    """Clusters of the kernel that can be resident at once on the device."""
    libcuda = _libcuda()
    config = _LaunchConfig(cluster, 1, 1, threads, 1, 1, dynamic_shared, None,
                           None, 0)
    count = ctypes.c_int(0)
    rc = libcuda.cuOccupancyMaxActiveClusters(
        ctypes.byref(count), ctypes.c_void_p(function_ptr),
        ctypes.byref(config))
    if rc != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveClusters failed with {rc}")
    return count.value


# CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED in cuda.h.
_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14


def allow_non_portable_clusters(function_ptr):
    """Lets the kernel run clusters of more than 8 blocks (docs/abi.md)."""
    libcuda = _libcuda()
    rc = libcuda.cuFuncSetAttribute(ctypes.c_void_p(function_ptr),
                                    _NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    if rc != 0:
        raise RuntimeError(f"cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_"
                           f"ALLOWED) failed with {rc}")


def named_cols(meta_file, meta):
    """N a benchmark runs a kernel on: `_n<N>_` in its metadata file's name
    (gen_kernels.py's `cols=N` variants), else its max_cols (0 when the
    kernel takes any N)."""
    found = re.search(r"_n(\d+)_", meta_file)
    return int(found.group(1)) if found else meta["max_cols"]


class Kernel:
    def __init__(self, directory, meta_file):
        self.meta_file = meta_file
        with open(os.path.join(directory, meta_file)) as f:
            self.meta = json.load(f)
        self.name = self.meta["kernel"]
        self.module = cp.RawModule(path=os.path.join(directory,
                                                     self.meta["ptx"]))
        self.function = self.module.get_function(self.name)
        self.threads = self.meta["block_threads"]
        self.rows_per_block = self.meta.get("rows_per_block", 1)
        self.cluster = self.meta.get("cluster_blocks", 1)
        # The prefetch stage: dynamic shared memory every launch provides.
        # Beyond 48 KiB of static and dynamic shared memory together a launch
        # needs the opt-in (docs/abi.md); it is harmless below.
        self.dynamic_shared = self.meta.get("dynamic_shared_bytes", 0)
        if self.dynamic_shared > 0:
            self.function.max_dynamic_shared_size_bytes = self.dynamic_shared
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        if self.cluster > 8:
            allow_non_portable_clusters(self.function.kernel.ptr)
        self.per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            self.function.kernel.ptr, self.threads, self.dynamic_shared)
        if self.cluster > 1:
            self.resident = self.cluster * max_active_clusters(
                self.function.kernel.ptr, self.cluster, self.threads,
                self.dynamic_shared)
        else:
            self.resident = self.sms * self.per_sm
        self.workspace = None
        self.chunk = self.meta.get("chunk_elements", 0)

    def chunks_per_row(self, cols):
        """Chunks of a chunks kernel's row of `cols` elements."""
        return -(-cols // self.chunk)

    def chunk_workspace(self, rows, cols):
        """A chunks kernel's workspace for `rows` rows of `cols`: zeroed
        when allocated, reused while large enough (each launch leaves it
        zero)."""
        per_row = 128 + -(-8 * self.chunks_per_row(cols) // 128) * 128
        size = 128 + rows * per_row
        if self.workspace is None or self.workspace.size < size:
            self.workspace = cp.zeros(size, cp.uint8)
        return self.workspace

    def waits(self):
        """Whether the kernel's blocks wait for each other (a row's chunks):
        it is launched cooperatively."""
        return self.chunk > 0

    def min_chunks_grid(self, cols):
        """The fewest blocks a chunks kernel runs rows of `cols` on: one per
        chunk of a row, all resident at once; refused when they do not fit."""
        chunks = self.chunks_per_row(cols)
        if chunks > self.resident:
            raise RuntimeError(
                f"{self.name}: rows of {cols} take {chunks} chunks, more "
                f"than the {self.resident} blocks resident at once")
        return chunks

    def grid(self, rows, balanced=False, cols=None):
        """Blocks of the persistent grid for `rows` rows (for a chunks
        kernel of rows of `cols`, one per chunk up to the resident blocks).
        `balanced` (an experiment, not the ABI's rule) takes the fewest
        programs that still need the same number of rounds, so that none
        idles in the last one."""
        if self.chunk:
            return min(max(rows, 1) * self.min_chunks_grid(cols),
                       self.resident)
        groups = -(-rows // self.rows_per_block)
        if self.meta.get("grid") == "rows":
            return self.cluster * max(1, groups)
        slots = self.resident // self.cluster
        programs = max(1, min(groups, slots))
        if balanced:
            programs = -(-groups // -(-groups // programs))
        return self.cluster * programs

    def small_grid(self, rows, cols=None):
        """A grid of at most 3 programs (blocks or clusters),
        so that each handles several rows (for a chunks kernel, one block
        per chunk of a row, so that each takes several)."""
        if self.chunk:
            return self.min_chunks_grid(cols)
        programs = min(-(-rows // self.rows_per_block), 3,
                       self.resident // self.cluster)
        return max(programs, 1) * self.cluster

    def args(self, x, y, rows, cols, sx, sy):
        """The kernel's parameters (docs/abi.md), with its workspace when it
        takes one."""
        args = (np.uint64(x), np.uint64(y), np.int64(rows), np.int64(cols),
                np.int64(sx), np.int64(sy))
        if self.chunk:
            args += (np.uint64(self.chunk_workspace(rows, cols).data.ptr),)
        return args

    def launch(self, x, y, rows, cols, sx, sy, grid=None):
        if grid is None:
            grid = self.grid(rows, cols=cols)
        if self.chunk and not (self.min_chunks_grid(cols) <= grid
                               <= self.resident):
            raise ValueError(f"{self.name}: a chunks kernel runs on "
                             f"{self.min_chunks_grid(cols)} to "
                             f"{self.resident} blocks, not {grid}")
        args = self.args(x, y, rows, cols, sx, sy)
        if self.waits():
            launch_cooperative(self.function.kernel.ptr, grid, self.threads,
                               self.dynamic_shared, args)
            return
        self.function((grid,), (self.threads,), args,
                      shared_mem=self.dynamic_shared)
