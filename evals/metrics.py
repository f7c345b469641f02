"""Pure scoring of assistant answers against golden rows: no I/O, no clock, no imports of the assistant.

The runner (evals/run.py) produces `Answer`s and catalog facts; everything here turns them into numbers
so the same code scores a real run and the hand-made answers in the tests.
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assistant.answer import Answer
from assistant.records import Catalog, LauncherFlag

# ---------------------------------------------------------------- thresholds (the CI gate, in one place)


@dataclass(frozen=True)
class Thresholds:
    recipe_accuracy_per_language: float = 0.95
    max_invented_identifiers: int = 0
    retrieval_recall_at_5: float = 0.9
    command_validity: float = 1.0
    # Share of the real-question dev rows (golden/real.jsonl, split "dev") that pass: 175/175 reached on
    # 2026-12-03 (156/175 that morning; 38/70 after issue 16's first pass, 11/70 before it), gated at 0.98
    # so that up to three rows may change while a mechanism is reworked. Raise it, never lower it.
    real_dev_pass_rate: float = 0.98


THRESHOLDS = Thresholds()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Options of the programs that wrap run_recipe.py; they are not run_recipe.py flags and are never "invented".
EXTERNAL_LAUNCHER_FLAGS = _words(
    # torch.distributed.run / torchrun
    "--nproc_per_node --nproc-per-node --nnodes --node_rank --node-rank --master_addr --master-addr "
    "--master_port --master-port --rdzv_backend --rdzv-backend --rdzv_endpoint --rdzv-endpoint --rdzv_id "
    "--rdzv-id --standalone --max_restarts --max-restarts "
    # srun / sbatch (also as #SBATCH lines)
    "--nodes --ntasks-per-node --ntasks --gpus-per-node --gpus-per-task --gres --cpus-per-task --time "
    "--account --partition --job-name --output --error --exclusive --mem --mpi --export --kill-on-bad-exit "
    "--overlap --wait --container-image --container-mounts --container-workdir --container-env "
    "--container-name --no-container-mount-home "
    # uv / python / pip, and this project's own CLI
    "--with --no-project --active --no-sync --extra --group --help --version --json --lang --batch"
)

# Lower-case names ending in _config that are config objects or fields, not recipe functions.
NON_RECIPE_CONFIG_NAMES = _words(
    "model_config dataset_config train_config optimizer_config scheduler_config ddp_config checkpoint_config "
    "logger_config tokenizer_config rng_config peft_config mixed_precision_config comm_overlap_config "
    "profiling_config recipe_config transformer_config model_parallel_config dist_config ft_config "
    "straggler_config nvrx_straggler_config inprocess_restart_config rerun_state_machine_config "
    "tensor_inspect_config energon_config"
)

# ASCII word rules: in Chinese prose an identifier often touches a CJK character, which Unicode \w would join.
# A name with a file extension (`run_config.yaml`, `transformer_config.py`) is a file, not a recipe.
_CONFIG_NAME_RE = re.compile(r"(?<![A-Za-z0-9_./])[A-Za-z][A-Za-z0-9_]*_config\b(?!\.[A-Za-z])", re.ASCII)
_LONG_FLAG_RE = re.compile(r"(?<![A-Za-z0-9_-])--[A-Za-z][A-Za-z0-9_-]*", re.ASCII)
_RELEASE_LABEL_RE = re.compile(
    r"\s*#\s*v?(?P<low>\d+\.\d+\.(?:\d+|x))(?:(?P<plus>\+)|\s*[-–]\s*v?(?P<high>\d+\.\d+\.(?:\d+|x)))?\s*$"
)
_FENCE_RE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_DATASET_ARG_RE = re.compile(
    r"(?<![A-Za-z0-9_-])--dataset(?:=|\s+)['\"]?([A-Za-z0-9][A-Za-z0-9_.-]*)", re.ASCII
)
_NPROC_RE = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)(\d+)")
_NNODES_RE = re.compile(r"--nnodes(?:=|\s+)(\d+)")
_SBATCH_NODES_RE = re.compile(r"(?:#SBATCH\s+)?(?:--nodes(?:=|\s+)|(?<![\w-])-N\s*)(\d+)")
_GUIDE_PREFIX_RE = re.compile(r"^(?:knowledge_base/)?guide/(?:en|zh)/")
_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_TYPES = {"int": int, "float": float, "str": str}


# ---------------------------------------------------------------- golden rows


class Expected(BaseModel):
    """What a correct answer shows; a key left out is not checked. `recipes: []` = no recipe may be named."""

    model_config = ConfigDict(extra="forbid")

    recipes: list[str] | None = None
    dataset: str | list[str] | None = None
    nproc_per_node: int | None = None
    nnodes: int | None = None
    must_include: list[str] = Field(default_factory=list)
    must_not_include: list[str] = Field(default_factory=list)
    expected_sources: list[str] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    intent: str | None = None

    @field_validator("must_include", "must_not_include", "findings")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            re.compile(pattern)
        return patterns


class GoldenRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    lang: Literal["en", "zh"]
    version: str
    category: str
    turns: list[str] = Field(default_factory=list)
    expected: Expected
    note: str | None = None  # where the expected values were checked


class RetrievalRow(BaseModel):
    """One retrieval query: `query` or `question`; sources in `expected_sources` or `expected`."""

    model_config = ConfigDict(extra="ignore")

    id: str
    query: str
    lang: str | None = None
    version: str | None = None  # the release the question is about (its passages only)
    expected_sources: list[str]


# ---------------------------------------------------------------- what a version allows


@dataclass(frozen=True)
class VersionFacts:
    """The identifiers one Megatron-Bridge version really has, taken from its catalog."""

    version: str
    recipe_names: frozenset[str]
    launcher_script: str | None
    launcher_flags: tuple[LauncherFlag, ...]
    dataset_presets: frozenset[str]
    preset_modes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    benchmark_script: str | None = None
    benchmark_flags: tuple[LauncherFlag, ...] = ()
    slurm_flags: tuple[LauncherFlag, ...] = ()

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> VersionFacts:
        names: set[str] = set()
        for recipe in catalog.recipes:
            names.update([recipe.name, recipe.canonical, *recipe.aliases])
        launcher = catalog.launcher
        bench = launcher.benchmark
        return cls(
            version=catalog.version,
            recipe_names=frozenset(names),
            launcher_script=launcher.script,
            launcher_flags=tuple(launcher.flags),
            dataset_presets=frozenset(p.name for p in launcher.dataset_presets),
            preset_modes=tuple((p.name, tuple(p.modes)) for p in launcher.dataset_presets if p.modes),
            benchmark_script=bench.script if bench else None,
            benchmark_flags=tuple(bench.flags) if bench else (),
            slurm_flags=tuple(launcher.slurm.flags) if launcher.slurm else (),
        )

    @property
    def flag_names(self) -> frozenset[str]:
        launchers = (*self.launcher_flags, *self.benchmark_flags, *self.slurm_flags)
        return frozenset(n for f in launchers for n in f.names)


# ---------------------------------------------------------------- command validity


class LauncherParseError(Exception):
    pass


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise LauncherParseError(message)


def build_launcher_parser(flags: Iterable[LauncherFlag]) -> argparse.ArgumentParser:
    """Rebuild the launcher's argparse parser from the flags the catalog read out of its source."""
    parser = _RaisingParser(add_help=False, allow_abbrev=False, prog="run_recipe.py")
    for flag in flags:
        kwargs: dict[str, Any] = {"required": flag.required}
        if flag.dest:
            kwargs["dest"] = flag.dest
        if flag.action in {"store_true", "store_false", "count"}:
            kwargs["action"] = flag.action
        else:
            if flag.action in {"append", "extend"}:
                kwargs["action"] = flag.action
            convert = _TYPES.get(flag.type or "str", str)
            kwargs["type"] = convert
            if flag.choices:
                kwargs["choices"] = [convert(c) for c in flag.choices]
            if flag.nargs is not None:
                kwargs["nargs"] = flag.nargs
        try:
            parser.add_argument(*flag.names, **kwargs)
        except (argparse.ArgumentError, ValueError, TypeError):
            continue  # a duplicate or unusual spec must not hide the other flags
    return parser


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # e.g. the command sits inside bash -c "..." and the quote closes on a later line
        return line.replace('"', " ").replace("'", " ").split()


def launcher_argv(command: str, script: str) -> list[list[str]]:
    """The arguments after each occurrence of `script` (e.g. run_recipe.py), one list per invocation."""
    basename = script.rsplit("/", 1)[-1]
    found: list[list[str]] = []
    for line in _logical_lines(command):
        if basename not in line:
            continue
        tokens = _split(line)
        for i, token in enumerate(tokens):
            if basename in token and any(c.isspace() for c in token):  # bash -c "... run_recipe.py ..."
                found.extend(launcher_argv(token, script))
                break
            if token.rstrip("\"'").endswith(basename):
                argv: list[str] = []
                for tok in tokens[i + 1 :]:
                    if tok in _SHELL_SEPARATORS or tok.startswith(("#", ">", "2>")):
                        break
                    argv.append(tok.strip("\"'"))
                found.append([a for a in argv if a])
                break
    return found


@dataclass
class CommandCheck:
    kind: str
    valid: bool
    detail: str = ""


def _recipe_mode(recipe: str) -> str | None:
    """The v0.6.0+ public mode a conventional recipe name implies (upstream infer_recipe_mode)."""
    if "pretrain" in recipe:
        return "pretrain"
    if "peft" in recipe:
        return "lora"
    if "sft" in recipe or "finetune" in recipe:
        return "sft"
    return None


def _launcher_semantics(args: argparse.Namespace, facts: VersionFacts) -> str | None:
    """Checks run_recipe.py makes right after parsing: a recipe is selected; mode and dataset preset agree."""
    recipe = getattr(args, "recipe", None)
    if "--recipe" in facts.flag_names and not (recipe or getattr(args, "model", None)):
        return "no --recipe (or --model) given"
    mode_flag = next((f for f in facts.launcher_flags if "--mode" in f.names), None)
    dataset = getattr(args, "dataset", None)
    if mode_flag is None or "sft" not in (mode_flag.choices or []) or not dataset:
        return None  # before v0.6.0 the dataset decides the training loop, so any pairing runs
    mode = getattr(args, "mode", None) or (_recipe_mode(recipe) if recipe else None)
    modes = dict(facts.preset_modes).get(dataset)
    if mode and modes and mode not in modes:
        return f"Mode '{mode}' is incompatible with dataset '{dataset}'."
    return None


def check_command(kind: str, command: str, facts: VersionFacts) -> CommandCheck | None:
    """Parse one command with the version's launcher; None when it does not call a launcher we know."""
    for script, flags in (
        (facts.launcher_script, facts.launcher_flags),
        (facts.benchmark_script, facts.benchmark_flags),
    ):
        if not script or not flags:
            continue
        invocations = launcher_argv(command, script)
        if not invocations:
            continue
        parser = build_launcher_parser(flags)
        for argv in invocations:
            try:
                args, rest = parser.parse_known_args(argv)
            except LauncherParseError as error:
                return CommandCheck(kind, False, f"{script}: {error}")
            bad = [a for a in rest if a.startswith("-") or "=" not in a]
            if bad:
                return CommandCheck(kind, False, f"{script}: not a flag of this version or KEY=VALUE: {bad}")
            if script == facts.launcher_script and (problem := _launcher_semantics(args, facts)):
                return CommandCheck(kind, False, f"{script}: {problem}")
        return CommandCheck(kind, True)
    if facts.launcher_script and "run_recipe.py" in command and not facts.launcher_flags:
        return CommandCheck(kind, False, "this version's catalog has no run_recipe.py flags")
    if facts.launcher_script is None and "run_recipe.py" in command:
        return CommandCheck(kind, False, f"run_recipe.py does not exist in {facts.version}")
    return None


# ---------------------------------------------------------------- invented identifiers


def command_blocks(answer: Answer) -> list[str]:
    """What the answer offers to run: its command fields and the fenced code blocks of its Markdown."""
    return [v for _, v in command_texts(answer)] + _FENCE_RE.findall(answer.answer_markdown)


def _version_key(version: str, *, upper: bool = False) -> tuple[int, int, int]:
    """Order releases; `main` is newest; a patch `x` is the lowest patch, or the highest as an upper bound."""
    if version == "main":
        return (999, 0, 0)
    parts = [(999 if upper else 0) if p == "x" else int(p) for p in version.split(".")]
    return tuple((parts + [999 if upper else 0] * 3)[:3])  # type: ignore[return-value]


def _label_covers(match: re.Match[str], version: str) -> bool:
    low, plus, high = match.group("low"), match.group("plus"), match.group("high")
    key = _version_key(version)
    if plus:
        return key >= _version_key(low)
    return _version_key(low) <= key <= _version_key(high or low, upper=True)


def _judged_lines(blocks: list[str], facts: VersionFacts) -> str:
    """Command lines we can judge: not our own CLI, not a benchmark launcher whose flags are unknown, and not
    lines under a comment that labels them for another release (`# v0.4.x-v0.5.1` in a quoted guide block)."""
    skip = ["autorecipe "]
    if facts.benchmark_script and not facts.benchmark_flags:
        skip.append(facts.benchmark_script.rsplit("/", 1)[-1])
    judged: list[str] = []
    for block in blocks:
        in_scope = True
        for line in _logical_lines(block):
            if label := _RELEASE_LABEL_RE.match(line):
                in_scope = _label_covers(label, facts.version)
            elif in_scope and not any(s in line for s in skip):
                judged.append(line)
    return "\n".join(judged)


def invented_identifiers(answer: Answer, facts: VersionFacts, user_text: str = "") -> list[str]:
    """Recipe names, launcher flags and dataset presets in the answer that the version does not have.

    Recipe names count anywhere in the answer; flags and `--dataset` values only in what it offers to run
    (prose may quote another release's table). Identifiers the user typed are not counted.
    """
    invented: list[str] = []
    names = {m.group(0) for m in _CONFIG_NAME_RE.finditer(answer_text(answer, include_follow_up=True))}
    if answer.recipe is not None:
        names.add(answer.recipe.name)
    for name in sorted(names):
        if name in facts.recipe_names or name.lower() in NON_RECIPE_CONFIG_NAMES or name in user_text:
            continue
        invented.append(f"recipe:{name}")
    commands = _judged_lines(command_blocks(answer), facts)
    allowed_flags = facts.flag_names | EXTERNAL_LAUNCHER_FLAGS
    for flag in sorted({m.group(0) for m in _LONG_FLAG_RE.finditer(commands)}):
        if flag not in allowed_flags and flag not in user_text:
            invented.append(f"flag:{flag}")
    presets = {m.group(1) for m in _DATASET_ARG_RE.finditer(commands)}
    if answer.dataset:
        presets.add(answer.dataset)
    for preset in sorted(presets):
        if preset not in facts.dataset_presets and preset not in user_text:
            invented.append(f"dataset:{preset}")
    return invented


# ---------------------------------------------------------------- slots read back from an answer


def command_texts(answer: Answer) -> list[tuple[str, str]]:
    """Every launch command the answer gives, its LoRA alternative's included (each must parse)."""
    alternative = answer.estimate.peft_alternative if answer.estimate else None
    extra = alternative.commands.model_dump() if alternative else {}
    return [(k, v) for k, v in answer.commands.model_dump().items() if v] + [
        (f"peft_alternative.{k}", v) for k, v in extra.items() if v
    ]


def answer_text(answer: Answer, *, include_follow_up: bool) -> str:
    parts = [answer.answer_markdown, *(v for _, v in command_texts(answer))]
    if include_follow_up:
        parts.extend(answer.follow_up)
    return "\n".join(parts)


def answered_launch_shape(answer: Answer) -> tuple[int | None, int | None]:
    """(nproc_per_node, nnodes) as the answer's commands state them, else as its plan implies. When the
    answer gives no command of its own but a LoRA alternative that fits the user's GPUs, that one counts."""
    cmds = answer.commands
    alternative = answer.estimate.peft_alternative if answer.estimate else None
    if not (cmds.torchrun or cmds.multinode or cmds.slurm) and alternative:
        cmds = alternative.commands
    nproc: int | None = None
    for text in (cmds.torchrun, cmds.multinode, cmds.slurm):
        if text and (m := _NPROC_RE.search(text)):
            nproc = int(m.group(1))
            break
    nnodes: int | None = None
    m = (_NNODES_RE.search(cmds.multinode) if cmds.multinode else None) or (
        _SBATCH_NODES_RE.search(cmds.slurm) if cmds.slurm else None
    )
    if m:
        nnodes = int(m.group(1))
    num_gpus = answer.plan.num_gpus if answer.plan else None
    if nproc is None and isinstance(num_gpus, int):
        nproc = min(num_gpus, answer.slots.gpus_per_node or 8)
    if nnodes is None:
        if isinstance(num_gpus, int) and nproc:
            nnodes = max(1, -(-num_gpus // nproc))
        elif cmds.torchrun:
            nnodes = 1
    return nproc, nnodes


def recipe_names_of(answer: Answer) -> set[str]:
    if answer.recipe is None:
        return set()
    return {answer.recipe.name, answer.recipe.canonical, *answer.recipe.aliases}


# ---------------------------------------------------------------- scoring one row


class RowScore(BaseModel):
    id: str
    lang: str
    version: str
    category: str
    question: str
    recipe_ok: bool | None = None
    slots: dict[str, bool] = Field(default_factory=dict)
    commands: list[dict[str, Any]] = Field(default_factory=list)
    must_include_total: int = 0
    must_include_missing: list[str] = Field(default_factory=list)
    must_not_hits: list[str] = Field(default_factory=list)
    invented: list[str] = Field(default_factory=list)
    citations: int = 0
    citation_expected: bool = False
    sources_cited: float | None = None
    latency_ms: float | None = None
    error: str | None = None
    got: dict[str, Any] = Field(default_factory=dict)
    judge: dict[str, float] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return (
            self.error is None
            and self.recipe_ok is not False
            and all(self.slots.values())
            and all(c["valid"] for c in self.commands)
            and not self.must_include_missing
            and not self.must_not_hits
            and not self.invented
            and (self.citations > 0 or not self.citation_expected)
        )

    def failures(self) -> list[str]:
        out: list[str] = []
        if self.error:
            out.append(f"error: {self.error}")
        if self.recipe_ok is False:
            out.append(f"recipe: got {self.got.get('recipe')!r}")
        out += [f"{k}: got {self.got.get(k)!r}" for k, ok in self.slots.items() if not ok]
        out += [f"invalid {c['kind']} command: {c['detail']}" for c in self.commands if not c["valid"]]
        out += [f"missing /{p}/" for p in self.must_include_missing]
        out += [f"forbidden /{p}/ present" for p in self.must_not_hits]
        out += [f"invented {i}" for i in self.invented]
        if self.citation_expected and self.citations == 0:
            out.append("no citation")
        return out


def _matches(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE | re.MULTILINE) is not None


def _expects_citation(row: GoldenRow) -> bool:
    """A recommendation or a question with known sources must cite; declines and bare facts need not."""
    return bool(row.expected.recipes or row.expected.expected_sources)


def score_row(
    row: GoldenRow,
    answer: Answer | None,
    facts: VersionFacts,
    *,
    latency_ms: float | None = None,
    error: str | None = None,
) -> RowScore:
    exp = row.expected
    score = RowScore(
        id=row.id,
        lang=row.lang,
        version=row.version,
        category=row.category,
        question=row.question,
        latency_ms=latency_ms,
        citation_expected=_expects_citation(row),
        must_include_total=len(exp.must_include),
    )
    if answer is None:
        score.error = error or "no answer"
        score.recipe_ok = False if exp.recipes is not None else None
        score.slots = {k: False for k in _expected_slot_keys(exp)}
        score.must_include_missing = list(exp.must_include)
        return score

    nproc, nnodes = answered_launch_shape(answer)
    score.got = {
        "recipe": answer.recipe.name if answer.recipe else None,
        "dataset": answer.dataset,
        "nproc_per_node": nproc,
        "nnodes": nnodes,
        "intent": answer.intent,
        "findings": [f.id for f in answer.findings],
    }
    if exp.recipes is not None:
        names = recipe_names_of(answer)
        score.recipe_ok = (not names) if not exp.recipes else bool(names & set(exp.recipes))
    if exp.dataset is not None:
        accepted = [exp.dataset] if isinstance(exp.dataset, str) else exp.dataset
        score.slots["dataset"] = answer.dataset in accepted
    if exp.nproc_per_node is not None:
        score.slots["nproc_per_node"] = nproc == exp.nproc_per_node
    if exp.nnodes is not None:
        score.slots["nnodes"] = nnodes == exp.nnodes
    if exp.intent is not None:
        score.slots["intent"] = answer.intent == exp.intent
    if exp.findings:
        finding_texts = [f"{f.id}\n{f.message}\n{f.message_zh}" for f in answer.findings]
        score.slots["findings"] = all(any(_matches(p, t) for t in finding_texts) for p in exp.findings)

    for kind, text in command_texts(answer):
        check = check_command(kind, text, facts)
        if check is not None:
            score.commands.append({"kind": check.kind, "valid": check.valid, "detail": check.detail})

    include_text = answer_text(answer, include_follow_up=True)
    score.must_include_missing = [p for p in exp.must_include if not _matches(p, include_text)]
    exclude_text = answer_text(answer, include_follow_up=False)
    score.must_not_hits = [p for p in exp.must_not_include if _matches(p, exclude_text)]
    score.invented = invented_identifiers(answer, facts, user_text="\n".join([*row.turns, row.question]))

    score.citations = len(answer.citations)
    if exp.expected_sources:
        cited = {normalise_source(c.source) for c in answer.citations}
        wanted = {normalise_source(s) for s in exp.expected_sources}
        score.sources_cited = len(cited & wanted) / len(wanted)
    return score


def _expected_slot_keys(exp: Expected) -> list[str]:
    keys = [k for k in ("dataset", "nproc_per_node", "nnodes", "intent") if getattr(exp, k) is not None]
    return keys + (["findings"] if exp.findings else [])


# ---------------------------------------------------------------- retrieval


def normalise_source(source: str) -> str:
    return _GUIDE_PREFIX_RE.sub("", source.strip())


def rank_of_first_hit(expected_sources: Sequence[str], hit_sources: Sequence[str]) -> int | None:
    wanted = {normalise_source(s) for s in expected_sources}
    for rank, source in enumerate(hit_sources, start=1):
        if normalise_source(source) in wanted:
            return rank
    return None


class RetrievalScore(BaseModel):
    id: str
    query: str
    lang: str | None
    expected_sources: list[str]
    hits: list[str]
    rank: int | None
    origin: str  # "retrieval" (retrieval.jsonl) or "qa" (a golden row's expected_sources)


# ---------------------------------------------------------------- aggregation


def _rate(values: Iterable[bool]) -> float | None:
    vals = list(values)
    return round(sum(vals) / len(vals), 4) if vals else None


def _grouped(scores: Sequence[RowScore], key: str, value) -> dict[str, float | None]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for s in scores:
        v = value(s)
        if v is not None:
            groups[getattr(s, key)].append(v)
    return {k: _rate(vs) for k, vs in sorted(groups.items())}


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 1)
    return round(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1], 1)


@dataclass
class Gate:
    name: str
    value: float | int | None
    threshold: str
    ok: bool


@dataclass
class Summary:
    data: dict[str, Any]
    gates: list[Gate] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.gates)


def summarize(
    scores: Sequence[RowScore],
    retrieval: Sequence[RetrievalScore] | None,
    thresholds: Thresholds = THRESHOLDS,
) -> Summary:
    """All metrics of one run plus the pass/fail of each CI gate."""
    recipe = lambda s: s.recipe_ok  # noqa: E731
    slot_pairs = [(s, ok) for s in scores for ok in s.slots.values()]
    slot_groups: dict[str, dict[str, list[bool]]] = {"lang": defaultdict(list), "version": defaultdict(list)}
    for s, ok in slot_pairs:
        slot_groups["lang"][s.lang].append(ok)
        slot_groups["version"][s.version].append(ok)
    commands = [c for s in scores for c in s.commands]
    invented = [f"{s.id}: {i}" for s in scores for i in s.invented]
    latencies = [s.latency_ms for s in scores if s.latency_ms is not None]
    ranks = [r.rank for r in retrieval or []]
    data: dict[str, Any] = {
        "rows": len(scores),
        "rows_passed": sum(s.passed for s in scores),
        "pass_rate": _rate(s.passed for s in scores),
        "rows_by": {k: dict(sorted(_count(scores, k).items())) for k in ("lang", "version", "category")},
        "recipe_accuracy": {
            "overall": _rate(s.recipe_ok for s in scores if s.recipe_ok is not None),
            "by_lang": _grouped(scores, "lang", recipe),
            "by_version": _grouped(scores, "version", recipe),
            "by_category": _grouped(scores, "category", recipe),
            "rows": sum(s.recipe_ok is not None for s in scores),
        },
        "slot_accuracy": {
            "overall": _rate(ok for _, ok in slot_pairs),
            "by_lang": {k: _rate(v) for k, v in sorted(slot_groups["lang"].items())},
            "by_version": {k: _rate(v) for k, v in sorted(slot_groups["version"].items())},
            "by_slot": _slot_breakdown(scores),
        },
        "pass_rate_by_category_lang": _category_lang(scores),
        "command_validity": {
            "rate": _rate(c["valid"] for c in commands),
            "checked": len(commands),
            "invalid": sum(not c["valid"] for c in commands),
        },
        "must_include": {
            "coverage": _rate(
                [True] * sum(s.must_include_total - len(s.must_include_missing) for s in scores)
                + [False] * sum(len(s.must_include_missing) for s in scores)
            ),
            "patterns": sum(s.must_include_total for s in scores),
        },
        "must_not_violations": sum(len(s.must_not_hits) for s in scores),
        "invented_identifiers": {"count": len(invented), "items": invented},
        "citations": {
            "presence": _rate(s.citations > 0 for s in scores if s.citation_expected),
            "expected_sources_cited": _mean(s.sources_cited for s in scores),
        },
        "retrieval": {
            "queries": len(ranks),
            "recall_at_5": _rate(r is not None and r <= 5 for r in ranks),
            "mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 4) if ranks else None,
            "by_origin": {
                o: _rate(r.rank is not None and r.rank <= 5 for r in retrieval or [] if r.origin == o)
                for o in sorted({r.origin for r in retrieval or []})
            },
        },
        "latency_ms": {
            "p50": _percentile(latencies, 50),
            "p95": _percentile(latencies, 95),
            "n": len(latencies),
        },
        "errors": sum(s.error is not None for s in scores),
    }
    judge_keys = sorted({k for s in scores for k in s.judge})
    if judge_keys:
        data["llm_judge"] = {k: _mean(s.judge.get(k) for s in scores) for k in judge_keys}
    summary = Summary(data=data, gates=gates(data, thresholds, retrieval_ran=retrieval is not None))
    summary.data["gates"] = [g.__dict__ for g in summary.gates]
    summary.data["ok"] = summary.ok
    return summary


def gates(data: dict[str, Any], t: Thresholds, *, retrieval_ran: bool) -> list[Gate]:
    """One gate per language that has recipe rows (a run with none fails), then the three global gates."""
    out: list[Gate] = []
    by_lang = data["recipe_accuracy"]["by_lang"]
    for lang in by_lang or {"any": None}:
        value = by_lang.get(lang)
        out.append(
            Gate(
                f"recipe_accuracy[{lang}]",
                value,
                f">= {t.recipe_accuracy_per_language}",
                value is not None and value >= t.recipe_accuracy_per_language,
            )
        )
    count = data["invented_identifiers"]["count"]
    out.append(
        Gate(
            "invented_identifiers",
            count,
            f"<= {t.max_invented_identifiers}",
            count <= t.max_invented_identifiers,
        )
    )
    recall = data["retrieval"]["recall_at_5"]
    out.append(
        Gate(
            "retrieval_recall@5",
            recall if retrieval_ran else None,
            f">= {t.retrieval_recall_at_5}",
            retrieval_ran and recall is not None and recall >= t.retrieval_recall_at_5,
        )
    )
    validity = data["command_validity"]["rate"]
    out.append(
        Gate(
            "command_validity",
            validity,
            f">= {t.command_validity}",
            validity is not None and validity >= t.command_validity,
        )
    )
    return out


def _count(scores: Sequence[RowScore], key: str) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for s in scores:
        counts[getattr(s, key)] += 1
    return counts


def _slot_breakdown(scores: Sequence[RowScore]) -> dict[str, float | None]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for s in scores:
        for k, ok in s.slots.items():
            groups[k].append(ok)
    return {k: _rate(v) for k, v in sorted(groups.items())}


def _category_lang(scores: Sequence[RowScore]) -> dict[str, dict[str, float | None]]:
    groups: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for s in scores:
        groups[s.category][s.lang].append(s.passed)
    return {c: {lang: _rate(v) for lang, v in sorted(by.items())} for c, by in sorted(groups.items())}


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None
