"""Typed records that cross module boundaries.

Every record has a stable JSON form (`model_dump(mode="json")`). The CLI's `--json`, the Gradio
panel, the Slack blocks and the evals all read these shapes, so field names are a contract. The answer
itself, built from these and the estimator's records, is `assistant.answer.Answer`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["library", "benchmark"]
Mode = Literal["pretrain", "sft", "peft"]
JSONScalar = str | int | float | bool | None


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


# ---------------------------------------------------------------- recipe catalog (ingest -> assistant)


class Parallelism(Record):
    """Model-parallel sizes as the recipe sets them; None = not set (upstream default applies)."""

    tp: int | None = None
    pp: int | None = None
    vp: int | None = None
    cp: int | None = None
    ep: int | None = None
    etp: int | None = None
    sp: bool | None = None


class SourceRef(Record):
    path: str
    line: int


class CudaGraph(Record):
    impl: str | None = None
    scope: list[str] | None = None


class EnvValue(Record):
    """A config value an upstream helper sets per run-time environment (apply_flex_dispatcher_backend turns
    moe_token_dispatcher_type to "flex" on some GPUs only). `fields` holds the value for `assumed`."""

    by_gpu: dict[str, Any] = Field(default_factory=dict)  # GPU family (hardware.json key) -> value
    # Other environments: "no_cuda" (no GPU, as in upstream's CPU unit tests), "no_num_moe_experts" (a
    # model config without an expert count, as a unit test's fake AutoBridge provider gives).
    environments: dict[str, Any] = Field(default_factory=dict)
    raises: dict[str, str] = Field(default_factory=dict)  # environment -> the error the helper raises there
    assumed: str
    rule: str
    source: SourceRef


class RecipeVariant(Record):
    """The same recipe called with other arguments: what the launcher's defaults or a goal select (0.3.1's
    finetune recipes change TP when called with peft=None, which is what run_recipe.py passes by default)."""

    mode: Mode
    call: dict[str, Any]  # keyword arguments the recipe is called with
    # run_recipe.py flags that make that call, and whether it is the call made with none of them; set only
    # where the launcher passes peft= itself (--peft_scheme, <= 0.5.1).
    launcher_args: list[str] = Field(default_factory=list)
    launcher_default: bool = False
    parallelism: Parallelism = Field(default_factory=Parallelism)
    min_gpus: int | None = None
    global_batch_size: int | None = None
    micro_batch_size: int | None = None
    peft: str | None = None
    changed: dict[str, Any] = Field(default_factory=dict)  # fields that differ from the record's own call


class SelfCheck(Record):
    """Whether a recipe's own defaults pass the rule module on its own GPU count (the count in its name, else
    the minimum world size of its layout), recorded at catalog build time (ingest/self_check.py)."""

    passes: bool
    gpus: int
    gpu_type: str
    failing_rules: list[str] = Field(default_factory=list)
    upstream_errors: list[str] = Field(default_factory=list)  # what the failing checks raise, verbatim
    # Overrides that make the defaults pass (each re-checked by the rule module); None when none is found.
    fix: dict[str, Any] | None = None
    arch_known: bool = True  # False: the model architecture is not bundled, so only layout rules ran


class RecipeRecord(Record):
    """One exported recipe name in one Megatron-Bridge version, read statically from source."""

    name: str
    canonical: str
    aliases: list[str] = Field(default_factory=list)
    version: str
    kind: Kind
    family: str
    mode: Mode | None = None
    hf_model_id: str | None = None
    parallelism: Parallelism = Field(default_factory=Parallelism)
    seq_length: int | None = None
    model_seq_length: int | None = None
    global_batch_size: int | None = None
    micro_batch_size: int | None = None
    min_gpus: int | None = None
    encoded_gpus: int | None = None
    gpu_type: str | None = None
    gpu_variant: str | None = None
    precision: str | None = None
    peft: str | None = None
    recompute: str | None = None
    recompute_modules: list[str] | None = None
    cuda_graph: CudaGraph | None = None
    fsdp: bool | None = None
    packed_sequence: bool | None = None
    module: str = ""
    reachable: bool = True
    source: SourceRef
    # Every statically known config write, dotted path -> last value ("model.use_te_rng_tracker": True).
    fields: dict[str, Any] = Field(default_factory=dict)
    unknown: dict[str, str] = Field(default_factory=dict)
    # Why run_recipe.py cannot reach a record with reachable=False (defined but not exported, ...).
    unreachable_reason: str | None = None
    gpu_dependent: dict[str, EnvValue] = Field(default_factory=dict)  # field path -> its values per GPU
    variants: list[RecipeVariant] = Field(default_factory=list)
    # The builder the recipe registers as model._pipeline_model_parallel_layout_builder, as "function
    # (path:line)" in the release's source, or None: run_recipe.py (v0.6.0+) rebuilds the recipe's layout
    # after -pp/-vp only through it (ingest/layout_builders.py).
    layout_builder: str | None = None
    self_check: SelfCheck | None = None

    def written_for(self, cluster: Cluster) -> bool:
        """The cluster is the GPU count (in the name, else the minimum) and type the recipe is written for."""
        count = self.encoded_gpus or self.min_gpus
        return count == cluster.num_gpus and self.gpu_type in (None, cluster.gpu_type)


class LauncherFlag(Record):
    """One argparse argument of run_recipe.py, as read from its add_argument call."""

    names: list[str]
    dest: str | None = None
    action: str | None = None
    required: bool = False
    choices: list[str] | None = None
    default: JSONScalar = None
    nargs: str | int | None = None
    type: str | None = None
    help: str | None = None
    # Id of the mutually exclusive group the flag belongs to (e.g. --model xor --recipe), if any.
    mutually_exclusive: str | None = None
    group_required: bool = False


class DatasetPreset(Record):
    name: str
    modes: list[str] = Field(default_factory=list)
    description: str | None = None


class BenchmarkLauncher(Record):
    """How a benchmark recipe is launched in one version."""

    script: str
    flags: list[LauncherFlag] = Field(default_factory=list)
    notes: str | None = None
    entry: str | None = None  # the script users run when it is a shell wrapper (scripts/training/train.sh)
    benchmark_recipes: bool = False  # the Slurm wrapper also runs exact benchmark recipes by name


class LauncherSpec(Record):
    script: str | None  # None when the version has no run_recipe.py (v0.2.x)
    flags: list[LauncherFlag] = Field(default_factory=list)
    modes: list[str] | None = None
    dataset_presets: list[DatasetPreset] = Field(default_factory=list)
    mode_inference: str | None = None
    benchmark: BenchmarkLauncher | None = None
    # v0.6.0+: scripts/training/setup_experiment.py, the Slurm/NeMo-Run wrapper behind train.sh.
    slurm: BenchmarkLauncher | None = None
    # (recipe-name prefix, forward step) for a launcher whose --step_func defaults to the text step instead
    # of inferring it (0.3.x-0.5.x); knowledge_base/forward_steps.json, Bridge's own table from v0.6.0.
    forward_steps: list[tuple[str, str]] = Field(default_factory=list)
    # The names get_mixed_precision_config accepts in this release (knowledge_base/mixed_precision.json).
    mixed_precision_presets: list[str] = Field(default_factory=list)


class CatalogSource(Record):
    kind: Literal["wheel", "git", "installed", "checkout"]
    ref: str
    commit: str | None = None


class Catalog(Record):
    version: str
    source: CatalogSource
    recipes: list[RecipeRecord]
    launcher: LauncherSpec
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- model architecture


class DiffusionDims(Record):
    """What a diffusion transformer (Megatron-Bridge's WanModelProvider, FluxProvider) has beyond a
    transformer stack: a projected text context (cross-attended by every Wan layer, joined to the image
    tokens by FLUX), and tokens that are patches of a video or image latent."""

    cross_attention_size: int  # crossattn_emb_size: width of the projected text context
    context_tokens: int  # text_len: text-encoder tokens per sample
    context_dim: int  # text_dim: width of the text encoder's embeddings (the input of text_embedding)
    in_channels: int  # latent channels in (patch embedding) and out (head)
    out_channels: int
    patch_temporal: int
    patch_spatial: int
    freq_dim: int  # sinusoidal timestep width (time_embedder input)
    # Latent frames, height and width of one sample when the recipe does not set them (the data config's).
    sample_latents: tuple[int, int, int]
    # FLUX (FluxProvider): the first joint_layers of num_layers are double-stream (MMDiT) blocks, the rest
    # single-stream; the text joins the image tokens in one attention instead of a cross-attention.
    kind: Literal["wan", "flux"] = "wan"
    joint_layers: int = 0
    pooled_dim: int = 0  # vec_in_dim: the CLIP pooled embedding (vector_embedding input)
    guidance_embed: bool = False  # FLUX.1-dev's guidance embedder
    vae_scale_factor: int = 0  # image pixels per latent, to turn dataset.image_H/W into latents

    @property
    def patch_volume(self) -> int:
        return self.patch_temporal * self.patch_spatial**2

    def sample_tokens(self, frames: int, height: int, width: int) -> int:
        """Patches of one latent video: the DiT's tokens per sample."""
        spatial = (height // self.patch_spatial) * (width // self.patch_spatial)
        return (frames // self.patch_temporal) * spatial


class VisionTowerDims(Record):
    """A VLM's vision encoder and its projector as Megatron-Bridge builds them, in the names of the HF
    `vision_config` (Qwen2.5-VL, Qwen3-VL, Qwen3.5, Gemma 3's SigLIP, Ministral 3's Pixtral, GLM-4.5V,
    Kimi-K2.5's MoonViT):
    the memory estimate puts them on the first pipeline stage, beside the embedding."""

    depth: int  # encoder blocks
    hidden_size: int
    ffn_hidden_size: int  # the blocks' MLP width (intermediate_size; GLM-4V: out_hidden_size)
    num_heads: int
    patch_size: int
    temporal_patch_size: int = 1
    in_channels: int = 3
    spatial_merge_size: int = 1  # the merger concatenates merge² patches before its two linears
    out_hidden_size: int  # the language model's width, which the projector maps to
    num_position_embeddings: int = 0  # a learned position table (Qwen3-VL, SigLIP, GLM-4V); 0: rotary only
    gated_mlp: bool = False  # SwiGLU blocks (Qwen2.5-VL, Pixtral, GLM-4V); else GELU with two linears
    layer_norm: bool = True  # LayerNorm with a bias; False: RMSNorm (weight only)
    patch_bias: bool = True  # the patch-embedding convolution has a bias
    linear_bias: bool = True  # the blocks' attention and MLP linears have biases (Pixtral, GLM-4V: none)
    extra_norms: int = 0  # hidden-wide norms outside the blocks (SigLIP/MoonViT final norm, Pixtral ln_pre)
    deepstack_mergers: int = 0  # Qwen3-VL: one more merger per deepstack_visual_indexes entry
    # How Bridge builds the projector: "merger" (Qwen: norm, merge² concat, two linears), "gemma3" (an
    # RMSNorm and one column-parallel linear without bias), "mistral3" (RMSNorm, a merge² patch-merging
    # linear, two linears without bias), "glm4v" (merge² Conv2d downsample, a gated MLP merger).
    projector: Literal["merger", "gemma3", "mistral3", "glm4v"] = "merger"
    projector_ffn_hidden_size: int = 0  # GLM-4V's merger MLP width (the vision_config intermediate_size)
    # Bridge builds the tower from Megatron layers sharded over the language model's TP group (Qwen3-VL,
    # Qwen3.5); False: a Hugging Face module, whole on every TP rank (Qwen2.5-VL, SigLIP, Pixtral, GLM-4V,
    # MoonViT).
    tensor_parallel: bool = False


class ModelArch(Record):
    """Architecture of one HF model, in Megatron TransformerConfig field names."""

    hf_model_id: str
    family: str
    num_layers: int
    hidden_size: int
    ffn_hidden_size: int | None = None
    num_attention_heads: int
    num_query_groups: int | None = None
    kv_channels: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    tied_embeddings: bool = False
    gated_linear_unit: bool = True
    num_moe_experts: int | None = None
    moe_router_topk: int | None = None
    moe_ffn_hidden_size: int | None = None
    moe_shared_expert_intermediate_size: int | None = None
    # Indices of MoE layers are described by the first dense layers and a frequency.
    moe_first_k_dense: int | None = None
    moe_layer_freq: int | None = None
    multi_latent_attention: bool = False
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_head_dim: int | None = None
    qk_pos_emb_head_dim: int | None = None
    v_head_dim: int | None = None
    total_params: float | None = None
    active_params: float | None = None
    is_vlm: bool = False
    is_hybrid: bool = False
    # Megatron hybrid_override_pattern of Mamba hybrids (M = Mamba, * = attention, - = MLP, E = MoE).
    hybrid_layer_pattern: str | None = None
    # Mamba-2 mixer of the M layers (Megatron MambaMixer; d_inner = heads × head_dim).
    mamba_num_heads: int | None = None
    mamba_head_dim: int | None = None
    mamba_state_dim: int | None = None
    mamba_num_groups: int | None = None
    # LatentMoE (Nemotron 3 Super): routed experts work in this width, between a down- and an up-projection.
    moe_latent_size: int | None = None
    # Multi-token-prediction blocks in the checkpoint (HF num_nextn_predict_layers), and the layers of one
    # block of a Mamba hybrid (mtp_hybrid_override_pattern); a run sets how many passes it makes.
    mtp_num_layers: int | None = None
    mtp_layer_pattern: str | None = None
    # Gated DeltaNet linear-attention hybrids (Qwen3-Next, Qwen3.5; Megatron experimental_attention_variant
    # "gated_delta_net"): every linear_attention_freq-th layer is full attention, the others Gated DeltaNet.
    linear_attention_freq: int | None = None
    linear_num_key_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_num_value_heads: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int | None = None
    attention_output_gate: bool = False  # the query projection also yields a gate on the attention output
    # Two attention shapes in one model (Step-3.5-Flash, Gemma 4 MoE): the layers listed in
    # other_attention_layers (0-based; an index from num_layers on is an MTP layer) build their attention
    # with the other_* heads, KV groups and head size; a window is a causal sliding window in tokens (None:
    # full attention), attention_window for the main shape. other_k_eq_v: those layers take their values from
    # the keys (Gemma 4 attention_k_eq_v), while Megatron still projects and drops the value rows.
    attention_window: int | None = None
    other_attention_layers: tuple[int, ...] | None = None
    other_num_attention_heads: int | None = None
    other_num_query_groups: int | None = None
    other_kv_channels: int | None = None
    other_attention_window: int | None = None
    other_k_eq_v: bool = False
    # DeepSeek-V4 hybrid attention (Megatron-LM dev experimental_attention_variant "dsv4_hybrid"): one
    # compress ratio per layer (and per MTP layer after them): 0 sliding window only, 4 compressed sparse
    # attention with an indexer (CSA), 128 heavily compressed attention (HCA); a single 512-wide KV head, a
    # grouped low-rank output projection, and num_residual_streams hyper-connection streams.
    csa_compress_ratios: tuple[int, ...] | None = None
    csa_window_size: int | None = None
    o_groups: int | None = None
    o_lora_rank: int | None = None
    dsa_indexer_n_heads: int | None = None
    dsa_indexer_head_dim: int | None = None
    dsa_indexer_topk: int | None = None
    num_residual_streams: int | None = None
    moe_n_hash_layers: int | None = None  # the first MoE layers route by a token-id table, not a learned gate
    # A diffusion transformer (Wan, FLUX): no vocabulary, text conditioning per layer, latent-patch tokens.
    diffusion: DiffusionDims | None = None
    # A VLM's vision encoder and projector, when their widths are sourced.
    vision: VisionTowerDims | None = None
    source: str


# ---------------------------------------------------------------- cluster, plans, findings


class Cluster(Record):
    num_gpus: int
    gpu_type: str = "h100"
    gpus_per_node: int = 8

    @property
    def num_nodes(self) -> int:
        return max(1, -(-self.num_gpus // self.gpus_per_node))

    @property
    def gpu_label(self) -> str:
        return gpu_label(self.gpu_type)


def gpu_label(gpu_type: str) -> str:
    """How a GPU type reads in an answer: "H100", "GB200", "A100 40G" (not "a100_40g")."""
    return gpu_type.upper().replace("_", " ")


class Finding(Record):
    id: str
    severity: Literal["error", "warning", "info"]
    message: str
    message_zh: str
    upstream_error: str | None = None
    fix: str | None = None


class Override(Record):
    key: str
    value: Any
    reason: str
    reason_zh: str | None = None
    # "class" is a keyword; the JSON key is "class".
    change_class: Literal["convergence", "execution", "benchmark-only"] = Field(alias="class")

    # Dumped by alias wherever it is nested (an Answer's overrides too).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)


class Plan(Record):
    tp: int
    pp: int
    vp: int | None
    cp: int
    ep: int
    etp: int | None
    sp: bool
    dp: int
    mbs: int
    gbs: int
    ga: int
    num_gpus: int

    @classmethod
    def sized(cls, *, num_gpus: int, tp: int, pp: int, cp: int, mbs: int, gbs: int, **rest: Any) -> Plan:
        """A plan whose DP and gradient accumulation follow from the GPU count and the batch sizes (the
        caller has checked that TP·PP·CP divides the GPUs and MBS·DP divides GBS)."""
        dp = num_gpus // (tp * pp * cp)
        ga = gbs // (mbs * dp)
        return cls(tp=tp, pp=pp, cp=cp, dp=dp, mbs=mbs, gbs=gbs, ga=ga, num_gpus=num_gpus, **rest)


# ---------------------------------------------------------------- understanding (text -> slots)

Intent = Literal[
    "recommend",
    "first_try",
    "benchmark",
    "explain",
    "troubleshoot",
    "validate",
    "compare_versions",
    "out_of_scope",
    "greeting",  # "hi", "what can you do?": a short list of what the assistant answers
]


class Slots(Record):
    """What a question (or a conversation so far) says; None = not said."""

    language: Literal["en", "zh"] = "en"
    intent: Intent = "recommend"
    model_text: str | None = None  # the words that named the model, verbatim
    model_stem: str | None = None  # recipe-name stem, e.g. "qwen3_30b_a3b", "llama3_8b", "llama31_405b"
    hf_model_id: str | None = None
    num_gpus: int | None = None
    gpu_type: str | None = None  # lower-case: h100, h200, a100, b200, b300, gb200, gb300
    gpus_per_node: int | None = None
    num_nodes: int | None = None
    goal: Mode | None = None
    peft_scheme: Literal["lora", "dora"] | None = None
    seq_length: int | None = None
    version: str | None = None
    other_version: str | None = None  # the second version of a compare_versions question
    dataset: str | None = None
    recipe_name: str | None = None  # an explicit *_config name in the text
    error_text: str | None = None  # a pasted error message, for troubleshooting
    overrides: dict[str, str] = Field(default_factory=dict)  # KEY=VALUE pairs in the text
    features: list[Literal["cuda_graphs"]] = Field(default_factory=list)  # asked to turn on, no keys given
    # A training precision asked for by name ("FP8", "MXFP8", "NVFP4"), in Bridge's recipe-name codes.
    precision: Literal["bf16", "fp8cs", "fp8mx", "nvfp4"] | None = None
    wants_fastest: bool | None = None  # asked for the fastest layout ("fastest layout", "最快的布局")
    # Follow-ups about the last plan: "it's slow, why?" (where its step time goes), "why?" (why this recipe).
    speed_question: bool | None = None
    asks_why: bool | None = None
    asks_plan: bool | None = None  # "how fast will it be?", "放得下吗？": the last plan again, fit and speed
    # The recipe was picked from the version's quick-reference table for an intent with no model named.
    quick_pick: str | None = None
    quick_assumed: bool | None = None  # its GPUs were assumed (8 × H100), not said

    @property
    def about_a_plan(self) -> bool:
        """A question about a plan: the fastest layout, where its time goes, why picked, does it fit."""
        return bool(self.wants_fastest or self.speed_question or self.asks_why or self.asks_plan)


# ---------------------------------------------------------------- answers (assistant -> front ends, evals)


class Citation(Record):
    n: int
    source: str
    heading: str
    text: str | None = None


class Commands(Record):
    torchrun: str | None = None
    multinode: str | None = None
    slurm: str | None = None
    benchmark: str | None = None


# ---------------------------------------------------------------- retrieval


class Hit(Record):
    chunk_id: str
    source: str
    heading: str  # "document > section > subsection"
    doc_type: str
    lang: str
    text: str
    score: float
    version: str = "all"
    section: str = ""  # the innermost heading, whole
    part: str = "section"  # "intro" for text that only leads into subsections


class SearchResult(Record):
    query: str
    hits: list[Hit]
    abstain: bool = False
