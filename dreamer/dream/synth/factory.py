"""Which synthesizer writes a workspace's dreams: Claude with a key, else the offline one."""

from __future__ import annotations

from typing import Any

from dreamer.config import Settings
from dreamer.dream.synth import Synthesizer


def make_synthesizer(settings: Settings, client: Any | None = None) -> Synthesizer:
    """Claude when the settings ask for it (a key, or synthesizer = "claude"), else offline.

    ``client`` is an ``anthropic.Anthropic`` to use instead of building one (tests, proxies).
    With synthesizer = "claude" and neither a key nor a client, raises ``InvalidSetting``
    naming the fix (set ANTHROPIC_API_KEY or memory.dream.apiKey).
    """
    if settings.uses_claude():
        # Imported here so an offline dream never loads the anthropic SDK.
        from dreamer.dream.synth.claude import ClaudeSynthesizer

        return ClaudeSynthesizer(settings, client=client)
    from dreamer.dream.synth.offline import OfflineSynthesizer

    return OfflineSynthesizer()
