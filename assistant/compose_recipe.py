"""What an answer says about how a recipe is called and where it runs: the call a goal needs (and the
launcher flags that make it), the values upstream's helpers set per GPU, and a name the launcher cannot
reach. Identifiers and values come from the catalog record; only the sentences live here."""

from __future__ import annotations

import json

from assistant.catalog import gpu_dependent_values, resolve_recipe, variant_for
from assistant.errors import UserError
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
    if lang == "zh":
        goal = "全参数 SFT" if variant.mode == "sft" else "LoRA"
        how = (
            "；不加 `--peft_scheme` 时 run_recipe.py 即如此调用"
            if variant.launcher_default
            else (f"；run_recipe.py 需加 `{flags}` 才如此调用" if flags else "")
        )
        return f"按 {call} 调用（{goal}）{how}。"
    goal = "full SFT" if variant.mode == "sft" else "LoRA"
    how = (
        "; run_recipe.py makes this call when no `--peft_scheme` is given"
        if variant.launcher_default
        else (f"; run_recipe.py makes this call with `{flags}`" if flags else "")
    )
    return f"Called as {call} ({goal}){how}."


def _gpu_line(path: str, value: EnvValue, here: object, gpu_type: str | None, lang: str) -> str:
    source = f"`{value.source.path}:{value.source.line}`"
    grouped: dict[str, list[str]] = {}
    for gpu, other in value.by_gpu.items():
        if other != here or not (gpu_type and gpu_type in value.by_gpu):
            grouped.setdefault(json.dumps(other), []).append(gpu_label(gpu))
    if lang == "zh":
        others = "；".join(f"{shown}（{'、'.join(gpus)}）" for shown, gpus in grouped.items())
    else:
        others = "; ".join(f"{shown} ({', '.join(gpus)})" for shown, gpus in grouped.items())
    if gpu_type and gpu_type in value.by_gpu:
        gpu, shown = gpu_label(gpu_type), json.dumps(here)
        if lang == "zh":
            return (
                f"在你的 {gpu} 上，`{path}` 为 {shown}：由 `{value.rule}` 按 GPU 类型设置（{source}）；"
                f"其他 GPU：{others}。"
            )
        return (
            f"On your {gpu}, `{path}` is {shown}: `{value.rule}` sets it per GPU ({source}); "
            f"other GPUs: {others}."
        )
    if lang == "zh":
        return f"`{path}` 的取值取决于 GPU 类型，由 `{value.rule}` 设置（{source}）：{others}。"
    return f"`{path}` depends on the GPU, set by `{value.rule}` ({source}): {others}."


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
    if lang == "zh":
        advice = (
            f"同一函数以 `{twin}` 导出，请用这个名字启动。"
            if twin
            else "请在自己的脚本中调用该函数，或改用已导出的配方。"
        )
        return f"⚠️ 此版本的启动脚本无法启动 `{record.name}`：{reason}。{advice}"
    advice = (
        f"The same function is exported as `{twin}`: launch that name."
        if twin
        else "Call the function from your own script, or pick an exported recipe."
    )
    return f"⚠️ `{record.name}` cannot be launched with this version's launcher: {reason}. {advice}"


def recipe_call_lines(record: RecipeRecord, gpu_type: str | None, lang: str) -> list[str]:
    lines = [line for line in (_variant_line(record, lang),) if line]
    lines += [_gpu_line(p, v, here, gpu_type, lang) for p, v, here in gpu_dependent_values(record, gpu_type)]
    if not record.reachable:
        lines.append(_unreachable_line(record, lang))
    return lines
