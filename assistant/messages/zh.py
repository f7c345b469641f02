"""中文消息（Chinese messages), by key; the same keys and placeholders as `en.py`."""

MESSAGES: dict[str, str] = {
    "service.decline": (
        "我负责帮助启动 Megatron-Bridge 训练：选择配方、给出对应版本的启动命令、"
        "按你的 GPU 调整并行度，以及排查启动报错。这个问题超出了我的范围。可以这样问："
        "\n{examples}"
    ),
    "conversation_replies.greeting.models": "\n\n{version} 版本中有配方的模型系列：{listed}。",
    "conversation_replies.greeting": (
        "你好！我帮助你启动 Megatron-Bridge 训练（默认按 {version} 版本回答，也可以指定其他版本）：\n- "
        "选择起始配方：给出模型，或只说目标（第一次冒烟测试、视觉语言模型、扩散模型、MoE）；\n- 按你的 "
        "GPU 给出启动命令、并行度和批大小，并估算显存和速度；\n- 回答某项功能是否支持（序列打包配合 CP、"
        "你的 GPU 能否用 FP8、LoRA），以及启动报错的含义。{models}\n\n可以这样问：\n{examples}"
    ),
    "conversation_replies.greeting.example.1": "用 256 张 H100 从头训练 DeepSeek V3",
    "conversation_replies.greeting.example.2": "我想在 8 张 GPU 上微调一个视觉语言模型",
    "conversation_replies.greeting.example.3": "序列打包能和 CP=2 一起用吗？",
    "conversation_replies.why": "**为什么是 `{name}`：**{reason}。",
    "conversation_replies.why.quick_pick": (
        "- 你没有指定模型，因此采用该版本自身指南为这个目标给出的起始配方。"
    ),
    "conversation_replies.why.validated": (
        "- 它按 {validated} 张 GPU 编写；方案把它映射到你的 {num_gpus} 张上。"
    ),
    "conversation_replies.match.exact": "它是该版本中对应你的模型和目标的配方",
    "conversation_replies.match.seq-variant": "它是你的模型配方中序列长度足够覆盖你要求的变体",
    "conversation_replies.match.closest-size": "该版本没有你这个规模的配方，这是同系列中规模最接近的",
    "conversation_replies.match.similar-architecture": "该版本没有你的模型的配方，这个配方的模型结构最相近",
    "conversation_replies.match.explicit": "你指定了它",
    "service.unknown_model": (
        "Megatron-Bridge {version} 中没有 **{named}** 的配方，"
        "我不会臆造配方名。请告诉我它的 Hugging Face 模型 ID，"
        "或提供它的 `config.json`（本地路径），我可以选择结构相近模型的配方，"
        "并按你的 GPU 调整并行度。"
    ),
    "service.validate.verdict": (
        "`{name}` 加上你的覆盖项、在 {num_gpus} 张 GPU 上，对 Megatron-Bridge {version} **{verdict}**。"
    ),
    "service.compare.header": "| 版本 | 配方 | 并行布局 | 数据集预设 |",
    "service.conversation_context": "对于 `{name}`（Megatron-Bridge {version}）：数据集预设 {preset}。",
    "service.no_quick_pick": "Megatron-Bridge {version} 没有用于{what}的配方。包含此类配方的版本：{listed}。",
    "service.ask_cases": "你的问题列出了 {len_cases} 种情况，下面逐一回答。",
    "service.unknown_model.unknown_architecture": (
        "Megatron-Bridge {version} 中没有 **{hf_model_id}*"
        "* 的配方，而且这里内置的模型配置中也没有它的结构，离线时无法匹配结构相近的配方。"
        "请告诉我它基于哪个模型（例如 Llama 3 8B），我会从该模型的配方出发，"
        "并按你的 GPU 调整。"
    ),
    "service.unknown_model.family": "该系列有配方的模型：{listed}。",
    "service.unknown_model.vendor": "Megatron-Bridge {version} 中有配方的其他 {vendor} 模型：{listed}。",
    "service.unknown_model.vision": "Megatron-Bridge {version} 中有配方的视觉语言模型：{listed}。",
    "service.unknown_model.more": " 等，另有 {count} 个",
    "service.missing_size": (
        "Megatron-Bridge {version} 中没有 **{named}** 的配方：目录里没有这个尺寸的配方。"
        "该系列有配方的尺寸：{listed}。"
    ),
    "service.missing_size.goal": "它们的 {goal} 配方：{listed}。",
    "service.missing_size.same_size": "相关系列中有这个尺寸的配方：{listed}。",
    "service.passages.nothing_found": "知识库中没有找到相关内容。请说明模型、配置项，或粘贴完整的报错原文。",
    "known_causes.kind.cause": "**已知原因**（Megatron-Bridge {version}）：",
    "known_causes.kind.fixed_later": "**后续版本的修复**（针对 Megatron-Bridge {version} 的提问）：",
    "known_causes.kind.capability": "**Megatron-Bridge {version} 提供的内容**：",
    "known_causes.sources": "来源：{sources}",
    "service.validate.assumed_gpus": (
        "你没有说明 GPU 数量；TP·PP·CP = {model_parallel}，"
        "GPU 数须为 {model_parallel} 的倍数，这里按 {count} 张检查。"
    ),
    "service.conversation_context.no_dataset_flag": "无 --dataset 参数",
    "service.ask.what_to_tell": "请告诉我模型、GPU（数量和型号）以及训练目标（预训练、SFT 或 LoRA）。",
    "service.validate.does_not_fit": "它能通过 Megatron 的检查，但按显存估算在这些 GPU 上**放不下**。",
    "service.quick_preface.assumed_gpus": "你没有说明 GPU：以下假设为 {num_gpus} 张 {gpu}。",
    "service.quick_preface.shortened_run": (
        "按默认设置该配方在这些 GPU 上放不下，因此冒烟测试保留该配方、缩短运行："
        "序列长度 {seq}，{changed}。这些改动会改变训练内容，只用于验证安装。"
    ),
    "intent_form.start_from_hf": (
        "**在 Megatron-Bridge {version} 中从 Hugging Face 模型开始训练分两步。** "
        "1. 先把权重转换成 Megatron 检查点（只需一次）：Python 中用 `{call}`（`from megatron.bridge "
        "import AutoBridge`），或命令行 `{cli}`。2. 启动该模型的配方：预训练用 `<model>_pretrain_config`"
        "（微调用 `<model>_sft_config`），并把 `checkpoint.pretrained_checkpoint` 设为转换后的目录。"
        "{example}{accepts}告诉我模型和你的 GPU，我会选出它的配方并规划并行布局。\n\n来源：{sources}"
    ),
    "intent_form.start_from_hf.example": (
        "例如 `{hf_model}` 及其配方 `{name}`，在 torchrun 下：`{launch}`。"
    ),
    "intent_form.start_from_hf.hf_directory": (
        "在 {version} 中，`checkpoint.pretrained_checkpoint` 也接受本地 Hugging Face 模型目录"
        "（含 `config.json` 和权重文件），所以第 1 步可以省略；但不接受 hub id。"
    ),
    "intent_form.start_from_hf.megatron_only": (
        "在 {version} 中，`checkpoint.pretrained_checkpoint` 必须是 Megatron 检查点，所以需要第 1 步；"
        "从 {since} 起才接受本地 Hugging Face 目录。"
    ),
    "intent_form.why_allowed.no_divide": (
        "按你的数字，{mesh} 不能整除 {world} 张卡，初始化时应报错：`{error}`。"
    ),
    "intent_form.why_allowed.experts": "另外 EP 必须整除专家数（{experts}）。",
    "intent_form.why_allowed": (
        "**这是预期行为：EP 不受 DP 限制。** MoE 层使用独立的专家网格 PP × EP × ETP × EDP（EDP："
        "专家数据并行）= 总卡数，与稠密网格 TP × CP × DP × PP 分开。按你的数字：稠密部分 DP = {world} / "
        "(TP {tp} × PP {pp} × CP {cp}) = {dp}；专家部分 PP {pp} × EP {ep} × ETP {etp} = {expert_size} "
        "整除 {world} 张卡，所以 EDP = {edp}。EP 的上限是 PP × EP × ETP 必须整除总卡数。{limit}"
    ),
    "intent_form.conversion.not_needed": (
        "**不需要**转换 HF 权重：{name} 是预训练配方，Megatron-Bridge {version} 中它的默认配置没有设置 "
        "`checkpoint.pretrained_checkpoint`，从随机初始化的权重开始训练。只有从已训练的权重开始（SFT、"
        "LoRA）时，才需要把 HF 权重转换成 Megatron 格式（`AutoBridge.import_ckpt`）。"
    ),
    "intent_form.conversion.unset": "未设置",
    "intent_form.conversion.pretrained": (
        "{name}（{mode}）从 `checkpoint.pretrained_checkpoint` 指向的权重开始（默认值：{value}）。"
        "把它设成要起步的检查点；它接受的格式见本版本的检查点说明。"
    ),
    "intent_form.distributed_import": (
        "**可以。** `{call}` 在一个进程里用 `{builds_on}` 在 CPU 上构建整个模型，"
        "所以大模型需要把全部权重放进主机内存。Megatron-Bridge {version} 里可以改为用 `torchrun` 跨 GPU "
        "转换，按并行切分加载并保存：\n{steps}\n\n示例脚本 `{example}`（参数 {args}）。\n\n来源：{sources}"
    ),
    "intent_form.batch_divisible": (
        "全局批次（global batch size）必须能被 MBS × DP 整除：GBS = MBS × DP × GA，GA（梯度累积步数）"
        "必须是整数；DP = 卡数 / (TP × PP × CP)。否则报错 `{error}`。"
    ),
    "support.status.yes": "**支持**",
    "support.status.partial": "**部分支持**，有条件",
    "support.status.experimental": "**实验性**，尚未开箱即用",
    "support.status.no": "**不支持**",
    "support.status.unknown": "**未知**",
    "support.head": "**{topic}** — Megatron-Bridge {version}：{status}。",
    "support.head.no_before": "**{topic}** — Megatron-Bridge {version}：**不支持**；自 {first} 起提供。",
    "support.head.unknown_before": (
        "**{topic}** — Megatron-Bridge {version}：**未知**（只核实过 {first} 及以后的版本）。"
    ),
    "support.conditions": "{prefix}{body}\n\n来源：{sources}",
    "support.conditions.from": "（{when} 起）",
    "support.conditions.from_status": "（{when} 起：{status}）",
    "support.precision.yes": "是",
    "support.precision.no": "否",
    "support.precision.presets": "本版本的 mixed_precision 预设：{listed}",
    "support.recipes": "Megatron-Bridge {version} 中 {model} 有 {count} 个配方：{shown}{tail}。",
    "support.recipes.more": "等",
    "support.recipes.no_peft": "Megatron-Bridge {version} 中 {model} 没有 PEFT 配方。",
    "support.model": (
        "**{named}** — Megatron-Bridge {version}：**支持**。目录中有 {sizes} 的配方（{modes}），{more}："
        "{shown}。告诉我目标（预训练、SFT 或 LoRA）和 GPU，我就给出启动命令。"
    ),
    "support.model.more": "等 {count} 个",
    "support.model.all": "共 {count} 个",
    "sequence_multiple.line": "**序列长度**：{head} 时，序列长度必须是 {multiple} 的倍数（{reasons}）。",
    "sequence_multiple.head": "CP {cp}、TP {tp}",
    "sequence_multiple.head.sp": "、开启序列并行",
    "sequence_multiple.for_cp": "CP 要求能被 2 × CP = {for_cp} 整除",
    "sequence_multiple.for_sp": (
        "序列并行要求每个 CP rank 上的 S / CP 能被 TP 整除，即 S 能被 CP × TP = {for_sp} 整除"
    ),
    "sequence_multiple.without_sp": "不开启序列并行时只需是 {without_sp} 的倍数。",
    "sequence_multiple.not_multiple": "{seq} 不是 {multiple} 的倍数；最近的可用长度：{near}。",
    "sequence_multiple.sourced": "{line}\n\n来源：{sources}",
    "topic_answer.head.label": "**{label}**（Megatron-Bridge {version}{about}）：",
    "topic_answer.head": "Megatron-Bridge {version}{about}：",
    "topic_answer.about": "，针对 {entity}",
    "topic_answer.line": "{head}{body}。",
    "topic_answer.upstream": "该版本的上游文档：{docs}。",
    "topic_answer.covered": "指南在 `{source}`（{heading}）中介绍了 {listed}。",
    "topic_answer.uncovered": (
        "知识库中没有找到关于 {listed} 的内容（Megatron-Bridge {version}）；请查阅该版本的 {where}。"
    ),
    "override_keys.unknown": "Megatron-Bridge {version} 的配置中没有这些覆盖键：{listed}",
    "override_keys.closest": "{key}（最接近：{hint}）",
    "override_keys.no_similar": "{key}（没有相近的键）",
    "bounds.gpus": "GPU 数量必须在 1 到 {limit:,}（2^20）之间，收到的是 {got:,}",
    "bounds.gpus_per_node": "每个节点的 GPU 数必须在 1 到 {limit:,} 之间，收到的是 {got:,}",
    "bounds.question": (
        "问题长度为 {length:,} 个字符，上限是 {limit:,}。请一次只问一个配置，或只粘贴配置行和报错信息"
    ),
    "bounds.setups": "问题列出了 {count} 个配置，一次最多回答 {limit} 个，请拆开提问",
    "bounds.count_negative": "GPU 或节点数量不能为负数；请直接写出数量，例如 8 张 H100",
    "bounds.count_expression": (
        "请用普通数字写出 GPU 或节点数量（例如 1024 张 H100），不要写成乘方或科学计数法"
    ),
    "bounds.seq_len": "序列长度必须在 1 到 {limit:,}（2^24）之间，收到的是 {got:,}",
    "bounds.top_k": "--top-k 必须在 1 到 {limit} 之间，收到的是 {got}",
    "bounds.tokens": "--tokens 必须是不超过 {limit:.0e} 的正数（token 数），收到的是 {got}",
    "bounds.batch_line_size": "该行有 {size:,} 字节；批处理的一行最多 {limit:,} 字节",
    "bounds.batch_line_utf8": "该行不是 UTF-8 文本（第 {at} 字节处：{reason}）",
    "bounds.batch_line_json": "第 {number} 行不是 JSON（{reason}）",
    "bounds.batch_line_ask_shape": '每行需要 {{"id", "question", "version"}}，且 question 为字符串',
    "bounds.batch_line_estimate_shape": '第 {number} 行应为 {{"id": ..., "args": [...]}}',
    "bounds.batch_nested": "第 {number} 行：--batch 不能嵌套",
    "version_resolve.unknown": (
        "没有内置 Megatron-Bridge {raw} 的配方目录（内置：{listed}）。如需针对你自己的代码，请先运行 "
        "`{index_hint} 代码路径 --version X.Y.Z --out CATALOG_DIR/X.Y.Z.json` 建立目录（CATALOG_DIR "
        "为知识库的 catalogs 文件夹），再指定该版本。"
    ),
    "version_resolve.next_minor": (
        "内置目录中没有已发布的 Megatron-Bridge {normalized}；以下按其开发分支 `main` 回答。"
    ),
    "version_resolve.earlier": (
        "没有内置 Megatron-Bridge {normalized}；以下按最接近的较早内置版本 {earlier} 回答，{normalized} "
        "中的名称和参数可能不同。"
    ),
    "version_resolve.named": (
        "问题中写的是 Megatron-Bridge {named}，而选择的是 {selected}：按问题中的 {version} 回答。"
    ),
    "session.ask": "为了给出合适的配方，请告诉我：{listed}。",
    "session.ask.sep": "；",
    "session.ask.last": "；",
    "session.ask.model": "模型（名称和规模，例如 Qwen3 30B-A3B，或 Hugging Face 模型 ID）",
    "session.ask.goal": "训练目标（预训练、全参 SFT，或 LoRA 等 PEFT）",
    "session.ask.num_gpus": "GPU 数量（多机时请说明几台机器）",
    "session.ask.gpu_type": "GPU 型号（H100、H200、B200、GB200 等）",
    "session.ask.versions": "要对比的两个 Megatron-Bridge 版本（例如 0.5.1 和 0.6.0）",
    "service.ask.unusable_part": "这个请求中有一部分无法使用：",
    "service.answer_from.similar_architecture": (
        "⚠️ Megatron-Bridge {version} 没有 **{named}** 的配"
        "方。这里给出结构最相近的配方 `{name}`，并按你的模型调整了并行度："
        "它构建的是它自己的模型，请把它的并行布局和批大小作为起点，训练前把模型和检查点换成你自己的。"
    ),
    "service.answer_from.single_gpu_lora": "单张 GPU 只能运行 PEFT 配方，因此这里给出该模型的 LoRA 配方。",
    "service.answer_from.benchmark_recipe": (
        "⚠️ 这是**基准测试**配方：使用模拟数据、固定步数测量吞吐上限，不是生产训练配方。"
    ),
    "service.answer_from.no_count_variant": (
        "Megatron-Bridge {version} 没有为 {gpus} 个 GPU 编写的该基准配方变体。"
    ),
    "service.answer_from.weak_scaled": (
        "在 {gpus} 个 GPU 上，{version} 的 `run_recipe.py` 和 `setup_experiment.py` "
        "会对这个基准配方的全局批量做弱扩展：DP {dp_old}（名称中的 {gpus_old} 个 GPU）时的 "
        "GBS {old} 变为 DP {dp} 时的 GBS {new}，每个数据并行 rank 的样本数不变；"
        "计划中显示的就是这个批量。若要保持 GBS {old}，请传入 `train.global_batch_size={old}`"
        "（或 `--global_batch_size {old}`），这会关闭弱扩展，由梯度累积吸收 DP 的变化。"
    ),
    "service.answer_from.precision_variants": (
        "该模型为 {gpu} 编写的 {precision} 基准配方（Megatron-Bridge {version}）：{listed}，"
        "针对模拟数据上的吞吐调优。实际训练请用下面的配方，通过其精度覆盖项以 {precision} 训练。"
    ),
    "service.answer_from.assumed_gpus": "你没有说明 GPU 数量，以下按配方的 {num_gpus} 张计算。",
    "service.ask.model_versions": "{model_text} 有配方的型号：{listed}。",
    "service.ask.family_goal_recipes": (
        "Megatron-Bridge {version} 中 {model_text} 的 {goal} 配方（每个规模一个）：{listed}。"
        "从与你的模型规模对应的那个开始；它们用 `{script}` 启动，而不是每个模型单独的脚本。"
    ),
    "service.answer_from.nearest_variant": (
        "选择的是验证 GPU 数最接近你的变体（{count} 张）；未选用：{listed}。"
    ),
    "service.answer_from.other_variants": "该变体在 {count} 张 GPU 上验证；其他 GPU 数对应的变体：{listed}。",
    "compose.peak.tight": ("约 {peak}，可用 {usable}，偏紧：只剩 {left:.1%}，低于建议保留的 {HEADROOM:.0%}"),
    "compose.launch.layout": "——使用能放下的布局（{layout}），而非上面的方案",
    "compose.fit.unknown": "无法判断（{note}）",
    "compose.peak.room": "约 {peak}，可用 {usable}",
    "compose.fit.within_error": (
        "{verdict} —— 每张 GPU 约 {need}，可用 {usable}，"
        "在估算的典型误差之内，两种结果都可能：请关注前几步的显存"
    ),
    "compose.layout.recompute": "重计算 {recompute}",
    "compose.layout.offload": "CPU 卸载 {offload_layers} 层激活",
    "compose.slow.none_faster": (
        "在这些 GPU 上，搜索找不到按估计快 {CLEARLY_FASTER:.0%} 以上的布局"
        "；改并行前先检查数据加载、日志与 checkpoint 间隔，"
        "以及性能设置（CUDA graph、通信重叠）。"
    ),
    "compose.fit.yes": "可以 —— 每张 GPU 约 {need}，可用 {usable}（余量 {margin}）",
    "compose.fit.no": "不够 —— 每张 GPU 约需 {need}，可用 {usable}",
    "compose.slow.oom_layout_below": "这个布局预计会先显存不足，谈不上速度；下面的布局放得下。",
    "compose.slow.oom": "这个布局预计会先显存不足，谈不上速度。",
    "compose.fit.named_for_these_gpus": (
        "。该配方的名字标注的正是这些 GPU，上游按原样运行它：估算可能偏高；请关注前几步的显存"
    ),
    "service.verdict.valid": "有效",
    "service.verdict.invalid": "无效",
    "compose.fit.verdict.tight": "勉强",
    "compose.fit.verdict.borderline": "临界",
    "section.recipe": "推荐配方",
    "section.alias_of": "它是以下函数的别名：",
    "section.defaults": "配方默认值",
    "section.min_gpus": "至少需要 {n} 张 GPU",
    "section.name_gpus": "函数名中标注在 {n} 张 GPU 上验证",
    "section.name_gpus_library": "函数名中的 {n} 张 GPU 是其布局的最小规模，并非实测运行",
    "section.name_gpus_library_sized": (
        "函数名中的 {n} 张 GPU 是它编写时针对的规模，不是其布局的最小规模，也并非实测运行"
    ),
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
    "precision-gpu": (
        "{name} 需要 {generations} 架构的张量核心；{gpu}（{value1}）没有，Transformer Engine 启动时就会报错。"
    ),
    "tp-heads": "TP={tp} 不能整除 {heads} 个注意力头，Megatron-Core 会拒绝构建模型。",
    "tp-query-groups": (
        "在 Megatron-Bridge {version} 中，"
        "{groups} 个 KV 头（num_query_groups）"
        "必须是 {rule}（当前 TP={tp}）。"
    ),
    "tp-mamba": (
        "TP={tp} 不能整除 Mamba 层的 {heads} 个头和 {groups} 个 B/C 组，Megatron-Core 会拒绝构建模型。"
    ),
    "tp-cross-node": (
        "TP={tp} 超出了 {gpu_type} 上一个 NVLink 域的 {domain} "
        "个 GPU，每一层的张量并行 all-reduce 都要跨网络。"
        "请把 TP 限制在单个节点内（GB200/GB300 等 NVL72 系统最多 72）。"
    ),
    "mode-dataset": (
        "在 {version} 中由数据集决定训练流程："
        "{name!r} 会运行 {loop} 流程，而不是 {wanted}。冒烟测试可以，"
        "正式训练不行。"
    ),
    "seq-length-sync": (
        "model.seq_length={model_seq} 与 dataset.seq_length={dataset_seq} 不一致，请同时设置两者。"
    ),
    "energon-mbs": (
        "配方的 Energon 数据集按 micro_batch_size={dataset_mbs} 构建，而 train.micro_batch_size={train_mbs}："
        "两者必须一致；请同时设置 dataset.micro_batch_size。"
    ),
    "vlm-frozen": (
        "该配方冻结了{frozen}（{flags}）：Bridge 关闭了它们的梯度，只有{trained}参与训练，"
        "内存估算也不为被冻结的部分计算梯度和优化器状态。若要一起训练，请覆盖这些开关；"
        "内存会随之增加它们的梯度和优化器状态。"
    ),
    "vlm-frozen.language_model": "语言模型",
    "vlm-frozen.vision_model": "视觉编码器",
    "vlm-frozen.vision_projection": "视觉投影层",
    "vlm-frozen.two": "{first}和{second}",
    "vlm-no-images": (
        "在不含图像的数据集 {dataset!r} 上微调视觉语言模型：训练能跑，但结果没有意义。"
        "请使用多模态数据集预设。"
    ),
    "precision-gpu.kept": (
        "{name} 需要 {generations} 架构的张量核心，{gpu}（{value1}）没有：方案保留配方自带的 {value2}。"
    ),
    "single-gpu-full-training": (
        "单 GPU 上进行 {mode}：全参训练需要为每个参数保存权重、梯度和 Adam 状态；"
        "只有 PEFT（LoRA/DoRA）配方适合单 GPU。"
    ),
    "tp-query-groups.replicated": (
        "TP={tp} 大于 {groups} 个 KV 头："
        "当前 Megatron-Core 会在 TP rank 之间复制 KV 头，可以运行，"
        "但 KV 投影会被重复存储。"
    ),
    "sp-ignored": (
        "TP=1 时设置了 sequence_parallel=True："
        "Megatron-Bridge 会静默关闭 SP（直接使用 Megatron-Core 会报"
        '错 "{SP_WITHOUT_TP}"）。不会出错，但 SP 实际未生效。'
    ),
    "vp-needs-pp": "虚拟流水线（VP={vp}）要求流水线并行度大于 1，当前 PP={pp}。",
    "pp-layers": "PP={pp} 不能整除 {layers} 个 Transformer 层。",
    "pp-uneven": (
        "首尾流水线阶段不均分时，{layers} 层中剩下 {middle} 层分给 {middle_pp} 个中间阶段（PP={pp}），"
        "无法均分，或某阶段层数不能被 VP 整除。"
    ),
    "pp-uneven.mismatch": (
        "按首尾阶段的层数，{layers} 层中剩下 {middle} 层分给 {middle_pp} 个中间阶段（PP={pp}）："
        "两者必须同为零或同不为零。"
    ),
    "pp-layout.stages": (
        "配方的流水线布局有 {stages} 段，PP={pp} 不能整除；该布局是按配方自己的 PP 和 VP 生成的，"
        "{version} 的启动脚本不会为这个配方重建它。"
    ),
    "pp-layout.vp": (
        "配方的流水线布局有 {stages} 段：分到 PP={pp} 上相当于 VP {detected}，而不是 VP={vp}；"
        "该布局是按配方自己的 PP 和 VP 生成的，{version} 的启动脚本不会为这个配方重建它。"
    ),
    "vp-layers": "VP={vp} 不能整除每个流水线阶段（共 {pp} 个）上的 {per_stage} 层。",
    "troubleshoot.pp_layout.vp": (
        "`{name}` 按它自己的 PP {rpp} × VP {rvp} 生成流水线布局（`model.pipeline_model_parallel_layout`），"
        "共 {stages} 段。{launcher}这个 {stages} 段的旧布局保持不变，所以在 PP {pp} 上 Megatron-Core "
        "从中推出 VP {detected}，与你的 VP {vp} 冲突。"
    ),
    "troubleshoot.pp_layout.stages": (
        "`{name}` 按它自己的 PP {rpp} × VP {rvp} 生成流水线布局（`model.pipeline_model_parallel_layout`），"
        "共 {stages} 段。{launcher}这个 {stages} 段的旧布局保持不变，而 PP {pp} 不能整除 {stages} 段。"
    ),
    "troubleshoot.pp_layout.no_builder": (
        "Megatron-Bridge {version} 的 run_recipe.py 在 -pp/-vp 覆盖后只会通过配方注册的布局构建函数重建布局，"
        "而这个配方在 {version} 中没有注册。"
    ),
    "troubleshoot.pp_layout.no_sync": (
        "Megatron-Bridge {version} 的 run_recipe.py 在覆盖参数后不会重建配方的布局。"
    ),
    "troubleshoot.pp_layout.fixed_in": (
        "已在 Megatron-Bridge {later} 中修复：该版本中配方注册了 `{builder}`，run_recipe.py 会按你传入的 "
        "PP 和 VP 重建布局。"
    ),
    "troubleshoot.pp_layout.options_vp": (
        "要么不设置 VP：Megatron-Core 会把这个 {stages} 段的布局按 PP {pp} × VP {detected} 运行；"
        "要么显式传入一个 PP {pp} × VP {vp} = {want} 段的 `model.pipeline_model_parallel_layout`："
        "你传入的布局永远不会被重建。"
    ),
    "troubleshoot.pp_layout.options_stages": (
        "要么换一个能整除 {stages} 段的 PP，要么为你的 PP 显式传入一个 PP × VP 段的 "
        "`model.pipeline_model_parallel_layout`：你传入的布局永远不会被重建。"
    ),
    "troubleshoot.pp_uneven.mismatch": (
        "{layers} 层减去首尾阶段（{edges}）剩 {middle} 层，而 PP {pp} 下只有 {middle_pp} 个中间阶段："
        "Megatron-Core 要求两者同为零或同不为零。"
    ),
    "troubleshoot.pp_uneven.even": (
        "清除配方的首尾阶段层数后，{layers} 层可以均分到 PP {pp}：每段 {per} 层。"
    ),
    "troubleshoot.unsynced": (
        "Megatron-Bridge {version} 的 run_recipe.py 会在覆盖后自行修正这一点（{what}；{source}）。"
        "在此改动之前的代码，或不经过这一步的入口，会保留配方的取值并这样失败："
    ),
    "troubleshoot.unsynced.edge_counts": (
        "当 -pp 覆盖使配方自带的 num_layers_in_first/last_pipeline_stage 不再兼容时将其清除"
    ),
    "troubleshoot.unsynced.layout": "通过 `{builder}` 重建配方的流水线布局",
    "troubleshoot.cause.pp_uneven.vp": "；每个阶段的层数还必须能被 VP {vp} 整除。",
    "troubleshoot.broken_note.fix": "修正后的设置（已由规则模块复查）： `{fix}`。",
    "troubleshoot.cause.pp_layers": (
        "{layers} 层分到 PP {pp} 个流水线阶段，每段 {per} 层；每个阶段的层数必须是整数。"
    ),
    "troubleshoot.cause.pp_layers.hybrid": (
        "该模型是混合层结构，规则模块对不均分只给出警告（层模式可能自行放置各层）；"
        "你引用的报错说明这次运行是按均分处理的，因此这条警告就是原因。请设置首尾阶段的层数，"
        "或选一个能整除的 PP。"
    ),
    "troubleshoot.cause.pp_uneven": (
        "{layers} 层减去首尾阶段（{edges_text}）剩 {middle} 层，分给 {middle_pp} 个中间阶段：每段 {per} "
        "层{vp_text}"
    ),
    "troubleshoot.cause.vp_layers": "每个阶段 {per_stage} 层，分成 VP {vp} 个模型块，每块 {per} 层。",
    "troubleshoot.cause.expert_mesh": (
        "专家网格 PP·EP·ETP = {pp}·{ep}·{etp} = {size}，而 {world} 张 GPU 不是 {size} 的倍数。"
    ),
    "troubleshoot.cause.dense_mesh": (
        "TP·PP·CP = {tp}·{pp}·{cp} = {size}，而 {world} 张 GPU 不是 {size} 的倍数。"
    ),
    "troubleshoot.cause.batch": (
        "GBS {gbs} 除以 MBS {mbs} × DP {dp} = {step}，每个 rank 得到 {per} 个 micro-batch。"
    ),
    "troubleshoot.no_config": (
        "无法确定这次运行用的配方和 GPU 数量，因此没有在你的配置上检查这个报错。请说明配方（或模型）和 "
        "GPU，以便逐项检查。"
    ),
    "troubleshoot.checked": "**按你的配置检查：** {stated}。",
    "troubleshoot.assumed_gpus": (
        "你没有说明 GPU 数量；这里按 {num_gpus} 张检查（配方自身的数量，或你的布局至少需要的数量）。"
    ),
    "troubleshoot.cause.unsynced": "**原因:** {line}{quoted}",
    "troubleshoot.cause.reproduced": "**原因：** 规则模块在你的配置上复现了这个报错{where}：{quoted}",
    "troubleshoot.unset_etp": (
        "`{name}` 没有设置 `{etp_key}`。在没有把它设为 1 的路径上（Bridge 的训练入口自 {since} 起在 EP > "
        "1 时设为 1；自行调用 `initialize_model_parallel` 的脚本不会），Megatron-Core 让它等于 TP：ETP = "
        "{tp}。"
    ),
    "troubleshoot.also_finds": "规则模块在这份配置上还发现：",
    "troubleshoot.recipe_ok": (
        "配方本身没有问题：它的默认配置在其自身的 {gpus} 张 GPU 上能通过规则模块检查。"
        "失败来自上面的设置。"
    ),
    "troubleshoot.unexplained.errors": "规则模块在你的配置上发现这些错误：",
    "troubleshoot.unexplained.head": (
        "**这份配置中没有能解释该报错的设置：** 按这些取值，会抛出这段报错的检查全部通过。"
    ),
    "troubleshoot.unexplained.does_find": "但它发现：",
    "troubleshoot.unexplained.no_error": "规则模块在其上没有发现错误。",
    "troubleshoot.passes.pp_layers": "{layers} 层分到 PP {pp}，每个 stage {per} 层，可以整除。",
    "troubleshoot.passes.vp_layers": "{layers} 层分到 PP {pp} × VP {vp}，每个模型块 {per} 层，可以整除。",
    "troubleshoot.passes.dense_mesh": "{world} 张 GPU 除以 TP·PP·CP = {size}，DP 为 {dp}。",
    "troubleshoot.passes.expert_mesh": "{world} 张 GPU 除以 PP·EP·ETP = {size}，专家数据并行为 {dp}。",
    "troubleshoot.passes.batch": "GBS {gbs} 除以 MBS {mbs} × DP {dp}，得到 {n} 个 micro-batch，可以整除。",
    "troubleshoot.passes.tp_heads": "{heads} 个注意力头分到 TP {tp}，可以整除。",
    "troubleshoot.passes.cp_seq": "序列长度 {seq} 除以 2 × CP {cp}，可以整除。",
    "troubleshoot.known_causes.head": "这个报错（{where}）的已知原因，按可能性排序；请逐项检查：",
    "troubleshoot.broken": (
        "**是的，`{name}` 在 Megatron-Bridge {version} 中是坏的：** 它自己的默认配置在其自身的 {gpus} 张 "
        "GPU 上就无法通过这项检查（目录自检：{rules}）。"
    ),
    "troubleshoot.fix.head": "**修复**（已由规则模块复查）：",
    "troubleshoot.fix.passes": "**修复**（已由规则模块复查：不再有错误）：",
    "troubleshoot.fix.partial": "**针对该报错的修复**（加上后规则模块仍报告其他错误，列在后面）：",
    "troubleshoot.fix.alternative": (
        "或者保留 PP {pp}，首尾两个阶段各 {edge} 层，其余 {others} 个阶段各 {middle} 层（规则模块接受）："
    ),
    "troubleshoot.history.fixed_in": (
        "已在 Megatron-Bridge {fixed_in} 中修复：该版本目录自检对 `{name}` 通过；升级也能解决。"
    ),
    "troubleshoot.history.gone": "Megatron-Bridge {newest} 的目录中已没有 `{name}`。",
    "troubleshoot.history.still_failing": (
        "直到 {newest} 的所有后续内置版本中仍然失败：升级后也请保留修正后的设置。"
    ),
    "troubleshoot.broken_note": (
        "⚠️ `{name}` 在此版本（Megatron-Bridge {version}）中**是坏的**：它自己的默认配置在其自身的 "
        "{gpus} 张 GPU 上无法通过 {rules}。{fixed}"
    ),
    "troubleshoot.known_cause.pp-layers": (
        "流水线并行度不能整除模型层数；请核对运行时实际生效的 PP（覆盖项或启动参数可能修改了它）与层数"
    ),
    "troubleshoot.known_cause.vp-layers": "虚拟流水线并行度不能整除每个阶段的层数；请核对 VP 与 层数 / PP",
    "troubleshoot.known_cause.vp-needs-pp": "设置了虚拟流水线但 PP = 1；请同时核对两者",
    "troubleshoot.known_cause.expert-mesh": (
        "PP·EP·ETP 不能整除 GPU 数；请检查 expert_tensor_parallel_size：未设置时，凡是没有把它设为 1 "
        "的路径都会让它等于 TP"
    ),
    "troubleshoot.known_cause.dense-mesh": (
        "TP·PP·CP 不能整除 GPU 数；请核对启动的进程数（节点数 × 每节点进程数）与 TP·PP·CP"
    ),
    "troubleshoot.known_cause.batch-divisible": (
        "全局批次不是 MBS × DP 的倍数；请按当前 GPU 数算出的 DP 核对 GBS"
    ),
    "cp-seq": "序列长度 {seq} 不能被 2·CP = {value1} 整除（每个 CP rank 处理两个分块）。",
    "long-context-no-cp": (
        "序列长度 {seq} 但未使用上下文并行（CP），激活显存随序列增长，很可能 OOM。"
        "请增加 CP（或改用 *_16k/*_64k/*_128k 配方变体）。"
    ),
    "dense-mesh": "{world} 个 GPU 不能被 TP·PP·CP = {tp}·{pp}·{cp} = {model_size} 整除，数据并行度不是整数。",
    "ep-dense-model": "稠密模型设置了 EP={ep}：专家并行只适用于 MoE 层。",
    "experts-ep": (
        "EP={ep} 不能整除 {experts} 个专家；Megatron-Core 会在 moe_layer.py 中抛出没有说明的 AssertionError。"
    ),
    "packed-mbs": "打包序列要求 micro_batch_size=1（当前为 {mbs}）；应改为让每个 pack 包含更多 token。",
    "batch-divisible": "全局批次 {gbs} 不能被 micro batch {mbs} × 数据并行 {dp} = {step} 整除。",
    "dataset-flag": (
        "{version} 的 run_recipe.py 没有 --dataset 选项，使用配方自带的数据集配置；请改用 dataset.* 覆盖项。"
    ),
    "dataset-unknown": "{version} 中不存在数据集预设 {name!r}；可选：{choices}。",
    "mode-dataset.rejected": "数据集预设 {name!r} 仅用于 {loop}；{version} 在 {mode_name!r} 模式下会拒绝它。",
    "peft-checkpoint": (
        "PEFT 需要预训练检查点：本地 Megatron 检查点目录（可用 AutoBridge."
        "import_ckpt 转换）或本地 Hugging Face 模型目录。"
    ),
    "peft-checkpoint.hub-id": (
        "{path!r} 看起来是 Hugging Face 模型 ID，而不是检查点路径。"
        "请先下载或转换（AutoBridge.import_ckpt），再传入本地目录。"
    ),
    "seq-length-sync.undone": (
        "只设置 model.seq_length={model_seq} 会被还原："
        "{version} 的 run_recipe.py 会用 dataset.seq_lengt"
        "h（{dataset_seq}）覆盖模型的序列长度。"
        "请同时设置 dataset.seq_length。"
    ),
    "cuda-graph-rng": (
        "CUDA graph 需要 Transformer Engine 的 RNG tracker"
        "；请同时设置 model.use_te_rng_tracker 和 rng.te_rng_t"
        "racker。"
    ),
    "cuda-graph-nan-check": "整迭代 CUDA graph 不能执行 loss 的 NaN 检查，请关闭该检查。",
    "cuda-graph-packed": (
        "在 {version} 中，捕获注意力的 TE CUDA graph 不能接收打包序列的元数"
        "据。请关闭打包，或改用整迭代 graph。"
    ),
    "fsdp-tp-hopper": (
        "在 {gpu_label} 上使用 Megatron-FSDP 且 TP={tp}："
        "Hopper 级 GPU 上通信容易成为瓶颈；"
        "建议 FSDP 配合 TP=1 或 2（FSDP 在 B/GB 系列上表现更好）。"
    ),
    "qwen35-vl-moe-fsdp": (
        "Qwen3.5-VL MoE 配合 Megatron-FSDP 只在 Blackwell G"
        "PU 上验证过；在 {gpu_label} 上可能无法运行。请先用短任务验证，"
        "或改用 3D 并行布局。"
    ),
    "offload-layers": "model.cpu_offloading_num_layers={count} 必须小于模型的 {layers} 层。",
    "offload-pp": (
        "CPU 激活卸载不支持 PP={pp}：请用 PP=1（配合 Megatron-FSDP 分片权重），或关闭卸载保留流水线。"
    ),
    "offload-recompute": (
        "CPU 激活卸载不能与 recompute_granularity="
        "{recompute_granularity} 同时使用：两者是互相替代的省显存手段，"
        "二选一。"
    ),
    "offload-cuda-graphs": (
        "CPU 激活卸载不支持 cuda_graph_impl={cuda_graph_impl}；"
        "只有整迭代 CUDA graph（较新的 Megatron-Core）可以与之共用。"
    ),
    "moe-overlap-grad-reduce-h100": (
        "H100 上的 MoE 模型开启 overlap_grad_reduce=True 可能降低吞吐；许多 H100 MoE 预设都将其关闭。"
    ),
    "precision-unknown": (
        "mixed_precision={preset} 不是 Megatron-Bridge {version} 的预设名；构建配置时就会报错。"
    ),
    "pp-without-vp": (
        "PP={pp} 但未设置虚拟流水线，流水线气泡较大；设置 VP={choice} 可把每个阶段切成交错的块。"
    ),
    "expert-mesh": (
        "{world} 个 GPU 不能被 PP·EP·ETP = {pp}·{ep}·{etp} "
        "= {expert_size} 整除。专家网格与稠密网格独立折叠："
        "EDP = world / (PP·EP·ETP)。"
    ),
    "cuda-graph-packed.pad": "打包序列配合 CUDA graph 需要静态形状：请把每个 pack 填充到最大长度。",
    "cuda-graph-packed.cu-seqlens": "捕获打包注意力的 CUDA graph 还需要填充 cu_seqlens。",
    "override-section": "{key!r}：Megatron-Bridge 的 ConfigContainer 没有 'training' 段，应为 'train'。",
    "finetune-cp-loss": (
        "CP={cp} 微调：{version} 的 run_recipe.py 会自动设置 cal"
        "culate_per_token_loss=True 和 average_in_collec"
        "tive=False（避免全部 token 被 mask 的 rank 产生 NaN 损失）"
        "。"
    ),
    "finetune-cp-loss.needed": (
        "CP={cp} 微调需要 calculate_per_token_loss=True 且 d"
        "dp.average_in_collective=False，"
        "否则全部 token 被 mask 的 rank 会产生 NaN 损失。"
    ),
    "cp-a2a-p2p": "hierarchical_context_parallel_sizes {list_sizes} 的乘积为 {prod_sizes}，不等于 CP={cp}。",
    "arch-unknown-validated": (
        "未知 {name} 的模型结构，无法检查注意力头、层数和显存；这里原样使用配方自带的布局，"
        "即它所针对的 {num_gpus} 张 GPU。改动布局或 GPU 数都不会被检查。"
    ),
    "no-valid-layout": (
        "所有能放进 {num_gpus} × {gpu_label} 的布局都违反某项 Megatron 检查（注意力头、层、专家或批次整除）。"
    ),
    "fit-unknown": (
        "尚未判断显存是否足够（{note}）。配方自带的布局在其标注的 GPU 上已由上游运行过；"
        "其他情况未经检查：如果 OOM，先减小 train.micro_batch_size。"
    ),
    "fit-unknown.heuristic": (
        "尚未判断显存是否足够（{note}）。"
        "估算器的下限（模型状态与激活，不含固定开销）显示最忙的 GPU 至少需要 {peak_gb:.0f} GB（共 "
        "{usable_gb:.0f} GB）；如果 OOM，"
        "先减小 train.micro_batch_size。"
    ),
    "single-gpu-needs-peft": (
        "单个 GPU 只能运行 PEFT（LoRA/DoRA）；"
        "{name} 是 {mode} 配方。请选择该模型的 *_peft_config 配方，"
        "或增加 GPU。"
    ),
    "arch-unknown": (
        "未知 {value1} 的模型结构，无法检查注意力头、层数和专家数，"
        "因此不为 {num_gpus} 张 GPU 生成方案；"
        "该配方可原样运行在 {value2} 张 GPU 上。"
    ),
    "tp-query-groups.loose": "TP 的倍数或约数",
    "tp-query-groups.strict": "TP 的倍数",
    "single-gpu-needs-peft.full": "全参训练",
    "sp-off": (
        "TP={tp} 但未开启序列并行（SP），每个 TP rank 都保存完整的 LayerNorm/Dropout 激活；"
        "开启 SP 几乎没有额外开销{tail}"
    ),
    "sp-off.with_ep": "，且同时使用 EP 时 Megatron-Core 会发出警告。",
    "sp-off.end": "。",
    "cp-a2a-p2p.missing": (
        "cp_comm_type 为 'a2a+p2p' 时必须设置 hierarchical_context_parallel_sizes"
        "（节点内 a2a 大小 × 节点间 p2p 大小 = CP）{tail}"
    ),
    "cp-a2a-p2p.missing.checked": "。",
    "cp-a2a-p2p.missing.unchecked": "；{version} 不做检查，会在没有 CP 通信的情况下静默运行。",
    "cuda-graph-full-recompute": "完整重计算只能与整迭代 CUDA graph 一起使用{graph}否则请改用选择性重计算。",
    "cuda-graph-full-recompute.impl": "（cuda_graph_impl=full_iteration）。",
    "cuda-graph-full-recompute.scope": (
        "（此版本为 cuda_graph_impl=local 且 cuda_graph_scope=[full_iteration]）。"
    ),
    "ep-too-low": (
        "EP={ep} 时每个 GPU 上约有 {expert_gb:.0f} GB 专家权重和优化器状态"
        "（{gpu_label} 可用显存约 {hbm_gb:.0f} GB）。{advice}"
    ),
    "ep-too-low.raise_ep": "应先增大 EP 再考虑 TP：EP 只切分专家参数，而大型 MoE 的参数主要在专家中。",
    "ep-too-low.more_gpus": (
        "{world} 张 GPU 放不下更大的 EP；增加 GPU 后，专家的数据并行组会切分其优化器状态。"
    ),
    "does-not-fit": "按显存估算，{name} 在 {num_gpus} × {gpu}、序列长度 {seq} 下没有可行布局{advice}{more}",
    "does-not-fit.even_peft": "，即使使用 PEFT 也不行。",
    "does-not-fit.other_count": "；请换一个 GPU 数或改用 PEFT 配方。",
    "does-not-fit.add_gpus": "；请增加 GPU 或改用 PEFT 配方。",
    "does-not-fit.need": "大约需要 {need} 个 GPU。",
    "does-not-fit.fits_fewer": "其中 {need} 张 GPU 上有能放下的合法布局。",
    "fit-oom": "显存估算器估计最忙的 GPU 约需 {need:.0f} GB（可用 {have:.0f} GB）。{advice}",
    "fit-oom.lower_mbs": (
        "先减小 train.micro_batch_size，再开启重计算（model.recompute_granularity=full）或增加 GPU。"
    ),
    "fit-oom.mbs_is_one": (
        "train.micro_batch_size 已经是 1：请开启重计算（model.recompute_granularity=full）或增加 GPU。"
    ),
    "fit-oom.flux": (
        "Bridge 的 Flux 自行逐块运行前向，model.recompute_granularity 不起作用：若 train.micro_batch_size "
        "大于 1 请先减小，否则请增加 GPU（数据并行会切分优化器状态）。"
    ),
    "reason.tp": "TP {value}：能整除 {groups} 个 KV 头、不跨 NVLink 域，且是能放下模型的最小值。",
    "reason.pp": "PP {value}：仅靠 TP 无法在 {gpu} 上放下模型，因此把层切成 {value} 个流水线阶段。",
    "reason.pp1": "PP 1：无需流水线即可放下模型，避免流水线气泡。",
    "reason.vp": "VP {value}：PP > 1 时使用交错的虚拟流水线块以减小流水线气泡。",
    "reason.vp_none": "关闭 VP：虚拟流水线需要 PP > 1。",
    "reason.vp_uneven": "关闭 VP：{layers} 层无法均匀切分到 PP {pp} 个阶段的多个虚拟块上。",
    "reason.cp": "CP {value}：序列长度 {seq} 需要上下文并行（每个 CP rank 约 8K token）。",
    "reason.cp_small": "CP {value}：适配现有 {world} 个 GPU，并保持 seq % (2·CP) == 0。",
    "reason.ep": (
        "EP {value}：能整除 {experts} 个专家，且专家网格（PP·EP·ETP）能整除 {world} 个 GPU；"
        "优先增大 EP 而非 TP，因为 EP 只切分专家参数。"
    ),
    "reason.etp": "ETP {value}：保证专家网格能整除总 GPU 数。",
    "reason.sp": "SP {value}：TP > 1 时应开启序列并行（TP = 1 时 Bridge 会自动关闭）。",
    "reason.mbs": "MBS {value}：降低以使全局批次能被 MBS·DP 整除（或打包序列要求为 1）。",
    "reason.gbs": (
        "GBS {value}（原为 {old}）：{world} 个 GPU 上没有布局能整除 {old}；这会改变优化过程，属于收敛性变更。"
    ),
    "reason.gbs_weak_fraction": (
        "GBS {value}：显式给出，因为把配方的 GBS {old} 从 DP {dp_old} 弱扩展到 DP {dp} "
        "得不到整数，不给出时启动器会报错停止。"
    ),
    "reason.gbs_weak_uneven": (
        "GBS {value}：显式给出，因为启动器会把配方的 GBS {old} 在 DP {dp} 上弱扩展为 {scaled}，"
        "而 MBS·DP 不能整除它；这属于收敛性变更。"
    ),
    "reason.seq": "序列长度 {value}：用户指定（同时设置数据集与模型的序列长度）。",
    "reason.user": "用户指定。",
    "reason.unknown_batch": "{value}：配方未静态给出该值，因此方案中显式设置。",
    "reason.cp_loss": "CP > 1 微调需要按 token 计算损失，且不在集合通信中求平均。",
    "reason.checkpoint": "PEFT 需要本地预训练检查点；启动前请设置环境变量 PRETRAINED_CHECKPOINT。",
    "fit-note.arch_unknown": "模型结构未知",
    "fit-note.unmodelled": "显存估算无法描述这个混合模型的层结构",
    "checklist.library": "库配方（`src/megatron/bridge/recipes/`）用于真实训练，通过 `{script}` 启动。",
    "checklist.benchmark": (
        "性能（基准）配方用于测量吞吐上限，使用模拟数据，不应作为生产训练配方；启动方式：`{bench}`{tail}"
    ),
    "checklist.benchmark.slurm": (
        "，或按完整函数名用 `{entry} --recipe <配方名>` 提交，GPU 总数须与名称中的一致。"
    ),
    "checklist.end": "。",
    "checklist.smoke_recipe": "`{name}` ",
    "checklist.smoke_any": "",
    "checklist.smoke": "首次冒烟测试：{smoke}+ {dataset}（模拟数据）。",
    "checklist.smoke.mock": "首次冒烟测试：{smoke}（预训练配方默认使用模拟数据）。",
    "checklist.datasets": "常规 SFT 使用 {sft}；预训练与模拟验证使用 {pretrain}。",
    "checklist.no_dataset_flag": (
        "该版本的 run_recipe.py 没有 --dataset 参数：SFT/PEFT 配方自带数据集，预训练配方默认模拟数据。"
    ),
    "checklist.resizing": (
        "调整规则：TP 需整除 num_key_value_heads；除非使用 NVL72 级互连，"
        "TP 不跨节点；TP > 1 时开启 SP；长上下文配置 CP；DP 隐式确定；"
        "OOM 时先减小 micro_batch_size。"
    ),
    "checklist.change_control": (
        "变更分类：并行方式与 micro_batch_size 属于执行变更（训练结果不变）；global_batch_size、"
        "学习率、序列长度和数据集属于收敛变更（会改变训练）；只用于测速的设置属于仅基准测试。"
    ),
    "change_class.convergence": "收敛相关",
    "change_class.execution": "执行映射",
    "change_class.benchmark-only": "仅限基准",
    "compose.speed": (
        "**速度估计：** 每张 GPU 约 {tokens:,.0f} tokens/s，模型算力 {tflops:.0f} TFLOP/s（MFU {mfu:.0%}），"
        "每步 {step:.2f} 秒；按已发布的 Megatron-Bridge 实测数据校准{error}；"
        "`autorecipe estimate` 可查看明细。{track}"
    ),
    "compose.speed.error": "，在这些数据上的中位误差约 {error:.0%}",
    "compose.track": " 注意：在该模型 {precision} 的 {runs} 次已发布实测上，这个估计平均{side}约 {off:.0%}。",
    "compose.track.high": "偏高",
    "compose.track.low": "偏低",
    "compose.nearest.leanest": (
        "**{num_gpus} × {gpu} 放不下：** 即使最省显存的布局（{layout}，全量重计算）"
        "每张 GPU 也需约 {peak}，可用 {usable}。"
    ),
    "compose.nearest.fewest": (
        "能放下的最少 GPU 数：**{min_gpus}** 张，布局 {layout}（每张 "
        "GPU {peak}，约 {speed} tokens/s）。{keys}"
    ),
    "compose.nearest.room": (
        "余量超出估计误差的方案：**{room_gpus}** 张 GPU，布局 {layout}（每张 GPU {peak}）。{keys}"
    ),
    "compose.fitting": (
        "**在 {gpus} 上能放下的布局（估计）：** {layout}——每张 GPU {peak}，约 {speed} tokens/s。{keys}"
    ),
    "compose.faster": (
        "**更快的布局（估计）：** {layout}——每张 GPU 约 {theirs} tokens/s，上面方案约 {ours}。{keys}"
    ),
    "compose.no_faster": (
        "**最快的布局（估计）：** 在这些 GPU 上，搜索找不到比上面方案快 {margin} 以上的布局。"
        "它排第一的是 {layout}，每张 GPU 约 {theirs} tokens/s，上面方案约 {ours}；"
        "差距在估计分辨不出的范围内，沿用上面的方案即可。"
    ),
    "compose.step_costs": (
        "**时间花在哪里（估计）：** 流水线气泡占每步 {bubble:.1%}（{pipeline}）；"
        "未被掩盖的通信占 {comm:.1%}{parts}{recompute}。"
    ),
    "compose.step_costs.parts": "（{parts}）",
    "compose.step_costs.recompute": "；重计算占 {share:.1%}",
    "compose.peft_alternative": "**在 {gpus} 上可以改用 LoRA：** `{name}`（{layout}{fit}）：",
    "compose.peft_alternative.fit": "，每张 GPU 约 {peak}",
    "service.example.1": "在16张H100上对Qwen3-30B-A3B做SFT",
    "service.example.2": "单卡 LoRA 微调 Llama 3 8B",
    "service.example.3": "Llama3 8B 128K 长上下文预训练",
    "service.passages.matches": "这对应：",
    "service.passages.guide": "参考指南：",
    "recipe_call": "按 {call} 调用（{goal}）{how}。",
    "recipe_call.goal.sft": "全参数 SFT",
    "recipe_call.goal.lora": "LoRA",
    "recipe_call.launcher_default": "；不加 `--peft_scheme` 时 run_recipe.py 即如此调用",
    "recipe_call.with_flags": "；run_recipe.py 需加 `{flags}` 才如此调用",
    "sep.list": "、",
    "sep.sentence": "",
    "sep.end": "。",
    "sep.clause": "；",
    "sep.and": "、",
    "gpu_values.separator": "；",
    "gpu_values.gpu_separator": "、",
    "gpu_values.other": "{shown}（{gpus}）",
    "gpu_values.yours": (
        "在你的 {gpu} 上，`{path}` 为 {shown}：由 `{rule}` 按 GPU 类型设置（{source}）；其他 GPU：{others}。"
    ),
    "gpu_values.depends": "`{path}` 的取值取决于 GPU 类型，由 `{rule}` 设置（{source}）：{others}。",
    "unreachable": "⚠️ 此版本的启动脚本无法启动 `{name}`：{reason}。{advice}",
    "unreachable.twin": "同一函数以 `{twin}` 导出，请用这个名字启动。",
    "unreachable.own_script": "请在自己的脚本中调用该函数，或改用已导出的配方。",
    "version_facts.no_dataset_flag": "Megatron-Bridge {version} 的启动脚本没有 `--dataset` 参数。",
    "version_facts.dataset": "在 Megatron-Bridge {version} 中，{goal} 配方使用 `--dataset {preset}`。",
    "version_facts.goal.pretrain": "预训练",
    "version_facts.goal.sft": "SFT",
    "version_facts.goal.peft": "LoRA/PEFT",
    "version_facts.flags": "Megatron-Bridge {version} 中 {script} 的参数：{every}。",
    "version_facts.not_a_flag": (
        "Megatron-Bridge {version} 的 {script} 没有 `{name}` 参数；它的参数是 {every}。"
    ),
    "version_facts.a_flag": "`{names}` 是 Megatron-Bridge {version} 中 {script} 的参数{choices}。",
    "reason.fitting_layout": "显存估算认为能放进这些 GPU 的布局",
    "notice.budget_spent": (
        "注意：本回答已用完时间预算，届时尚未计算的部分（布局搜索、引用、改写）已省略；可以把问题问得更具体一些再试。"
    ),
    "notice.retrieval_failed": (
        "注意：段落索引无法读取，因此本回答没有引用；"
        "`autorecipe doctor` 可查看原因，`autorecipe ingest` 可重建索引。"
    ),
    "notice.invalid_text": "注意：问题中有部分内容不是有效文本（无效的 UTF-8 或孤立代理字符），已按 � 处理。",
    "notice.unsupported_language": (
        "注意：回答只支持英文或中文；lang={lang} 不是 auto、en、zh 之一，因此按问题的语言回答。"
    ),
    # 聊天页面（ui/gradio_app.py）：标签随回答语言切换。
    "ui.title": "Auto Recipe — Megatron-Bridge 配方助手",
    "ui.description": (
        "可用中文或英文提问：模型、GPU、目标（预训练 / SFT / LoRA）、序列长度。"
        "配方名、数字和命令来自所选版本的配方目录和规则模块；引用的段落会标注来源。"
    ),
    "ui.version": "Megatron-Bridge 版本",
    "ui.language": "回答语言",
    "ui.chatbot": "Auto Recipe 助手",
    "ui.placeholder": "例如：在16张H100上对Qwen3-30B-A3B做SFT",
    "ui.recommendation": "推荐方案",
    "ui.command": "启动命令",
    "ui.downloads": "下载：Slurm 脚本、覆盖项、回答 JSON",
    "ui.no_recipe_yet": "_尚无配方。_",
    "ui.no_recipe": "_本轮没有配方。_",
    "ui.no_findings": "_没有检查结果。_",
    "ui.alias_of": "`{name}` 的别名",
    "ui.dataset": "数据集预设：`{name}`",
    "ui.fit": "显存是否够用：**{status}**",
    "ui.fit.fits": "可以",
    "ui.fit.does-not-fit": "不够",
    "ui.fit.unknown": "无法判断",
}
