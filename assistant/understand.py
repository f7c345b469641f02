"""Free text (English or Chinese) -> Slots. Pure: no I/O, the caller passes the catalog's model stems.

Everything here is deterministic pattern matching on a normalised copy of the question (NFKC, lower-case,
Chinese numerals turned into digits), because the facts drive the catalog and the rule module and must not
depend on an embedder that understands only English. Bad input (empty, huge, emoji, contradictions) yields
Slots, never an exception.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

from assistant.config_text import read_config_text
from assistant.errors import UserError
from assistant.model_names import StemIndex, find_hf_id, match_model, split_recipe_name, text_only_stem
from assistant.records import Intent, Slots

# Long pastes keep their head (the question or the traceback top) and tail (the error line, the question).
HEAD_CHARS = 12_000
TAIL_CHARS = 4_000
ERROR_TEXT_CHARS = 4_000
DEFAULT_GPUS_PER_NODE = 8
# GB200/GB300 NVL72 compute trays hold 4 GPUs; upstream's perf launcher uses 4 per node for them.
GPUS_PER_NODE_BY_TYPE = {"gb200": 4, "gb300": 4}

GPU_TYPES = ("gb300", "gb200", "b300", "b200", "h200", "h100", "h800", "h20", "a100", "a800", "l40s", "v100")
_GPU_TYPE_RE = "|".join(GPU_TYPES)


_ASCII_B = r"(?:(?<![A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<=[A-Za-z0-9_])(?![A-Za-z0-9_]))"


def rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile with an ASCII word boundary: Python's \\b sees CJK as word characters, so "做SFT" has none."""
    return re.compile(pattern.replace(r"\b", _ASCII_B), flags)


def _cap(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]


# ---------------------------------------------------------------- numbers

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_RUN = rx(r"[零〇一二两三四五六七八九十][零〇一二两三四五六七八九十百千万]*")


def cn_to_int(run: str) -> int:
    """Chinese numeral to int: 十六 -> 16, 三十二 -> 32, 一百二十八 -> 128, 两 -> 2, 三万二千 -> 32000."""
    total = section = number = 0
    for ch in run:
        if ch in _CN_DIGITS:
            number = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (number or 1) * _CN_UNITS[ch]
            number = 0
        elif ch == "万":
            total += (section + number) * 10_000
            section = number = 0
    return total + section + number


def _arabic_numerals(text: str) -> str:
    """Chinese numerals to digits when a counter or unit follows (十六卡 -> 16卡); 一下, 统一 stay."""

    def repl(m: re.Match[str]) -> str:
        run = m.group(0)
        # "一下", "一些", "一个问题" stay: only numerals followed by a counter or a unit are numbers.
        after = m.string[m.end() : m.end() + 1]
        if after and after not in "机台节点卡张块个片位万千次k倍gG路 xX×*" and not after.isascii():
            return run
        return str(cn_to_int(run))

    return _CN_RUN.sub(repl, text)


_EN_NUMBERS = {
    "one": 1, "single": 1, "a single": 1, "two": 2, "a pair of": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16, "twenty-four": 24,
    "twenty four": 24, "thirty-two": 32, "thirty two": 32, "forty-eight": 48, "sixty-four": 64,
    "sixty four": 64,
}  # fmt: skip
_EN_NUMBER_RE = rx(r"\b(" + "|".join(sorted(map(re.escape, _EN_NUMBERS), key=len, reverse=True)) + r")\b")


def normalise(text: str) -> str:
    """NFKC, lower-case, Chinese and English number words as digits, unified multiplication signs."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _arabic_numerals(text)
    text = _EN_NUMBER_RE.sub(lambda m: str(_EN_NUMBERS[m.group(1)]), text)
    text = text.replace("×", "x").replace("✕", "x")
    # Space between Chinese and ASCII runs so "16张h100上" and "做sft" split into words.
    return re.sub(r"(?<=[\u3400-\u9fff])(?=[a-z0-9])|(?<=[a-z0-9])(?=[\u3400-\u9fff])", " ", text)


# ---------------------------------------------------------------- language


def _cjk_count(text: str) -> int:
    return sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")


# How a pasted error message starts: a traceback or an "...Error:" / "...Exception:" head.
_ERROR_HEAD = r"traceback \(most recent call last\)|\b\w*(?:error|exception)\b\s*:"
# A pasted error message ("AssertionError: ngroups must be ...", a traceback) up to the end of its line or the
# next Chinese character or full-width punctuation: English text the user quotes, not the prose they write.
_PASTED_ERROR = rx(f"(?:{_ERROR_HEAD})" r"[^\n\u3000-\u303f\uff00-\uffef\u3400-\u9fff]*", re.IGNORECASE)


def detect_language(text: str) -> str:
    """ "zh" when Chinese characters carry a meaningful share of the prose, identifiers and pasted error
    messages aside."""
    cjk = _cjk_count(text)
    words = len(re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", _PASTED_ERROR.sub(" ", text)))
    # Six Chinese characters are a Chinese sentence, however long the English error it quotes.
    return "zh" if cjk >= 6 or ((cjk >= 2 or (cjk and not words)) and cjk >= 0.6 * words) else "en"


# ---------------------------------------------------------------- errors (troubleshoot)

_ERROR_MARKERS = rx(
    _ERROR_HEAD + r"|\bassertionerror\b|\bruntimeerror\b"
    r"|cuda graph accepts only|\booms?\b|out of memory|outofmemory|显存溢出|显存不足|爆显存|报错|\bsegfault\b"
    r"|segmentation fault|\bnccl (?:error|timeout)\b|\bkilled\b|core dumped|\bcrash(?:ed|es)?\b"
    r"|\babort(?:s|ed)?\b"
    r"|崩溃|挂了|卡住|显存不够|显存爆|超时|不生效|没生效|不起作用|很慢|太慢|变慢|这么慢|那么慢|好慢|慢了|吞吐很差|吞吐低|气泡太大"
    r"|must be (?:divisible|a multiple)|(?:is )?not divisible|should be divisible|should be \d+ when"
    r"|is only supported|\bfail(?:s|ed)\b|initialize_model_parallel"
    r"|only supported with|\bnot supported\b|invalid choice|\binvalid\b|watchdog|timed out|\btimeout\b"
    r"|\bnan loss|loss (?:is )?nan"
    r"|exit code \d+|\bhangs?\b|\bstuck\b|has no effect|does(?:n't| not) work|not working|\bslow(?:er|ly)?\b"
    r"|low throughput|poor throughput",
    re.IGNORECASE,
)


_PYTHON_ERROR = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b")


def extract_error(text: str) -> str | None:
    """The pasted error: from a Traceback to the end, else the lines that carry an error marker."""
    m = re.search(r"Traceback \(most recent call last\)", text)
    if m:
        return text[m.start() : m.start() + ERROR_TEXT_CHARS].strip()
    lines = [line.strip() for line in text.splitlines() if _ERROR_MARKERS.search(line)]
    if not lines:
        return None
    return "\n".join(lines)[:ERROR_TEXT_CHARS]


_LOG_LINE = re.compile(
    r"^\s*(?:\[[^\]]{0,80}\]\s*)?(?:[\w.]*(?:Error|Exception|Warning)\b|Traceback|File \""
    r"|raise |assert |\^+\s*$"
    r"|[\w.]+\.py:\d+|torch\.|\w+/\w+.*line \d+)"
)


def _prose(text: str) -> str:
    """The question without pasted tracebacks, log lines and code blocks (for language, intent and slots)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    m = re.search(r"Traceback \(most recent call last\)", text)
    if m:
        # Keep what follows the traceback only if it is prose (a question after the paste).
        tail = [
            line
            for line in text[m.start() :].splitlines()
            if line.strip() and not line.startswith((" ", "\t"))
        ]
        text = text[: m.start()] + "\n" + "\n".join(tail)
    return "\n".join(line for line in text.splitlines() if not _LOG_LINE.match(line))


# ---------------------------------------------------------------- GPUs


_A100_40G = re.compile(r"a100\W*(?:(?:sxm4?|pcie)\W*)?40\s*g|40\s*gb?\W*(?:nvidia\W*)?a100")


def _gpu_type(t: str) -> str | None:
    m = re.search(rf"(?<![a-z0-9])({_GPU_TYPE_RE})(?![0-9])", t)
    if m:
        # The 40 GB A100 is its own entry of the GPU table (half the memory of the default 80 GB one).
        return "a100_40g" if m.group(1) == "a100" and _A100_40G.search(t) else m.group(1)
    m = re.search(r"(?<![a-z0-9])(?:rtx\s*)?([345]0[789]0)(?![0-9])(?:\s*ti)?(?=\s|$|[^a-z0-9])", t)
    return f"rtx{m.group(1)}" if m and ("rtx" in t or "geforce" in t or "显卡" in t) else None


_GPU_WORD = rf"(?:gpus?|cards?|卡|张卡|块卡|显卡|块|(?:nvidia\s*)?(?:{_GPU_TYPE_RE}|rtx\s*\d{{4}})s?)"
_NODE_WORD = r"(?:nodes?|machines?|hosts?|servers?|机器|台机器|台|机|节点)"


def extract_gpus(t: str) -> tuple[int | None, int | None, int | None, str | None]:
    """(num_gpus, num_nodes, gpus_per_node, gpu_type) from normalised text; None where not said."""
    gpu_type = _gpu_type(t)
    num_gpus = num_nodes = per_node = None
    per_node_default = GPUS_PER_NODE_BY_TYPE.get(gpu_type or "", DEFAULT_GPUS_PER_NODE)

    # "2 nodes x 8 GB200", "2 nodes with 8 gpus each", "2 nodes of 8x h100"
    m = re.search(
        rf"(?<![\d.])(\d+)\s*{_NODE_WORD}\s*(?:x|\*|with|of|each with|,)?\s*(\d+)\s*(?:x\s*)?{_GPU_WORD}",
        t,
    )
    # "2x8 h100", "2 x 8 gpus"
    m2 = re.search(rf"(?<![\w.])(\d+)\s*[x*]\s*(\d+)\s*(?:x\s*)?{_GPU_WORD}", t)
    # Chinese "2机16卡" (total) and "2机每机8卡" (per node)
    m3 = re.search(
        r"(?<![\d.])(\d+)\s*(?:台机器|台|机|节点)\s*(每(?:台|机|个节点|节点)?)?\s*(\d+)\s*(?:张|块)?\s*(?:卡|gpu)",
        t,
    )
    if m3:
        nodes, count = int(m3.group(1)), int(m3.group(3))
        # "2机16卡" counts the total; "两台8卡" (at most one server's worth) counts per node.
        if m3.group(2) or count <= 8 or count % nodes:
            num_nodes, per_node, num_gpus = nodes, count, nodes * count
        else:
            num_nodes, per_node, num_gpus = nodes, count // nodes, count
    elif m:
        num_nodes, per_node = int(m.group(1)), int(m.group(2))
        num_gpus = num_nodes * per_node
    elif m2:
        num_nodes, per_node = int(m2.group(1)), int(m2.group(2))
        num_gpus = num_nodes * per_node
    else:
        if re.search(r"单卡|一卡|单\s*gpu|单张|单块", t) or re.search(
            r"\b(?:a|an|1)\s+(?:single\s+)?gpu\b", t
        ):
            num_gpus = 1
        elif re.search(r"双卡", t):
            num_gpus = 2
        count = re.search(
            rf"(?<![\w.=])(\d+)\s*(?:x|\*|张|块|个|片|台)?\s*(?:nvidia\s*)?(?:gpus?\b|cards?\b|显卡|卡|(?:{_GPU_TYPE_RE}|rtx\s*\d{{4}})s?(?![0-9]))",
            t,
        ) or re.search(rf"(?<![a-z0-9])(?:{_GPU_TYPE_RE})\s*[x*]\s*(\d+)\b", t)
        if count:
            num_gpus = int(count.group(1))
        elif num_gpus is None and re.search(rf"\b(?:a|an)\s+(?:{_GPU_TYPE_RE})\b", t):
            num_gpus = 1
        nodes = re.search(rf"(?<![\w.=])(\d+)\s*个?\s*{_NODE_WORD}", t)
        if re.search(r"单机|单节点|single[- ]node|one[- ]node|1 node\b", t):
            num_nodes = 1
        elif re.search(r"双机", t):
            num_nodes = 2
        elif nodes:
            num_nodes = int(nodes.group(1))
        if num_nodes is not None:
            if num_gpus is None:
                per_node = per_node_default
                num_gpus = num_nodes * per_node
            elif num_gpus % num_nodes == 0 and num_gpus >= num_nodes:
                per_node = num_gpus // num_nodes
    # An explicit per-node count ("每台8张", "8 gpus per node") wins over the total-count reading.
    each = re.search(
        rf"每\s*(?:台|机|个节点|节点)\s*(?:机器)?\s*(\d+)"
        rf"|(?<![\d.])(\d+)\s*(?:x\s*)?{_GPU_WORD}\s*(?:per node|each|每台|每机)",
        t,
    )
    if each and num_nodes:
        per_node = int(each.group(1) or each.group(2))
        num_gpus = num_nodes * per_node
    if num_gpus is None and re.search(r"nvl72", t):
        num_gpus, per_node, num_nodes = 72, 4, 18
    if num_gpus == 0 or num_nodes == 0:
        raise UserError(
            "a run needs at least one GPU and one node, and the question gives 0; "
            'say how many GPUs you have, for example "8 H100s" or "2 nodes x 8 GB200"',
            zh="训练至少需要 1 张 GPU、1 个节点，而问题中给的是 0；"
            "请说明你有多少张 GPU，例如“8 张 H100”或“2 机 16 卡”",
        )
    return num_gpus, num_nodes, per_node, gpu_type


# ---------------------------------------------------------------- goal, sequence length, dataset, version

_PEFT = rx(r"\b(?:q?lora|dora|peft|adapters?)\b|低秩|参数高效|轻量微调", re.IGNORECASE)
_SFT = rx(
    r"\bsft\b|full[- ](?:parameter[- ])?fine[- ]?tun|full[- ]finetun|fine[- ]?tun(?:e|ing)|finetun(?:e|ing)"
    r"|instruction[- ]tun|supervised fine"
    r"|全参微调|全参数微调|全量微调|指令微调|有监督微调|监督微调|微调|精调",
    re.IGNORECASE,
)
_PRETRAIN = rx(
    r"\bpre[- ]?train(?:ing|s)?\b|from scratch|预训练|从头训练|从零训练|继续训练|continued pre", re.IGNORECASE
)


def extract_goal(t: str) -> tuple[str | None, str | None]:
    """(goal, peft_scheme). PEFT words win over bare "fine-tune"; otherwise the first goal said wins."""
    scheme = "dora" if re.search(r"\bdora\b", t) else ("lora" if re.search(r"\bq?lora\b|低秩", t) else None)
    if _PEFT.search(t):
        return "peft", scheme
    sft, pre = _SFT.search(t), _PRETRAIN.search(t)
    if sft and pre:
        return ("sft" if sft.start() < pre.start() else "pretrain"), None
    if sft:
        return "sft", None
    if pre:
        return "pretrain", None
    return None, None


def _snap_pow2(value: int) -> int:
    """12.8万 = 128000 means 128K = 131072: snap to a power of two within 5 %."""
    p = 1 << max(0, round(value).bit_length() - 1)
    for cand in (p, p * 2):
        if abs(cand - value) <= 0.05 * cand:
            return cand
    return value


_K_LENGTH = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*k(?![a-z0-9])(?!\s*(?:steps|iter|samples|gpus?|vocab))")


def extract_seq_length(t: str) -> int | None:
    m = re.search(
        r"(?:seq(?:uence)?[_ ]?(?:len(?:gth)?)?|context(?: length| window)?|max(?:imum)? length"
        r"|序列长度|序列|上下文|长度)"
        r"\s*(?:of|=|:|是|为|to)?\s*(\d{3,7})(?![\d.kmw万])",
        t,
    )
    if m:
        return int(m.group(1))
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*万\s*(?:token|tokens|长度|上下文|序列|的)?", t)
    if m:
        return _snap_pow2(int(float(m.group(1)) * 10_000))
    for m in _K_LENGTH.finditer(t):
        value = float(m.group(1))
        if 1 <= value <= 4096:
            return int(value * 1024)
    m = re.search(r"(?<![\w.])(\d+)\s*m\s*(?:context|tokens? context|上下文)", t)
    if m:
        return int(m.group(1)) * 1024 * 1024
    m = re.search(r"(?<![\w.])(\d{4,7})\s*(?:tokens?|token 长度)(?!\s*(?:of data|per))", t)
    if m and int(m.group(1)) in {1 << k for k in range(10, 21)}:
        return int(m.group(1))
    return None


_DATASETS = (
    (r"--dataset[= ]+((?:mock|squad|tulu3|gsm8k|openmathinstruct2)\b|[a-z0-9]+-[a-z0-9.-]+)", None),
    (r"\b(llm-pretrain-mock|llm-finetune|llm-pretrain|vlm-[\w-]+)\b", None),
    (r"\bmock(?:ed)?\b|\bsynthetic\b|\bfake data|\bdummy data|模拟数据|假数据|随机数据|合成数据", "mock"),
    (r"\bsquad\b", "squad"),
    (r"\btulu[- ]?3\b", "tulu3"),
    (r"\bopenmathinstruct[- ]?2\b", "openmathinstruct2"),
    (r"\bgsm8k\b", "gsm8k"),
    (r"\bjsonl\b|own (?:data|dataset)|自己的数据|私有数据|自有数据", "jsonl"),
)


def extract_dataset(t: str) -> str | None:
    for pattern, value in _DATASETS:
        m = re.search(pattern, t)
        if m:
            return value or m.group(1)
    return None


_VERSION = rx(r"(?<![\w.])v?(0\.\d{1,2}\.\d{1,2}(?:rc\d+)?)(?![\w.]*\d)")
_VERSION_CTX = rx(
    r"(?:megatron[- ]?bridge|mbridge|bridge)\s*[=:]?\s*v?(\d+\.\d+(?:\.\d+)?(?:rc\d+)?)"
    r"|(?:version|版本)\s*[=:]?\s*v?(0\.\d+(?:\.\d+)?(?:rc\d+)?)"
)
_MAIN = rx(
    r"\bon main\b|\bmain branch\b|\bmain (?:checkout|snapshot|head)\b|\bcheckout (?:of|from) main\b|"
    r"main\s*分支|@main\b|--version\s+main\b|\b(?:bridge|mbridge) main\b"
)
_LATEST = rx(r"\blatest\b|最新")


def _full_version(value: str) -> str:
    """Catalog versions have three parts: "0.6" -> "0.6.0"."""
    return value + ".0" if re.fullmatch(r"\d+\.\d+", value) else value


def extract_versions(t: str, default_version: str | None) -> list[str]:
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _VERSION.finditer(t)]
    found += [(m.start(), _full_version(m.group(1) or m.group(2))) for m in _VERSION_CTX.finditer(t)]
    if m := _MAIN.search(t):
        found.append((m.start(), "main"))
    if default_version and (m := _LATEST.search(t)):
        found.append((m.start(), default_version))
    versions: list[str] = []
    for _, v in sorted(found):
        if v not in versions:
            versions.append(v)
    return versions


# ---------------------------------------------------------------- recipe names and overrides

_RECIPE = rx(r"(?<![A-Za-z0-9_.])([a-z][a-z0-9_]*?_config(?:_[a-z0-9]+)?)(?![A-Za-z0-9_])")


# ---------------------------------------------------------------- intent

_FIRST_TRY = rx(
    r"first[- ]time|first try|smoke[- ]?test|try(?:ing)? (?:out )?(?:megatron[- ])?bridge|getting started"
    r"|hello world"
    r"|quick ?start|sanity check run|第1次|第一次|首次|试跑|试用|冒烟|上手|入门|跑通",
)
_BENCHMARK = rx(
    r"benchmark|\bmfu\b|tflops|tokens?/s(?:ec)?|perf(?:ormance)? recipes?|run_script\.py"
    r"|(?:measure|max(?:imum)?|peak|upper[- ]bound|expected|best|what) throughput"
    r"|throughput (?:of|for|on|numbers?)"
    r"|性能配方|性能测试|跑分|基准测试|测(?:一下|试)?吞吐|吞吐上限|吞吐量?(?:是多少|多少|测试|和|数据)|的吞吐"
)
# A question form without a model or GPUs is a how/what/why question for the knowledge base.
_QUESTION = rx(
    r"^\s*(?:is|are|does|do|can|could|should|will|when|where|which|what|how|why|who)\b|\?|？"
    r"|怎么|如何|吗|能不能|可不可以|要不要|哪些|哪个|哪里|什么|多少|是否|为何|呢|几|怎样|还是"
)
_FOLLOW_UP = rx(r"^\s*(?:and|what about|how about|then|also|ok,? and)\b|^\s*那.{0,20}呢")
_EXPLAIN = rx(
    r"^\s*(?:why|what is|what are|what's|what does|how does|how do .* work|explain|tell me about)\b"
    r"|\bexplain\b"
    r"|\bwhy (?:is|does|do|must|should|can't|cannot)\b|\bwhat does .* mean\b|\bdifference between\b"
    r"|为什么|为何|是什么|什么是|解释|什么意思|原理|区别是|有什么用",
)
_FASTEST_ASK = (
    r"(?:fastest|best|optimal) (?:parallel(?:ism)? )?(?:layout|mapping|parallelism)"
    r"|(?:最快|最优|最佳|最好)的?(?:并行)?(?:布局|切分|并行方式)"
)
_RECOMMEND_ASK = rx(
    r"which recipe|what recipe|best recipe|recommend|suggest|what (?:config|settings)"
    r"|how (?:do|should|can) i (?:run|train|launch|start)"
    r"|哪个配方|什么配方|推荐|怎么跑|如何跑|怎么训练|用哪个|" + _FASTEST_ASK
)
_FASTEST = rx(_FASTEST_ASK)
# "What is the recipe name for Wan 1.3B pretraining?" asks for a recipe when it names a model.
_NAME_ASK = rx(r"recipe (?:name|function)|配方名|配方函数")
# "with cuda_graph_scope=..." names a key, not a request to turn graphs on: the word must not run on into one.
_ENABLE_CUDA_GRAPHS = rx(
    r"(?:(?:enable|turn on|switch on|use|add|with)\s+(?:te\s+|transformer[- ]engine\s+)?cuda[ _-]?graphs?"
    r"|(?:开启|启用|打开|使用|加上|开)\s*(?:te\s*)?cuda[ _-]?graphs?)(?![\w-])"
)
# Full-iteration capture is its own implementation: the TE-scoped settings of a plain "turn on CUDA graphs"
# would contradict it, so such a question gets no feature writes.
_FULL_ITERATION_GRAPH = rx(
    r"full[ _-]?iteration|(?:whole|entire|full) (?:training )?(?:iteration|step|forward[- ]backward)"
    r"|整(?:个|轮)?(?:训练)?迭代|完整(?:的)?迭代|整个前向"
)
# Precision names as people write them; MXFP8 and NVFP4 before the plain FP8 they contain.
_PRECISIONS = (
    ("fp8mx", rx(r"\bmx[\s_-]?fp8\b|\bfp8[\s_-]?mx\b")),
    ("nvfp4", rx(r"\bnv[\s_-]?fp4\b|\bfp4\b")),
    ("fp8cs", rx(r"\bfp8(?:[\s_-]?cs)?\b")),
    ("bf16", rx(r"\bbf16\b")),
)


def extract_precision(t: str) -> str | None:
    """The training precision a request names ("in FP8", "用 MXFP8"), in Bridge's recipe-name codes."""
    return next((code for code, pattern in _PRECISIONS if pattern.search(t)), None)


_VALIDATE = rx(
    r"is (?:this|my) (?:config|configuration|setup|override|command)s? (?:valid|ok|right|correct|fine)"
    r"|check my"
    r"|validate|sanity[- ]check (?:my|this)|will (?:this|it) (?:work|fit)|does (?:this|it) fit"
    r"|这个配置对|配置对吗|有效吗|对不对|合理吗|能跑吗|行不行|检查(?:一下)?(?:我的)?配置|校验"
)
_COMPARE = rx(
    r"differen|\bdiff\b|changed|compare|comparison|\bvs\.?\b|versus|what'?s new|release notes"
    r"|区别|变化|不同|差异|对比|比较|改了什么|新增"
)
_OUT_OF_SCOPE = rx(
    r"weather|\bpoem|\bpoetry|\bhaiku|\bjoke|\brecipe for (?:a )?(?:cake|soup|bread|dinner|cookies)"
    r"|\bnsys\b|\bncu\b|nsight|kernel profil|memory snapshots?|compare_snapshots|显存快照"
    r"|write (?:me )?(?:a |some )?(?:python |c\+\+ |cuda )?(?:code|script|program|function)"
    r"|天气|写.{0,12}诗|笑话|写(?:一段|个)?代码|菜谱",
)
_DOMAIN = rx(
    r"megatron|bridge|recipe|配方|parallel|并行|\b(?:tp|pp|vpp|ep|etp|cp|dp|sp|mbs|gbs)\b|train|训练|gpu|显卡|卡"
    r"|config|配置|checkpoint|检查点|dataset|数据|batch|批|moe|专家|lora|sft|微调|预训练|llm|模型|model|fsdp"
    r"|recompute|重计算|cuda[ _]?graph|nccl|节点|node|launch|torchrun|slurm|sbatch|srun|显存|memory|oom|token"
    r"|context|序列|上下文|fp8|bf16|precision|精度|transformer|pipeline|流水线|expert|packing|打包|梯度|gradient"
    r"|optimi[sz]er|优化器|learning rate|学习率|\bloss\b|收敛|converge|吞吐|throughput|hugging ?face"
    r"|\bhf\b|权重"
    r"|weights|nemo|vlm|diffusion|\b[a-z]+(?:_[a-z0-9]+)+\b"
)


_SEQ_KEYS = frozenset(("model.seq_length", "dataset.seq_length"))  # a length alone is not a config to check
_SLOW = rx(
    r"\b(?:throughput|performance|mfu|tokens/s|tflops?)\b[^.?!]{0,30}\b(?:poor|low|bad|drops?|dropped|worse)\b"
    r"|\b(?:poor|low|bad)\s+(?:throughput|performance|mfu|utili[sz]ation)\b|\bslow(?:er)?\b"
    r"|吞吐.{0,6}(?:低|差|不高|下降)|速度.{0,4}(?:慢|低)|太慢|很慢|变慢|这么慢|那么慢|好慢|慢了|MFU.{0,6}(?:低|不高)"
)


# "hi", "你好", "what can you do?": the whole message is a greeting or asks what the assistant does.
_GREETING = rx(
    r"^\W*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|你好|您好|嗨|哈喽|在吗|help"
    r"|what can you do|what do you do|who are you|what are you|how can you help(?: me)?"
    r"|你能做什么|你可以做什么|你会什么|你是谁|你能干什么|能做什么)(?:\s+(?:there|again|bot))?\W*$"
)
# One clause of small talk: a greeting, "I'm new here", or "what can you help me with". A message made only of
# such clauses ("hi! I'm new here, what can you help me with?") is a greeting; one clause that asks for
# something else ("I'm new, what's the quickest smoke test?") makes it a real question.
_SMALL_TALK_CLAUSE = rx(
    r"^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|thanks|thank you|你好|您好|嗨|哈喽|在吗|谢谢)"
    r"(?:\s+(?:there|again|bot|all|everyone))?$"
    r"|^(?:i'?m|i am|im) (?:new|a beginner|just (?:getting )?started)"
    r"(?: (?:here|to (?:this|it|megatron[- ]?bridge|bridge|you)))?$"
    r"|^(?:i )?just (?:got )?started(?: (?:using|with) (?:it|this|megatron[- ]?bridge|bridge))?$"
    r"|^(?:what|how) (?:can|could|do) you (?:do|help(?: me)?(?: with)?|offer)(?: for me)?$"
    r"|^what (?:can|could) you help(?: me)? with$|^what are you(?: for| able to do)?$|^who are you$"
    r"|^what (?:can|does) (?:megatron[- ]?bridge|bridge|it) do$"
    r"|^(?:which|what) models? (?:can|could) (?:i|we|you) (?:train|fine-?tune|pre-?train)"
    r"(?: (?:with|on|using) (?:it|this|megatron[- ]?bridge|bridge))?$"
    r"|^(?:which|what) models? (?:does|do) (?:it|megatron[- ]?bridge|bridge|you) support$"
    r"|^(?:which|what) models? (?:are|is) supported$"
    r"|^(?:megatron[- ]?bridge )?(?:能|可以)做什么$"
    r"|^(?:可以|能|能够|支持)(?:训练|微调|预训练)?哪些模型$|^支持哪些模型$|^哪些模型(?:可以|能)(?:训练|用)$"
    r"|^(?:我)?(?:是)?(?:刚|刚刚|刚开始)(?:开始)?(?:用|使用|接触|学)?(?:这个|megatron[- ]?bridge)?$"
    r"|^我是新手$|^新手$|^你(?:能|可以|会)(?:帮我)?(?:做|干)?(?:什么|些什么|哪些事)$|^你是谁$|^能做什么$"
)
_CLAUSE_SPLIT = re.compile(r"\s*(?:[.!?,;:，。！？；：、]|\s[—–-]+\s|—)+\s*")


def is_small_talk(prose: str) -> bool:
    """Every clause of the message is a greeting, a self-introduction or a "what can you do"."""
    clauses = [c for c in _CLAUSE_SPLIT.split(prose.strip()) if c]
    return bool(clauses) and all(_SMALL_TALK_CLAUSE.search(c) for c in clauses)
# A short follow-up on the last plan: "why?", "why that parallelism?", "why did you pick this one?"
# (normalised to "1"), "为什么选这个配方？".
_WHY = rx(
    r"^\W*(?:but |and |so )?(?:why|为什么|为啥)"
    r"(?:\s*(?:did you |do you |would you )?(?:pick|choose|chose|recommend|suggest|use|go with"
    r"|选了|选择|选|推荐了|推荐|要用|用))?"
    r"(?:\s*(?:this|that|these|those|it|so|not|the|这个|这样|这种|这些|该))?"
    r"(?:\s*(?:one|1|recipe|layout|plan|choice|parallelism|split|config|configuration|setup|settings?"
    r"|配方|布局|并行(?:方式|策略|设置|配置)?|配置|方案|设置))?(?:\s*though)?\W*$"
)
# "how fast will it be?", "will it fit?", "吞吐大概多少？", "放得下吗？": the last plan's speed or memory.
_PLAN_QUESTION = rx(
    r"^\W*(?:and |so |but |ok |okay )?(?:how fast|how quick|how long (?:will|would|does)"
    r"|what (?:throughput|speed|mfu|step time)|how much (?:memory|vram|gpu memory)|how many tokens"
    r"|(?:will|would|does|can) (?:it|that|this)(?: 1| plan| layout| recipe)? fit)\b"
    r"|跑多快|多快|(?:吞吐|速度|步时)(?:大概|大约|能有|会是|是)?多少|(?:需要|要|占|用)(?:多少|多大)显存"
    r"|显存(?:够不够|够吗|需要多少|占用多少|要多少)|放得下|装得下|能放下|塞得下"
)
FOLLOW_UP_CHARS = 80


_CASE_SEPARATORS = re.compile(r"\s*(?:[;；、\n]|,\s*(?:and\s+)?|\band\s+|以及|和)\s*")


# The slots two pieces of one setup may not set differently ("Nemotron-H 56B on 8 B300; the recipe is X").
_SETUP_SLOTS = (
    "model_stem", "hf_model_id", "num_gpus", "gpu_type", "gpus_per_node", "num_nodes", "goal", "peft_scheme",
    "seq_length", "version", "dataset", "recipe_name", "precision",
)  # fmt: skip


def same_setup(first: Slots, second: Slots) -> bool:
    """Two pieces describe one run: the same model, and no slot that both set to different values (one
    piece gives the GPUs, the other the recipe of that model, say)."""
    if not first.model_stem or first.model_stem != second.model_stem:
        return False
    for name in _SETUP_SLOTS:
        one, other = getattr(first, name), getattr(second, name)
        if one is not None and other is not None and one != other:
            return False
    return True


def split_cases(
    text: str,
    is_case: Callable[[str], bool],
    same: Callable[[str, str], bool] | None = None,
) -> list[str]:
    """The separate setups of a question that lists several ("cases: A on 16 GPUs, B on 8 GPUs, and C"),
    each as its own text; [] when there are fewer than two. The list is the part after a colon when there
    is one, up to the end of that sentence; `is_case` says whether a piece names a setup on its own, and
    `same` whether two pieces are one setup told in parts: those are joined back into one case."""
    head, colon, rest = text.partition(":") if ":" in text else text.partition("：")
    body = rest if colon else head
    body = re.split(r"(?<=[.。!?！？])\s+(?=[A-Z\u4e00-\u9fff])", body.strip(), maxsplit=1)[0]
    pieces = [p.strip(" .。") for p in _CASE_SEPARATORS.split(body) if p and p.strip(" .。")]
    if len(pieces) < 2:
        return []  # not a list: spare every plain question the per-piece understanding
    groups: list[list[str]] = []
    for piece in (p for p in pieces if is_case(p)):
        group = next((g for g in groups if same and all(same(member, piece) for member in g)), None)
        if group is None:
            groups.append([piece])
        else:
            group.append(piece)
    return ["; ".join(group) for group in groups] if len(groups) >= 2 else []


def asks_about_speed(text: str) -> bool:
    """The user complains that a run is slow ("throughput is poor", "MFU is low", "太慢")."""
    return bool(_SLOW.search(normalise(_prose(text))))


_PACKING = rx(r"\bpack(?:ed|ing)?\b|打包")


def mentions_packing(text: str) -> bool:
    """The user trains on packed sequences ("packed SFT", "序列打包")."""
    return bool(_PACKING.search(normalise(_prose(text))))


def is_question(text: str) -> bool:
    """The text asks something (a question form), rather than only stating a setup."""
    prose = normalise(_prose(text))
    return bool(_QUESTION.search(prose)) and not _FOLLOW_UP.search(prose)


def classify_intent(
    prose: str,
    *,
    has_error: bool,
    has_training_content: bool,
    has_overrides: bool,
    n_versions: int,
    has_setup: bool = True,
) -> Intent:
    """Most specific intent first; a question with no training content at all is out of scope.

    `has_setup`: the text names a model, a recipe or a GPU count, so a recommendation can be made from it.
    """
    if has_error and has_training_content:
        # "TP=8 EP=2 is slow" states a layout and only complains about speed: check it and say where the
        # step time goes, rather than troubleshoot an error there is none of.
        only_slow = _SLOW.search(prose) and not _ERROR_MARKERS.search(_SLOW.sub(" ", prose))
        return "validate" if has_overrides and only_slow else "troubleshoot"
    if _GREETING.search(prose) or is_small_talk(prose):
        return "greeting"
    if _OUT_OF_SCOPE.search(prose):
        return "out_of_scope"
    if n_versions >= 2 and _COMPARE.search(prose):
        return "compare_versions"
    if n_versions >= 1 and re.search(
        r"changed in|what'?s new in|新增了什么|变化|改了什么|release notes", prose
    ):
        return "compare_versions"
    if _VALIDATE.search(prose):
        return "validate"
    if _FIRST_TRY.search(prose):
        return "first_try"
    if _BENCHMARK.search(prose):
        return "benchmark"
    asks_question = _QUESTION.search(prose) and not _FOLLOW_UP.search(prose)
    if has_overrides:
        # "Should sequence_parallel be on with TP=4?" names a setting, not a run to check: a rule question.
        if not has_setup and asks_question and not _RECOMMEND_ASK.search(prose):
            return "explain"
        return "validate"
    asks_for_recipe = _RECOMMEND_ASK.search(prose) or (has_setup and _NAME_ASK.search(prose))
    if _EXPLAIN.search(prose) and not asks_for_recipe:
        return "explain"
    if not has_training_content:
        return "out_of_scope"
    if not has_setup and asks_question and not _RECOMMEND_ASK.search(prose):
        return "explain"
    return "recommend"


# ---------------------------------------------------------------- entry point


def understand(
    text: str,
    *,
    known_stems: Sequence[str],
    hf_ids: Mapping[str, str] | None = None,
    default_version: str | None = None,
    index: StemIndex | None = None,
) -> Slots:
    """Slots that `text` states; `index` may be passed to reuse a StemIndex built for the same stems."""
    raw = _cap(text if isinstance(text, str) else "")
    raw = raw.replace("\x00", " ")
    index = index or StemIndex.build(known_stems, hf_ids)

    error_text = extract_error(raw) if _ERROR_MARKERS.search(raw) else None
    prose = _prose(raw)
    t = normalise(prose)
    t_all = normalise(raw)

    slots: dict = {"language": detect_language(prose)}

    recipe_m = _RECIPE.search(raw)
    recipe_parts = split_recipe_name(recipe_m.group(1)) if recipe_m else None
    if recipe_m:
        slots["recipe_name"] = recipe_m.group(1)

    hf_id = find_hf_id(prose)
    found = match_model(prose, index)
    stem = text_only_stem(found.stem, prose, index.infos) if found and found.stem else None
    if found is None and hf_id:
        slots["model_text"] = hf_id
    if found is not None:
        slots["model_text"] = hf_id if hf_id and found.text in hf_id else found.text
        slots["model_stem"] = stem
    if hf_id:
        slots["hf_model_id"] = hf_id
    elif stem and hf_ids and stem in hf_ids:
        slots["hf_model_id"] = hf_ids[stem]
    if recipe_parts and recipe_parts.stem in index.infos and not slots.get("model_stem"):
        slots["model_stem"] = recipe_parts.stem
        slots.setdefault("model_text", recipe_parts.stem)

    # Model sizes ("8b", "600m") and recipe names must not be read as GPU counts or lengths.
    t_counts = _RECIPE.sub(" ", t)
    num_gpus, num_nodes, per_node, gpu_type = extract_gpus(t_counts)
    slots.update(num_gpus=num_gpus, num_nodes=num_nodes, gpus_per_node=per_node, gpu_type=gpu_type)

    goal, scheme = extract_goal(t)
    if goal is None and recipe_parts and recipe_parts.task:
        goal = {"finetune": "sft", "lora": "peft"}.get(recipe_parts.task, recipe_parts.task)
    slots.update(goal=goal, peft_scheme=scheme)

    # Config values come from the whole text: a YAML dump or a log's config lines count, not only prose.
    overrides = read_config_text(raw).overrides
    slots["overrides"] = overrides
    graphs_asked = _ENABLE_CUDA_GRAPHS.search(t) and not _FULL_ITERATION_GRAPH.search(t)
    if graphs_asked and not any("cuda_graph" in key for key in overrides):
        slots["features"] = ["cuda_graphs"]
    slots["wants_fastest"] = True if _FASTEST.search(prose) else None
    if "mixed_precision" not in overrides:  # a preset the user spells out wins
        slots["precision"] = extract_precision(t_counts)
    seq = extract_seq_length(t_counts)
    if seq is None and "model.seq_length" in overrides and overrides["model.seq_length"].isdigit():
        seq = int(overrides["model.seq_length"])
    slots["seq_length"] = seq

    versions = extract_versions(t_all if not error_text else t, default_version)
    if versions:
        slots["version"] = versions[0]
    if len(versions) > 1:
        slots["other_version"] = versions[1]
    slots["dataset"] = extract_dataset(t)

    has_content = bool(
        slots.get("model_text")
        or recipe_m
        or num_gpus
        or gpu_type
        or goal
        or seq
        or overrides
        or versions
        or slots["dataset"]
        or _DOMAIN.search(t)
        or (error_text and _DOMAIN.search(normalise(error_text)))
        or (error_text and _PYTHON_ERROR.search(error_text))
    )
    intent = classify_intent(
        t,
        has_error=error_text is not None,
        has_training_content=has_content,
        # A sequence length written as KEY=VALUE is a slot, not a config to validate.
        has_overrides=bool(set(overrides) - _SEQ_KEYS),
        n_versions=len(versions),
        has_setup=bool(slots.get("model_text") or recipe_m or num_gpus or num_nodes),
    )
    named = slots.get("model_text") or recipe_m or set(overrides) - _SEQ_KEYS
    short = len(t.strip()) <= FOLLOW_UP_CHARS
    if not named and short and intent in ("out_of_scope", "troubleshoot", "explain"):
        # "it's slow, why?", "why?": about the last plan; the conversation decides (session.py).
        if asks_about_speed(t) and not _ERROR_MARKERS.search(_SLOW.sub(" ", t)):
            slots["speed_question"] = True
        elif _WHY.search(t) and intent != "troubleshoot":
            slots["asks_why"] = True
        elif _PLAN_QUESTION.search(t) and intent != "troubleshoot":
            slots["asks_plan"] = True
    slots["intent"] = intent
    if intent == "troubleshoot":
        slots["error_text"] = error_text
    return Slots(**{k: v for k, v in slots.items() if v is not None})
