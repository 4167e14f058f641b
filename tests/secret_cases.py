"""Secrets of the shapes real ones have, notes that carry them, and a check that none leaked."""

from __future__ import annotations

# Fake but well-formed: each is the shape a real one has.
SECRETS = {
    "anthropic-key": "sk-ant-api03-" + "Zx7Qp2Lm9Rt4Vw8Ny3Kd6Hs1Gf5Jb0Ca" * 3 + "AA",
    "aws-access-key": "AKIAQ3EGUGWZ7EXMPL42",
    "aws-secret-key": "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",
    "github-token": "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq",
    "password": "hunter2-Blue!",
    "openai-key": "sk-proj-" + "Tq8Wm3Zr5Xv1Nb7Kc2Lp9Hd4Jf6Gs0Ay" * 2,
    "gitlab-token": "glpat-" + "Xk3Vd8Qm2Zr7Tn5Wb1Yc",
    "slack-token": "xoxb-" + "2048193847-5092837461-" + "aZ8kQ2mX7vN4bL9cT1yH6wS3",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYXlhIiwicm9sZSI6ImFkbWluIn0."
    + "Qm7Zx2Kp9Vt4Rw8Ny3Ld6Hs1Gf5Jb0CaE2dT7uY4oP",
    "private-key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q3Zt9Lm2Vx8",
}
NOTES = [
    f"Set up the deploy bot with the Anthropic key {SECRETS['anthropic-key']}",
    f"AWS for the backups: access key {SECRETS['aws-access-key']}, "
    f"aws_secret_access_key = {SECRETS['aws-secret-key']}",
    f"CI pushes with the token {SECRETS['github-token']} for now",
    f"The staging database password is {SECRETS['password']} until we rotate it",
    "Maya prefers concise answers with the code first",
    f"OpenAI fallback key {SECRETS['openai-key']} and GitLab {SECRETS['gitlab-token']}",
    f"Slack bot token {SECRETS['slack-token']}; session JWT {SECRETS['jwt']}",
    "Pasted the deploy key by mistake:\n-----BEGIN PRIVATE KEY-----\n"
    f"{SECRETS['private-key']}\nQ2xvc2VkIGJ5IG1pc3Rha2UK\n-----END PRIVATE KEY-----",
]


def assert_no_secret(blob: bytes | str, where: str) -> None:
    data = blob.encode() if isinstance(blob, str) else blob
    for kind, value in SECRETS.items():
        assert value.encode() not in data, f"{kind} leaked into {where}"
