"""Front ends: CLI, Gradio chat, Slack bot. Thin: parse input, call the assistant, render."""
