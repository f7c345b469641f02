"""Question forms the intent router does not name, answered from computed facts.

Real users ask "why does it still run with EP=32?", "do I need to convert the HF weights first?", "is there
a way to import across GPUs?", "what must my batch size be divisible by?" or "can I train <model>?". The
router sees an explain or recommend question; this module says which form it is and writes the one line
that answers that form, from the user's numbers, the catalog record or a sourced table in
`knowledge_base/`. Pure apart from `load_conversion`: the caller passes the slots, the record and the table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from assistant.bounds import MAX_GPUS
from assistant.kb import KnowledgeBase
from assistant.messages import words
from assistant.records import RecipeRecord, Slots
from assistant.rules.upstream import batch, expert_world
from assistant.rules.versions import version_key

Form = Literal[
    "why_allowed", "conversion_need", "distributed_import", "start_from_hf", "batch_divisible", "can_train"
]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# "Why does it still run when I set EP=32?", "I thought EP can't exceed DP", "为什么 ... 也能跑？"
_WHY_ALLOWED = _rx(
    r"\bwhy (?:does|do|is|would|can) (?:it|this|that|the (?:run|job|training))\b.{0,40}"
    r"\b(?:still )?(?:runs?|works?|starts?|allowed|pass(?:es)?|accepted)\b"
    r"|\bwhy (?:is|are|does|do)\b.{0,60}\b(?:allowed|accepted|permitted|still (?:runs?|works?))\b"
    r"|\bhow come\b.{0,60}\b(?:runs?|works?|allowed)\b"
    r"|\bi thought\b.{0,60}\b(?:can'?t|cannot|must not|mustn'?t|shouldn'?t|not allowed)\b"
    r"|为什么.{0,40}(?:也能|还能|仍然能|居然能|竟然能|也可以)|我以为.{0,30}(?:不能|不可以|不允许)"
)
# "Do I need to convert the HF weights to Megatron format first?", "需要先把 HF 权重转换成 Megatron 格式吗？"
_CONVERSION_NEED = _rx(
    r"\b(?:need|have|required?) to (?:first )?convert\b|\bneed (?:a |the |any )?conversion\b"
    r"|\bconvert\b.{0,60}\bfirst\b|\bmust i convert\b"
    r"|(?:需要|要不要|必须|是否需要|得).{0,10}转(?:换|成)|先.{0,16}转(?:换|成)"
)
# "import_ckpt runs out of host RAM ... is there a way to do the import across GPUs?"
_DISTRIBUTED_IMPORT = _rx(
    r"\b(?:import|convert|conversion|import_ckpt)\b.{0,120}\b(?:across|multiple|multi[- ]?gpu|several|many)"
    r"\s*(?:gpus?|ranks|nodes)\b"
    r"|\b(?:multi[- ]?gpu|distributed|parallel)\s+(?:import|conversion|convert)"
    r"|\b(?:import|convert|import_ckpt)\b.{0,80}\b(?:host|cpu|system)\s+(?:ram|memory)"
    r"|\b(?:import|convert|conversion|import_ckpt)\b.{0,160}\b(?:over|across|on|onto|using|with) "
    r"(?:the |all |my |multiple |several |many |\d+ )+gpus\b"
    r"|(?:多卡|多 GPU|多GPU|多个 ?GPU|分布式).{0,8}(?:导入|转换)"
    r"|(?:导入|转换).{0,30}(?:内存|主机内存).{0,10}(?:不够|溢出|爆|OOM)"
)
# "I want to start pretraining from a Hugging Face model: where do I begin?", "想从 HF 模型开始训练"
_START_FROM_HF = _rx(
    r"\b(?:start|begin|initiali[sz]e|init|warm[- ]start|continue|resume|bootstrap)\w*\b.{0,50}?"
    r"\bfrom (?:an? |the |my |some |existing )?(?:pre-?trained )?(?:hugging ?face|hf)\b"
    r"(?! (?:hub )?(?:dataset|data)\b)"
    r"|(?:从|基于|用)\s*(?:hugging ?face|hf)\s*(?:上的|的)?\s*(?:模型|权重|检查点|checkpoint)"
)
_BATCH_DIVISIBLE = _rx(
    r"\b(?:global |train(?:ing)? )?batch[ _-]?size\b.{0,50}\bdivisible by\b"
    r"|\bdivisible by\b.{0,40}\bbatch[ _-]?size\b|(?:批次|批大小|batch size|batch_size).{0,20}整除"
)
# "Can I train XiaoMi MiMo-V2-Flash with Megatron-Bridge?", "Does Megatron-Bridge support Foo-7B?",
# "Is there a recipe for Foo-7B?"
_CAN_TRAIN = re.compile(
    r"\b(?:can|could) (?:i|we|you) (?:train|fine-?tune|pre-?train|use|run)\s+"
    r"(?P<a>[A-Za-z][\w.\-]*(?:\s+[\w.\-]+){0,3}?)"
    r"\s+(?:with|on|in|using|through)\s+(?:megatron|bridge|nemo)"
    r"|\bdoes (?:megatron[- ]?bridge|bridge|it) support\s+(?P<b>[A-Za-z][\w.\-]*(?:\s+[\w.\-]+){0,3}?)"
    r"(?:\s+(?:fine-?tuning|training|pre-?training|sft|lora))?\s*\?"
    # "Is there a fine-tuning recipe for Qwen3-VL-4B (Qwen/Qwen3-VL-4B-Instruct)?"
    r"|\bis there (?:a|an|any) (?:[\w-]+ ){0,2}recipes? for\s+(?P<c>[A-Za-z][\w.\-]*(?:\s+[\w.\-]+){0,2}?)"
    r"\s*(?:[?(,;]|$|\s+(?:in|on|with|from)\b)",
    re.IGNORECASE,
)
_FORMS: tuple[tuple[Form, re.Pattern[str]], ...] = (
    ("distributed_import", _DISTRIBUTED_IMPORT),
    ("start_from_hf", _START_FROM_HF),
    ("conversion_need", _CONVERSION_NEED),
    ("why_allowed", _WHY_ALLOWED),
    ("batch_divisible", _BATCH_DIVISIBLE),
    ("can_train", _CAN_TRAIN),
)


def classify(text: str) -> Form | None:
    """The first form the question takes, or None for the forms the router handles itself."""
    return next((form for form, pattern in _FORMS if pattern.search(text)), None)


def asked_model(text: str) -> str | None:
    """The model a "can I train X with Megatron-Bridge?" question names, as written."""
    m = _CAN_TRAIN.search(text)
    if m is None:
        return None
    named = (m.group("a") or m.group("b") or m.group("c") or "").strip(" .,")
    # A model name carries a size or a version digit ("MiMo-V2-Flash", "Foo-7B"); "LoRA" or "FSDP" do not.
    return named if any(ch.isdigit() for ch in named) else None


# ---------------------------------------------------------------- why is it allowed (EP above DP)

_SIZE_KEYS = {
    "ep": (r"expert[-_ ]model[-_ ]parallel[-_ ]size|\bep", "model.expert_model_parallel_size"),
    "etp": (r"expert[-_ ]tensor[-_ ]parallel[-_ ]size|\betp", "model.expert_tensor_parallel_size"),
    "tp": (r"tensor[-_ ]model[-_ ]parallel[-_ ]size|\btp", "model.tensor_model_parallel_size"),
    "pp": (r"pipeline[-_ ]model[-_ ]parallel[-_ ]size|\bpp", "model.pipeline_model_parallel_size"),
    "cp": (r"context[-_ ]parallel[-_ ]size|\bcp", "model.context_parallel_size"),
}


_SET_TO = r"(?:=|:|\bto\b|设成|设为|设置为|改成|改为|为)?"


# A parallel size is at most the GPU count (assistant/bounds.py): a longer number is no size, and is never
# converted (Python refuses int() of a string past 4,300 digits).
_MAX_SIZE_DIGITS = len(str(MAX_GPUS))


def _size(value: str) -> int | None:
    return int(value) if value.isdecimal() and len(value) <= _MAX_SIZE_DIGITS else None


def _sizes(texts: Sequence[str], overrides: dict[str, str]) -> dict[str, int]:
    """TP, PP, CP, EP, ETP as written in the texts (latest text wins), else the remembered overrides."""
    remembered = {name: _size(str(overrides.get(key, ""))) for name, (_, key) in _SIZE_KEYS.items()}
    sizes = {name: value for name, value in remembered.items() if value is not None}
    for text in texts:
        for name, (pattern, _) in _SIZE_KEYS.items():
            found = re.findall(rf"(?:{pattern})\s*{_SET_TO}\s*(\d+)\b", text, re.IGNORECASE)
            written = [size for size in map(_size, found) if size is not None]
            if written:
                sizes[name] = written[-1]
    return sizes


def why_allowed(texts: Sequence[str], slots: Slots, lang: str, experts: int | None) -> str:
    """EP above DP runs because the expert layers have their own mesh: said with the user's numbers.
    "" when the question is not about EP or the GPU count is unknown."""
    question = texts[-1]
    if not re.search(r"\bep\b|expert|专家", question, re.IGNORECASE) or not slots.num_gpus:
        return ""
    s = _sizes(texts, slots.overrides)
    if "ep" not in s:
        return ""
    world, tp, pp, cp, ep = slots.num_gpus, s.get("tp", 1), s.get("pp", 1), s.get("cp", 1), s["ep"]
    etp = s.get("etp", 1)
    expert_size = pp * ep * etp
    dense = tp * pp * cp
    dp = f"{world // dense}" if world % dense == 0 else f"{world}/{dense}"
    if world % expert_size:
        # The expert mesh does not divide the world: it should not run; the rule module's error text.
        error = expert_world(world, expert_size)
        mesh = f"PP {pp} × EP {ep} × ETP {etp} = {expert_size}"
        return words(lang, "intent_form.why_allowed.no_divide", mesh=mesh, world=world, error=error)
    edp = world // expert_size
    limit = (
        words(lang, "intent_form.why_allowed.experts", experts=experts)
        if experts
        else ""
    )
    return words(
        lang,
        "intent_form.why_allowed",
        world=world,
        tp=tp,
        pp=pp,
        cp=cp,
        dp=dp,
        ep=ep,
        etp=etp,
        expert_size=expert_size,
        edp=edp,
        limit=limit,
    )


# ---------------------------------------------------------------- conversion


def conversion_need(record: RecipeRecord, version: str, lang: str) -> str:
    """Whether the recipe starts from converted weights, read from its defaults in the catalog."""
    pretrained = record.fields.get("checkpoint.pretrained_checkpoint")
    name = f"`{record.name}`"
    if record.mode == "pretrain" and not pretrained:
        return words(lang, "intent_form.conversion.not_needed", name=name, version=version)
    value = f"`{pretrained}`" if pretrained else words(lang, "intent_form.conversion.unset")
    return words(lang, "intent_form.conversion.pretrained", name=name, mode=record.mode, value=value)


def load_conversion(kb: KnowledgeBase) -> dict[str, Any]:
    return kb.json("conversion.json")


def _holds(rows: Sequence[dict[str, Any]], version: str) -> dict[str, Any] | None:
    held = [r for r in rows if version_key(r["since"]) <= version_key(version)]
    return held[-1] if held else None


def distributed_import(version: str, lang: str, table: dict[str, Any]) -> str:
    """The multi-GPU import path of this release, from the conversion table; "" when the table has none."""
    single, spread = table["single_process"], table["distributed"]
    row = _holds(spread["rows"], version)
    if row is None or _holds(single["rows"], version) is None:
        return ""
    steps = "\n".join(f"{n}. `{step}`" for n, step in enumerate(spread["steps"], 1))
    args = " ".join(f"`{a}`" for a in spread["example_args"])
    sources = "; ".join(f"`{s}`" for s in row["sources"])
    return words(
        lang,
        "intent_form.distributed_import",
        call=single['call'],
        builds_on=single['builds_on'],
        version=version,
        steps=steps,
        example=spread['example'],
        args=args,
        sources=sources,
    )


def start_from_hf(
    version: str, lang: str, table: dict[str, Any], example: RecipeRecord | None, launch: str | None
) -> str:
    """How a run starts from a Hugging Face model in this release: convert once (Python call or the
    release's CLI), then a recipe with checkpoint.pretrained_checkpoint at the result; `launch` is the
    run_recipe.py call of `example` (the release's first-try pick) with it set. "" without a table row."""
    rows = table["start_from_hf"]["rows"]
    row = _holds(rows, version)
    if row is None or _holds(table["single_process"]["rows"], version) is None:
        return ""
    hf_model = (example.hf_model_id if example else None) or "<hf_model_id>"
    cli = row["cli"].format(hf_model=hf_model, megatron_path="${PRETRAINED_CHECKPOINT}")
    since = next((r["since"] for r in rows if r.get("hf_directory_accepted")), None)
    if row.get("hf_directory_accepted"):
        accepts = words(lang, "intent_form.start_from_hf.hf_directory", version=version)
    elif since is not None:
        accepts = words(lang, "intent_form.start_from_hf.megatron_only", version=version, since=since)
    else:
        accepts = ""
    example_line = (
        words(lang, "intent_form.start_from_hf.example", name=example.name, hf_model=hf_model, launch=launch)
        if example is not None and launch
        else ""
    )
    sources = "; ".join(f"`{source.split(' ')[0]}`" for source in row["sources"])  # file:line, no note
    return words(
        lang,
        "intent_form.start_from_hf",
        version=version,
        call=table["single_process"]["call"],
        cli=cli,
        example=example_line,
        accepts=accepts,
        sources=sources,
    )


# ---------------------------------------------------------------- batch divisibility


def batch_divisible(lang: str) -> str:
    """The micro-batch rule Megatron Core enforces (num_microbatches_calculator), in words."""
    error = batch(0, 0, 0).replace("(0)", "(…)")
    return words(lang, "intent_form.batch_divisible", error=error)
