"""The rules of a dream, one module each: what the insights find and how the offline
synthesizer writes each section (see docs/guides/dreaming.md)."""
