"""The config a user writes in free text -> dotted overrides. Pure: no I/O.

One parser for every way a config reaches us: prose sizes ("TP 4", "tp4", "EP8", "PP=8, VP=12", "GBS 192",
"EP 设成 6"), a dotlist pasted from a command line (`model.tensor_model_parallel_size=4`), a YAML/OmegaConf
dump (`model:` then `  tensor_model_parallel_size: 4`), Megatron's argument log
(`tensor_model_parallel_size ........ 4`) and Python lines (`cfg.model.expert_model_parallel_size = 4`).
Short and bare names map through `rules.config.SHORTCUTS`, the table `autorecipe check` reads, so the
question and the command line agree on what `tp` or `global_batch_size` sets. A value the text gives as the
recipe's default ("the default is TP=1", "recipe default TP=1") is kept apart: it is not an override.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.rules.config import SHORTCUTS

# Sections of Bridge's ConfigContainer a dotted key may start with.
OVERRIDE_ROOTS = (
    "model", "train", "training", "optimizer", "scheduler", "dataset", "checkpoint", "logger", "ddp", "rng",
    "mixed_precision", "comm_overlap", "peft", "tokenizer", "profiling", "dist", "ft", "straggler", "nvrx",
    "inprocess_restart", "tensor_inspect", "validation", "rerun_state_machine",
)  # fmt: skip
# ConfigContainer fields set by name at the top level (a recipe writes mixed_precision = "bf16_mixed").
ROOT_SCALAR_KEYS = frozenset({"mixed_precision"})
# Spellings people use that run_recipe.py does not ("vpp", "seq_len"), and bare field names it lacks.
_ALIASES = {
    "vpp": "vp",
    "seq_len": "seq_length",
    "sequence_parallel": "model.sequence_parallel",
    "num_layers_in_first_pipeline_stage": "model.num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage": "model.num_layers_in_last_pipeline_stage",
}
# Objects a pasted script or log holds the config in ("cfg.model.x", "config.pipeline_model_parallel_size").
_HOLDERS = ("cfg", "config", "recipe", "self", "provider", "model_provider", "container")


@dataclass(frozen=True)
class StatedConfig:
    """What the text sets (`overrides`) and what it says the recipe already has (`defaults`), both as
    dotted key -> the literal as written."""

    overrides: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)


# A bare sequence length ("seq_length=10000") is the run's: the launcher's shortcut sets the dataset's and
# the model's together. A dotted one ("model.seq_length=...") is only that field (a mismatch is an error).
_BARE_SEQ_KEYS = tuple(SHORTCUTS["seq_length"])


def config_key(name: str) -> str | None:
    """The dotted config key a written name sets, or None when it is not a config key."""
    lower = name.lower()
    lower = _ALIASES.get(lower, lower)
    if lower in SHORTCUTS:
        return SHORTCUTS[lower][0]
    parts = lower.split(".")
    if len(parts) > 1 and parts[0] in OVERRIDE_ROOTS:
        return lower
    if lower in ROOT_SCALAR_KEYS:
        return lower
    if len(parts) > 1 and parts[0] in _HOLDERS:
        if parts[1] in OVERRIDE_ROOTS:
            return ".".join(parts[1:])
        # "config.pipeline_model_parallel_size" (an error message) names a field without its section.
        leaf = _ALIASES.get(parts[-1], parts[-1])
        if len(parts) == 2 and len(leaf) > 4 and leaf in SHORTCUTS:
            return SHORTCUTS[leaf][0]
        if len(parts) == 2 and leaf.startswith("model."):
            return leaf
    return None


_SHORT_NAMES = sorted({*SHORTCUTS, *_ALIASES}, key=len, reverse=True)
_OVERRIDE = re.compile(
    r"(?<![A-Za-z0-9_.\-])([A-Za-z_][A-Za-z0-9_]{0,60}(?:\.[A-Za-z0-9_]{1,60}){0,6})\s*=\s*"
    r"(\[[^\]\n]{0,300}\]|\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'|[^\s,;'\"，；。、(（)）]{1,300})"
)
# "EP 设成 6", "TP 改为 4", "set ep to 6": a short parallelism name given a number in words.
_SHORT_IN_WORDS = re.compile(
    r"(?<![A-Za-z0-9_.])(" + "|".join(_SHORT_NAMES) + r")"
    r"\s*(?:设成|设为|设置为|设置成|改成|改为|用|to|of)\s*(\d{1,7})(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
# "TP 4", "tp4", "EP8", "ETP 1", "MBS 1", "GBS 192", "TP为4": a size name right before its number. Not
# sequence_parallel (a flag), and not a number that is a count of something else ("EP 8 GPUs", "PP 4k").
_SIZE_NAMES = "etp|tp|pp|vpp|vp|cp|ep|mbs|gbs"  # a size name may follow a number directly: "tp2pp4"
_SIZE = re.compile(
    rf"(?<![A-Za-z_.\-])({_SIZE_NAMES})\s*(?:[:：]|为|是)?\s*(\d{{1,7}})"
    rf"(?![\d.]|(?!(?:{_SIZE_NAMES})\d)[A-Za-z_]|\s*(?:gpus?\b|cards?\b|nodes?\b|卡|张|台|个节点|节点))",
    re.IGNORECASE,
)
# run_recipe.py's shortcut flags (v0.6.0+, scripts/training/run_recipe.py:192-238): "-pp 2",
# "--micro_batch_size=4".
_FLAG_NAMES = {
    "gb": "gbs", "global_batch_size": "gbs", "mb": "mbs", "micro_batch_size": "mbs",
    "ms": "train.train_iters", "max_steps": "train.train_iters", "sl": "seq_length",
}  # fmt: skip
_LAUNCH_FLAG = re.compile(
    r"(?<![A-Za-z0-9_-])--?(etp|tp|pp|vp|cp|ep|gb|mb|ms|sl|max_steps|global_batch_size|micro_batch_size|seq_length"
    r"|(?:tensor|pipeline|virtual_pipeline|context|expert|expert_tensor)_model_parallel_size"
    r"|context_parallel_size|expert_tensor_parallel_size)(?:\s+|=)(\d{1,9})(?![A-Za-z0-9_.])"
)
# The values upstream error texts print ("but your micro batch size is 4", "global batch size (192) is not
# divisible by micro batch size (1)", "multiple of tensor_model_parallel_size (16)"): the run's own settings.
_ERROR_VALUES = (
    (re.compile(r"\bmicro batch size (?:is |\()(\d{1,7})\b", re.IGNORECASE), "train.micro_batch_size"),
    (re.compile(r"\bglobal batch size \((\d{1,9})\)", re.IGNORECASE), "train.global_batch_size"),
    (re.compile(r"\btensor_model_parallel_size \((\d{1,5})\)"), "model.tensor_model_parallel_size"),
    (re.compile(r"\bcontext_parallel_size \((\d{1,5})\)"), "model.context_parallel_size"),
)
_YAML_LINE = re.compile(r"^(\s*)(?:-\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:(?:\s+(.*?))?\s*$")
# Megatron's argument dump: "  tensor_model_parallel_size ...................... 4".
_ARG_LOG = re.compile(r"^\s*(?:\[[^\]]*\]:?\s*)?([a-z_][a-z0-9_]*)\s+\.{3,}\s+(\S+)\s*$", re.MULTILINE)
_TRAILING_PUNCTUATION = "?？!！.。,，;；:：)）"
_DEFAULT_BEFORE = re.compile(
    r"default|默认|原配方|(?:recipe|配方)\s*(?:uses|has|sets|ships|用的是|里是|中是)"
)
_DEFAULT_AFTER = re.compile(
    r"^\s*[(（]?\s*(?:is\s+|as\s+)?(?:the\s+)?(?:recipe'?s?\s+)?(?:default|默认)|^\s*by default|^\s*是默认"
)
# A clause boundary: what comes after it no longer describes the default ("default TP=1, I set TP=4").
_CLAUSE_END = re.compile(r"[.;!?\n。；！？，,)）]|\bto\b|\bbut\b|\binstead\b|\bi\b|我|改|换", re.IGNORECASE)
_RECIPE_NAME = re.compile(r"(?<![A-Za-z0-9_.])[a-z][a-z0-9_]*?_config(?:_[a-z0-9]+)?(?![A-Za-z0-9_])")


def _is_default(text: str, start: int, end: int) -> bool:
    """The value at text[start:end] is said to be the recipe's default, not a setting of the user's."""
    before = text[max(0, start - 60) : start]
    cuts = list(_CLAUSE_END.finditer(before))
    clause = before[cuts[-1].end() :] if cuts else before
    return bool(_DEFAULT_BEFORE.search(clause.lower()) or _DEFAULT_AFTER.search(text[end : end + 30].lower()))


def _clean(value: str) -> str:
    value = value.strip()
    if value[:1] in "'\"" and value[-1:] == value[:1] and len(value) >= 2:
        return value[1:-1]
    return value.rstrip(_TRAILING_PUNCTUATION) or value


def _yaml_pairs(text: str) -> list[tuple[str, str]]:
    """Nested `key: value` lines (a YAML/OmegaConf dump), as dotted path -> value; [] for plain prose."""
    pairs: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    sections = 0
    for line in text.splitlines():
        m = _YAML_LINE.match(line)
        if not m:
            if line.strip():
                stack = [] if not line.startswith((" ", "\t")) else stack
            continue
        indent, key, value = len(m.group(1)), m.group(2), (m.group(3) or "").split(" #")[0].strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not value:
            stack.append((indent, key))
            sections += 1
            continue
        pairs.append((".".join([*(k for _, k in stack), key]), value))
    return pairs if sections or len(pairs) >= 2 else []


def read_config_text(text: str) -> StatedConfig:
    """Every config value `text` states, in whichever form it is written. Later statements win."""
    masked = _RECIPE_NAME.sub(lambda m: " " * len(m.group(0)), text)  # "..._ep8_..." is a name, not EP 8
    overrides: dict[str, str] = {}
    defaults: dict[str, str] = {}

    def put(key: str | None, value: str, start: int, end: int, prose: bool = True, name: str = "") -> None:
        if key is None or not value:
            return
        target = defaults if prose and _is_default(masked, start, end) else overrides
        target[key] = value
        if key == "model.seq_length" and name and "." not in name:
            target.update(dict.fromkeys(_BARE_SEQ_KEYS, value))

    for m in _SHORT_IN_WORDS.finditer(masked):
        put(config_key(m.group(1)), m.group(2), m.start(), m.end())
    for m in _SIZE.finditer(masked):
        put(config_key(m.group(1)), m.group(2), m.start(), m.end())
    for m in _LAUNCH_FLAG.finditer(masked):
        name = _FLAG_NAMES.get(m.group(1), m.group(1))
        put(config_key(name), m.group(2), m.start(), m.end(), name=name)
    for m in _OVERRIDE.finditer(masked):
        put(config_key(m.group(1)), _clean(m.group(2)), m.start(), m.end(), name=m.group(1))
    for pattern, key in _ERROR_VALUES:
        for m in pattern.finditer(masked):
            put(key, m.group(1), 0, 0, prose=False)
    for path, value in _yaml_pairs(masked):
        put(config_key(path) or config_key(path.split(".")[-1]), _clean(value), 0, 0, prose=False)
    for m in _ARG_LOG.finditer(masked):
        put(config_key(m.group(1)), _clean(m.group(2)), 0, 0, prose=False)
    for key in overrides.keys() & defaults.keys():
        if overrides[key] == defaults[key]:
            del overrides[key]  # "TP=1 is the default" said twice is still the default
    return StatedConfig(overrides=overrides, defaults=defaults)


def extract_overrides(text: str) -> dict[str, str]:
    """KEY=VALUE pairs and sizes the user sets (not the recipe's defaults they describe)."""
    return read_config_text(text).overrides
