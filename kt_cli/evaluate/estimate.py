"""Static-mode ranking: the time of one call from what the compiled kernel is and the target's tables.

The model follows the busiest unit (SM/CU). Programs are spread over the target's units; a unit holds
`resident` of them at once (the vendor's occupancy rules) and works through `ceil(programs / units)`, in
rounds of `resident`: the programs of a last, partial round move their bytes at what their own loads in
flight sustain (in_rounds).
Each program's share of the work is served by these resources:

- DRAM: the problem's unique bytes (plus spills, plus re-reads that miss L2), at the smaller of the
  unit's share of DRAM bandwidth and what its bytes in flight sustain over the loaded DRAM latency and
  the program's own instruction time (Little's law: rate = bytes in flight / latency; a warp-specialized
  kernel's loads wait on its producer warps' instructions only); a program that
  walks several pieces of work one after another (rows, persistent tiles) has one piece's in flight;
  near the corner of the two the loads' rate bends below both (memory_term, the calibrated knee);
- L2: every byte the programs request (the kernel's `traffic`: tile re-reads, second passes), at the
  unit's share of L2 bandwidth or bytes in flight over the L2 latency (a sharp corner: the programs'
  bytes in flight that a knee would read there are the weak estimate of staged pipelines); re-reads hit
  L2 while the resident programs' working set fits in it;
- shared memory: the tiles staged there and the operands warpgroup MMAs read from it, at the unit's
  shared-memory bandwidth (shared_memory_time);
- math: the FLOPs at the unit's share of the dtype's peak, times the fraction of it the compiled
  instructions reach (warpgroup MMA, warp MMA, no MMA at all: FMA on the CUDA cores/SIMDs), and only
  when enough warps are resident to feed every scheduler; longer where too few groups of warps take
  turns issuing the main loop's MMAs to hide the loop's other instructions, or where a barrier holds the
  groups in lockstep and the unit issues those instructions while no MMA runs (mma_issue_factor), and by a
  loaded L2 round trip a tile where one program a unit loads each tile's first stages only after storing
  the tile before (tile_fill);
- issue: the program's instructions, as many times as it runs through its static loads, over the
  unit's schedulers at the clock;
- grid syncs: a kernel whose programs wait for each other across the grid (a per-step barrier of a
  sequence kernel) pays, at each, a chain no throughput hides: GRID_SYNC_L2_TRIPS loaded L2 latencies
  (the arrival's release, the poll that sees the last arrival, the load of what the others stored) and
  the program's own instructions.

Bytes in flight per program come from the binary: the bytes its static global loads ask for per
thread times its threads, or, for a kernel that stages tiles through shared memory with asynchronous
copies or TMA, its shared-memory footprint (the stages in flight). This is what separates the configs
a plain roofline ties. The terms overlap imperfectly: the time is their OVERLAP-norm, so the slowest
dominates and the others still count; extra launches add a launch each. The constants are per target
(vendor tables, overridden by `kt devices --calibrate`); docs/costmodel.md gives their sources and how
well the model ranks measured runs. Every number here is an estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LAUNCH_OVERHEAD_S = 3e-6
# Defaults where a target's table lacks a figure (a third-party vendor): a generic recent GPU.
DEFAULTS = {"dram_latency_s": 800e-9, "l2_latency_s": 300e-9, "l2_bytes_per_s_per_dram": 3.0,
            "mma_fraction_warpgroup": 1.0, "mma_fraction_warp": 1.0, "schedulers_per_unit": 4,
            "dram_attainable": 0.9, "math_attainable": 0.75, "clock_hz": 1.5e9,
            # cycles between two dependent integer/FP32 instructions of one warp: 4 on Volta and Turing
            # (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, and
            # the Turing sequel, 2019); the chain a lone warpgroup runs between two passes of its MMAs
            "dependent_issue_cycles": 4,
            # L2 lookups per byte of lockstep re-reads (Work.lockstep_bytes): 1, each byte looked up
            "l2_lockstep_lookups": 1.0,
            # how sharply DRAM's rate turns from latency-bound to bandwidth-bound (memory_time); infinite:
            # the smaller of the two rates alone, where no knee was measured
            "dram_knee": math.inf,
            # bytes a unit's shared memory (LDS) serves a clock; 0 where the target's table has no figure: no term
            "shared_bytes_per_clock": 0.0}
# Terms overlap imperfectly: the time is their OVERLAP-norm (a large value: the slowest term alone).
OVERLAP = 8.0
GRID_SYNC_L2_TRIPS = 3  # L2 round trips on the critical path of one grid-wide barrier (module docstring)


@dataclass(frozen=True)
class Work:
    """What one call must do: FLOPs, the problem's unique bytes, the bytes the programs request, the
    independent pieces of work (output tiles) the programs share out (0: one per program), how many
    of the unique bytes are outputs written (0: not known; every byte is then charged as a load), how
    many times the programs wait for each other across the grid, how many of the requested bytes are
    re-reads that programs of a wave make of the same tiles at the same step (0: none said), and how
    many shared-memory stages the main loop rotates through, one read while the others load (0: not
    said; the whole shared memory is then taken as in flight), and how many warps do nothing but issue
    the loads (a warp-specialized producer; 0: the warps that compute also load)."""

    flops: float
    unique_bytes: float
    requested_bytes: float
    items: float = 0.0
    written_bytes: float = 0.0
    grid_syncs: float = 0.0
    lockstep_bytes: float = 0.0
    stages: float = 0.0
    load_warps: float = 0.0


def bytes_in_flight(resources, mix: dict, stages: float = 0.0) -> float:
    """Bytes one program has requested and not yet received, at most (see the module docstring): the
    most its loads ask for between two reductions across its warps (where its warps wait on each
    other, as a row's sum does: loads after it are not issued before it), else all its static loads.
    A kernel staging tiles through shared memory has its shared memory in flight, all but the stage
    being read where it says how many stages its main loop rotates through."""
    threads = max(1, resources.threads)
    loads = (mix.get("load_bytes_largest_phase") or mix.get("global_load_bytes", 0)) * threads
    if mix.get("async_copy") or mix.get("tma"):
        loading = (stages - 1) / stages if stages > 1 else 1.0
        loads = max(loads, resources.shared_bytes * loading)
    return float(loads or 16 * threads)  # no mix read: one 16-byte load a thread


def static_passes(bytes_: float, resources, programs: int, mix: dict) -> float:
    """A program's share of `bytes_` over the bytes its static load instructions ask for once: how many times
    it runs through them (a loop over a long row runs its body many times). Kernels with MMAs spend their loop
    on few instructions per byte (the MMA does the work), and a program whose loads were not read: 1."""
    static = mix.get("global_load_bytes", 0) * max(1, resources.threads)
    if not static or mix.get("mma"):
        return 1.0
    return bytes_ / programs / static


def load_passes(work: Work, resources, programs: int, mix: dict) -> float:
    """How many times a program runs through its static loads as its issue term counts them: the bytes it
    requests (the outputs' stores among them) over what its load instructions ask for once, at least 1."""
    return max(1.0, static_passes(work.requested_bytes, resources, programs, mix))


def loads_again(work: Work, resources, programs: int, mix: dict) -> bool:
    """Whether a program issues its static loads more than once: the bytes it loads (those it requests less
    the outputs it writes) exceed what its load instructions ask for once (a row longer than its block, the
    rows of a persistent program). Kernels with MMAs: no."""
    loaded = work.requested_bytes - min(work.written_bytes, work.unique_bytes)
    return static_passes(loaded, resources, programs, mix) > 1.01


def mma_fraction(mix: dict, properties: dict) -> float | None:
    """Fraction of the dtype's tensor peak the compiled MMAs reach, None when there are none."""
    if mix.get("mma_warpgroup"):
        return _prop(properties, "mma_fraction_warpgroup")
    if mix.get("mma"):
        return _prop(properties, "mma_fraction_warp")
    return None


def compute_peak(peaks: dict, dtype: str, fraction: float | None) -> float:
    """The rate the compiled code can reach: the dtype's tensor peak times the fraction its MMAs reach, or the
    vector units' (float32) rate where it has no tensor instructions (fraction None)."""
    if fraction is None:
        return peaks.get("float32", 1e13)
    return peaks.get(dtype, peaks.get("float32", 1e13)) * fraction


def mma_issue_factor(mix: dict, warps_per_unit: int, unit_rate: float, clock: float, properties: dict) -> float:
    """How much longer a unit's MMAs take than its rate says because the instructions of the main loop between
    them are issued too. A group (`mma_group_warps`: an NVIDIA warpgroup, whose MMAs use the whole SM's tensor
    cores; on AMD a wave on each of the CU's SIMDs) issues one pass of its main loop's MMAs (`loop_mma_flops`,
    the group's, vendor.innermost_mma_loop) at the unit's rate, and the pass's other instructions (barrier
    waits, addresses, the hand-off of the next stage, an attention's softmax). The largest of its limits holds:

    - a lone group's chain: it runs the other instructions one dependent instruction after another before it
      issues the next pass; another group's MMAs fill that gap, a lone group's do not. With G groups on a
      unit: (1 + other / mma) / G;
    - groups in lockstep: where the loop holds a barrier that more than one group waits at (`loop_barriers`,
      `loop_barrier_warps`: Triton's pipelined loops sync the whole CTA each pass), the groups reach their
      MMAs together and their other instructions together, so the unit's schedulers issue every resident
      warp's other instructions, one a clock each, while no MMA runs: 1 + issue / mma;
    - groups taking turns: where each group syncs alone (a Gluon partition of one warpgroup syncs its own
      warps before every mbarrier arrival, benchmarks/experiments/partition_barriers.py; two such consumer
      partitions hand the tensor cores to each other, FlashAttention-3's ping-pong), one group's other
      instructions issue while another's MMAs run: max(1, issue / mma, (1 + issue / mma) / G).

    The lockstep limit took attention's static winner within 10% of the best from 11 of the eight held-out
    H200/H100 runs' 16 attention problems to 15 and raised matmul's rho on 17 of 24; with turns, the
    eleventh held-out run's attention picks came within 2% of the best (docs/costmodel.md, thirty-first
    session). 1 where the compiled code shows no such loop."""
    flops, instructions, group = mix.get("loop_mma_flops"), mix.get("loop_instructions"), mix.get("mma_group_warps")
    if not (flops and instructions and group):
        return 1.0
    mma_s = flops / unit_rate
    other = instructions - mix.get("loop_mmas", 0)
    groups = max(1, warps_per_unit // group)
    chain = (1.0 + other * _prop(properties, "dependent_issue_cycles") / clock / mma_s) / groups
    if not mix.get("loop_barriers"):
        return max(1.0, chain)
    issue = other * warps_per_unit / _prop(properties, "schedulers_per_unit") / clock / (groups * mma_s)
    if 0 < mix.get("loop_barrier_warps", 0) <= group and groups >= 2:  # groups that sync alone take turns
        return max(1.0, issue, (1.0 + issue) / groups)
    return max(1.0, chain, 1.0 + issue)


def l2_lookups(work: Work, properties: dict) -> float:
    """The bytes the L2 looks up: every requested byte, except that of the re-reads programs of a wave make
    of the same tiles at the same step (Work.lockstep_bytes), the L2 serves requests that arrive together
    from one lookup: `l2_lockstep_lookups` a byte (the target's table, measured by Nsight Compute). Both
    L2 terms take the lookups: the calibrated latency is Little's law on a read whose every byte is a
    lookup, so its queueing is the lookups'."""
    requested = max(work.requested_bytes, work.unique_bytes)
    lockstep = min(work.lockstep_bytes, requested - work.unique_bytes)
    return requested - (1.0 - _prop(properties, "l2_lockstep_lookups")) * lockstep


def dram_traffic(work: Work, resources, properties: dict, programs: int, active: int, resident: int,
                 mix: dict | None = None) -> float:
    """The bytes a call moves to and from DRAM: the unique bytes, spills (stored and loaded again), and
    the bytes read again (a second pass over a row, a tile re-read) that miss L2. Re-reads hit L2 while
    what the resident programs hold fits in it; past that, the share that does not fit comes from DRAM
    again. A program holds one piece of work at a time: a persistent kernel's programs walk through
    many tiles; and a program with an MMA main loop holds one pass of it (main_loop_passes)."""
    spill = 2.0 * resources.spill_bytes * max(1, resources.threads) * programs
    reread = max(0.0, work.requested_bytes - work.unique_bytes)
    warp = int(properties.get("warp_size", 32))
    held = work.unique_bytes / max(programs, work.items) / main_loop_passes(work, resources, programs, mix or {}, warp)
    working_set = active * resident * held
    l2_capacity = properties.get("l2_bytes") or 0
    miss = max(0.0, 1.0 - l2_capacity / working_set) if working_set else 0.0
    return work.unique_bytes + spill + miss * reread


def main_loop_passes(work: Work, resources, programs: int, mix: dict, warp_size: int = 32) -> float:
    """How many passes a program's MMA main loop makes over one piece of work (a GEMM's K steps): its
    FLOPs over what one pass of each warp group's MMAs does (vendor.innermost_mma_loop), 1 without
    such a loop. Programs that share operands (a GEMM's tiles of one row or column, attention's query
    blocks of one head) read them at about the same pass, so a re-read finds what another program of the
    wave fetched a few passes before: what must fit in L2 is the wave's bytes of a pass, not of its
    whole tiles. Nsight Compute on an H200 (2026-11-28, benchmarks/results/s33/call1): a 768x8192x8192
    bf16 GEMM on 128x256 tiles reads 159 MB from DRAM for its 147 MB of operands, where whole tiles would
    put its wave at 109 MB, past the 50 MB L2, and charge 566 MB of re-reads. (Re-reads across waves do
    miss: 8192^3 reads its 268 MB of operands 4-10 times; its L2 and MMA terms are far longer.)"""
    flops, group = mix.get("loop_mma_flops"), mix.get("mma_group_warps")
    if not (flops and group):
        return 1.0
    groups = max(1, max(1, resources.threads) // (group * warp_size))
    return max(1.0, work.flops / max(programs, work.items) / (flops * groups))


def loader_time(work: Work, own: float, instructions: float, warps: float, schedulers: float, clock: float) -> float:
    """How long a program's own instructions hold its loads out of flight: all of them (`own`, issued alone)
    where the warps that compute also load; where a few warps do nothing but load (Work.load_warps: a warp-
    specialized producer), their share of the instructions only. On an H200 (results/s33/call4, s34/call3)
    the sm_90 Gluon attention's 12 warps had made its L2 term 3-4x the Triton kernels' and ranked it last,
    where it ran 1.1-1.3x the best."""
    if not work.load_warps:
        return own
    share = instructions * min(1.0, work.load_warps / max(1.0, warps))
    return share * math.ceil(work.load_warps / schedulers) / clock


def unit_tail(work: Work, programs: int, units: int) -> float:
    """How much longer the busiest unit computes than the average one when a grid of fewer programs than
    items (a persistent GEMM's programs walking its tiles) shares the items out one by one: the busiest unit
    works through ceil(items / units) of them, the average unit items / units. A grid of a program per item
    pays its last wave through `ceil(programs / units)` already. On an H200 (2026-11-28, results/s33/call4)
    persistent 128x256 programs at 288 tiles (2.18 a unit, 3 on the busiest) measured 1.11-1.21x the best
    of 576 128x128 tiles (4.36, 5 on the busiest) on all three held-out GEMMs, which the model ranked the
    other way before."""
    if work.items <= programs:
        return 1.0
    share = work.items / units
    return math.ceil(share) / share


def tile_fill(work: Work, mix: dict, programs: int, units: int, resident: int, properties: dict) -> float:
    """How long the busiest unit's MMAs wait outside their main loop: a unit holding one program at a time
    whose warps both load and compute (no producer warps) issues a tile's first loads only after it has
    stored the tile before (one program per tile: after the program before it ended), and its MMAs wait
    for them, a loaded L2 round trip a tile. On an H200 (results/s39/tile_fill: bf16 GEMM 4096 x 4096 x K,
    K 256-8192, each config's time fitted as a + b K) the time a tile spends outside its K loop was 1.58-1.60
    us for Triton's TMA kernels, 2.04 us for its pointer kernel and 0.44 us for the warp-specialized Gluon
    kernel, whose producer warp loads the next tile while the consumers store this one; the K loops' slopes
    were within 5% of each other. l2_latency_s is 1.72-1.76 us on the H100s and H200s calibrated."""
    if not mix.get("loop_mma_flops") or resident > 1 or work.load_warps:
        return 0.0
    return math.ceil(max(work.items, programs) / units) * _prop(properties, "l2_latency_s")


def dram_in_flight(work: Work, in_flight: float, resident: int, programs: int, loaded: float) -> float:
    """The DRAM bytes a unit's resident programs have in flight: what their static loads span, except that
    a program walking several pieces of work one after another (more items than programs: the rows of a
    row kernel, the tiles of a persistent grid) has at most one piece's `loaded` bytes in flight, whatever
    its static loads span (lanes masked off past a row's end, weights read again from cache)."""
    if work.items > programs and loaded > 0:  # (a kernel that only writes waits on no load)
        return min(in_flight, resident * loaded / work.items)
    return in_flight


def memory_time(latency_bound_s: float, bandwidth_bound_s: float, knee: float) -> float:
    """A memory's time for its bytes: where the bytes in flight over the loaded latency give one rate and the
    bandwidth another, the `knee`-norm of the two times. A large knee is the smaller rate alone (the two
    asymptotes of a roofline); measured rates bend below both near the corner, as queueing does. `kt devices
    --calibrate` fits DRAM's knee to its streaming-read sweep (kt_cli.evaluate.calibrate.fit_knee): 3.2-3.3
    on the H200s here, 3.8 on the H100s (a rate at the bytes in flight that saturate DRAM by Little's law
    1.2x slower than both lines)."""
    larger = max(latency_bound_s, bandwidth_bound_s)
    if larger <= 0 or math.isinf(knee):
        return larger
    return larger * ((latency_bound_s / larger) ** knee + (bandwidth_bound_s / larger) ** knee) ** (1.0 / knee)


def memory_term(loaded: float, total: float, in_flight_rate: float, bandwidth: float, knee: float) -> float:
    """A memory's time for a unit's bytes: the bytes its programs load wait for their data, at the rate their
    bytes in flight sustain over the loaded latency (Little's law), bent by the memory's `knee` toward what
    the same loads would take at the whole bandwidth (memory_time); and every byte, the posted stores
    too, takes its share of the bandwidth. The knee is fitted to streaming reads, so it bends the loads'
    own time: a program whose loads need half the bandwidth because it writes as much as it reads (a row
    normalised and stored) is not charged the queueing of a read stream at the corner."""
    return max(memory_time(loaded / in_flight_rate, loaded / bandwidth, knee), total / bandwidth)


def shared_memory_time(work: Work, programs: int, mix: dict, properties: dict) -> float:
    """How long one program's shared-memory traffic takes at its unit's shared-memory bandwidth
    (`shared_bytes_per_clock` at the clock): the tiles its asynchronous copies or TMA stage there (the
    bytes it requests, Work.requested_bytes, written once), and the operands its warpgroup MMAs read from
    there (vendor.innermost_mma_loop's `loop_mma_shared_bytes` per `loop_mma_flops`, over the program's
    FLOPs). A 64-wide wgmma reads as many operand bytes a FLOP as the tensor cores' rate leaves the banks
    at 128 bytes a clock (A 64 x 16 and B 16 x 64 bf16 in 32 clocks of an H100 SM), a 128-wide one three
    quarters of that, a 256-wide five eighths: on an H200 (results/s36/call1) 128 x 64 tiles, whose
    warpgroups issue 64-wide wgmma, measured 7-14% slower than 64 x 128 tiles in all six such pairs of three
    held-out GEMMs, which the model had tied. Operands other MMAs read from registers (AMD's MFMA, sm_80's
    mma.sync after ldmatrix) are not counted: the term is what the compiled code shows at least."""
    rate = _prop(properties, "shared_bytes_per_clock") * _prop(properties, "clock_hz")
    if not rate:
        return 0.0
    staged = work.requested_bytes if mix.get("async_copy") or mix.get("tma") else 0.0
    operands = 0.0
    if mix.get("loop_mma_shared_bytes"):
        operands = work.flops * mix["loop_mma_shared_bytes"] / mix["loop_mma_flops"]
    return (staged + operands) / programs / rate


def in_rounds(per_unit: int, resident: int, round_time) -> float:
    """The busiest unit's time over its programs taken `resident` at a time: full rounds, then the last one
    with the programs left (round_time(n): the time of a round of n programs). A memory term over all of
    them at the rate of `resident` programs' bytes in flight charged a unit's last program a share of a
    round; alone, it streams at its own bytes in flight. On an H200 (results/s43/holdout_n) gemv 9728 x 24576
    on 8 x 512 tiles, 2 warps, 9 programs a unit, 1216 programs (a unit's tenth runs alone) measured 166.6 us
    against 120-123 us for configs whose grids fill their rounds; the model had put it at 150 us, among them."""
    full, last = divmod(per_unit, resident)
    return full * round_time(resident) + (round_time(last) if last else 0.0)


def memory_times(work: Work, peaks: dict, properties: dict, resources, programs: int, resident: int,
                 in_flight: float, own_loads: float, mix: dict) -> tuple[float, float, set]:
    """The busiest unit's DRAM and L2 times (module docstring), and which of them ("dram_s", "l2_s") their
    bytes in flight hold below the unit's share of the bandwidth. Loads wait for their data: they move at
    most the bytes in flight per latency, the program's own instructions added to it (Little's law). Stores
    are posted (nothing waits on them): the outputs written take only their share of the bandwidth."""
    units = max(1, int(properties.get("units", 1)))
    per_unit, active = math.ceil(programs / units), min(programs, units)
    dram_bw = peaks.get("dram_bytes_per_s", 1e12) * _prop(properties, "dram_attainable")
    l2_bw = properties.get("l2_bytes_per_s") or dram_bw * _prop(properties, "l2_bytes_per_s_per_dram")
    written = min(work.written_bytes, work.unique_bytes)
    dram_bytes = dram_traffic(work, resources, properties, programs, active, resident, mix)
    dram_rate = dram_in_flight(work, in_flight, resident, programs, dram_bytes - written) / (
        _prop(properties, "dram_latency_s") + own_loads)
    l2_rate = in_flight / (_prop(properties, "l2_latency_s") + own_loads)
    knee = _prop(properties, "dram_knee")
    dram_s = in_rounds(per_unit, resident, lambda n: n * memory_term(
        dram_bytes - written, dram_bytes, dram_rate * n / resident, dram_bw / active, knee) / programs)
    lookups = l2_lookups(work, properties)
    l2_s = in_rounds(per_unit, resident, lambda n: n * memory_term(  # a sharp corner
        lookups - written, lookups, l2_rate * n / resident, l2_bw / active, math.inf) / programs)
    in_flight_bound = {name for name, rate, bw in (("dram_s", dram_rate, dram_bw), ("l2_s", l2_rate, l2_bw))
                       if rate < bw / active}
    return dram_s, l2_s, in_flight_bound


def estimate_seconds(work: Work, dtype: str, peaks: dict, properties: dict, resources, programs: int,
                     launches: int = 1, mix: dict | None = None) -> dict:
    """Estimated time of one call and the terms behind it (seconds, and what bounds it)."""
    mix = mix or {}
    units = max(1, int(properties.get("units", 1)))
    programs = max(1, programs)
    per_unit = math.ceil(programs / units)  # programs the busiest unit works through
    resident = max(1, min(resources.programs_per_unit or 1, per_unit))
    in_flight = resident * bytes_in_flight(resources, mix, work.stages)
    warps = max(1, resources.threads) / int(properties.get("warp_size", 32))  # of one program
    schedulers = _prop(properties, "schedulers_per_unit")
    clock = _prop(properties, "clock_hz")
    # A program's own instructions, issued alone: the time it holds its loads' bytes out of flight
    # (a row reduced between two loads), and the unit's issue time for all its programs.
    instructions = mix.get("total", 0)
    own = instructions * math.ceil(warps / schedulers) / clock
    own_loads = loader_time(work, own, instructions, warps, schedulers, clock)
    passes = load_passes(work, resources, programs, mix)
    issue_s = per_unit * instructions * passes * warps / (schedulers * clock)

    dram_s, l2_s, in_flight_bound = memory_times(work, peaks, properties, resources, programs, resident, in_flight,
                                                 own_loads, mix)

    fraction = mma_fraction(mix, properties)
    peak = compute_peak(peaks, dtype, fraction)
    feed = min(1.0, resident * warps / schedulers)  # a scheduler without a warp leaves its MMA unit idle
    math_rate = peak * _prop(properties, "math_attainable") / units * feed

    issue_factor = mma_issue_factor(mix, resident * max(1, int(warps)), peak * _prop(properties, "math_attainable") / units,
                                    clock, properties)
    fill_s = tile_fill(work, mix, programs, units, resident, properties)
    math_s = per_unit * work.flops / programs / math_rate * issue_factor * unit_tail(work, programs, units) + fill_s
    shared_s = per_unit * shared_memory_time(work, programs, mix, properties)
    sync_s = work.grid_syncs * (GRID_SYNC_L2_TRIPS * _prop(properties, "l2_latency_s") + own)
    terms = {"dram_s": dram_s, "l2_s": l2_s, "math_s": math_s, "issue_s": issue_s, "sync_s": sync_s,
             "shared_s": shared_s}
    bound = max(terms, key=terms.get)
    total = sum(t ** OVERLAP for t in terms.values()) ** (1 / OVERLAP) + launches * LAUNCH_OVERHEAD_S
    return {
        "seconds": total,
        **terms,
        "bound": bound[:-2],
        "programs_per_unit": per_unit,
        "resident": resident,
        "bytes_in_flight_per_unit": in_flight,
        "mma_fraction": fraction,
        "mma_issue_factor": issue_factor,
        "tile_fill_s": fill_s,  # part of math_s
        "wave_efficiency": programs / (per_unit * units),
        # a program that runs through its loads several times is charged all its static instructions a pass
        # (only its loop bodies repeat), in its issue term and, as the time that holds its loads out of flight,
        # in a memory term its bytes in flight bound: where such a term bounds the time, the estimate is an
        # upper bound
        "upper_bound": (bound == "issue_s" and passes > 1) or (bound in in_flight_bound and
                                                               loads_again(work, resources, programs, mix)),
    }


def _prop(properties: dict, key: str) -> float:
    return float(properties.get(key) or DEFAULTS[key])
