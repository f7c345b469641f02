"""Model names: recipe-name stems and matching free-text model mentions against them.

A stem is a recipe name without its task tail ("qwen3_30b_a3b_sft_config" -> "qwen3_30b_a3b"). Users
write one model many ways ("Qwen3 30B-A3B", "qwen3-30b-a3b", "千问3 30B", "Qwen/Qwen3-30B-A3B"), so
matching works on a *compact* form: lower-case, aliases applied, every character that is not a letter or
digit dropped. Each stem gets compact keys (with size spellings such as "0.6b" for "600m"), found by
substring search with word boundaries checked in the original text. Only stems the caller passes can
ever be returned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

TASKS = ("pretrain", "sft", "peft", "finetune", "lora")
# Variant words that sit between the model and the task in some legacy names ("llama3_8b_low_precision_...").
_PRE_TASK_VARIANTS = ("low_precision", "long_context", "no_mtp", "text2image", "text2video", "fsdp")
_NOT_MODELS = {"default", "build", "get", "set", "create", "finalize", "dump", "list", "select"}
_SEQ_TOKEN = re.compile(r"^(\d+)k$")
_GPU_TOKEN = re.compile(r"^(\d+)gpus?$")
_NODES_TOKEN = re.compile(r"^(\d+)nodes$")
_GPU_TYPES = ("h100", "h200", "a100", "b200", "b300", "gb200", "gb300", "r100", "vr200")
_PRECISIONS = ("bf16", "fp8cs", "fp8mx", "fp8sc", "fp8ds", "nvfp4", "fp8")
_SIZE = re.compile(r"^(?:\d+(?:p\d+)?[bmt]|a\d+(?:p\d+)?b|e\d+b)$")

# CJK and spelled-out aliases, replaced before compaction (longest first).
TEXT_ALIASES: dict[str, str] = {
    "通义千问": "qwen",
    "千问": "qwen",
    "通义": "qwen",
    "深度求索": "deepseek",
    "羊驼": "llama",
    "智谱": "glm",
    "月之暗面": "kimi",
    "英伟达": "nvidia",
}
# Extra compact prefixes that name the same family ("dsv3" = "deepseekv3").
PREFIX_ALIASES: dict[str, tuple[str, ...]] = {
    "deepseek": ("ds",),
    "gptoss": ("openaigptoss",),
    "nemotronh": ("nemotronhybrid",),
}
# Words that precede or follow a model name without changing it.
_NOISE_PREFIXES = ("nvidia", "meta", "metallama")


@dataclass(frozen=True)
class RecipeNameParts:
    """What a recipe function name says about itself."""

    stem: str
    task: str | None
    seq_hint: int | None = None
    num_gpus: int | None = None
    num_nodes: int | None = None
    gpu_type: str | None = None
    precision: str | None = None
    variant: tuple[str, ...] = ()


@lru_cache(maxsize=16_384)
def split_recipe_name(name: str) -> RecipeNameParts | None:
    """Split a recipe name into stem, task and the hints in its tail; None if it is not a model recipe.
    Cached: the variant lookups split every recipe name of a catalog on each answer."""
    name = name.strip()
    if (
        not name
        or name.startswith("_")
        or not re.search(r"_config(?:_\w+)?$", name)
        or name.endswith("configs")
    ):
        return None
    head, _, after = name.partition("_config")
    tokens = head.split("_") + [t for t in after.split("_") if t]
    task_at = next((i for i, tok in enumerate(tokens) if tok in TASKS), None)
    if task_at is None or task_at == 0:
        return None
    stem_tokens = tokens[:task_at]
    variants: list[str] = []
    hints: list[str] = []
    # Strip pre-task hints: "llama3_8b_128k_pretrain", "..._low_precision_pretrain", "..._fsdp_sft",
    # "nemotron_3_nano_gb200_pretrain", "llama3_8b_h100_bf16_pretrain".
    changed = True
    while changed and len(stem_tokens) > 1:
        changed = False
        joined = "_".join(stem_tokens)
        for variant in _PRE_TASK_VARIANTS:
            if joined.endswith("_" + variant):
                stem_tokens = stem_tokens[: -len(variant.split("_"))]
                variants.append(variant)
                changed = True
        last = stem_tokens[-1]
        if len(stem_tokens) > 1 and (
            _SEQ_TOKEN.match(last) or _GPU_TOKEN.match(last) or last in _GPU_TYPES or last in _PRECISIONS
        ):
            hints.append(last)
            stem_tokens = stem_tokens[:-1]
            changed = True
    stem = "_".join(stem_tokens)
    if stem in _NOT_MODELS or stem_tokens[0] in _NOT_MODELS:
        return None
    seq_hint = num_gpus = num_nodes = None
    gpu_type = precision = None
    for tok in hints + tokens[task_at + 1 :]:
        if m := _GPU_TOKEN.match(tok):
            num_gpus = int(m.group(1))
        elif m := _NODES_TOKEN.match(tok):
            num_nodes = int(m.group(1))
        elif tok in _GPU_TYPES:
            gpu_type = tok
        elif tok in _PRECISIONS:
            precision = tok
        elif m := _SEQ_TOKEN.match(tok):
            seq_hint = int(m.group(1)) * 1024
        else:
            variants.append(tok)
    return RecipeNameParts(
        stem=stem,
        task=tokens[task_at],
        seq_hint=seq_hint,
        num_gpus=num_gpus,
        num_nodes=num_nodes,
        gpu_type=gpu_type,
        precision=precision,
        variant=tuple(variants),
    )


def stems_from_recipe_names(names: Iterable[str]) -> list[str]:
    """Distinct model stems of the given recipe names, sorted; helper functions are skipped."""
    stems = {parts.stem for name in names if (parts := split_recipe_name(name))}
    return sorted(stems)


# ---------------------------------------------------------------- compact text, mapped back to the original


@dataclass(frozen=True)
class Compact:
    """Compact form of a text: kept[i] came from original position pos[i]."""

    original: str
    kept: str
    pos: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original [start, end) covering compact [start, end)."""
        return self.pos[start], self.pos[end - 1] + 1


def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def compact(text: str) -> Compact:
    """Lower-case letters, digits and CJK of `text`, with CJK aliases expanded, mapped back to positions."""
    text = unicodedata.normalize("NFKC", text)
    kept: list[str] = []
    pos: list[int] = []
    aliases = sorted(TEXT_ALIASES, key=len, reverse=True)
    i = 0
    while i < len(text):
        ch = text[i]
        if _is_cjk(ch):
            alias = next((a for a in aliases if text.startswith(a, i)), None)
            if alias:
                for out in TEXT_ALIASES[alias]:
                    kept.append(out)
                    pos.append(i)
                i += len(alias)
                continue
            kept.append(ch)
            pos.append(i)
        elif ch.isascii() and ch.isalnum():
            kept.append(ch.lower())
            pos.append(i)
        i += 1
    return Compact(text, "".join(kept), tuple(pos))


def compact_key(text: str) -> str:
    return compact(text).kept


# ---------------------------------------------------------------- stem index


@dataclass
class StemInfo:
    stem: str
    family: str  # compact family, e.g. "qwen3", "glm45air", "nemotron3nano"
    sizes: tuple[str, ...]  # compact size spellings of the first size token ("8b"; "600m", "06b")
    rest: str  # compact remainder after the first size ("a3b", "v2", "")
    keys: set[str] = field(default_factory=set)


def _size_spellings(token: str) -> tuple[str, ...]:
    """Compact spellings of one size token: "1p7b" -> ("1p7b", "17b"), "600m" -> ("600m", "06b")."""
    spellings = [token]
    if m := re.fullmatch(r"(\d+)p(\d+)([bmt])", token):
        spellings.append(f"{m.group(1)}{m.group(2)}{m.group(3)}")
    if m := re.fullmatch(r"(\d+)m", token):
        millions = int(m.group(1))
        if millions < 1000 and millions % 100 == 0:
            spellings.append(f"0{millions // 100}b")
    return tuple(dict.fromkeys(spellings))


def stem_info(stem: str) -> StemInfo:
    """Split a stem into family and size: "qwen3_30b_a3b" -> qwen3 / 30b / a3b; "wan_1_3b" -> wan / 13b."""
    tokens = stem.split("_")
    for i, tok in enumerate(tokens):
        if i == 0:
            continue
        if _SIZE.match(tok) and not tok.startswith(("a", "e")):
            size_tok, family_tokens = tok, tokens[:i]
            # "wan_1_3b": a bare integer before the size is its integer part.
            if (
                len(family_tokens) > 1
                and family_tokens[-1].isdigit()
                and not re.search(r"\d$", family_tokens[-2])
            ):
                size_tok = f"{family_tokens[-1]}p{tok}"
                family_tokens = family_tokens[:-1]
            family = "".join(family_tokens)
            rest = "".join(tokens[i + 1 :])
            return StemInfo(stem, family, _size_spellings(size_tok), rest)
    return StemInfo(stem, "".join(tokens), (), "")


def _family_spellings(family: str) -> list[str]:
    spellings = [family]
    for prefix, alts in PREFIX_ALIASES.items():
        if family.startswith(prefix):
            spellings += [alt + family[len(prefix) :] for alt in alts]
    return spellings


@dataclass
class StemIndex:
    """Compact keys for every known stem; built once per catalog version."""

    infos: dict[str, StemInfo]
    keys: dict[str, set[str]]  # compact key -> stems it names
    families: dict[str, set[str]]  # compact family spelling -> stems
    hf_keys: set[str] = field(default_factory=set)  # keys taken from HF ids: several stems = one model

    @classmethod
    def build(cls, known_stems: Sequence[str], hf_ids: Mapping[str, str] | None = None) -> StemIndex:
        infos = {stem: stem_info(stem) for stem in known_stems}
        keys: dict[str, set[str]] = {}
        families: dict[str, set[str]] = {}
        for stem, info in infos.items():
            for fam in _family_spellings(info.family):
                families.setdefault(fam, set()).add(stem)
                if not info.sizes:
                    keys.setdefault(fam, set()).add(stem)
                for size in info.sizes:
                    keys.setdefault(fam + size + info.rest, set()).add(stem)
                    # "Qwen3 30B" without "A3B" still names qwen3_30b_a3b when that is the only 30B.
                    if info.rest:
                        keys.setdefault(fam + size, set()).add(stem)
            keys.setdefault(compact_key(stem), set()).add(stem)
        hf_keys: set[str] = set()
        for stem, hf_id in (hf_ids or {}).items():
            if stem in infos and hf_id:
                for key in (compact_key(hf_id.split("/")[-1]), compact_key(hf_id)):
                    keys.setdefault(key, set()).add(stem)
                    hf_keys.add(key)
        # "DeepSeek V4" names the family of deepseek_v4_flash and deepseek_v4_pro: a sizeless stem's words
        # without their last qualifier, unless that spelling already names a family or a stem.
        prefixes: dict[str, set[str]] = {}
        for stem, info in infos.items():
            tokens = stem.split("_")
            if not info.sizes and len(tokens) >= 3:
                for fam in _family_spellings("".join(tokens[:-1])):
                    prefixes.setdefault(fam, set()).add(stem)
        families.update({fam: stems for fam, stems in prefixes.items() if fam not in families | keys})
        # Family-only keys name a stem only when the family has exactly one member.
        for fam, stems in families.items():
            if len(stems) == 1:
                keys.setdefault(fam, set()).update(stems)
        return cls(infos, keys, families, hf_keys)


def _boundary_ok(c: Compact, start: int, end: int) -> bool:
    """The match must not start or end inside an ASCII word or number of the original text."""
    o_start, o_end = c.span(start, end)
    text = c.original
    before = text[o_start - 1] if o_start > 0 else " "
    after = text[o_end] if o_end < len(text) else " "
    if before.isascii() and before.isalnum():
        return False
    if after.isascii() and after.isalnum():
        return False
    return not (after == "." and o_end + 1 < len(text) and text[o_end + 1].isdigit())


def _strip_noise_prefix(c: Compact, start: int) -> int:
    for noise in _NOISE_PREFIXES:
        if c.kept.endswith(noise, 0, start):
            return start - len(noise)
    return start


@dataclass(frozen=True)
class ModelMatch:
    stem: str | None
    text: str  # verbatim words from the question
    candidates: tuple[str, ...] = ()


def _find_keys(c: Compact, keys: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, key) of every boundary-respecting occurrence of any key."""
    hits = []
    for key in keys:
        if len(key) < 2:
            continue
        start = c.kept.find(key)
        while start != -1:
            end = start + len(key)
            if _boundary_ok(c, start, end):
                hits.append((start, end, key))
            start = c.kept.find(key, start + 1)
    return hits


# A size word ("7B", "8x7B", "1.3b", "600M") with an optional active-parameter tail ("-A3B").
_SIZE_WORD = re.compile(
    r"(?<![A-Za-z0-9_.])(?:\d+x)?(\d+(?:\.\d+)?)([BbMm])((?:[-_ ]?[Aa]\d+(?:\.\d+)?[Bb])?)(?![A-Za-z0-9_])"
)
_SIZE_AFTER = re.compile(r"[ _-]*(?:\d+x)?\d+(?:\.\d+)?[BbMm](?![A-Za-z0-9_])")
_WORD_BEFORE = re.compile(r"([A-Za-z0-9][A-Za-z0-9.]{0,30})[ _-]*$")
# Words that can stand before a size without naming a model ("a 7B model", "fine-tune 8B").
_NOT_FAMILY = frozenset(
    (
        "a", "an", "the", "with", "of", "for", "on", "and", "or", "my", "our", "this", "that", "to", "is",
        "at", "model", "models", "dense", "moe", "llm", "size", "params", "parameters", "train", "training",
        "pretrain", "pretraining", "finetune", "finetuning", "fine", "tune", "tuning", "sft", "lora", "peft",
        "dora", "gpu", "gpus", "want", "need", "i", "about", "around", "approx", "roughly", "some", "any",
        "new", "own", "base", "instruct", "chat", "support", "supports", "supported", "does", "do", "can",
        "have", "has", "bridge", "megatron", "use", "run", "recipe", "recipes",
    )
)  # fmt: skip
# Vendor words that name a model family even when no size follows ("DeepSeek R1", "Phi-3 mini").
_VENDOR = re.compile(
    r"(?<![A-Za-z0-9_])(deepseek|qwen|llama|mistral|mixtral|phi|gemma|glm|chatglm|baichuan|internlm|falcon|olmo"
    r"|nemotron|kimi|minimax|exaone|granite|starcoder|codellama|yi|mamba|jamba|grok|ernie|hunyuan)"
    r"((?:[ ._-]?[A-Za-z0-9.]{1,12}){0,2})",
    re.IGNORECASE,
)


def _mentions(text: str) -> list[tuple[str, str, str, str]]:
    """(mention, family words, size key, active tail) for each size word preceded by up to 3 family words."""
    found = []
    for m in list(_SIZE_WORD.finditer(text))[:50]:
        words: list[str] = []
        end = m.start()
        while len(words) < 3:
            w = _WORD_BEFORE.search(text, max(0, end - 40), end)
            if not w or w.group(1).lower() in _NOT_FAMILY:
                break
            words.insert(0, w.group(1))
            end = w.start()
        # Drop leading number-only words; a family starts with a letter.
        while words and not words[0][0].isalpha():
            words.pop(0)
        if not words or re.fullmatch(r"(?:gb|b|h|a|r|vr)\d{2,3}", words[-1].lower()):
            continue
        mention = text[end : m.end()].strip(" -_")
        found.append((mention, " ".join(words), _size_key(m.group(1), m.group(2)), compact_key(m.group(3))))
    return found


_HF_ID = re.compile(r"(?<![A-Za-z0-9_./-])([A-Za-z0-9][\w.-]{0,80}(?:/[\w.-]{1,100})+)")
_FILE_SUFFIX = re.compile(
    r"\.(?:py|json|jsonl|ya?ml|md|txt|sh|cfg|toml|ipynb|csv|log|bin|safetensors)$", re.IGNORECASE
)


_HF_ORGS = frozenset(
    (
        "meta-llama", "qwen", "deepseek-ai", "nvidia", "zai-org", "thudm", "google", "mistralai", "openai",
        "allenai", "moonshotai", "microsoft", "tiiuae", "internlm", "baichuan-inc", "01-ai", "lgai-exaone",
        "stepfun-ai", "minimaxai", "black-forest-labs", "wan-ai", "ibm-granite", "huggingfacetb",
    )
)  # fmt: skip


def find_hf_id(text: str) -> str | None:
    """The first "owner/name" that looks like a Hugging Face model id (not a file path, not "H100/H200")."""
    for m in _HF_ID.finditer(text):
        value = m.group(1).rstrip(".")
        if value.count("/") != 1 or _FILE_SUFFIX.search(value):
            continue
        owner, name = value.split("/")
        if owner.lower() in _HF_ORGS or _SIZE_WORD.search(name) or _VENDOR.search(name):
            return value
    return None


def _size_key(number: str, unit: str) -> str:
    return number.replace(".", "") + unit.lower()


def match_model(text: str, index: StemIndex) -> ModelMatch | None:
    """Best stem named in `text`, or the verbatim mention when no known stem fits; None if none is named."""
    c = compact(text)
    hits = _find_keys(c, index.keys)
    if hits:
        # Of overlapping keys the longest ("qwen3 30b a3b" over "qwen3 30b"); of separate mentions the first,
        # the model the question is about ("pretrain Qwen3 4B; can I reuse the Qwen2.5 7B recipe?").
        start, end, key = _first_mention(hits)
        stems = index.keys[key]
        o_start, o_end = c.span(_strip_noise_prefix(c, start), end)
        mention = _extend_mention(text, o_start, o_end)
        said = _SIZE_AFTER.match(text, o_end)
        only = next(iter(stems))
        if (
            said
            and len(stems) == 1
            and index.infos[only].sizes
            and not _stems_with_sizes(said.group(0), index, stems)
        ):
            # "Gemma3 4B" when the catalog has only gemma3_1b: a family is named, the size is not known.
            family = index.infos[only].family
            return ModelMatch(None, text[o_start : said.end()].strip(), tuple(sorted(index.families[family])))
        if len(stems) == 1:
            return ModelMatch(next(iter(stems)), mention)
        if key in index.hf_keys:
            # Recipes that share one HF id train the same model ("exaone_moe" aliases its sized stem).
            return ModelMatch(min(stems, key=lambda s: (len(s), s)), mention)
        return ModelMatch(None, mention, tuple(sorted(stems)))
    family_hits = _find_keys(c, index.families)
    if family_hits:
        start, end, fam = max(family_hits, key=lambda h: (h[1] - h[0], -h[0]))
        stems = index.families[fam]
        o_start, o_end = c.span(start, end)
        said = _SIZE_AFTER.match(text, o_end)
        mention = text[o_start : said.end() if said else o_end].strip()
        # A size said elsewhere ("a 70B Llama 3") picks the member when it is unique.
        sized = _stems_with_sizes(text, index, stems)
        if len(sized) == 1:
            return ModelMatch(sized[0], mention)
        return ModelMatch(None, mention, tuple(sorted(sized or stems)))
    return _fuzzy_match(text, index)


def _first_mention(hits: list[tuple[int, int, str]]) -> tuple[int, int, str]:
    """The earliest hit that no longer hit overlaps; the longest of those overlapping it."""
    whole = [
        h for h in hits if not any(o[0] < h[1] and h[0] < o[1] and o[1] - o[0] > h[1] - h[0] for o in hits)
    ]
    return min(whole or hits, key=lambda h: (h[0], -(h[1] - h[0])))


def _extend_mention(text: str, start: int, end: int) -> str:
    """Grow a matched span over trailing "-Instruct"/"-Base"/"-A3B" words so model_text reads naturally."""
    m = re.match(r"(?:[-_ ](?:instruct|base|chat|hf|a\d+b))*", text[end:], flags=re.IGNORECASE)
    return text[start : end + (m.end() if m else 0)].strip()


def _stems_with_sizes(text: str, index: StemIndex, stems: Iterable[str]) -> list[str]:
    sizes = {_size_key(m.group(1), m.group(2)) for m in _SIZE_WORD.finditer(text)}
    return sorted(s for s in stems if set(index.infos[s].sizes) & sizes)


def _fuzzy_match(text: str, index: StemIndex) -> ModelMatch | None:
    """Typos in the family word ("lama3 8b"), digits and sizes agreeing exactly; else the raw mention."""
    mentions = _mentions(text)
    for mention, family_words, size, rest in mentions:
        fam_key = compact_key(family_words)
        for noise in _NOISE_PREFIXES:
            if fam_key.startswith(noise) and len(fam_key) > len(noise):
                fam_key = fam_key[len(noise) :]
        best: tuple[int, str] | None = None
        for stem, info in index.infos.items():
            if size not in info.sizes or (rest and rest != info.rest):
                continue
            for fam in _family_spellings(info.family):
                # A typo, not a missing word: "qwen25" must not become "qwen25vl".
                if re.sub(r"\D", "", fam) != re.sub(r"\D", "", fam_key) or abs(len(fam) - len(fam_key)) > 1:
                    continue
                distance = Levenshtein.distance(fam, fam_key, score_cutoff=2)
                if distance <= max(1, len(fam) // 6) and (best is None or distance < best[0]):
                    best = (distance, stem)
        if best:
            return ModelMatch(best[1], mention)
    if mentions:
        return ModelMatch(None, mentions[0][0])
    vendor = _VENDOR.search(text)
    if vendor:
        # Keep the words that belong to the name: "DeepSeek R1 SFT" -> "DeepSeek R1".
        tail = ""
        for piece in re.findall(r"[ ._-]?[A-Za-z0-9.]+", vendor.group(2)):
            if piece.strip(" ._-").lower() in _NOT_FAMILY:
                break
            tail += piece
        return ModelMatch(None, (vendor.group(1) + tail).strip(" -_."))
    return None


def missing_size(text: str, index: StemIndex) -> tuple[str, ...]:
    """The family members when `text` names a family with a size none of them has ("Qwen3-VL-4B" when the
    catalog has qwen3_vl_8b, qwen3_vl_30b_a3b, qwen3_vl_235b_a22b); () when it names a known stem, no
    size, or no family."""
    found = match_model(text, index)
    if found is None or found.stem or not found.candidates or not _SIZE_WORD.search(text):
        return ()
    if _stems_with_sizes(text, index, found.candidates):
        return ()
    return found.candidates


def stems_of_size(text: str, index: StemIndex, stems: Iterable[str]) -> list[str]:
    """Of `stems`, those with a size `text` names ("Llama 3 405B": llama31_405b)."""
    return _stems_with_sizes(text, index, [s for s in stems if s in index.infos])


# A vision-language model's name: "DeepSeek-VL2", "Qwen3-VL", "InternVL", "vision model".
_VISION_NAME = re.compile(r"vl(?:\d|\b)|\bvision\b|视觉", re.IGNORECASE)


@dataclass(frozen=True)
class RelatedStems:
    """What the catalog has near a model it has no recipe for: the vendor's other models and, for a
    vision-language name, the vision-language models."""

    vendor: str  # the vendor word as written ("DeepSeek"), "" when none is named
    same_vendor: tuple[str, ...]
    vision: tuple[str, ...]


def related_stems(text: str, known_stems: Sequence[str]) -> RelatedStems:
    """The stems of the vendor `text` names ("DeepSeek-VL2" -> deepseek_v2, deepseek_v3, ...) and, when it
    names a vision-language model, every vision-language stem (one with a `vl` word)."""
    found = _VENDOR.search(text)
    vendor = found.group(1) if found else ""
    key = vendor.lower()
    same = tuple(sorted(s for s in known_stems if key and compact_key(s).startswith(key)))
    vision = (
        tuple(sorted(s for s in known_stems if "vl" in s.split("_")))
        if _VISION_NAME.search(text)
        else ()
    )
    return RelatedStems(vendor, same, vision)


# "text-only", "language model only", "without the vision tower", "纯文本": the user wants the LLM of a model
# whose Hugging Face name is its vision-language form (Qwen/Qwen3.5-9B is the VL model; the text recipes
# train Qwen/Qwen3.5-9B-Base).
_TEXT_ONLY = re.compile(
    r"\btext[- ]only\b|\b(?:language|LLM|text)[- ]model[- ]only\b|\bonly the (?:language|text) model\b"
    r"|\bwithout (?:the |a )?(?:vision|image|visual)\b|\bno (?:vision|image) (?:tower|encoder|part)\b"
    r"|\bnon[- ]?(?:VL|vision|multimodal)\b|纯文本|仅文本|只有文本|只要文本|不带视觉|不含视觉|去掉视觉",
    re.IGNORECASE,
)


def text_only_stem(stem: str, text: str, known_stems: Iterable[str]) -> str:
    """The text-only sibling of a vision-language stem (qwen35_vl_9b -> qwen35_text_9b) when `text` asks for
    the language model only and the catalog has that sibling; otherwise `stem` unchanged. Only a `text`
    sibling is the same model: qwen3_8b is not the language model of qwen3_vl_8b."""
    tokens = stem.split("_")
    if "vl" not in tokens or not _TEXT_ONLY.search(text):
        return stem
    sibling = "_".join("text" if token == "vl" else token for token in tokens)
    return sibling if sibling in set(known_stems) else stem


def candidate_stems(
    text: str, known_stems: Sequence[str], hf_ids: Mapping[str, str] | None = None
) -> list[str]:
    """Stems the text could mean: the match itself, or every member of a family named without a size."""
    index = StemIndex.build(known_stems, hf_ids)
    found = match_model(text, index)
    if found is None:
        return []
    if found.stem:
        return [found.stem]
    return list(found.candidates)
