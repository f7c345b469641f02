"""Step time and tokens/s per GPU from FLOPs, efficiencies, pipeline bubble and exposed communication (pure).

A first-order Megatron step-time model (research note estimators.md 3.5): GEMM time at a fitted fraction
of the precision's peak, attention at the BF16 rate, memory-bound elementwise work at HBM bandwidth, the
1F1B/interleaved bubble (p-1)/(m·v), and the part of TP/CP/EP/DP/PP traffic that is not hidden behind compute.
"""

from __future__ import annotations

from pydantic import Field

from assistant.errors import UserError
from assistant.estimate.hardware import GpuSpec, precision_unit
from assistant.estimate.memory import (
    check_offload,
    data_parallel_size,
    layer_activation_bytes,
    stage_layers,
)
from assistant.estimate.run import RunSettings
from assistant.estimate.shapes import (
    Dims,
    TokenFlops,
    attention_shapes,
    dims_of,
    flops_per_token,
    gdn_flops,
    gqa_layer_flops,
    layer_kinds,
    mamba_flops,
    mix_params,
    whole_model,
)
from assistant.records import ModelArch, Plan, Record


def precision_key(precision: str) -> str:
    """Group recipe precision names into the keys the efficiencies are fitted on."""
    p = precision.lower().replace("-", "_")
    if "fp4" in p:
        return "nvfp4"
    if "mx" in p:
        return "mxfp8"
    return "fp8" if "fp8" in p else precision_unit(p)


class Calibration(Record):
    """Efficiency parameters; ingest/calibration.py fits them on published rows (fit.json)."""

    gemm_efficiency: dict[str, float] = Field(default_factory=dict)  # "gpu:precision" -> fraction of peak
    default_gemm_efficiency: float = 0.55
    expert_gemm_ratio: float = 0.6  # grouped expert GEMMs relative to dense GEMMs, BF16
    expert_gemm_ratio_lowp: float = 0.6  # the same in FP8/FP4 (per-expert quantisation costs more)
    attention_efficiency: float = 0.45  # flash attention, fraction of BF16 peak
    gemm_size_half: float = 256.0  # GEMM width (per rank) at which efficiency halves: n / (n + this)
    expert_tokens_half: float = 512.0  # tokens per local expert and micro-batch at which grouped GEMMs halve
    elementwise_passes: float = 6.0  # HBM passes over the saved activations per layer (fwd + bwd)
    quant_passes: float = 3.0  # HBM passes over each GEMM input to cast it to FP8/FP4 (fwd, dgrad, wgrad)
    tp_exposed: float = 0.15
    cp_exposed: float = 0.3
    ep_exposed: float = 1.0  # a dispatch/combine all-to-all that is not overlapped is on the critical path
    dp_exposed: float = 0.1
    pp_exposed: float = 0.5  # interleaved schedules overlap the point-to-point sends with compute
    microbatch_overhead_s: float = 0.001  # host, launch and pipeline hand-off per micro-batch and model chunk
    layer_host_s: float = 0.0002  # kernel-launch time per layer and micro-batch (fwd + bwd) left exposed
    moe_host_factor: float = 3.0  # MoE layers launch more kernels and sync the host on dropless routing
    partial_graph_host: float = 0.5  # share of that launch time per-layer CUDA graphs leave exposed
    ep_overlap_exposed: float = 0.3  # share of ep_exposed left when the all-to-all overlaps compute
    median_error: float = 0.05  # median |error| on the rows fitted; layouts closer than this are ties
    source: str = "prior (uncalibrated)"

    def gemm_eff(self, gpu: str, precision: str) -> float:
        key = precision_key(precision)
        for candidate in (
            f"{gpu}:{key}",
            f"{gpu}:{'fp8' if key == 'mxfp8' else 'mxfp8'}" if "fp8" in key else "",
        ):
            if candidate in self.gemm_efficiency:
                return self.gemm_efficiency[candidate]
        same_gpu = [v for k, v in self.gemm_efficiency.items() if k.startswith(f"{gpu}:")]
        if same_gpu and key != "bf16":
            return sum(same_gpu) / len(same_gpu)
        return self.default_gemm_efficiency


class TrackRecord(Record):
    """How the estimate compared with the published runs of one model in one precision (fit.json), so an
    answer can say when the estimate is known to run high or low for what the user trains."""

    hf_model_id: str
    precision: str  # a precision_key
    runs: int
    mean_signed_error: float  # estimate / measured - 1, averaged
    mape: float

    def known_bias(self, median_error: float) -> bool:
        """Off by more than twice the estimator's median error on average, over at least two runs."""
        return self.runs >= 2 and abs(self.mean_signed_error) > 2 * median_error


class CommTimes(Record):
    tp: float = 0.0
    cp: float = 0.0
    ep: float = 0.0
    dp: float = 0.0
    pp: float = 0.0


class ThroughputEstimate(Record):
    tokens_per_sec_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    step_time_s: float
    compute_s: float
    bubble_fraction: float
    bubble_s: float
    recompute_s: float
    exposed_comm_s: CommTimes
    optimizer_s: float
    offload_s: float = 0.0  # CPU activation offloading transfers not hidden behind compute
    flops_per_token: float
    num_gpus: int
    assumptions: list[str] = Field(default_factory=list)

    def time_to_train(self, tokens: float) -> float:
        """Seconds to train `tokens` tokens on this run's GPUs at this rate."""
        return tokens / (self.tokens_per_sec_per_gpu * self.num_gpus)


def _ring(bytes_: float, n: int, bw: float) -> float:
    """Time of one ring all-gather or reduce-scatter of a `bytes_` buffer over n ranks."""
    return 0.0 if n <= 1 else bytes_ * (n - 1) / n / bw


def _link(group_span: int, hw: GpuSpec, gpus_per_node: int) -> float:
    """Bandwidth of a group of `group_span` consecutive ranks: NVLink inside the domain, else the network."""
    return hw.nvlink_bw if group_span <= hw.nvlink_group(gpus_per_node) else hw.network_bw


def _collective_bw(size: int, stride: int, hw: GpuSpec, gpus_per_node: int) -> float:
    """Bandwidth of a collective over `size` ranks `stride` apart. Past the NVLink domain NCCL spreads its
    channels over the NICs of every member inside a domain, so the network share grows with them (up to
    NVLink speed); a point-to-point ring (CP, PP) crosses on one NIC and uses `_link`."""
    domain = hw.nvlink_group(gpus_per_node)
    if size * stride <= domain:
        return hw.nvlink_bw
    members = max(1, min(size, domain // stride))
    return min(hw.nvlink_bw, members * hw.network_bw)


def estimate_throughput(
    arch: ModelArch,
    layout: Plan,
    hw: GpuSpec,
    run: RunSettings,
    *,
    calibration: Calibration | None = None,
) -> ThroughputEstimate:
    """Estimated step time, tokens/s/GPU, model TFLOP/s/GPU (Bridge formula) and MFU for one layout,
    under the run's performance features (default: no CUDA graphs, no overlap, BF16 attention), with
    `run.offload_layers` layers' activations offloaded to host memory (cpu_offloading_num_layers)."""
    cal = calibration or Calibration()
    feats = run.features
    seq_length, mode, precision, recompute = run.seq_length, run.mode, run.precision, run.recompute
    fsdp, gpus_per_node, offload_layers = run.fsdp, run.gpus_per_node, run.offload_layers
    lowp = precision_unit(precision) != "bf16"
    d = dims_of(arch)
    mbs = run.micro_batch_size or layout.mbs
    gbs = run.global_batch_size or layout.gbs
    gpus = run.num_gpus or layout.num_gpus
    t, p, c = layout.tp, layout.pp, layout.cp
    e, et, v = layout.ep or 1, layout.etp or layout.tp, layout.vp or 1
    dp = data_parallel_size(layout, gpus)
    if gbs % (mbs * dp):
        raise UserError(f"global batch {gbs} is not divisible by micro batch {mbs} × DP {dp}")
    m = gbs // (mbs * dp)
    peak = hw.peak_flops(precision)
    bf16_peak = hw.peak_flops("bf16")

    flops = flops_per_token(d, seq_length, t, feats.mtp_layers)
    tokens_gpu = gbs * seq_length / gpus  # tokens each GPU processes per step (work is evenly split)
    # A recipe's frozen language model (freeze_language_model) trains like a LoRA base: no weight gradients,
    # so no gradient reduction or optimizer step for it either.
    lm_frozen = run.language_model_frozen
    frozen_base = mode == "peft" or lm_frozen
    peft_factor = 2 / 3 if frozen_base else 1.0  # frozen weights get no weight-gradient GEMM
    eff = cal.gemm_eff(hw.calibration_key, precision)
    dense_width = min(d.hidden, d.ffn if d.dense_layers else d.hidden) / t
    expert_width = min(d.expert_io, d.moe_ffn) / et if d.experts else 1.0
    # A GEMM needs arithmetic intensity (its width) in proportion to the peak it runs at before it stops
    # being memory-bound, so the half-efficiency width grows with the precision's speed-up over BF16.
    speedup = peak / bf16_peak
    size = dense_width / (dense_width + cal.gemm_size_half * speedup)
    esize = expert_width / (expert_width + cal.gemm_size_half * speedup)
    if d.experts:
        # Each expert sees the routed tokens of its EP group; few tokens per expert make thin, slow GEMMs.
        expert_tokens = e * seq_length * mbs / (c * t) * d.topk / d.experts
        esize *= expert_tokens / (expert_tokens + cal.expert_tokens_half * speedup)
    t_dense = tokens_gpu * flops.dense_gemm * peft_factor / (peak * eff * size)
    ratio = cal.expert_gemm_ratio_lowp if lowp else cal.expert_gemm_ratio
    t_expert = tokens_gpu * flops.expert_gemm * peft_factor / (peak * eff * ratio * esize)
    attn_peak = peak if feats.fp8_attention and lowp else bf16_peak
    t_attn = tokens_gpu * flops.attention_core / (attn_peak * cal.attention_efficiency)
    # Mamba's chunked scan is, like flash attention, a fused sequence-mixing kernel in BF16: no published
    # row isolates it, so it runs at the attention core's efficiency.
    t_scan = tokens_gpu * flops.ssm_scan / (bf16_peak * cal.attention_efficiency)
    elem_bytes = _elementwise_bytes(d, fused_expert_mlp=feats.fused_grouped_mlp)
    t_elem = tokens_gpu * elem_bytes * cal.elementwise_passes / hw.hbm_bw
    if lowp:  # every GEMM input is cast (and for FP8 with scaling, transposed) before the GEMM
        quant_bytes = _gemm_input_bytes(d, fused_expert_mlp=feats.fused_grouped_mlp)
        t_elem += tokens_gpu * quant_bytes * cal.quant_passes / hw.hbm_bw
    t_layers = t_dense + t_expert + t_attn + t_scan + t_elem
    recompute_s = 0.0
    if recompute == "full":
        share = 1.0 if run.recompute_num_layers is None else min(1.0, run.recompute_num_layers * p / d.layers)
        recompute_s = share * t_layers / 3
    elif recompute == "selective":
        recompute_s = _selective_cost(
            d, set(run.recompute_modules or ["core_attn"]), t_dense, t_expert, t_attn, t_elem, flops
        )
    offload_s = 0.0
    if offload_layers:
        check_offload(offload_layers, d.layers, p, recompute)
        offload_s = _exposed_offload(
            arch, layout, hw, seq_length, precision, mbs, offload_layers, m, t_layers
        )
    # Every micro-batch's weight-gradient GEMMs accumulate into the main gradient buffer (Megatron's
    # gradient-accumulation fusion reads and writes it in the GEMM epilogue): a pass over all local weights.
    params_gpu, experts_gpu = _params_per_gpu(d, t, p, e, et)
    grad_b = 4 if run.grad_reduce_in_fp32 else 2
    wgrad_s = 0.0 if frozen_base else m * (params_gpu + experts_gpu) * 2 * grad_b / hw.hbm_bw
    host_share = {"full_iteration": 0.0, "partial": cal.partial_graph_host, None: 1.0}[feats.cuda_graph]
    launch_s = host_share * cal.layer_host_s * (d.layers + (cal.moe_host_factor - 1) * d.moe_layers) / p * m
    compute = t_layers + recompute_s + wgrad_s + m * v * cal.microbatch_overhead_s + launch_s

    layers_per_stage = d.layers / p
    chunk = layers_per_stage / v
    balance = _stage_balance(arch, d, flops, p, v, t_dense, t_expert, t_attn, t_scan, t_elem, seq_length)
    bubble_fraction = (p - 1) / (m * v) if p > 1 else 0.0
    bubble_s = compute * balance * bubble_fraction
    compute *= balance

    # ---- communication per step, per GPU
    act_bytes = 1 if lowp else 2
    tokens_mb = seq_length * mbs / c
    comm = CommTimes()
    if t > 1:
        msg = tokens_mb * d.hidden * 2
        # Each sublayer all-gathers its input and reduce-scatters its output, forward and backward.
        per_sublayer = 4 * _ring(msg, t, _link(t, hw, gpus_per_node))
        comm.tp = cal.tp_exposed * per_sublayer * whole_model(d).sublayers / p * m
    if c > 1:
        kv = 2 * tokens_mb * d.kv_width * 2
        per_layer = 3 * (c - 1) * kv / _link(t * c, hw, gpus_per_node)
        # a second attention shape's layers pass their own K and V: counted in main-shape layers
        shapes = attention_shapes(d, whole_model(d))
        kv_layers = d.attn_layers if len(shapes) == 1 else sum(s.kv_width * n for s, n in shapes) / d.kv_width
        comm.cp = cal.cp_exposed * per_layer * kv_layers / p * m
    if e > 1 and d.moe_layers:
        a2a = 2 * tokens_mb / t * d.topk * d.expert_io * act_bytes / e  # bytes to each peer
        domain = hw.nvlink_group(gpus_per_node)
        near = max(0, min(e, domain // et) - 1)  # peers inside the NVLink domain
        far_bytes = a2a * (e - 1 - near)
        if feats.flex_dispatcher and e - 1 > near:
            token_bytes = 2 * tokens_mb / t * d.expert_io * act_bytes
            far_bytes = _deduplicated_far_bytes(token_bytes, d.topk, -(-e // (near + 1)))
        per_layer = 3 * (a2a * near / hw.nvlink_bw + far_bytes / hw.network_bw)
        exposed_share = cal.ep_exposed * (cal.ep_overlap_exposed if feats.moe_a2a_overlap else 1.0)
        comm.ep = exposed_share * per_layer * (d.moe_layers / p) * m
    if dp > 1 and not lm_frozen:
        # Megatron orders ranks TP, CP, EP, DP, PP: the DP·CP group is TP apart, the expert-DP group EP·ETP.
        dp_bw = _collective_bw(dp * c, t, hw, gpus_per_node)
        if fsdp:
            # Megatron-FSDP (optim_grads_params) gathers the weights before each micro-batch's forward and
            # backward and reduce-scatters the gradients after every backward, not once per step
            # (megatron_fsdp.py: grad_reduce_every_bprop).
            gradients = _ring(params_gpu * grad_b, dp * c, dp_bw)
            dp_time = m * (gradients + 2 * _ring(params_gpu * 2, dp * c, dp_bw))
        else:
            dp_time = _ring(params_gpu * (grad_b + 2), dp * c, dp_bw)
        edp = max(1, gpus // (e * et * p))
        dp_time += _ring(experts_gpu * (grad_b + 2), edp, _collective_bw(edp, e * et, hw, gpus_per_node))
        # Overlap hides at most the compute it runs under: FSDP gathers layer by layer through the whole
        # step; the plain DP reduce-scatter and all-gather only run under one micro-batch's backward/forward.
        window = compute if fsdp else compute / m
        comm.dp = cal.dp_exposed * min(dp_time, window) + max(0.0, dp_time - window)
    if p > 1:
        p2p = tokens_mb * d.hidden * 2 / t
        # Without VP, 1F1B waits for each send and receive between micro-batches (Megatron overlaps P2P only
        # in the interleaved schedule), so all of it is exposed.
        exposed_share = cal.pp_exposed if v > 1 else 1.0
        comm.pp = exposed_share * 2 * m * v * p2p / _link(gpus, hw, gpus_per_node)
    optimizer_s = 0.0 if lm_frozen else (
        (params_gpu / (dp * c) + experts_gpu / max(1, gpus // (e * et * p))) * 32 / hw.hbm_bw
    )
    exposed = comm.tp + comm.cp + comm.ep + comm.dp + comm.pp
    step = compute + bubble_s + exposed + optimizer_s + offload_s
    tokens_per_s = gbs * seq_length / (step * gpus)
    model_flops = flops.total
    if mode == "peft":  # Bridge's LoRA accounting (flop_utils.py): frozen GEMMs count 2/3, attention in full
        model_flops = (flops.total - flops.attention_core) * 2 / 3 + flops.attention_core
    tflops = model_flops * tokens_per_s / 1e12
    return ThroughputEstimate(
        tokens_per_sec_per_gpu=tokens_per_s,
        model_tflops_per_gpu=tflops,
        mfu=tflops * 1e12 / peak,
        step_time_s=step,
        compute_s=compute,
        bubble_fraction=bubble_fraction,
        bubble_s=bubble_s,
        recompute_s=recompute_s,
        exposed_comm_s=comm,
        optimizer_s=optimizer_s,
        offload_s=offload_s,
        flops_per_token=model_flops,
        num_gpus=gpus,
        assumptions=[
            f"GEMMs at {eff:.0%} of the {precision_key(precision)} peak ({cal.source}), scaled by GEMM width",
            "attention core at the BF16 rate; model FLOPs by the Megatron-Bridge formula "
            "(causal, padded vocab)",
            f"1F1B{' interleaved' if v > 1 else ''} bubble (p-1)/(m·v) = {bubble_fraction:.1%}",
            "communication: ring collectives over NVLink inside the NVLink domain, "
            "else the scale-out network; "
            "an expert all-to-all that is not overlapped is fully exposed, of the others a fitted fraction",
            "balanced MoE routing (as in the published benchmarks)",
            "weight gradients accumulate into the main-gradient buffer every micro-batch "
            "(one pass over the local weights)"
            if not frozen_base
            else "LoRA: no weight gradients or accumulation for the frozen weights"
            if mode == "peft"
            else "frozen language model: no weight gradients, gradient reduction or optimizer step for it",
            "performance features: " + (", ".join(feats.describe()) or "none (no CUDA graphs, no overlap)"),
        ]
        + ([f"{chunk:g} layers per model chunk"] if p > 1 else [])
        + (
            [
                f"CPU offloading of {offload_layers} layers over the {hw.host_bw / 1e9:.0f} GB/s host link, "
                "overlapped with the next layer's forward (offload) and backward (reload)"
            ]
            if offload_layers
            else []
        ),
    )


def _exposed_offload(arch, layout, hw, seq_length, precision, mbs, offload_layers, m, t_layers) -> float:
    """Offload transfer time not hidden by compute: each offloaded layer's activations go to the host during
    the next layer's forward and come back during the next layer's backward (twice the forward's time)."""
    layers = dims_of(arch).layers
    transfer = layer_activation_bytes(arch, layout, seq_length=seq_length, precision=precision,
                                      micro_batch_size=mbs) / hw.host_bw  # fmt: skip
    layer_s = t_layers / layers / m  # forward + backward of one layer and micro-batch (PP = 1)
    hidden_forward, hidden_backward = layer_s / 3, 2 * layer_s / 3
    return offload_layers * m * (max(0.0, transfer - hidden_forward) + max(0.0, transfer - hidden_backward))


def _selective_cost(
    d: Dims, modules: set[str], t_dense, t_expert, t_attn, t_elem, flops: TokenFlops
) -> float:
    """Time of one extra forward of the recomputed modules (a forward is a third of fwd + bwd)."""
    cost = 0.0
    if "core_attn" in modules:
        cost += t_attn / 3
    if "mlp" in modules and flops.dense_gemm:
        mlp_share = 6 * d.hidden * d.glu * d.ffn * d.dense_layers / flops.dense_gemm
        cost += t_dense * mlp_share / 3
    if "moe" in modules:
        cost += t_expert / 3
    if "mla_up_proj" in modules and d.mla and flops.dense_gemm:
        up = d.heads * ((d.q_lora or 0) * (d.qk_dim + d.qk_pos) + d.kv_lora * (d.qk_dim + d.v_dim))
        if d.dsv4:
            up = d.heads * (d.q_lora or 0) * d.v_dim  # linear_q_up_proj; the one KV head has no up-projection
        cost += t_dense * 6 * d.attn_layers * up / flops.dense_gemm / 3
    # Norms and activation functions are memory-bound: a small share of the elementwise time.
    cost += t_elem * 0.1 * len(modules & {"layernorm", "moe_act"}) / 3
    return cost


def _deduplicated_far_bytes(token_bytes: float, topk: int, groups: int) -> float:
    """Network bytes per GPU when a token crosses to each remote NVLink domain once (DeepEP/HybridEP) rather
    than once per routed expert: the expected number of distinct remote domains among `topk` uniformly
    routed experts spread over `groups` domains."""
    remote_domains = (groups - 1) * (1 - (1 - 1 / groups) ** topk)
    return token_bytes * remote_domains


def _stage_balance(
    arch: ModelArch,
    d: Dims,
    flops: TokenFlops,
    p: int,
    v: int,
    t_dense: float,
    t_expert: float,
    t_attn: float,
    t_scan: float,
    t_elem: float,
    seq_length: int,
) -> float:
    """Slowest pipeline stage over the mean, in time: every stage waits for the busiest, the one with the
    most (or the heaviest) layers, or the last when the output layer sits on top of its layers (unless the
    split counts the loss as a layer). The arguments are the whole model's times (`t_dense`: dense GEMMs,
    logits included); GEMM time splits by FLOPs, elementwise time evenly over the layers."""
    if p <= 1:
        return 1.0
    per_flop = t_dense / flops.dense_gemm
    dense_mlp = 6 * d.hidden * d.glu * d.ffn * per_flop
    shared_mlp = (6 * d.hidden * d.glu * d.shared_ffn + 6 * 2 * d.hidden * d.latent) * per_flop
    logits = flops.logits * per_flop
    mamba_proj = mamba_flops(d, d.d_inner, d.mamba_layers)[0] * per_flop
    gdn_proj = gdn_flops(d, d.gdn_layers)[0] * per_flop
    attn_proj = (
        t_dense - logits - dense_mlp * d.dense_layers - shared_mlp * d.moe_layers - mamba_proj - gdn_proj
    )
    attention = (attn_proj + t_attn) / d.attn_layers if d.attn_layers else 0.0
    # With a second attention shape, a layer of each shape takes its FLOPs' share of the projection time
    # and of the core time (a sliding window's core is smaller), so stages are weighed by their shapes.
    shapes = attention_shapes(d, whole_model(d))
    per_shape = [attention]
    if len(shapes) > 1:
        layer = [gqa_layer_flops(shape, seq_length) for shape, _ in shapes]
        proj_all = sum(n * f[0] for (_, n), f in zip(shapes, layer, strict=True))
        core_all = sum(n * f[1] for (_, n), f in zip(shapes, layer, strict=True))
        per_shape = [attn_proj * proj / proj_all + t_attn * core / core_all for proj, core in layer]
    # the scan time is shared by Mamba's scans and DeltaNet's cores in proportion to their FLOPs
    scan_flops = flops.ssm_scan or 1.0
    gdn_scan = t_scan * gdn_flops(d, d.gdn_layers)[1] / scan_flops
    mamba = (mamba_proj + t_scan - gdn_scan) / d.mamba_layers if d.mamba_layers else 0.0
    gdn = (gdn_proj + gdn_scan) / d.gdn_layers if d.gdn_layers else 0.0
    moe_mlp = shared_mlp + (t_expert / d.moe_layers if d.moe_layers else 0.0)
    elementwise = t_elem / d.layers
    kinds = layer_kinds(arch)
    work = []
    for rank in range(p):
        mix = stage_layers(kinds, p, v, rank)
        # a stage without second-shape layers lists only the main shape, hence strict=False
        staged = zip(attention_shapes(d, mix), per_shape, strict=False)
        attn = mix.attn * attention if len(per_shape) == 1 else sum(n * time for (_, n), time in staged)
        work.append(
            attn
            + mix.mlp * dense_mlp
            + mix.moe * moe_mlp
            + mix.mamba * mamba
            + mix.gdn * gdn
            + mix.layers * elementwise
            + (logits if rank == p - 1 else 0.0)
        )
    return max(work) * p / sum(work)


def _elementwise_bytes(d: Dims, *, fused_expert_mlp: bool = False) -> float:
    """Bytes of the per-token tensors that norms, activations, residuals, routing and Mamba's convolution and
    gated norm read and write. A fused grouped expert MLP keeps the expert activation (and its
    quantisation) inside the GEMM kernels."""
    expert_act = 0 if fused_expert_mlp else 3 * d.moe_ffn
    norm = 2 * d.hidden  # each sublayer's pre-norm and residual add
    attention = sum((norm + s.q_width + 2 * s.kv_width) * n for s, n in attention_shapes(d, whole_model(d)))
    mlp = norm + 3 * d.ffn
    moe = norm + d.topk * (2 * d.expert_io + expert_act) + 3 * d.shared_ffn + 2 * d.latent
    mamba = norm + 2 * d.mamba_conv_width + 3 * d.d_inner
    gdn = norm + 2 * d.gdn_conv_width + 3 * d.lin_v
    return 2 * (
        attention
        + d.dense_layers * mlp
        + d.moe_layers * moe
        + d.mamba_layers * mamba
        + d.gdn_layers * gdn
    )


def _gemm_input_bytes(d: Dims, *, fused_expert_mlp: bool = False) -> float:
    """BF16 bytes per token of every GEMM input (QKV, projection, MLP in and out, expert MLPs, Mamba in and
    out projections). A fused grouped expert MLP casts the expert activation inside its kernel."""
    attention = sum((d.hidden + s.q_width) * n for s, n in attention_shapes(d, whole_model(d)))
    mlp = d.hidden + d.ffn
    moe = (
        d.topk * (d.expert_io + (0 if fused_expert_mlp else d.moe_ffn))
        + (d.hidden + d.shared_ffn if d.shared_ffn else 0)
        + (d.hidden + d.latent if d.latent else 0)  # LatentMoE's down- and up-projection inputs
    )
    mamba = d.hidden + d.d_inner
    gdn = d.hidden + d.lin_v
    return 2 * (
        attention
        + d.dense_layers * mlp
        + d.moe_layers * moe
        + d.mamba_layers * mamba
        + d.gdn_layers * gdn
    )


def _params_per_gpu(d: Dims, t: int, p: int, e: int, et: int) -> tuple[float, float]:
    """(dense, expert) parameters one GPU holds, averaged over pipeline stages."""
    lp = mix_params(d, whole_model(d))
    sharded = (lp.tp_sharded + d.hidden * d.vocab * (1 if d.tied else 2)) / (t * p)
    return sharded + lp.replicated / p, lp.routed / (p * e * et)
