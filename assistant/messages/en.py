"""English messages, by key; `{name}` placeholders are filled by `assistant.messages.words`."""

MESSAGES: dict[str, str] = {
    "service.decline": (
        "I help start Megatron-Bridge training runs: which recipe to use, the launch command for your "
        "version, parallelism for your GPUs, and fixes for launch errors. That question is outside what "
        "I can answer. Try for example:\n{examples}"
    ),
    "conversation_replies.greeting.models": "\n\nModel families with recipes in {version}: {listed}.",
    "conversation_replies.greeting": (
        "Hi! I help you start Megatron-Bridge training runs (answers for version {version} unless you "
        "name another):\n- which recipe to start from, for a model or just a goal (a first smoke test, a "
        "VLM, diffusion, MoE);\n- the launch command and the parallelism and batch sizes for your GPUs, "
        "with a memory and speed estimate;\n- whether a feature is supported (packing with CP, FP8 on "
        "your GPUs, LoRA), and what a launch error means.{models}\n\nTry for example:\n{examples}"
    ),
    "conversation_replies.greeting.example.1": "Train DeepSeek V3 from scratch on 256 H100 GPUs",
    "conversation_replies.greeting.example.2": "I want to fine-tune a vision-language model on 8 GPUs",
    "conversation_replies.greeting.example.3": "Can I use packed sequences with CP=2?",
    "conversation_replies.why": "**Why `{name}`:** {reason}.",
    "conversation_replies.why.quick_pick": (
        "- You named no model, so it is the starting recipe this release's own guidance gives for what "
        "you want to do."
    ),
    "conversation_replies.why.validated": (
        "- It is written for {validated} GPUs; the plan maps it onto your {num_gpus}."
    ),
    "conversation_replies.match.exact": "it is this release's recipe for your model and goal",
    "conversation_replies.match.seq-variant": (
        "it is the variant of your model's recipe whose sequence length covers yours"
    ),
    "conversation_replies.match.closest-size": (
        "this release has no recipe for your size, and this is the nearest size of the same family"
    ),
    "conversation_replies.match.similar-architecture": (
        "this release has no recipe for your model, and this recipe's model has the most similar "
        "architecture"
    ),
    "conversation_replies.match.explicit": "you named it",
    "service.unknown_model": (
        "Megatron-Bridge {version} has no recipe for **{named}**, and I will not guess one. Tell me its "
        "Hugging Face model id or share its `config.json` (local path), and I can pick the recipe of an "
        "architecturally similar model and resize it for your GPUs."
    ),
    "service.validate.verdict": (
        "`{name}` with your overrides on {num_gpus} GPUs is **{verdict}** for Megatron-Bridge {version}."
    ),
    "service.compare.header": "| version | recipe | layout | dataset presets |",
    "service.conversation_context": "For `{name}` (Megatron-Bridge {version}): dataset preset {preset}.",
    "service.no_quick_pick": (
        "Megatron-Bridge {version} has no recipe for {what}. Bundled releases that have one: {listed}."
    ),
    "service.ask_cases": "Your question lists {len_cases} setups; each is answered on its own.",
    "service.unknown_model.unknown_architecture": (
        "Megatron-Bridge {version} has no recipe for **{hf_model_id}**, and its architecture is not "
        "among the model configs bundled here, so I cannot match it to a similar recipe offline. Name "
        "the model it derives from (for example Llama 3 8B) and I will start from that recipe, resized "
        "for your GPUs."
    ),
    "service.unknown_model.family": "Models of that family with recipes: {listed}.",
    "service.unknown_model.vendor": (
        "Other {vendor} models with recipes in Megatron-Bridge {version}: {listed}."
    ),
    "service.unknown_model.vision": (
        "Vision-language models with recipes in Megatron-Bridge {version}: {listed}."
    ),
    "service.unknown_model.more": ", and {count} more",
    "service.missing_size": (
        "Megatron-Bridge {version} has no recipe for **{named}**: there is no recipe of that size in its "
        "catalog. The sizes of that family with recipes: {listed}."
    ),
    "service.missing_size.goal": "Their {goal} recipes: {listed}.",
    "service.missing_size.same_size": "That size has recipes in a related family: {listed}.",
    "service.passages.nothing_found": (
        "I found nothing relevant in the knowledge base. Name the model, the config key or paste the "
        "exact error text."
    ),
    "known_causes.kind.cause": "**Known cause** (Megatron-Bridge {version}): ",
    "known_causes.kind.fixed_later": "**Fixed in a later release** (asked for Megatron-Bridge {version}): ",
    "known_causes.kind.capability": "**What Megatron-Bridge {version} has**: ",
    "known_causes.sources": "Source: {sources}",
    "service.validate.assumed_gpus": (
        "You did not say how many GPUs you have; TP·PP·CP = {model_parallel} needs a multiple of "
        "{model_parallel}, so this checks {count}."
    ),
    "service.conversation_context.no_dataset_flag": "no --dataset flag",
    "service.ask.what_to_tell": (
        "Tell me the model, your GPUs (count and type) and the goal (pretrain, SFT or LoRA)."
    ),
    "service.validate.does_not_fit": (
        " It passes Megatron's checks but, by the memory estimate, **does not fit** these GPUs."
    ),
    "service.quick_preface.assumed_gpus": (
        "You did not say which GPUs you have: this assumes {num_gpus} × {gpu}."
    ),
    "service.quick_preface.shortened_run": (
        "At its defaults the recipe does not fit these GPUs, so the smoke run keeps it and shortens the "
        "run: sequence length {seq}, {changed}. These change what is trained; they only prove the "
        "install."
    ),
    "intent_form.start_from_hf": (
        "**Starting from a Hugging Face model in Megatron-Bridge {version} takes two steps.** "
        "1. Convert its weights to a Megatron checkpoint once, in Python with `{call}` "
        "(`from megatron.bridge import AutoBridge`) or with `{cli}`. 2. Launch that model's recipe, "
        "`<model>_pretrain_config` to pretrain (`<model>_sft_config` to fine-tune), with "
        "`checkpoint.pretrained_checkpoint` set to the converted directory.{example} {accepts} Tell me the "
        "model and your GPUs, and I will pick its recipe and size the run.\n\nSources: {sources}"
    ),
    "intent_form.start_from_hf.example": (
        " For example, for `{hf_model}` and its recipe `{name}`, under torchrun: `{launch}`."
    ),
    "intent_form.start_from_hf.hf_directory": (
        "In {version}, `checkpoint.pretrained_checkpoint` also takes a local Hugging Face model directory "
        "(with `config.json` and its weight files), so step 1 is optional; a hub id is not accepted there."
    ),
    "intent_form.start_from_hf.megatron_only": (
        "In {version}, `checkpoint.pretrained_checkpoint` must be a Megatron checkpoint, so step 1 is "
        "needed; a local Hugging Face directory is accepted there from {since} on."
    ),
    "intent_form.why_allowed.no_divide": (
        "With your numbers {mesh} does not divide {world} GPUs; start-up should fail with `{error}`."
    ),
    "intent_form.why_allowed.experts": " EP must also divide the number of experts ({experts}).",
    "intent_form.why_allowed": (
        "**This is expected: EP is not bounded by DP.** The MoE layers use their own expert mesh, PP × "
        "EP × ETP × EDP (expert data parallel) = world size, separate from the dense mesh TP × CP × DP × "
        "PP. With your numbers: dense DP = {world} / (TP {tp} × PP {pp} × CP {cp}) = {dp}; the expert "
        "mesh PP {pp} × EP {ep} × ETP {etp} = {expert_size} divides {world} GPUs, so EDP = {edp}. What "
        "bounds EP is that PP × EP × ETP divides the world size.{limit}"
    ),
    "intent_form.conversion.not_needed": (
        "**No conversion is needed**: {name} is a pretraining recipe, and in Megatron-Bridge {version} "
        "its defaults set no `checkpoint.pretrained_checkpoint`, so it starts from randomly initialised "
        "weights. Converting Hugging Face weights to Megatron format (`AutoBridge.import_ckpt`) matters "
        "only when a run starts from trained weights, as SFT and LoRA do."
    ),
    "intent_form.conversion.unset": "unset",
    "intent_form.conversion.pretrained": (
        "{name} ({mode}) starts from the weights `checkpoint.pretrained_checkpoint` points at (default: "
        "{value}). Set it to the checkpoint to start from; the formats it accepts are in this release's "
        "checkpoint notes."
    ),
    "intent_form.distributed_import": (
        "**Yes.** `{call}` builds the whole model on the CPU in one process (`{builds_on}`), so a large "
        "model needs all its weights in host RAM. In Megatron-Bridge {version} you can convert across "
        "GPUs under `torchrun` instead, each rank loading and saving its shard:\n{steps}\n\nExample script: "
        "`{example}` (arguments {args}).\n\nSource: {sources}"
    ),
    "intent_form.batch_divisible": (
        "The global batch size must be divisible by MBS × DP (micro batch size × data-parallel size): "
        "GBS = MBS × DP × GA with a whole number of gradient-accumulation steps GA, and DP = GPUs / (TP "
        "× PP × CP). Otherwise Megatron Core stops with `{error}`."
    ),
    "support.status.yes": "**yes**",
    "support.status.partial": "**partly**, with conditions",
    "support.status.experimental": "**experimental**, not supported out of the box",
    "support.status.no": "**no**",
    "support.status.unknown": "**not known**",
    "support.head": "**{topic}** — Megatron-Bridge {version}: {status}.",
    "support.head.no_before": "**{topic}** — Megatron-Bridge {version}: **no**; available from {first}.",
    "support.head.unknown_before": (
        "**{topic}** — Megatron-Bridge {version}: **not known** (verified from {first} on)."
    ),
    "support.conditions": "{prefix}{body}\n\nSource: {sources}",
    "support.conditions.from": "From {when}: ",
    "support.conditions.from_status": "From {when} ({status}): ",
    "support.precision.yes": "yes",
    "support.precision.no": "no",
    "support.precision.presets": "This release's presets: {listed}",
    "support.recipes": "Megatron-Bridge {version} has {count} recipes for {model}: {shown}{tail}.",
    "support.recipes.more": ", and {more} more",
    "support.recipes.no_peft": "Megatron-Bridge {version} has no PEFT recipe for {model}.",
    "support.model": (
        "**{named}** — Megatron-Bridge {version}: **yes**. The catalog has recipes for {sizes} "
        "({modes}): {shown}{more}. Tell me the goal (pretrain, SFT or LoRA) and the GPUs for the launch "
        "command."
    ),
    "support.model.more": ", and {extra} more",
    "support.model.all": "",
    "sequence_multiple.line": (
        "**Sequence length**: with {head}, the sequence length must be a multiple of {multiple} "
        "({reasons}; the smallest length both accept)."
    ),
    "sequence_multiple.head": "CP {cp} and TP {tp}",
    "sequence_multiple.head.sp": " with sequence parallelism",
    "sequence_multiple.for_cp": "2 × CP = {for_cp} for context parallelism",
    "sequence_multiple.for_sp": (
        "CP × TP = {for_sp} for sequence parallelism, which splits S / CP over the TP ranks"
    ),
    "sequence_multiple.without_sp": " Without sequence parallelism a multiple of {without_sp} is enough.",
    "sequence_multiple.not_multiple": (
        "{seq} is not a multiple of {multiple}; the nearest lengths that pass: {near}."
    ),
    "sequence_multiple.sourced": "{line}\n\nSource: {sources}",
    "topic_answer.head.label": "**{label}** (Megatron-Bridge {version}{about}): ",
    "topic_answer.head": "Megatron-Bridge {version}{about}: ",
    "topic_answer.about": ", for {entity}",
    "topic_answer.line": "{head}{body}.",
    "topic_answer.upstream": "Upstream doc in that release: {docs}.",
    "topic_answer.covered": "The guide covers {listed} in `{source}` ({heading}).",
    "topic_answer.uncovered": (
        "Nothing in the guide covers {listed} for Megatron-Bridge {version}; the answer lives in {where}."
    ),
    "override_keys.unknown": "unknown override key(s) for Megatron-Bridge {version}: {listed}",
    "override_keys.closest": "{key} (closest: {hint})",
    "override_keys.no_similar": "{key} (no similar key)",
    "bounds.gpus": "the GPU count must be a positive number no larger than {limit:,} (2^20), got {got:,}",
    "bounds.gpus_per_node": "GPUs per node must be positive and at most {limit:,}, got {got:,}",
    "bounds.question": (
        "the question is {length:,} characters long; the limit is {limit:,}. Ask about one setup at a "
        "time, or paste only the config lines and the error"
    ),
    "bounds.setups": "the question lists {count} setups; at most {limit} are answered at once. Split it",
    "bounds.count_negative": (
        "a GPU or node count cannot be negative; write how many you have as a plain number, e.g. 8 H100"
    ),
    "bounds.count_expression": (
        "write the GPU or node count as a plain number (e.g. 1024 H100), not as a power or an exponent"
    ),
    "bounds.seq_len": "the sequence length must be between 1 and {limit:,} (2^24) tokens, got {got:,}",
    "bounds.top_k": "--top-k must be between 1 and {limit}, got {got}",
    "bounds.tokens": "--tokens must be a positive number of tokens no larger than {limit:.0e}, got {got}",
    "bounds.batch_line_size": "the line is {size:,} bytes; a batch line is at most {limit:,}",
    "bounds.batch_line_utf8": "the line is not UTF-8 text ({reason} at byte {at})",
    "bounds.batch_line_json": "line {number}: not JSON ({reason})",
    "bounds.batch_line_ask_shape": 'each line needs {{"id", "question", "version"}} with a string question',
    "bounds.batch_line_estimate_shape": 'line {number}: expected {{"id": ..., "args": [...]}}',
    "bounds.batch_nested": "line {number}: --batch cannot be nested",
    "version_resolve.unknown": (
        "Megatron-Bridge {raw} is not bundled (bundled: {listed}). To answer for your own checkout, "
        "index it: `{index_hint} PATH_TO_CHECKOUT --version X.Y.Z --out CATALOG_DIR/X.Y.Z.json` "
        "(CATALOG_DIR is the catalogs folder of your knowledge base), then pass that version."
    ),
    "version_resolve.next_minor": (
        "Megatron-Bridge {normalized} is not released in the bundled catalogs; answering from `main`, "
        "its development line."
    ),
    "version_resolve.earlier": (
        "Megatron-Bridge {normalized} is not bundled; answering from {earlier}, the nearest earlier "
        "bundled release. Names and flags may differ in {normalized}."
    ),
    "version_resolve.named": (
        "The question names Megatron-Bridge {named}, the selector says {selected}: answering for "
        "{version}, as the question says."
    ),
    "session.ask": "To pick the right recipe, could you tell me {listed}?",
    "session.ask.sep": ", ",
    "session.ask.last": " and ",
    "session.ask.model": "the model (name and size, e.g. Qwen3 30B-A3B, or its Hugging Face id)",
    "session.ask.goal": "the training goal (pretrain, full SFT, or PEFT such as LoRA)",
    "session.ask.num_gpus": "how many GPUs you have (and how many nodes, if more than one)",
    "session.ask.gpu_type": "the GPU type (H100, H200, B200, GB200, ...)",
    "session.ask.versions": "the two Megatron-Bridge versions to compare (e.g. 0.5.1 and 0.6.0)",
    "service.ask.unusable_part": "I cannot use part of this request: ",
    "service.answer_from.similar_architecture": (
        "⚠️ Megatron-Bridge {version} has no recipe for **{named}**. This is the recipe of the most "
        "similar architecture, `{name}`, resized for yours: it builds its own model, so use its layout "
        "and batch settings as a start and point the model and checkpoint at yours before training."
    ),
    "service.answer_from.single_gpu_lora": (
        "One GPU can only run PEFT recipes, so this is the LoRA recipe of your model."
    ),
    "service.answer_from.benchmark_recipe": (
        "⚠️ This is a **benchmark** recipe: it measures upper-bound throughput on mock data for a fixed "
        "number of steps. It is not a production training recipe."
    ),
    "service.answer_from.no_count_variant": (
        "Megatron-Bridge {version} has no variant of this benchmark recipe written for {gpus} GPUs. "
    ),
    "service.answer_from.weak_scaled": (
        "On {gpus} GPUs, `run_recipe.py` and `setup_experiment.py` in {version} weak-scale this benchmark "
        "recipe's global batch: GBS {old} at DP {dp_old} (the {gpus_old} GPUs in its name) becomes GBS {new} "
        "at DP {dp}, the same samples per data-parallel rank; the plan shows that batch. To keep GBS {old}, "
        "pass `train.global_batch_size={old}` (or `--global_batch_size {old}`), which turns weak scaling "
        "off; gradient accumulation then absorbs the change in DP."
    ),
    "service.answer_from.precision_variants": (
        "Benchmark recipes of this model written for {gpu} in {precision} (Megatron-Bridge {version}): "
        "{listed}, tuned for throughput on mock data. The recipe below is the one to train with, in "
        "{precision} through its precision override."
    ),
    "service.answer_from.assumed_gpus": (
        "You did not say how many GPUs you have, so this uses the recipe's {num_gpus}."
    ),
    "service.ask.model_versions": "{model_text} recipes exist for: {listed}.",
    "service.ask.family_goal_recipes": (
        "{model_text} has {goal} recipes in Megatron-Bridge {version}, one per model size: {listed}. Start "
        "from the one of your size; they launch with `{script}`, not a per-model script."
    ),
    "service.answer_from.nearest_variant": (
        "Chosen as the variant validated nearest your GPU count ({count} GPUs); not picked: {listed}."
    ),
    "service.answer_from.other_variants": (
        "This variant is validated on {count} GPUs; others exist for other counts: {listed}."
    ),
    "compose.peak.tight": (
        "about {peak} of {usable}, tight: {left:.1%} left, under the {HEADROOM:.0%} a plan should keep"
    ),
    "compose.launch.layout": " — with the layout that fits ({layout}), not the plan above",
    "compose.fit.unknown": "unknown ({note})",
    "compose.peak.room": "about {peak} of {usable}",
    "compose.fit.within_error": (
        "{verdict} — about {need} of {usable} per GPU, inside the estimator's typical error, so it may "
        "go either way: watch memory in the first steps"
    ),
    "compose.layout.recompute": "recompute {recompute}",
    "compose.layout.offload": "CPU offloading of {offload_layers} layers",
    "compose.slow.none_faster": (
        "No layout the search finds for these GPUs is more than {CLEARLY_FASTER:.0%} faster by the "
        "estimate; look at data loading, logging and checkpoint intervals, and the performance settings "
        "(CUDA graphs, communication overlap) before changing the parallelism."
    ),
    "compose.fit.yes": "yes — about {need} of {usable} per GPU (margin {margin})",
    "compose.fit.no": "no — about {need} needed per GPU, {usable} usable",
    "compose.slow.oom_layout_below": (
        "This layout is expected to run out of memory before speed matters; the layout below fits."
    ),
    "compose.slow.oom": "This layout is expected to run out of memory before speed matters.",
    "compose.fit.named_for_these_gpus": (
        ". The recipe is named for exactly these GPUs, so upstream runs it as is: the estimate may be "
        "high for it; watch memory in the first steps"
    ),
    "service.verdict.valid": "valid",
    "service.verdict.invalid": "not valid",
    "compose.fit.verdict.tight": "yes, but tight",
    "compose.fit.verdict.borderline": "borderline",
    "section.recipe": "Recipe",
    "section.alias_of": "an alias of",
    "section.defaults": "Recipe defaults",
    "section.min_gpus": "needs at least {n} GPU{s}",
    "section.name_gpus": "validated on {n} GPU{s} (in its name)",
    "section.name_gpus_library": (
        "the {n} GPU{s} in its name are its layout's minimum world size, not a measured run"
    ),
    "section.name_gpus_library_sized": (
        "the {n} GPU{s} in its name are the size it was written for, not its layout's minimum and not a "
        "measured run"
    ),
    "section.plan": "Plan on your {n} × {gpu}",
    "section.no_plan": "No valid layout on {n} × {gpu}; see the findings.",
    "section.launch": "Launch",
    "section.single": "Single node (torchrun)",
    "section.multinode": "Multi-node (torchrun on every node)",
    "section.slurm": "Slurm (srun-native)",
    "section.benchmark_cmd": "Benchmark launcher",
    "section.overrides": "Overrides and why",
    "section.key": "key",
    "section.value": "value",
    "section.class": "class",
    "section.why": "reason",
    "section.fit": "Will it fit?",
    "section.findings": "Checks and pitfalls",
    "section.fix": "fix",
    "section.upstream": "upstream error",
    "section.checklist": "Before you launch",
    "section.sources": "Sources",
    "section.dataset": "dataset preset",
    "section.no_dataset": (
        "this version's run_recipe.py has no --dataset flag; the recipe's own dataset is used"
    ),
    "section.own_data": (
        "none; the presets are for text and VLM models, so this recipe's own data config is used"
    ),
    "section.version": "Megatron-Bridge {v}",
    "match.exact": "exact match for the model and goal",
    "match.seq-variant": "the long-context variant for your sequence length",
    "match.closest-size": "no recipe for {asked}; this is the closest size in the same family, resized below",
    "match.similar-architecture": (
        "no recipe for this model; this recipe's model has a similar architecture, and the parallelism "
        "below is resized for yours — verify before long runs"
    ),
    "match.explicit": "the recipe you named",
    "precision-gpu": (
        "{name} needs {generations} tensor cores; {gpu} ({value1}) has none, so the run fails when "
        "Transformer Engine starts."
    ),
    "tp-heads": (
        "TP={tp} does not divide the {heads} attention heads; Megatron-Core refuses to build the model."
    ),
    "tp-query-groups": (
        "The {groups} KV heads (num_query_groups) must be {rule} TP={tp} in Megatron-Bridge {version}."
    ),
    "tp-mamba": (
        "TP={tp} does not divide the Mamba mixers' {heads} heads and {groups} B/C groups; Megatron-Core "
        "refuses to build the model."
    ),
    "tp-cross-node": (
        "TP={tp} spans more than the {domain} GPUs of one NVLink domain on {gpu_type}: tensor-parallel "
        "all-reduces would cross the network on every layer. Keep TP within a node (NVL72 systems such "
        "as GB200/GB300 allow up to 72)."
    ),
    "mode-dataset": (
        "In {version} the dataset decides the training loop: {name!r} runs the {loop} loop, not "
        "{wanted}. Fine for a smoke test, wrong for real {mode} training."
    ),
    "seq-length-sync": (
        "model.seq_length={model_seq} differs from dataset.seq_length={dataset_seq}; set both."
    ),
    "energon-mbs": (
        "The recipe's Energon dataset is built with micro_batch_size={dataset_mbs} and "
        "train.micro_batch_size={train_mbs}: the two must match; set dataset.micro_batch_size too."
    ),
    "vlm-frozen": (
        "This recipe freezes the {frozen} ({flags}): Bridge turns off their gradients, so training "
        "updates only the {trained}, and the memory estimate counts no gradients or optimizer state for "
        "the frozen parts. To train them as well, override the flags; the memory then grows by their "
        "gradients and optimizer state."
    ),
    "vlm-frozen.language_model": "language model",
    "vlm-frozen.vision_model": "vision encoder",
    "vlm-frozen.vision_projection": "vision projection",
    "vlm-frozen.two": "{first} and {second}",
    "vlm-no-images": (
        "Fine-tuning a vision-language model on {dataset!r}, which has no images: training runs, but the "
        "result is meaningless. Use a multimodal dataset preset."
    ),
    "precision-gpu.kept": (
        "{name} needs {generations} tensor cores and {gpu} ({value1}) has none: the plan keeps the "
        "recipe's {value2}."
    ),
    "single-gpu-full-training": (
        "{mode} on one GPU: full training keeps weights, gradients and Adam states for every parameter; "
        "only PEFT (LoRA/DoRA) recipes are meant for a single GPU."
    ),
    "tp-query-groups.replicated": (
        "TP={tp} is larger than the {groups} KV heads: this Megatron-Core replicates KV heads across TP "
        "ranks, which is allowed but stores the KV projections more than once."
    ),
    "sp-ignored": (
        "sequence_parallel=True with TP=1: Megatron-Bridge silently turns SP off (Megatron-Core alone "
        'would raise "{SP_WITHOUT_TP}"). Nothing breaks, but SP is not in effect.'
    ),
    "vp-needs-pp": "Virtual pipeline (VP={vp}) needs pipeline parallelism > 1; PP is {pp}.",
    "pp-layers": "PP={pp} does not divide the {layers} transformer layers evenly.",
    "pp-uneven": (
        "With uneven first/last pipeline stages, {middle} of the {layers} layers remain for {middle_pp} "
        "middle stages (PP={pp}), or a stage's layers do not divide by VP."
    ),
    "pp-uneven.mismatch": (
        "The first/last stage sizes leave {middle} of the {layers} layers for {middle_pp} middle stages "
        "(PP={pp}): both must be zero or both non-zero."
    ),
    "pp-layout.stages": (
        "The recipe's pipeline layout has {stages} stages, which PP={pp} does not divide; the layout was "
        "built for the recipe's own PP and VP and is not rebuilt by {version}'s launcher for this recipe."
    ),
    "pp-layout.vp": (
        "The recipe's pipeline layout has {stages} stages: over PP={pp} that is VP {detected}, not VP={vp}; "
        "the layout was built for the recipe's own PP and VP and is not rebuilt by {version}'s launcher "
        "for this recipe."
    ),
    "vp-layers": "VP={vp} does not divide the {per_stage} layers on each of the {pp} pipeline stages.",
    "troubleshoot.pp_layout.vp": (
        "`{name}` builds its pipeline layout (`model.pipeline_model_parallel_layout`) for its own PP {rpp} × "
        "VP {rvp}: {stages} stages. {launcher}The {stages}-stage layout stays, so over PP {pp} "
        "Megatron-Core reads VP {detected} from it, and your VP {vp} conflicts with that."
    ),
    "troubleshoot.pp_layout.stages": (
        "`{name}` builds its pipeline layout (`model.pipeline_model_parallel_layout`) for its own PP {rpp} × "
        "VP {rvp}: {stages} stages. {launcher}The {stages}-stage layout stays, and PP {pp} does not divide "
        "{stages} stages."
    ),
    "troubleshoot.pp_layout.no_builder": (
        "Megatron-Bridge {version}'s run_recipe.py rebuilds a recipe's layout after -pp/-vp only through a "
        "layout builder the recipe registers, and this recipe registers none in {version}."
    ),
    "troubleshoot.pp_layout.no_sync": (
        "Megatron-Bridge {version}'s run_recipe.py does not rebuild a recipe's layout after an override."
    ),
    "troubleshoot.pp_layout.fixed_in": (
        "Fixed in Megatron-Bridge {later}: there the recipe registers `{builder}`, and run_recipe.py "
        "rebuilds the layout for the PP and VP you pass."
    ),
    "troubleshoot.pp_layout.options_vp": (
        "Either leave VP unset: Megatron-Core then runs the {stages}-stage layout as PP {pp} × VP "
        "{detected}. Or pass an explicit `model.pipeline_model_parallel_layout` with PP {pp} × VP {vp} = "
        "{want} stages: a layout you pass is never rebuilt."
    ),
    "troubleshoot.pp_layout.options_stages": (
        "Either use a PP that divides the {stages} stages, or pass an explicit "
        "`model.pipeline_model_parallel_layout` with PP × VP stages for your PP: a layout you pass is never "
        "rebuilt."
    ),
    "troubleshoot.pp_uneven.mismatch": (
        "{layers} layers minus the edge stages ({edges}) leave {middle} layers for {middle_pp} middle stages "
        "at PP {pp}: Megatron-Core needs both to be zero or both non-zero."
    ),
    "troubleshoot.pp_uneven.even": (
        "With the recipe's edge-stage sizes cleared, the {layers} layers split evenly over PP {pp}: {per} "
        "per stage."
    ),
    "troubleshoot.unsynced": (
        "Megatron-Bridge {version}'s run_recipe.py repairs this itself after the override ({what}; "
        "{source}). A checkout from before that change, or an entry point that does not run it, keeps the "
        "recipe's values and fails this way:"
    ),
    "troubleshoot.unsynced.edge_counts": (
        "it clears the recipe's own num_layers_in_first/last_pipeline_stage when a -pp override leaves them "
        "incompatible"
    ),
    "troubleshoot.unsynced.layout": "it rebuilds the recipe's pipeline layout through `{builder}`",
    "troubleshoot.cause.pp_uneven.vp": ", and each stage's layers must also divide by VP {vp}.",
    "troubleshoot.broken_note.fix": " Fixed settings, re-checked by the rule module: `{fix}`.",
    "troubleshoot.cause.pp_layers": (
        "{layers} layers over PP {pp} leaves {per} per stage; every stage needs a whole number of layers."
    ),
    "troubleshoot.cause.pp_layers.hybrid": (
        "This model is a hybrid stack, where the rule module only warns on an uneven split (a layer "
        "pattern may place the layers itself); the error you quote shows that this run split them "
        "evenly, so the warning is the cause. Set the first and last stage sizes, or a PP that divides."
    ),
    "troubleshoot.cause.pp_uneven": (
        "{layers} layers minus the edge stages ({edges_text}) leave {middle} for {middle_pp} middle "
        "stages: {per} each{vp_text}"
    ),
    "troubleshoot.cause.vp_layers": "{per_stage} layers per stage over VP {vp} leaves {per} per model chunk.",
    "troubleshoot.cause.expert_mesh": (
        "The expert mesh PP·EP·ETP = {pp}·{ep}·{etp} = {size}, and {world} GPUs are not a multiple of "
        "{size}."
    ),
    "troubleshoot.cause.dense_mesh": (
        "TP·PP·CP = {tp}·{pp}·{cp} = {size}, and {world} GPUs are not a multiple of {size}."
    ),
    "troubleshoot.cause.batch": (
        "GBS {gbs} over MBS {mbs} × DP {dp} = {step} leaves {per} micro-batches per rank."
    ),
    "troubleshoot.no_config": (
        "I cannot tell which recipe and GPU count this run uses, so the error is not checked on your "
        "config. Name the recipe (or model) and the GPUs to get that."
    ),
    "troubleshoot.checked": "**Checked on your config:** {stated}.",
    "troubleshoot.assumed_gpus": (
        "You did not say how many GPUs you have; this checks {num_gpus} (the recipe's, or the fewest "
        "your layout can use)."
    ),
    "troubleshoot.cause.unsynced": "**Cause:** {line}{quoted}",
    "troubleshoot.cause.reproduced": (
        "**Cause:** the rule module reproduces this error{where} on your config:{quoted}"
    ),
    "troubleshoot.unset_etp": (
        "`{name}` leaves `{etp_key}` unset. Where nothing sets it to 1 (Bridge's training entry does so "
        "from {since} when EP > 1; a script that calls `initialize_model_parallel` itself does not), "
        "Megatron-Core uses TP for it: ETP = {tp}."
    ),
    "troubleshoot.also_finds": "The rule module also finds on this config:",
    "troubleshoot.recipe_ok": (
        "The recipe itself is not broken: its own defaults pass the rule module on its own {gpus} GPUs. "
        "The failure comes from the settings above."
    ),
    "troubleshoot.unexplained.errors": "The rule module finds these errors on your config:",
    "troubleshoot.unexplained.head": (
        "**Nothing in this config explains the error:** with these values, every check that raises this "
        "text passes."
    ),
    "troubleshoot.unexplained.does_find": "It does find:",
    "troubleshoot.unexplained.no_error": "The rule module finds no error on it.",
    "troubleshoot.passes.pp_layers": "{layers} layers over PP {pp} is {per} per stage: it divides.",
    "troubleshoot.passes.vp_layers": (
        "{layers} layers over PP {pp} × VP {vp} is {per} per model chunk: it divides."
    ),
    "troubleshoot.passes.dense_mesh": "{world} GPUs over TP·PP·CP = {size} leave DP {dp}.",
    "troubleshoot.passes.expert_mesh": "{world} GPUs over PP·EP·ETP = {size} leave expert DP {dp}.",
    "troubleshoot.passes.batch": "GBS {gbs} over MBS {mbs} × DP {dp} is {n} micro-batches: it divides.",
    "troubleshoot.passes.tp_heads": "{heads} attention heads over TP {tp}: it divides.",
    "troubleshoot.passes.cp_seq": "sequence {seq} over 2 × CP {cp}: it divides.",
    "troubleshoot.known_causes.head": "Known causes of this error ({where}), most likely first; check each:",
    "troubleshoot.broken": (
        "**Yes, `{name}` is broken in Megatron-Bridge {version}:** its own defaults fail this check on "
        "its own {gpus} GPUs (catalog self-check: {rules})."
    ),
    "troubleshoot.fix.head": "**Fix** (re-checked by the rule module):",
    "troubleshoot.fix.passes": "**Fix** (re-checked by the rule module: no errors remain):",
    "troubleshoot.fix.partial": (
        "**Fix for this error** (the rule module still reports other errors with it, listed after):"
    ),
    "troubleshoot.fix.alternative": (
        "Or keep PP {pp} and give the first and last stages {edge} layers each, {middle} on each of the "
        "{others} others (the rule module accepts it):"
    ),
    "troubleshoot.history.fixed_in": (
        "Fixed in Megatron-Bridge {fixed_in}: the catalog self-check of that release passes for "
        "`{name}`; upgrading also fixes it."
    ),
    "troubleshoot.history.gone": "`{name}` is no longer in the Megatron-Bridge {newest} catalog.",
    "troubleshoot.history.still_failing": (
        "Still failing in the later bundled releases up to {newest}: keep the fixed settings after "
        "upgrading."
    ),
    "troubleshoot.broken_note": (
        "⚠️ `{name}` is **broken in this release** (Megatron-Bridge {version}): its own defaults fail "
        "{rules} on its own {gpus} GPUs.{fixed}"
    ),
    "troubleshoot.known_cause.pp-layers": (
        "the pipeline size does not divide the model's layer count; check the PP the run really uses (an "
        "override or a launcher flag may set it) against the number of layers"
    ),
    "troubleshoot.known_cause.vp-layers": (
        "the virtual pipeline size does not divide the layers per stage; check VP against layers / PP"
    ),
    "troubleshoot.known_cause.vp-needs-pp": "a virtual pipeline size is set with PP = 1; check both",
    "troubleshoot.known_cause.expert-mesh": (
        "PP·EP·ETP does not divide the GPU count; check expert_tensor_parallel_size: left unset, it "
        "becomes TP on any path that does not set it to 1"
    ),
    "troubleshoot.known_cause.dense-mesh": (
        "TP·PP·CP does not divide the GPU count; check the number of processes the launcher starts "
        "(nodes × processes per node) against TP·PP·CP"
    ),
    "troubleshoot.known_cause.batch-divisible": (
        "the global batch is not a multiple of MBS × DP; check GBS against the DP this GPU count gives"
    ),
    "cp-seq": "Sequence length {seq} is not divisible by 2·CP = {value1}; each CP rank takes two chunks.",
    "long-context-no-cp": (
        "Sequence length {seq} without context parallelism: activation memory grows with the sequence "
        "and is likely to run out of memory. Add CP (or start from a *_16k/*_64k/*_128k recipe)."
    ),
    "dense-mesh": (
        "{world} GPUs are not divisible by TP·PP·CP = {tp}·{pp}·{cp} = {model_size}; the data-parallel "
        "size would not be a whole number."
    ),
    "ep-dense-model": "EP={ep} on a dense model: expert parallelism needs MoE layers.",
    "experts-ep": (
        "EP={ep} does not divide the {experts} experts; Megatron-Core stops with a bare AssertionError "
        "(no message) in moe_layer.py."
    ),
    "packed-mbs": (
        "Packed sequences need micro_batch_size=1 (it is {mbs}); put more tokens in each pack instead."
    ),
    "batch-divisible": (
        "Global batch {gbs} is not divisible by micro batch {mbs} × data parallel {dp} = {step}."
    ),
    "dataset-flag": (
        "run_recipe.py in {version} has no --dataset option; the recipe's own dataset config is used. "
        "Set dataset.* overrides instead."
    ),
    "dataset-unknown": "Dataset preset {name!r} does not exist in {version}; choose one of: {choices}.",
    "mode-dataset.rejected": (
        "The {name!r} preset is for {loop} only; {version} rejects it for mode {mode_name!r}."
    ),
    "peft-checkpoint": (
        "PEFT needs a pretrained checkpoint: a local Megatron checkpoint directory (convert with "
        "AutoBridge.import_ckpt) or a local Hugging Face model directory."
    ),
    "peft-checkpoint.hub-id": (
        "{path!r} looks like a Hugging Face hub id, not a checkpoint path. Download or convert it first "
        "(AutoBridge.import_ckpt) and pass the local directory."
    ),
    "seq-length-sync.undone": (
        "model.seq_length={model_seq} alone is undone: run_recipe.py in {version} copies "
        "dataset.seq_length ({dataset_seq}) into the model. Set dataset.seq_length too."
    ),
    "cuda-graph-rng": (
        "CUDA graphs need Transformer Engine's RNG tracker; set both model.use_te_rng_tracker and "
        "rng.te_rng_tracker."
    ),
    "cuda-graph-nan-check": "A full-iteration CUDA graph cannot run the NaN-in-loss check; disable it.",
    "cuda-graph-packed": (
        "Transformer Engine CUDA graphs that capture attention cannot take packed-sequence metadata in "
        "{version}. Disable packing, or use a full-iteration graph."
    ),
    "fsdp-tp-hopper": (
        "Megatron-FSDP with TP={tp} on {gpu_label}: communication tends to bottleneck on Hopper-class "
        "GPUs; prefer TP=1 or 2 with FSDP there (FSDP does better on B/GB-series)."
    ),
    "qwen35-vl-moe-fsdp": (
        "Qwen3.5-VL MoE with Megatron-FSDP has only been validated on Blackwell GPUs; on {gpu_label} it "
        "may not run. Verify on a short job first, or use the 3D-parallel layout."
    ),
    "offload-layers": "model.cpu_offloading_num_layers={count} must be below the model's {layers} layers.",
    "offload-pp": (
        "CPU activation offloading does not work with PP={pp}: use PP=1 (with Megatron-FSDP to shard the "
        "weights), or turn offloading off and keep the pipeline."
    ),
    "offload-recompute": (
        "CPU activation offloading does not work with recompute_granularity={recompute_granularity}: "
        "offloading is the alternative to recompute, pick one."
    ),
    "offload-cuda-graphs": (
        "CPU activation offloading does not work with cuda_graph_impl={cuda_graph_impl}; only "
        "full-iteration graphs (newer Megatron-Core) allow it."
    ),
    "moe-overlap-grad-reduce-h100": (
        "overlap_grad_reduce=True for a MoE model on H100 can cost throughput; many H100 MoE presets "
        "turn it off."
    ),
    "precision-unknown": (
        "mixed_precision={preset} is not a preset of Megatron-Bridge {version}; the run stops while the "
        "config is built."
    ),
    "pp-without-vp": (
        "PP={pp} without a virtual pipeline leaves large pipeline bubbles; VP={choice} splits each stage "
        "into interleaved chunks."
    ),
    "expert-mesh": (
        "{world} GPUs are not divisible by PP·EP·ETP = {pp}·{ep}·{etp} = {expert_size}. The expert mesh "
        "folds independently of the dense mesh: EDP = world / (PP·EP·ETP)."
    ),
    "cuda-graph-packed.pad": (
        "Packed sequences with CUDA graphs need static shapes: pad every pack to the maximum length."
    ),
    "cuda-graph-packed.cu-seqlens": (
        "A CUDA graph that captures packed attention also needs padded cu_seqlens."
    ),
    "override-section": (
        "{key!r}: Megatron-Bridge's ConfigContainer has no 'training' section; it is 'train'."
    ),
    "finetune-cp-loss": (
        "Fine-tuning with CP={cp}: run_recipe.py in {version} sets calculate_per_token_loss=True and "
        "average_in_collective=False for you (needed so ranks whose tokens are all masked do not produce "
        "NaN loss)."
    ),
    "finetune-cp-loss.needed": (
        "Fine-tuning with CP={cp} needs calculate_per_token_loss=True and "
        "ddp.average_in_collective=False, otherwise ranks whose tokens are all masked give NaN loss."
    ),
    "cp-a2a-p2p": "hierarchical_context_parallel_sizes {list_sizes} multiply to {prod_sizes}, not CP={cp}.",
    "arch-unknown-validated": (
        "The architecture of {name} is not known, so heads, layers and memory cannot be checked; the "
        "recipe's own layout is used as is, on the {num_gpus} GPUs it is written for. Any change to its "
        "layout or GPU count is unchecked."
    ),
    "no-valid-layout": (
        "Every layout that fits {num_gpus} × {gpu_label} fails a Megatron check (heads, layers, experts "
        "or batch divisibility)."
    ),
    "fit-unknown": (
        "Memory fit not judged ({note}). The recipe's own layout on the GPUs it is written for ran "
        "upstream; anything else is unchecked: if it runs out of memory, lower train.micro_batch_size "
        "first."
    ),
    "fit-unknown.heuristic": (
        "Memory fit not judged ({note}). The estimator's floor (model state and activations, no "
        "overheads) puts the busiest GPU at no less than {peak_gb:.0f} GB of {usable_gb:.0f} GB; if it "
        "runs out of memory, lower train.micro_batch_size first."
    ),
    "single-gpu-needs-peft": (
        "One GPU can only run PEFT (LoRA/DoRA); {name} is a {mode} recipe. Pick this model's "
        "*_peft_config recipe or add GPUs."
    ),
    "arch-unknown": (
        "The architecture of {value1} is not known, so heads, layers and experts cannot be checked; no "
        "plan is generated for {num_gpus} GPUs. The recipe runs unchanged on {value2} GPUs."
    ),
    "tp-query-groups.loose": "a multiple or a divisor of",
    "tp-query-groups.strict": "a multiple of",
    "single-gpu-needs-peft.full": "full-training",
    "sp-off": (
        "TP={tp} without sequence parallelism keeps a full copy of the layer-norm and dropout activations "
        "on every TP rank; SP removes that at almost no cost{tail}"
    ),
    "sp-off.with_ep": " and Megatron-Core warns about it when EP is also used.",
    "sp-off.end": ".",
    "cp-a2a-p2p.missing": (
        "cp_comm_type 'a2a+p2p' needs hierarchical_context_parallel_sizes (intra-node a2a size × "
        "inter-node p2p size = CP){tail}"
    ),
    "cp-a2a-p2p.missing.checked": ".",
    "cp-a2a-p2p.missing.unchecked": (
        "; {version} does not check it and silently runs without CP communication (each rank attends "
        "only to its own chunk)."
    ),
    "cuda-graph-full-recompute": (
        "Full activation recompute works with CUDA graphs only as a full-iteration graph{graph} Otherwise "
        "switch to selective recompute."
    ),
    "cuda-graph-full-recompute.impl": " (cuda_graph_impl=full_iteration).",
    "cuda-graph-full-recompute.scope": (
        " (cuda_graph_impl=local with cuda_graph_scope=[full_iteration] in this version)."
    ),
    "ep-too-low": (
        "EP={ep} leaves about {expert_gb:.0f} GB of expert weights and optimizer state on each GPU "
        "({gpu_label} has about {hbm_gb:.0f} GB usable). {advice}"
    ),
    "ep-too-low.raise_ep": "Raise EP before TP: EP shards only the experts, which dominate a large MoE.",
    "ep-too-low.more_gpus": (
        "No larger EP fits {world} GPUs; with more GPUs the experts' data-parallel ranks shard their "
        "optimizer state."
    ),
    "does-not-fit": (
        "No layout of {name} fits {num_gpus} × {gpu} at sequence length {seq} by the memory "
        "estimate{advice}{more}"
    ),
    "does-not-fit.even_peft": " even with PEFT.",
    "does-not-fit.other_count": "; use another GPU count or the PEFT recipe.",
    "does-not-fit.add_gpus": "; add GPUs or use the PEFT recipe.",
    "does-not-fit.need": " About {need} GPUs would be enough.",
    "does-not-fit.fits_fewer": " A valid layout fits on {need} of these GPUs.",
    "fit-oom": (
        "The memory estimator puts the busiest GPU at about {need:.0f} GB of {have:.0f} GB usable. {advice}"
    ),
    "fit-oom.lower_mbs": (
        "Lower train.micro_batch_size first, then add recompute (model.recompute_granularity=full) or GPUs."
    ),
    "fit-oom.mbs_is_one": (
        "train.micro_batch_size is already 1: add recompute (model.recompute_granularity=full) or GPUs."
    ),
    "fit-oom.flux": (
        "Bridge's Flux runs its blocks itself, so model.recompute_granularity has no effect: lower "
        "train.micro_batch_size if it is above 1, or add GPUs (data parallelism shards the optimizer state)."
    ),
    "reason.tp": (
        "TP {value}: divides the {groups} KV heads, stays inside one NVLink domain, and is the "
        "smallest that fits."
    ),
    "reason.pp": (
        "PP {value}: TP alone cannot hold the model on {gpu} GPUs, so layers are split into {value} stages."
    ),
    "reason.pp1": "PP 1: the model fits without pipeline stages, which avoids pipeline bubbles.",
    "reason.vp": "VP {value}: with PP > 1, interleaved chunks shrink the pipeline bubble.",
    "reason.vp_none": "VP off: it needs PP > 1.",
    "reason.vp_uneven": (
        "VP off: the {layers} layers do not split evenly over PP {pp} stages of several chunks."
    ),
    "reason.cp": "CP {value}: sequence length {seq} needs context parallelism (about 8K tokens per CP rank).",
    "reason.cp_small": "CP {value}: fits the {world} GPUs available while keeping seq % (2·CP) == 0.",
    "reason.ep": (
        "EP {value}: divides the {experts} experts and the expert mesh (PP·EP·ETP) divides {world} "
        "GPUs; EP is raised before TP because it shards only the experts."
    ),
    "reason.etp": "ETP {value}: keeps the expert mesh within the world size.",
    "reason.sp": "SP {value}: sequence parallelism belongs with TP > 1 (Bridge drops it at TP = 1).",
    "reason.mbs": (
        "MBS {value}: lowered so the global batch stays divisible by MBS·DP (or because packing needs 1)."
    ),
    "reason.gbs": (
        "GBS {value} (was {old}): no layout on {world} GPUs divides {old}; this changes the "
        "optimisation and is a convergence change."
    ),
    "reason.gbs_weak_fraction": (
        "GBS {value}: given explicitly, because weak scaling the recipe's GBS {old} from DP {dp_old} to DP "
        "{dp} gives no whole number and the launcher stops without one."
    ),
    "reason.gbs_weak_uneven": (
        "GBS {value}: given explicitly, because the launcher would weak-scale the recipe's GBS {old} to "
        "{scaled} at DP {dp}, which MBS·DP does not divide; this is a convergence change."
    ),
    "reason.seq": "Sequence length {value}: requested by the user (dataset and model are set together).",
    "reason.user": "Requested by the user.",
    "reason.unknown_batch": (
        "{value}: the recipe does not set this statically, so the plan states it explicitly."
    ),
    "reason.cp_loss": "Fine-tuning with CP > 1 needs per-token loss and no averaging in the collective.",
    "reason.checkpoint": (
        "PEFT needs a local pretrained checkpoint; export PRETRAINED_CHECKPOINT before launching."
    ),
    "fit-note.arch_unknown": "the model architecture is not known",
    "fit-note.unmodelled": "the memory estimator cannot describe this hybrid model: {reason}",
    "checklist.library": (
        "Library recipes (`src/megatron/bridge/recipes/`) are for real training and launch with `{script}`."
    ),
    "checklist.benchmark": (
        "Performance (benchmark) recipes measure upper-bound throughput on mock data and are not "
        "production recipes; they launch with `{bench}`{tail}"
    ),
    "checklist.benchmark.slurm": (
        ", or by their exact name with `{entry} --recipe <name>` on the GPU count in the name."
    ),
    "checklist.end": ".",
    "checklist.smoke_recipe": "`{name}` ",
    "checklist.smoke_any": "a pretrain recipe ",
    "checklist.smoke": "First smoke test: {smoke}with {dataset} (mock data).",
    "checklist.smoke.mock": "First smoke test: {smoke}as is (pretrain recipes default to mock data).",
    "checklist.datasets": "Regular SFT uses {sft}; pretraining and mock validation use {pretrain}.",
    "checklist.no_dataset_flag": (
        "This version's run_recipe.py has no --dataset flag: SFT/PEFT recipes bring their own "
        "dataset, pretrain recipes use mock data by default."
    ),
    "checklist.resizing": (
        "Resizing rules: TP must divide num_key_value_heads; keep TP inside a node unless the GPUs "
        "have an NVL72-class NVLink domain; enable SP when TP > 1; add CP for long context; DP is "
        "implicit; on OOM lower micro_batch_size first."
    ),
    "checklist.change_control": (
        "Change control: parallel sizes and micro_batch_size are execution changes (the training "
        "stays the same); global_batch_size, learning rate, sequence length and dataset are "
        "convergence changes (the training changes); settings only for speed runs are benchmark-only."
    ),
    "change_class.convergence": "convergence",
    "change_class.execution": "execution",
    "change_class.benchmark-only": "benchmark-only",
    "compose.speed": (
        "**How fast?** about {tokens:,.0f} tokens/s per GPU, {tflops:.0f} model TFLOP/s per GPU (MFU "
        "{mfu:.0%}), {step:.2f} s per step — an estimate calibrated on published Megatron-Bridge "
        "runs{error}; `autorecipe estimate` has the breakdown.{track}"
    ),
    "compose.speed.error": ", with a median error of about {error:.0%} on them",
    "compose.track": (
        " Note: on the {runs} published runs of this model in {precision}, the estimate was about "
        "{off:.0%} {side} on average."
    ),
    "compose.track.high": "high",
    "compose.track.low": "low",
    "compose.nearest.leanest": (
        "**Does not fit on {num_gpus} × {gpu}:** even the leanest layout ({layout}, full recompute) "
        "needs about {peak} per GPU of {usable}."
    ),
    "compose.nearest.fewest": (
        "The fewest GPUs that fit: **{min_gpus}** with {layout} ({peak} per GPU, {speed} tokens/s per "
        "GPU). {keys}"
    ),
    "compose.nearest.room": (
        "With room beyond the estimate's error: **{room_gpus}** GPUs with {layout} ({peak} per GPU). {keys}"
    ),
    "compose.fitting": (
        "**A layout that fits your {gpus} (estimated):** {layout} — {peak} per GPU, {speed} tokens/s "
        "per GPU. {keys}"
    ),
    "compose.faster": (
        "**A faster layout for your GPUs (estimated):** {layout} — about {theirs} tokens/s per GPU "
        "against {ours} for the plan above. {keys}"
    ),
    "compose.no_faster": (
        "**Fastest layout (estimated):** the search finds no layout for these GPUs more than {margin} "
        "faster than the plan above. Its first choice, {layout}, runs about {theirs} tokens/s per GPU "
        "against {ours} for the plan: closer than the estimate can tell apart, so keep the plan."
    ),
    "compose.step_costs": (
        "**Where the step time goes (estimated):** pipeline bubble {bubble:.1%} of the step "
        "({pipeline}); exposed communication {comm:.1%}{parts}{recompute}."
    ),
    "compose.step_costs.parts": " ({parts})",
    "compose.step_costs.recompute": "; recompute {share:.1%}",
    "compose.peft_alternative": "**LoRA fits on {gpus} instead:** `{name}` ({layout}{fit}):",
    "compose.peft_alternative.fit": ", about {peak} per GPU",
    "service.example.1": "Qwen3 30B-A3B SFT on 16 H100",
    "service.example.2": "LoRA Llama 3 8B on one GPU",
    "service.example.3": "Llama3 8B 128K pretraining",
    "service.passages.matches": "This matches:",
    "service.passages.guide": "From the guide:",
    "recipe_call": "Called as {call} ({goal}){how}.",
    "recipe_call.goal.sft": "full SFT",
    "recipe_call.goal.lora": "LoRA",
    "recipe_call.launcher_default": "; run_recipe.py makes this call when no `--peft_scheme` is given",
    "recipe_call.with_flags": "; run_recipe.py makes this call with `{flags}`",
    "sep.list": ", ",
    "sep.sentence": " ",
    "sep.end": ".",
    "sep.clause": "; ",
    "sep.and": " and ",
    "gpu_values.separator": "; ",
    "gpu_values.gpu_separator": ", ",
    "gpu_values.other": "{shown} ({gpus})",
    "gpu_values.yours": (
        "On your {gpu}, `{path}` is {shown}: `{rule}` sets it per GPU ({source}); other GPUs: {others}."
    ),
    "gpu_values.depends": "`{path}` depends on the GPU, set by `{rule}` ({source}): {others}.",
    "unreachable": "⚠️ `{name}` cannot be launched with this version's launcher: {reason}. {advice}",
    "unreachable.twin": "The same function is exported as `{twin}`: launch that name.",
    "unreachable.own_script": "Call the function from your own script, or pick an exported recipe.",
    "version_facts.no_dataset_flag": "Megatron-Bridge {version}'s launcher has no `--dataset` flag.",
    "version_facts.dataset": "In Megatron-Bridge {version}, {goal} recipes take `--dataset {preset}`.",
    "version_facts.goal.pretrain": "pretraining",
    "version_facts.goal.sft": "SFT",
    "version_facts.goal.peft": "LoRA/PEFT",
    "version_facts.flags": "The flags of {script} in Megatron-Bridge {version}: {every}.",
    "version_facts.not_a_flag": (
        "`{name}` is not a flag of {script} in Megatron-Bridge {version}; its flags are {every}."
    ),
    "version_facts.a_flag": "`{names}` is a flag of {script} in Megatron-Bridge {version}{choices}.",
    "reason.fitting_layout": "the layout the memory estimate says fits these GPUs",
    "notice.budget_spent": (
        "Note: this answer used up its time budget, so the parts not computed by then "
        "(layout search, citations, rephrasing) are left out; ask again for a narrower question."
    ),
    "notice.retrieval_failed": (
        "Note: the passage index could not be read, so this answer has no citations; "
        "`autorecipe doctor` shows why and `autorecipe ingest` rebuilds it."
    ),
    "notice.invalid_text": (
        "Note: part of the question was not valid text (invalid UTF-8 or a lone surrogate) and was read as �."
    ),
    "notice.unsupported_language": (
        "Note: answers are in English or Chinese; lang={lang} is not one of auto, en, zh, "
        "so this answer is in the question's language."
    ),
    # The chat page (ui/gradio_app.py): labels follow the answer's language.
    "ui.title": "Auto Recipe — Megatron-Bridge recipe assistant",
    "ui.description": (
        "Ask in English or Chinese: model, GPUs, goal (pretrain / SFT / LoRA), sequence length. Recipe "
        "names, numbers and commands come from the recipe catalog of the selected version and the rule "
        "module; passages are cited."
    ),
    "ui.version": "Megatron-Bridge version",
    "ui.language": "Answer language",
    "ui.chatbot": "Auto Recipe",
    "ui.placeholder": "e.g. Qwen3 30B-A3B SFT on 16 H100",
    "ui.recommendation": "Recommendation",
    "ui.command": "Launch command",
    "ui.downloads": "Downloads: Slurm script, overrides, answer JSON",
    "ui.no_recipe_yet": "_No recipe yet._",
    "ui.no_recipe": "_No recipe for this turn._",
    "ui.no_findings": "_No findings._",
    "ui.alias_of": "alias of `{name}`",
    "ui.dataset": "dataset preset: `{name}`",
    "ui.fit": "fits in memory: **{status}**",
    "ui.fit.fits": "yes",
    "ui.fit.does-not-fit": "no",
    "ui.fit.unknown": "unknown",
}
