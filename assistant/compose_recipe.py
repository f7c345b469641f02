"""What an answer says about how a recipe is called and where it runs: the call a goal needs (and the
launcher flags that make it), the values upstream's helpers set per GPU, and a name the launcher cannot
reach. Identifiers and values come from the catalog record; only the sentences live here."""

from __future__ import annotations

import json

from assistant.catalog import gpu_dependent_values, resolve_recipe, variant_for
from assistant.errors import UserError
from assistant.messages import msg, words
from assistant.records import EnvValue, RecipeRecord, gpu_label


def _call(record: RecipeRecord, call: dict) -> str:
    args = ", ".join(f"{key}={value!r}" for key, value in call.items())
    return f"`{record.name}({args})`"


def _variant_line(record: RecipeRecord, lang: str) -> str | None:
    variant = variant_for(record, record.mode)
    if variant is None or not variant.call:
        return None
    call = _call(record, variant.call)
    flags = " ".join(variant.launcher_args)
    goal = msg("recipe_call.goal.sft" if variant.mode == "sft" else "recipe_call.goal.lora")
    how = (
        msg("recipe_call.launcher_default")
        if variant.launcher_default
        else (msg("recipe_call.with_flags", flags=flags) if flags else "")
    )
    return words(lang, "recipe_call", call=call, goal=goal, how=how)


def _gpu_line(path: str, value: EnvValue, here: object, gpu_type: str | None, lang: str) -> str:
    source = f"`{value.source.path}:{value.source.line}`"
    grouped: dict[str, list[str]] = {}
    for gpu, other in value.by_gpu.items():
        if other != here or not (gpu_type and gpu_type in value.by_gpu):
            grouped.setdefault(json.dumps(other), []).append(gpu_label(gpu))
    others = words(lang, "gpu_values.separator").join(
        words(lang, "gpu_values.other", shown=shown, gpus=words(lang, "gpu_values.gpu_separator").join(gpus))
        for shown, gpus in grouped.items()
    )
    if gpu_type and gpu_type in value.by_gpu:
        gpu, shown = gpu_label(gpu_type), json.dumps(here)
        return words(
            lang,
            "gpu_values.yours",
            gpu=gpu,
            path=path,
            shown=shown,
            rule=value.rule,
            source=source,
            others=others,
        )
    return words(lang, "gpu_values.depends", path=path, rule=value.rule, source=source, others=others)


def _exported_twin(record: RecipeRecord) -> str | None:
    """The exported name bound to the same function (gpt3_175b_pretrain_config -> its hardware name)."""
    if record.canonical == record.name:
        return None
    try:
        twin = resolve_recipe(record.canonical, version=record.version, kind=record.kind)
    except UserError:
        return None
    return twin.name if twin.reachable else None


def _unreachable_line(record: RecipeRecord, lang: str) -> str:
    reason = record.unreachable_reason or ""
    twin = _exported_twin(record)
    advice = msg("unreachable.twin", twin=twin) if twin else msg("unreachable.own_script")
    return words(lang, "unreachable", name=record.name, reason=reason, advice=advice)


def recipe_call_lines(record: RecipeRecord, gpu_type: str | None, lang: str) -> list[str]:
    lines = [line for line in (_variant_line(record, lang),) if line]
    lines += [_gpu_line(p, v, here, gpu_type, lang) for p, v, here in gpu_dependent_values(record, gpu_type)]
    if not record.reachable:
        lines.append(_unreachable_line(record, lang))
    return lines
