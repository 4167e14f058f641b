"""Which synthesizer writes a workspace's dreams: the one the settings name, or auto's pick.

``auto`` is Claude through the API when an Anthropic API key is set, else offline: it never
spends a subscription (``claude-code``) or an endpoint (``openai``) the user did not name. A
named backend that cannot run fails the dream with one line; it never falls back to offline.
"""

from __future__ import annotations

from typing import Any

from dreamer.config import Settings
from dreamer.dream.synth import Synthesizer


def make_synthesizer(settings: Settings, client: Any | None = None) -> Synthesizer:
    """The synthesizer of ``settings.synthesis()``; each backend module loads only when chosen.

    ``client`` is an ``anthropic.Anthropic`` to use instead of building one (tests, proxies).
    A backend missing what it needs raises ``InvalidSetting`` or ``ModelUnavailable`` naming
    the fix (a key, an endpoint, the ``claude`` CLI).
    """
    backend, _ = settings.synthesis()
    if backend == "claude":
        from dreamer.dream.synth.claude import ClaudeSynthesizer

        return ClaudeSynthesizer(settings, client=client)
    if backend == "claude-code":
        from dreamer.dream.synth.claude_code import ClaudeCodeSynthesizer

        return ClaudeCodeSynthesizer(settings)
    if backend == "openai":
        from dreamer.dream.synth.openai_compat import OpenAISynthesizer

        return OpenAISynthesizer(settings)
    from dreamer.dream.synth.offline import OfflineSynthesizer

    return OfflineSynthesizer()


def explain(settings: Settings) -> str:
    """Which synthesizer writes the next dream, and why: 'offline: auto, no ANTHROPIC_API_KEY'."""
    backend, why = settings.synthesis()
    model = settings.model_for(backend) if backend != "offline" else None
    return f"{backend}{' (' + model + ')' if model else ''}: {why}"
