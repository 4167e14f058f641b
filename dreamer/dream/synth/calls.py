"""How a model backend tries: a time limit per try, a few more tries on what may pass.

Every backend (``claude``, ``claude-code``, ``openai``) makes its calls through ``attempt``, so
``memory.dream.timeoutSeconds`` and ``memory.dream.retries`` mean the same everywhere. Only a
timeout, an overload or a rate limit is tried again (an unusable answer or a refused key would
fail the same way twice), and not when the server said so (``x-should-retry: false``). The error
that ends the dream says how many tries it made and how long they took in all, so a slow model
reads as "3 tries took 376 s", not as one 120 s wait. The seconds and tries of a call land in
its ``Usage`` (and in the error's, when it failed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dreamer.dream.synth import Draft, DreamInputs, Usage
from dreamer.errors import ModelOverloaded, ModelRateLimited, ModelTimeout, SynthesisError

TRANSIENT = (ModelTimeout, ModelOverloaded, ModelRateLimited)
MAX_BACKOFF_SECONDS = 8.0


def backoff(tries: int) -> float:
    """Seconds to wait before the next try, doubling from half a second."""
    return min(0.5 * 2 ** (tries - 1), MAX_BACKOFF_SECONDS)


def attempt(
    call: Callable[[], Draft],
    *,
    timeout: float,
    retries: int,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Draft:
    """``call()`` up to ``retries`` more times on a transient error; the total told at the end."""
    start = clock()
    spent = Usage()
    tries = 0
    while True:
        tries += 1
        try:
            draft = call()
        except TRANSIENT as e:
            if isinstance(e.usage, Usage):
                spent.add(e.usage)
            if tries > retries or not e.retry:
                final = _final(e, tries, clock() - start, spent, timeout, retries)
                if final is e:
                    raise
                raise final from e.__cause__ or e
            sleep(backoff(tries))
            continue
        except SynthesisError as e:
            used = e.usage if isinstance(e.usage, Usage) else Usage()
            used.add(spent)
            used.seconds, used.tries = clock() - start, tries
            e.usage = used
            raise
        draft.usage.add(spent)
        draft.usage.seconds, draft.usage.tries = clock() - start, tries
        return draft


def _final(
    error: SynthesisError, tries: int, total: float, spent: Usage, timeout: float, retries: int
) -> SynthesisError:
    """The error that ends the dream: the last one, with the tries and the time in all.

    A single try that was refused (an overload, a rate limit) is told as it is; a timeout
    always says how long it waited.
    """
    spent.seconds, spent.tries = total, tries
    if tries == 1 and not isinstance(error, ModelTimeout):
        error.usage = spent
        return error
    noun = "try" if tries == 1 else "tries"
    message = (
        f"{error}; {tries} {noun} took {total:.0f} s in all (memory.dream.timeoutSeconds = "
        f"{timeout:g}, memory.dream.retries = {retries})"
    )
    return type(error)(message, error.raw, spent)


class Backend:
    """A model backend's ``synthesize``: its request, without secrets, tried through ``attempt``.

    Each backend gives ``request`` (what it sends for a draft or a revision), ``without_secrets``
    (that request with every secret replaced: whatever storage kept, for memory.secrets.redact
    may be off) and ``_call`` (one try: send it, read the answer into a draft).
    """

    timeout: float
    retries: int

    def request(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Any:
        """What this backend sends for a draft, or with critique and previous a revision."""
        raise NotImplementedError

    def without_secrets(self, request: Any) -> Any:
        """The request with every secret replaced by its placeholder."""
        raise NotImplementedError

    def _call(self, request: Any, inputs: DreamInputs, previous: Draft | None) -> Draft:
        raise NotImplementedError

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """Return a draft; with critique and previous, a revision of previous that answers it."""
        request = self.without_secrets(self.request(inputs, critique=critique, previous=previous))
        return attempt(
            lambda: self._call(request, inputs, previous),
            timeout=self.timeout,
            retries=self.retries,
        )
