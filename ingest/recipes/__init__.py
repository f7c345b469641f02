"""Static (ast-only) extraction of Megatron-Bridge recipes and launchers. Never imports indexed code."""
