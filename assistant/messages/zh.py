"""中文消息（Chinese messages), by key; the same keys and placeholders as `en.py`."""

MESSAGES: dict[str, str] = {
    "service.decline": (
        "我负责帮助启动 Megatron-Bridge 训练：选择配方、给出对应版本的启动命令、"
        "按你的 GPU 调整并行度，以及排查启动报错。这个问题超出了我的范围。可以这样问："
        "\n{examples}"
    ),
    "service.unknown_model": (
        "Megatron-Bridge {version} 中没有 **{named}** 的配方，"
        "我不会臆造配方名。请告诉我它的 Hugging Face 模型 ID，"
        "或提供它的 `config.json`（本地路径），我可以选择结构相近模型的配方，"
        "并按你的 GPU 调整并行度。"
    ),
    "service.validate_answer": (
        "`{name}` 加上你的覆盖项、在 {num_gpus} 张 GPU 上，对 Megatron-Bridge {version} **{verdict}**。"
    ),
    "service.compare_answer": "| 版本 | 配方 | 并行布局 | 数据集预设 |",
    "service.conversation_context": "对于 `{name}`（Megatron-Bridge {version}）：数据集预设 {preset}。",
    "service.no_quick_pick": "Megatron-Bridge {version} 没有用于{what}的配方。包含此类配方的版本：{listed}。",
    "service.ask_cases": "你的问题列出了 {len_cases} 种情况，下面逐一回答。",
    "service.unknown_model.2": (
        "Megatron-Bridge {version} 中没有 **{hf_model_id}*"
        "* 的配方，而且这里内置的模型配置中也没有它的结构，离线时无法匹配结构相近的配方。"
        "请告诉我它基于哪个模型（例如 Llama 3 8B），我会从该模型的配方出发，"
        "并按你的 GPU 调整。"
    ),
    "service.unknown_model.3": "该系列有配方的模型：{listed}。",
    "service.passages_answer": "知识库中没有找到相关内容。请说明模型、配置项，或粘贴完整的报错原文。",
    "service.validate_answer.2": (
        "你没有说明 GPU 数量；TP·PP·CP = {model_parallel}，"
        "GPU 数须为 {model_parallel} 的倍数，这里按 {count} 张检查。"
    ),
    "service.conversation_context.2": "无 --dataset 参数",
    "service.ask": "请告诉我模型、GPU（数量和型号）以及训练目标（预训练、SFT 或 LoRA）。",
    "service.validate_answer.3": "它能通过 Megatron 的检查，但按显存估算在这些 GPU 上**放不下**。",
    "service.quick_preface": "你没有说明 GPU：以下假设为 {num_gpus} 张 {gpu}。",
    "service.quick_preface.2": (
        "按默认设置该配方在这些 GPU 上放不下，因此冒烟测试保留该配方、缩短运行："
        "序列长度 {seq}，{changed}。这些改动会改变训练内容，只用于验证安装。"
    ),
    "service.ask.2": "这个请求中有一部分无法使用：",
    "service.answer_from": (
        "⚠️ Megatron-Bridge {version} 没有 **{named}** 的配"
        "方。这里给出结构最相近的配方 `{name}`，并按你的模型调整了并行度："
        "它构建的是它自己的模型，请把它的并行布局和批大小作为起点，训练前把模型和检查点换成你自己的。"
    ),
    "service.answer_from.2": "单张 GPU 只能运行 PEFT 配方，因此这里给出该模型的 LoRA 配方。",
    "service.answer_from.3": (
        "⚠️ 这是**基准测试**配方：使用模拟数据、固定步数测量吞吐上限，不是生产训练配方。"
    ),
    "service.answer_from.4": "你没有说明 GPU 数量，以下按配方的 {num_gpus} 张计算。",
    "service.ask.3": "{model_text} 有配方的型号：{listed}。",
    "service.answer_from.5": "选择的是验证 GPU 数最接近你的变体（{count} 张）；未选用：{listed}。",
    "service.answer_from.6": "该变体在 {count} 张 GPU 上验证；其他 GPU 数对应的变体：{listed}。",
    "compose.peak_with_room": (
        "约 {peak}，可用 {usable}，偏紧：只剩 {left:.1%}，低于建议保留的 {HEADROOM:.0%}"
    ),
    "compose.commands_section": "——使用能放下的布局（{layout}），而非上面的方案",
    "compose.fit_section": "无法判断（{note}）",
    "compose.peak_with_room.2": "约 {peak}，可用 {usable}",
    "compose.fit_section.2": (
        "{verdict} —— 每张 GPU 约 {need}，可用 {usable}，"
        "在估算的典型误差之内，两种结果都可能：请关注前几步的显存"
    ),
    "compose.layout_in_words": "重计算 {recompute}",
    "compose.layout_in_words.2": "CPU 卸载 {offload_layers} 层激活",
    "compose.speed_diagnosis_lines": (
        "在这些 GPU 上，搜索找不到按估计快 {CLEARLY_FASTER:.0%} 以上的布局"
        "；改并行前先检查数据加载、日志与 checkpoint 间隔，"
        "以及性能设置（CUDA graph、通信重叠）。"
    ),
    "compose.fit_section.3": "可以 —— 每张 GPU 约 {need}，可用 {usable}（余量 {margin}）",
    "compose.fit_section.4": "不够 —— 每张 GPU 约需 {need}，可用 {usable}",
    "compose.speed_diagnosis_lines.2": "这个布局预计会先显存不足，谈不上速度；下面的布局放得下。",
    "compose.speed_diagnosis_lines.3": "这个布局预计会先显存不足，谈不上速度。",
    "compose.fit_section.5": (
        "。该配方的名字标注的正是这些 GPU，上游按原样运行它：估算可能偏高；请关注前几步的显存"
    ),
    "service.verdict.valid": "有效",
    "service.verdict.invalid": "无效",
    "compose.fit_section.tight": "勉强",
    "compose.fit_section.borderline": "临界",
    "section.recipe": "推荐配方",
    "section.alias_of": "它是以下函数的别名：",
    "section.defaults": "配方默认值",
    "section.min_gpus": "至少需要 {n} 张 GPU",
    "section.name_gpus": "函数名中标注在 {n} 张 GPU 上验证",
    "section.name_gpus_library": "函数名中的 {n} 张 GPU 是其布局的最小规模，并非实测运行",
    "section.plan": "在你的 {n} × {gpu} 上的方案",
    "section.no_plan": "在 {n} × {gpu} 上没有合法的并行布局，原因见下方检查结果。",
    "section.launch": "启动命令",
    "section.single": "单机（torchrun）",
    "section.multinode": "多机（每个节点运行 torchrun）",
    "section.slurm": "Slurm（srun 原生方式）",
    "section.benchmark_cmd": "基准测试启动方式",
    "section.overrides": "覆盖项及原因",
    "section.key": "配置项",
    "section.value": "取值",
    "section.class": "类别",
    "section.why": "原因",
    "section.fit": "显存是否够用？",
    "section.findings": "检查结果与常见陷阱",
    "section.fix": "修复",
    "section.upstream": "上游报错原文",
    "section.checklist": "启动前须知",
    "section.sources": "参考来源",
    "section.dataset": "数据集预设",
    "section.no_dataset": "该版本的 run_recipe.py 没有 --dataset 参数，使用配方自带的数据集",
    "section.own_data": "无；预设只用于文本和 VLM 模型，这里使用配方自带的数据配置",
    "section.version": "Megatron-Bridge {v}",
    "match.exact": "模型与训练目标完全匹配",
    "match.seq-variant": "匹配你序列长度的长上下文变体",
    "match.closest-size": "没有 {asked} 的配方；这是同系列中规模最接近的配方，已在下方按你的硬件调整",
    "match.similar-architecture": (
        "该模型没有现成配方；此配方的模型结构相近，下方并行度已按你的模型调整，长时间训练前请先验证"
    ),
    "match.explicit": "你指定的配方",
}
