"""English messages, by key; `{name}` placeholders are filled by `assistant.messages.words`."""

MESSAGES: dict[str, str] = {
    "service.decline": (
        "I help start Megatron-Bridge training runs: which recipe to use, the launch command for your "
        "version, parallelism for your GPUs, and fixes for launch errors. That question is outside what "
        "I can answer. Try for example:\n{examples}"
    ),
    "service.unknown_model": (
        "Megatron-Bridge {version} has no recipe for **{named}**, and I will not guess one. Tell me its "
        "Hugging Face model id or share its `config.json` (local path), and I can pick the recipe of an "
        "architecturally similar model and resize it for your GPUs."
    ),
    "service.validate_answer": (
        "`{name}` with your overrides on {num_gpus} GPUs is **{verdict}** for Megatron-Bridge {version}."
    ),
    "service.compare_answer": "| version | recipe | layout | dataset presets |",
    "service.conversation_context": "For `{name}` (Megatron-Bridge {version}): dataset preset {preset}.",
    "service.no_quick_pick": (
        "Megatron-Bridge {version} has no recipe for {what}. Bundled releases that have one: {listed}."
    ),
    "service.ask_cases": "Your question lists {len_cases} setups; each is answered on its own.",
    "service.unknown_model.2": (
        "Megatron-Bridge {version} has no recipe for **{hf_model_id}**, and its architecture is not "
        "among the model configs bundled here, so I cannot match it to a similar recipe offline. Name "
        "the model it derives from (for example Llama 3 8B) and I will start from that recipe, resized "
        "for your GPUs."
    ),
    "service.unknown_model.3": "Models of that family with recipes: {listed}.",
    "service.passages_answer": (
        "I found nothing relevant in the knowledge base. Name the model, the config key or paste the "
        "exact error text."
    ),
    "service.validate_answer.2": (
        "You did not say how many GPUs you have; TP·PP·CP = {model_parallel} needs a multiple of "
        "{model_parallel}, so this checks {count}."
    ),
    "service.conversation_context.2": "no --dataset flag",
    "service.ask": "Tell me the model, your GPUs (count and type) and the goal (pretrain, SFT or LoRA).",
    "service.validate_answer.3": (
        " It passes Megatron's checks but, by the memory estimate, **does not fit** these GPUs."
    ),
    "service.quick_preface": "You did not say which GPUs you have: this assumes {num_gpus} × {gpu}.",
    "service.quick_preface.2": (
        "At its defaults the recipe does not fit these GPUs, so the smoke run keeps it and shortens the "
        "run: sequence length {seq}, {changed}. These change what is trained; they only prove the "
        "install."
    ),
    "service.ask.2": "I cannot use part of this request: ",
    "service.answer_from": (
        "⚠️ Megatron-Bridge {version} has no recipe for **{named}**. This is the recipe of the most "
        "similar architecture, `{name}`, resized for yours: it builds its own model, so use its layout "
        "and batch settings as a start and point the model and checkpoint at yours before training."
    ),
    "service.answer_from.2": "One GPU can only run PEFT recipes, so this is the LoRA recipe of your model.",
    "service.answer_from.3": (
        "⚠️ This is a **benchmark** recipe: it measures upper-bound throughput on mock data for a fixed "
        "number of steps. It is not a production training recipe."
    ),
    "service.answer_from.4": "You did not say how many GPUs you have, so this uses the recipe's {num_gpus}.",
    "service.ask.3": "{model_text} recipes exist for: {listed}.",
    "service.answer_from.5": (
        "Chosen as the variant validated nearest your GPU count ({count} GPUs); not picked: {listed}."
    ),
    "service.answer_from.6": (
        "This variant is validated on {count} GPUs; others exist for other counts: {listed}."
    ),
    "compose.peak_with_room": (
        "about {peak} of {usable}, tight: {left:.1%} left, under the {HEADROOM:.0%} a plan should keep"
    ),
    "compose.commands_section": " — with the layout that fits ({layout}), not the plan above",
    "compose.fit_section": "unknown ({note})",
    "compose.peak_with_room.2": "about {peak} of {usable}",
    "compose.fit_section.2": (
        "{verdict} — about {need} of {usable} per GPU, inside the estimator's typical error, so it may "
        "go either way: watch memory in the first steps"
    ),
    "compose.layout_in_words": "recompute {recompute}",
    "compose.layout_in_words.2": "CPU offloading of {offload_layers} layers",
    "compose.speed_diagnosis_lines": (
        "No layout the search finds for these GPUs is more than {CLEARLY_FASTER:.0%} faster by the "
        "estimate; look at data loading, logging and checkpoint intervals, and the performance settings "
        "(CUDA graphs, communication overlap) before changing the parallelism."
    ),
    "compose.fit_section.3": "yes — about {need} of {usable} per GPU (margin {margin})",
    "compose.fit_section.4": "no — about {need} needed per GPU, {usable} usable",
    "compose.speed_diagnosis_lines.2": (
        "This layout is expected to run out of memory before speed matters; the layout below fits."
    ),
    "compose.speed_diagnosis_lines.3": "This layout is expected to run out of memory before speed matters.",
    "compose.fit_section.5": (
        ". The recipe is named for exactly these GPUs, so upstream runs it as is: the estimate may be "
        "high for it; watch memory in the first steps"
    ),
    "service.verdict.valid": "valid",
    "service.verdict.invalid": "not valid",
    "compose.fit_section.tight": "yes, but tight",
    "compose.fit_section.borderline": "borderline",
    "section.recipe": "Recipe",
    "section.alias_of": "an alias of",
    "section.defaults": "Recipe defaults",
    "section.min_gpus": "needs at least {n} GPU{s}",
    "section.name_gpus": "validated on {n} GPU{s} (in its name)",
    "section.name_gpus_library": (
        "the {n} GPU{s} in its name are its layout's minimum world size, not a measured run"
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
}
