"""Replies that belong to the conversation rather than to one recipe: a greeting, and "why?" after a plan.

Pure: every name and number comes from the Recommendation (catalog and rule module); only the framing
sentences are ours, in English and Chinese side by side.
"""

from __future__ import annotations

from assistant.compose import say
from assistant.recommend import Recommendation

GREETING_EXAMPLES = {
    "en": [
        "Train DeepSeek V3 from scratch on 256 H100 GPUs",
        "I want to fine-tune a vision-language model on 8 GPUs",
        "Can I use packed sequences with CP=2?",
    ],
    "zh": [
        "用 256 张 H100 从头训练 DeepSeek V3",
        "我想在 8 张 GPU 上微调一个视觉语言模型",
        "序列打包能和 CP=2 一起用吗？",
    ],
}


def greeting_reply(lang: str, version: str, families: list[str] | None = None) -> str:
    """What the assistant does, in three lines, the model families this release has recipes for (catalog
    facts, so "which models can I train?" gets its answer), and three questions to start from."""
    examples = "\n".join(f"- {e}" for e in GREETING_EXAMPLES[lang])
    listed = ", ".join(f"`{f}`" for f in families or [])
    en_models = f"\n\nModel families with recipes in {version}: {listed}." if listed else ""
    zh_models = f"\n\n{version} 版本中有配方的模型系列：{listed}。" if listed else ""
    return say(
        lang,
        f"Hi! I help you start Megatron-Bridge training runs (answers for version {version} unless you name "
        "another):\n"
        "- which recipe to start from, for a model or just a goal (a first smoke test, a VLM, diffusion, "
        "MoE);\n"
        "- the launch command and the parallelism and batch sizes for your GPUs, with a memory and speed "
        "estimate;\n"
        "- whether a feature is supported (packing with CP, FP8 on your GPUs, LoRA), and what a launch error "
        f"means.{en_models}\n\nTry for example:\n{examples}",
        f"你好！我帮助你启动 Megatron-Bridge 训练（默认按 {version} 版本回答，也可以指定其他版本）：\n"
        "- 选择起始配方：给出模型，或只说目标（第一次冒烟测试、视觉语言模型、扩散模型、MoE）；\n"
        "- 按你的 GPU 给出启动命令、并行度和批大小，并估算显存和速度；\n"
        "- 回答某项功能是否支持（序列打包配合 CP、你的 GPU 能否用 FP8、LoRA），以及启动报错的含义。"
        f"{zh_models}\n\n"
        f"可以这样问：\n{examples}",
    )


_MATCH_REASON = {
    "exact": ("it is this release's recipe for your model and goal", "它是该版本中对应你的模型和目标的配方"),
    "seq-variant": (
        "it is the variant of your model's recipe whose sequence length covers yours",
        "它是你的模型配方中序列长度足够覆盖你要求的变体",
    ),
    "closest-size": (
        "this release has no recipe for your size, and this is the nearest size of the same family",
        "该版本没有你这个规模的配方，这是同系列中规模最接近的",
    ),
    "similar-architecture": (
        "this release has no recipe for your model, and this recipe's model has the most similar "
        "architecture",
        "该版本没有你的模型的配方，这个配方的模型结构最相近",
    ),
    "explicit": ("you named it", "你指定了它"),
}


def why_lines(rec: Recommendation, lang: str) -> list[str]:
    """ "Why?" after a plan: why this recipe, and why each override, from the recommendation itself."""
    record = rec.recipe
    if record is None or rec.selection is None:
        return []
    en, zh = _MATCH_REASON.get(rec.selection.match, _MATCH_REASON["exact"])
    lines = [say(lang, f"**Why `{record.name}`:** {en}.", f"**为什么是 `{record.name}`：**{zh}。")]
    if rec.slots.quick_pick:
        lines.append(
            say(
                lang,
                "- You named no model, so it is the starting recipe this release's own guidance gives for "
                "what you want to do.",
                "- 你没有指定模型，因此采用该版本自身指南为这个目标给出的起始配方。",
            )
        )
    validated = record.encoded_gpus or record.min_gpus
    if validated and rec.cluster is not None:
        lines.append(
            say(
                lang,
                f"- It is written for {validated} GPUs; the plan maps it onto your {rec.cluster.num_gpus}.",
                f"- 它按 {validated} 张 GPU 编写；方案把它映射到你的 {rec.cluster.num_gpus} 张上。",
            )
        )
    for override in rec.overrides:
        reason = override.reason_zh if lang == "zh" and override.reason_zh else override.reason
        lines.append(f"- `{override.key}={override.value}`: {reason}")
    return lines
