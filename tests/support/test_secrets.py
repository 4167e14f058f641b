"""The secret detector: every kind caught, placeholders stable, ordinary notes left alone."""

from __future__ import annotations

import base64
import json
import random
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.support.secrets import PLACEHOLDER, Finding, contains_secret, placeholder, redact

ALNUM = string.ascii_letters + string.digits


def fake(prefix: str, length: int, seed: int, alphabet: str = ALNUM) -> str:
    """A well-formed fake token, built at run time so no scanner flags this file."""
    rng = random.Random(f"{prefix}{length}{seed}")
    body = [rng.choice(alphabet) for _ in range(length)]
    # Generated tokens hold both cases and digits; force them so the shape is always realistic.
    if alphabet in (ALNUM, ALNUM + "_-", ALNUM + "+/"):
        body[:3] = [rng.choice(string.ascii_uppercase), rng.choice(string.ascii_lowercase), "7"]
    return prefix + "".join(body)


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


AWS_SECRET = fake("", 40, 1, ALNUM + "+/")
JWT = ".".join(
    [
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "1234567890", "name": "Ada", "iat": 1516239022}),
        fake("", 43, 2, ALNUM + "_-"),
    ]
)
PRIVATE_KEY = "\n".join(
    ["-----BEGIN OPENSSH PRIVATE KEY-----"]
    + [fake("", 70, i, ALNUM + "+/") for i in range(5)]
    + ["-----END OPENSSH PRIVATE KEY-----"]
)

# (kind, the secret, a note that holds it)
CASES = [
    ("anthropic-key", s := fake("sk-ant-api03-", 93, 1, ALNUM + "_-") + "AA", f"key: {s}"),
    ("openai-key", s := fake("sk-proj-", 120, 1, ALNUM + "_-"), f"export OPENAI_API_KEY={s}"),
    ("openai-key", s := fake("sk-", 48, 2), f"the old openai key {s} still works"),
    (
        "aws-access-key",
        s := fake("AKIA", 16, 1, string.ascii_uppercase + string.digits),
        f"aws_access_key_id = {s}",
    ),
    (
        "aws-access-key",
        s := fake("ASIA", 16, 2, string.ascii_uppercase + string.digits),
        f"temporary creds start with {s}",
    ),
    ("aws-secret-key", AWS_SECRET, f"aws_secret_access_key = {AWS_SECRET}"),
    (
        "aws-secret-key",
        s := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        f"AWS: AKIAIOSFODNN7EXAMPLE / {s}",
    ),
    ("aws-secret-key", s := fake("", 40, 3, ALNUM + "+/"), f"the key pair is {s} (prod)"),
    ("github-token", s := fake("ghp_", 36, 1), f"GITHUB_TOKEN={s}"),
    ("github-token", s := fake("gho_", 36, 2), f"oauth token {s}"),
    ("github-token", s := fake("ghs_", 36, 3), f"app installation token {s} expires in 1h"),
    ("github-token", s := fake("github_pat_11A", 79, 4, ALNUM + "_"), f"use {s} for the bot"),
    ("gitlab-token", s := fake("glpat-", 20, 1, ALNUM + "_-"), f"GITLAB_TOKEN: {s}"),
    (
        "slack-token",
        s := "xoxb-" + "123456789012-1234567890123-" + fake("", 24, 1),
        f"slack bot token {s}",
    ),
    (
        "slack-token",
        s := "xoxp-" + "2345678901-3456789012-" + fake("", 32, 2, "abcdef0123456789"),
        f"user token {s}",
    ),
    (
        "slack-webhook",
        s := "https://hooks.slack.com/services/T0ABC1234/B0DEF5678/" + fake("", 24, 3),
        f"alerts go to {s}",
    ),
    ("stripe-key", s := fake("sk_" + "live_", 24, 1), f"STRIPE_SECRET_KEY={s}"),
    ("stripe-key", s := fake("rk_" + "test_", 24, 2), f"restricted key {s}"),
    ("google-api-key", s := fake("AIza", 35, 1, ALNUM + "_-"), f"maps key {s}"),
    ("huggingface-token", s := fake("hf_", 34, 1), f"HF_TOKEN={s}"),
    ("npm-token", s := fake("npm_", 36, 1), f"//registry.npmjs.org/:_authToken={s}"),
    (
        "pypi-token",
        s := "pypi-AgEIcHlwaS5vcmc" + fake("", 80, 1, ALNUM + "_-"),
        f"twine password {s}",
    ),
    (
        "sendgrid-key",
        s := "SG." + fake("", 22, 1, ALNUM + "_-") + "." + fake("", 43, 2),
        f"mail key {s}",
    ),
    ("twilio-key", s := fake("SK", 32, 1, "0123456789abcdef"), f"twilio {s}"),
    ("telegram-token", s := "123456789:" + fake("AA", 33, 1, ALNUM + "_-"), f"bot {s}"),
    (
        "azure-storage-key",
        s := fake("", 86, 1, ALNUM + "+/") + "==",
        f"DefaultEndpointsProtocol=https;AccountName=dreamer;AccountKey={s};",
    ),
    (
        "discord-token",
        s := fake("M", 23, 1) + "." + fake("", 6, 2) + "." + fake("", 27, 3),
        f"discord bot {s}",
    ),
    ("mailchimp-key", s := fake("", 32, 1, "0123456789abcdef") + "-us14", f"mailchimp {s}"),
    ("square-token", s := fake("sq0csp-", 43, 1, ALNUM + "_-"), f"square secret {s}"),
    ("private-key", PRIVATE_KEY, f"deploy key:\n{PRIVATE_KEY}\nadd it to the runner"),
    ("jwt", JWT, f"Authorization: Bearer {JWT}"),
    ("password", "s3cr3tPa55", "DATABASE_URL=postgres://app:s3cr3tPa55@db.internal:5432/app"),
    ("password", "hunter2-Blue!", "the staging password is hunter2-Blue!"),
    ("password", "correcthorsebattery", "password: correcthorsebattery"),
    ("password", "Tr0ub4dor&3", "pw=Tr0ub4dor&3"),
    ("password", "Sup3rS3cret", "wifi passwd=Sup3rS3cret"),
    ("password", "hunter22", 'settings = {"password": "hunter22", "user": "bob"}'),
    ("password", "x9-Ray-42", "mysql -u root --password x9-Ray-42 app"),
    ("password", "Winter2026!", "I changed the root password to Winter2026!"),
    ("password", "Pa55-w0rd", "curl -u admin:Pa55-w0rd https://jenkins.internal/api/json"),
    ("password", "Pa55-w0rd2", "mysqldump -u root -pPa55-w0rd2 shop > shop.sql"),
    ("password", "Pa55-w0rd3", "sshpass -p 'Pa55-w0rd3' ssh deploy@10.0.0.7"),
    ("password", "mysecretpassword", "docker run -e POSTGRES_PASSWORD=mysecretpassword postgres"),
    ("password", "Kx9#mQ2$", "password: 'Kx9#mQ2$'"),
    ("password", "hunter2", "wifi password: hunter2 (guest network)"),
    ("token", s := fake("", 24, 10), f"set -x; export AUTH_TOKEN={s}"),
    ("basic-auth", s := base64.b64encode(b"admin:Pa55word").decode(), f"Authorization: Basic {s}"),
    ("token", s := fake("", 32, 5), f"curl -H 'Authorization: Bearer {s}' https://api.internal"),
    ("token", s := fake("", 20, 6), f"my access token is {s}"),
    ("api-key", s := fake("", 32, 7, "0123456789abcdef"), f"the weather api key is {s}"),
    ("api-key", s := fake("", 24, 8), f"X-API-Key: {s}"),
    ("credential", s := fake("", 40, 9, ALNUM + "_-"), f"client_secret={s}"),
]


@pytest.mark.parametrize(("kind", "secret", "note"), CASES, ids=[c[0] for c in CASES])
def test_each_kind_is_replaced_by_its_placeholder(kind, secret, note):
    result = redact(note)
    assert secret not in result.text
    assert Finding(kind, placeholder(kind, secret)) in result.found
    assert placeholder(kind, secret) in result.text
    assert contains_secret(note)


def test_placeholder_is_typed_and_hashes_the_value():
    assert re.fullmatch(
        r"\[secret:aws-secret-key#[0-9a-f]{4}\]", placeholder("aws-secret-key", "x")
    )
    assert placeholder("password", "hunter2") == "[secret:password#f52f]"


def test_the_same_value_gives_the_same_placeholder():
    one = redact("pw=Blue-Sky-42 and later: password: Blue-Sky-42")
    two = redact("the db password is Blue-Sky-42")
    assert one.count == 2 and one.found[0] == one.found[1] == two.found[0]


def test_two_values_give_two_placeholders():
    result = redact(
        f"pw=Blue-Sky-42, then pw=Red-Sky-43; {fake('ghp_', 36, 8)} {fake('ghp_', 36, 9)}"
    )
    assert result.count == 4
    assert len({f.placeholder for f in result.found}) == 4


def test_private_key_is_removed_whole_across_lines():
    note = f"key:\n{PRIVATE_KEY}\nthen restart"
    result = redact(note)
    assert result.text == f"key:\n{placeholder('private-key', PRIVATE_KEY)}\nthen restart"
    for line in PRIVATE_KEY.splitlines()[1:-1]:
        assert line not in result.text


def test_private_key_escaped_in_json_and_clipped_without_end():
    body = fake("", 64, 3, ALNUM + "+/")
    escaped = (
        f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n"}}'
    )
    assert body not in redact(escaped).text
    clipped = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body[::-1]}\n"
    result = redact(clipped + "and that was all of it")
    assert body not in result.text and body[::-1] not in result.text
    assert result.text.endswith("and that was all of it")


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("postgres://app:S3cret@db.internal:5432/app", "postgres://app:{}@db.internal:5432/app"),
        (
            "postgresql://app:S3cret@10.0.0.5/app?sslmode=require",
            "postgresql://app:{}@10.0.0.5/app?sslmode=require",
        ),
        ("mysql://root:S3cret@localhost:3306/shop", "mysql://root:{}@localhost:3306/shop"),
        (
            "mongodb+srv://svc:S3cret@cluster0.ab1cd.mongodb.net/memories",
            "mongodb+srv://svc:{}@cluster0.ab1cd.mongodb.net/memories",
        ),
        ("redis://:S3cret@cache:6379/0", "redis://:{}@cache:6379/0"),
        ("amqp://guest:S3cret@rabbit:5672/%2f", "amqp://guest:{}@rabbit:5672/%2f"),
    ],
)
def test_connection_string_keeps_everything_but_the_password(url, kept):
    result = redact(f"connect with {url} from the worker")
    assert (
        result.text
        == f"connect with {kept.format(placeholder('password', 'S3cret'))} from the worker"
    )


def test_password_with_an_at_sign_is_redacted_whole():
    result = redact("postgres://app:p@ss-W0rd@db:5432/app")
    assert result.text == f"postgres://app:{placeholder('password', 'p@ss-W0rd')}@db:5432/app"


@pytest.mark.parametrize("kind, secret, note", CASES, ids=[c[0] for c in CASES])
def test_redact_is_idempotent(kind, secret, note):
    once = redact(note)
    twice = redact(once.text)
    assert twice.text == once.text and twice.count == 0


@pytest.mark.slow
@given(
    kind=st.from_regex(r"[a-z]{1,12}(-[a-z]{1,8}){0,2}", fullmatch=True),
    digest=st.from_regex(r"[0-9a-f]{4}", fullmatch=True),
    lead=st.sampled_from(["", "password: ", "pw=", "the token is ", "postgres://u:", "Bearer "]),
)
@settings(derandomize=True, max_examples=200, deadline=None)
def test_placeholders_are_never_detected(kind, digest, lead):
    text = f"{lead}[secret:{kind}#{digest}]@db/x"
    assert PLACEHOLDER.fullmatch(f"[secret:{kind}#{digest}]")
    assert redact(text).found == ()


# Realistic notes an agent writes: none of them holds a secret.
BENIGN = [
    "Merged 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 into main after the review.",
    "Reverted commit a1b2c3d because the migration broke crystals.db on CI.",
    "git log shows 9fceb02 and e83c516 touched scheduler.py last week.",
    "Crystal 550e8400-e29b-41d4-a716-446655440000 was archived by the dream at 14:30.",
    "Job id 123e4567-e89b-12d3-a456-426614174000 failed twice, then succeeded.",
    "The workspace lives at /home/ada/.local/share/dreamer/workspaces/billing-api/memory.",
    "Edited /Users/ada/Library/Application Support/Code/User/settings.json to enable ruff.",
    "Tests are in tests/fixtures/transcripts/2026-03-12-session-a.jsonl now.",
    "Docs: https://docs.python.org/3/library/sqlite3.html#sqlite3.Connection.backup",
    "PR https://github.com/acme/billing/pull/4512 is waiting on the payments team.",
    "Dashboard https://grafana.internal:3000/d/abc123/latency?orgId=1&from=now-6h",
    "Bumped numpy 1.26.4 -> 2.1.3 and anthropic to 0.40.0; all green.",
    "Release v2.14.0-rc.1 is tagged; final planned for 2026-03-20.",
    "The dream ran at 2026-03-12T14:30:00Z and took 41.2 s.",
    "Meeting moved to 2026-04-02 10:00 CET.",
    "Brand colours: primary #1e90ff, accent #ff8800, background #fafafa.",
    "The test fixture id is dGhpcyBpcyBhIHRlc3Q= and decodes to a plain sentence.",
    "Go checksum h1:Qk1fQbd8dE3jhpgqP1vl4oQzJdC5oDp6G0Y4aL5jv2M= changed after the bump.",
    "Image digest sha256:4d3c2b1a0f9e8d7c6b5a49382716051f4e3d2c1b0a9f8e7d6c5b4a3928170615 pinned.",
    "npm integrity sha512-Zk4uX0rW+ZXpOzlp3u7uKfQK9C1tH2mVc5N1JqGmX4b6lZJx2W3y9eQ8oR7sT6uV5wX4yZ3"
    "aB2cD1eF0gH9iJ8kL7mN6oP5qR4sT3uV2wX1yZ0a== for left-pad.",
    "PNG header in base64 starts iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk.",
    "I forgot my password yesterday and had to reset it through the admin panel.",
    "Rotate the API key next week, before the audit.",
    "Password policy requires 12 chars, one digit and no reuse of the last 5.",
    "The password is in 1Password under 'Staging DB'.",
    "The password is stored in vault at secret/data/billing/db.",
    "Password: see 1Password, entry 'Prod Redis'.",
    "The password for the admin account is in the team vault.",
    "The session token is valid for 3600 seconds.",
    "The token is expired; ask the user to log in again.",
    "Token: expires tomorrow at noon, renew it first thing.",
    "API key: rotate next week.",
    "The API key is 32 characters long and starts with a fixed prefix.",
    "The API key was revoked at 14:30 after the leak report.",
    "OPENAI_API_KEY is set in the CI secrets, not in the repo.",
    "Set DB_PASSWORD in the .env file and never commit it.",
    "export PGPASSWORD=$(vault kv get -field=pw secret/db) in the deploy script.",
    "password=os.environ['DB_PASS'] is how settings.py reads it.",
    "config has password: ${DB_PASSWORD} and token: <your-token-here>.",
    "The log shows password=******** so masking works.",
    "max_tokens=4096 and temperature=0.2 for the synthesizer.",
    "token budget: 2000 tokens for the state, 600 for insights.",
    "token: 4096 was the old limit.",
    "tokenizer: cl100k_base, shipped offline.",
    "def check_password(pw: str) -> bool: compares against the bcrypt hash.",
    "class Login(BaseModel): password: SecretStr",
    "password_hash = bcrypt.hashpw(raw, salt) lives in auth/hash.py.",
    "Password reset emails go through SES in eu-west-1.",
    "The passphrase is a sentence of four words, per the policy.",
    "Secret: batching writes beats more threads.",
    "secretName: db-credentials in the Helm chart.",
    "The key insight: hormones decay exponentially, not linearly.",
    "Keyboard shortcut: Cmd+K opens the palette.",
    "cache key: crystals:v2:3f2a9c1d, primary key: id.",
    "Access key rotation is handled by the platform team.",
    "The access key id lives in the IAM console; never paste it here.",
    "arn:aws:iam::123456789012:role/dreamer-worker needs s3:GetObject.",
    "aws s3 cp s3://dreamer-backups/2026-03-12/crystals.db . worked.",
    "Bearer auth is used for the internal API; Basic auth is disabled.",
    "Authorization header is missing on the health check, which is fine.",
    "User prefers short answers, works mostly in Go, timezone Europe/Berlin.",
    "Dopamine spiked to 0.82 after the deploy; cortisol back to 0.3.",
    "scikit-learn (sklearn) 1.5 is pinned for the bench.",
    "Changed the password policy to require MFA for admins.",
    "Reset the password to the default from the onboarding doc.",
    "The secret is to keep the scratch append under 5 ms.",
    "pw: see vault",
    "Run pytest -k test_secrets -q; 84 passed in 0.9 s.",
    "SELECT id, text FROM crystals WHERE lifecycle = 'generated' LIMIT 20;",
    "Ping 10.0.4.17:5432 timed out; db.internal resolves to 10.0.4.18.",
    "Email ada@example.com about the invoice; cc ops@example.com.",
    "ssh://git@github.com/acme/billing.git is the remote.",
    "Heading: Password Manager migration (Q2)",
    "The function returns Redaction(text, found) with found as a tuple.",
    "Phone +49 30 1234567, office hours 9-17.",
    "docker run -u 1000:1000 -p 8080:80 dreamer:latest",
    "sort -u names.txt | uniq -c; git push -u origin main",
    "mysql -u root -p shop  # prompts for the password",
    # Code from ingested transcripts: names and expressions, never values.
    "token = get_token(session)",
    'password = input("Password: ")',
    "password = getpass.getpass()",
    'api_key = config["api_key"]',
    "if token == expected_token: return True",
    "secret = secrets.token_hex(16)",
    "self.password = password",
    "client = Client(token=token, password=password)",
    "const apiKey = process.env.API_KEY;",
    'headers = {"Authorization": f"Bearer {token}"}',
    "password: Optional[str] = None",
    "api_key: str | None = None",
    "secret_key=settings.SECRET_KEY,",
    "password = var.db_password",
    "db_password: !vault |",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    'password: "{{ vault_db_password }}"',
    "| password | string | the user's password |",
    '"token": null, "password": ""',
    "Token: GitHub's fine-grained one, scoped to the repo.",
    "Convert the token to JSON before logging it.",
    "Pass the token to fetchUser and cache the result.",
    "The API key is UUID-like but not a UUID.",
    "The token is JWT, signed with RS256.",
    # Found by scanning 100 MB of library code and docs (stdlib, site-packages, /usr/share/doc).
    "self.user, self.password = user, password",
    "userid = passwd = acct = ''",
    "def revoke(self, token: AccessToken | RefreshToken) -> None:",
    "Overrides applied: `auth_token=auth_token` and nothing else.",
    'ENV_API_KEY = "ANTHROPIC_API_KEY"; GRANT_TYPE_REFRESH_TOKEN = "refresh_token"',
    "secret = r'([a-z0-9]{64})' in the plugin source.",
    "Supply them via the --username and --password options.",
    "password = utf8_to_utf16_dup(v);",
    "%sudo ALL=(root) NOPASSWD: /bin/systemctl restart dreamer",
    '"PWD": "/home/ada/project/node", "SHELL": "/bin/bash"',
    "printf(&quot;Password is correct.&quot;);",
    "<p>An invalid HTTP token was supplied.</p>",
    "from anthropic.tools import BetaAsyncAbstractComputerToolset20260801",
    "FUNC:_ZNKSt10filesystem4path7compareESt17basic_string_view@@GLIBCXX_3.4.26",
    "Ticket BILL-4412 and BILL-4413 closed; JIRA board cleaned up.",
]


def test_benign_corpus_is_big_enough():
    assert len(BENIGN) >= 60


@pytest.mark.parametrize("note", BENIGN)
def test_ordinary_notes_are_left_alone(note):
    result = redact(note)
    assert result.found == () and result.text == note
    assert not contains_secret(note)


SECRETS = [secret for _, secret, _ in CASES if len(secret) >= 8]


@pytest.mark.slow
@given(
    parts=st.lists(
        st.one_of(st.sampled_from(BENIGN), st.sampled_from(range(len(CASES)))),
        min_size=1,
        max_size=8,
    ),
    glue=st.sampled_from([" ", "\n", "\n\n", " | "]),
)
@settings(derandomize=True, max_examples=300, deadline=None)
def test_mixed_text_never_keeps_a_secret_and_is_idempotent(parts, glue):
    text = glue.join(CASES[p][2] if isinstance(p, int) else p for p in parts)
    result = redact(text)
    for index in {p for p in parts if isinstance(p, int)}:
        assert CASES[index][1] not in result.text
    assert redact(result.text).text == result.text


@pytest.mark.parametrize(
    ("note", "caught"),
    [
        ("password: swordfish", True),
        ("pw=swordfish now", True),
        ("the password is hunter2", True),
        ("the password is swordfish", False),  # a plain word cannot be told from prose
        ("password: swordfish for the guest wifi", False),
        ("token: swordfish", False),  # a short token needs a digit, symbol or inner capital
        ("set the password to Tr0ub4dor", True),
        ("compare the password to Tr0ub4dor", False),  # "to" only after a setting verb
        ("the password is in 1Password", False),  # where it lives, not what it is
        ("password is stored in vault", False),
    ],
)
def test_the_rules_for_secrets_given_in_words(note, caught):
    assert contains_secret(note) is caught


def test_a_replacement_that_changes_context_is_still_idempotent():
    key = fake("sk-ant-api03-", 93, 5, ALNUM + "_-")
    once = redact(f"password: swordfish {key}")
    assert once.text == (
        f"password: {placeholder('password', 'swordfish')} {placeholder('anthropic-key', key)}"
    )
    assert [f.kind for f in once.found] == ["password", "anthropic-key"]
    assert redact(once.text).text == once.text


@pytest.mark.slow
@given(st.text(max_size=300))
@settings(derandomize=True, max_examples=300, deadline=None)
def test_any_text_is_redacted_idempotently(text):
    once = redact(text)
    assert redact(once.text).text == once.text
    assert once.count == len(PLACEHOLDER.findall(once.text)) - len(PLACEHOLDER.findall(text))


@pytest.mark.slow
@given(st.text(alphabet=ALNUM + "+/=_-:@. \n", min_size=30, max_size=400))
@settings(derandomize=True, max_examples=300, deadline=None)
def test_token_like_noise_is_redacted_idempotently(text):
    once = redact(text)
    assert redact(once.text).text == once.text


def test_text_whose_lowercase_is_longer_keeps_positions():
    result = redact("İstanbul office: password: hunter22 (guest wifi)")
    assert (
        result.text
        == f"İstanbul office: password: {placeholder('password', 'hunter22')} (guest wifi)"
    )


def test_count_and_empty_text():
    assert redact("").count == 0 and redact("").text == ""
    assert redact("pw=Blue-Sky-42").count == 1


def test_agrees_with_detect_secrets_on_vendor_shapes():
    """Every value detect-secrets' vendor plugins flag in our cases is gone after redact."""
    plugins = pytest.importorskip("detect_secrets.plugins")
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    generic = {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
        "IPPublicDetector",
    }
    detectors = [
        cls()
        for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ not in generic
    ]
    assert plugins and len(detectors) >= 20
    flagged = 0
    for _, _, note in CASES:
        redacted = redact(note).text
        for detector in detectors:
            for value in detector.analyze_string(note):
                if len(value) >= 8:
                    flagged += 1
                    assert value not in redacted, (type(detector).__name__, note)
    assert flagged >= 15
