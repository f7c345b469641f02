"""Facts about the Megatron Core a Megatron-Bridge release pins (its 3rdparty/Megatron-LM submodule), read
statically: which TransformerConfig fields exist and which enum classes megatron.core.transformer.enums
defines. Bridge's cuda_graph helpers branch on them (`hasattr(config, "cuda_graph_modules")`)."""

from __future__ import annotations

import ast

from ingest.recipes.interpreter import McoreFacts

TRANSFORMER_CONFIG = "megatron/core/transformer/transformer_config.py"
MODEL_PARALLEL_CONFIG = "megatron/core/model_parallel_config.py"
ENUMS = "megatron/core/transformer/enums.py"


def _class_fields(text: str, class_name: str) -> set[str]:
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
    return set()


def mcore_facts(commit: str, transformer_config: str, model_parallel_config: str, enums: str) -> McoreFacts:
    """Facts from the three source texts of one Megatron Core commit."""
    fields = _class_fields(transformer_config, "TransformerConfig")
    fields |= _class_fields(model_parallel_config, "ModelParallelConfig")
    classes = {n.name for n in ast.parse(enums).body if isinstance(n, ast.ClassDef)}
    return McoreFacts(commit=commit, transformer_fields=frozenset(fields), enum_classes=frozenset(classes))
