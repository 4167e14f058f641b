"""Helpers every layer may use: time, atomic files, locks, tokens, prompts, resources."""
