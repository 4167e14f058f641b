"""A corpus for dreamer's secret detector: secret kinds in agent notes, and ordinary notes.

Every value is generated here from a fixed seed in the shape the real one has (prefix, length,
alphabet, checksum where there is one): none is a real secret, and the file holds no literal
key for a scanner to flag. ``secrets()`` gives one note per kind (107 kinds: vendor keys and
tokens, keys no rule names, keys in URLs, headers and base64, private keys, card numbers,
passwords and passphrases in prose in twelve languages); ``ordinary()`` gives 300 notes of agent
life that hold no secret (hashes, digests, uuids, ids, code, URLs, file names, versions,
placeholder code, IBANs quoted from documentation, passwords talked about with no value) and
must come through unchanged.

Used by tests/support/test_secrets_corpus.py (every kind redacted at every door) and by
benchmarks/secrets/measure.py (the figures in docs/contributing/secrets-ruleset.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    """One secret kind: the value that must disappear and the note that carries it."""

    kind: str
    value: str
    note: str


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, alphabet: str, n: int) -> str:
        """n characters from alphabet; mixed alphabets hold an upper, a lower and a digit."""
        out = [self.rng.choice(alphabet) for _ in range(n)]
        if n >= 6 and set(alphabet) >= set(ALNUM):
            out[1], out[3], out[5] = (
                self.rng.choice(UPPER),
                self.rng.choice(LOWER),
                self.rng.choice(DIGITS),
            )
        return "".join(out)

    def card(self, prefix: str, length: int) -> str:
        """A Luhn-valid card number."""
        body = prefix + "".join(self.rng.choice(DIGITS) for _ in range(length - len(prefix) - 1))
        for check in DIGITS:
            if _luhn(body + check):
                return body + check
        raise AssertionError("unreachable")


def _luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _group(number: str, sizes: tuple[int, ...], sep: str) -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(number[at : at + size])
        at += size
    return sep.join(parts)


def secrets() -> list[Case]:
    """One note per secret kind (the value is what must not land)."""
    g = _Gen(2026)
    p = g.pick
    jwt = ".".join(
        [
            _b64url({"alg": "RS256", "kid": p(HEX, 8)}),
            _b64url({"sub": "svc-deploy", "exp": 1893456000, "scope": "repo"}),
            p(URLSAFE, 86),
        ]
    )
    ec_key = "\n".join(
        ["-----BEGIN EC PRIVATE KEY-----"]
        + [p(B64, 64) for _ in range(3)]
        + ["-----END EC PRIVATE KEY-----"]
    )
    pgp_key = "\n".join(
        ["-----BEGIN PGP PRIVATE KEY BLOCK-----", ""]
        + [p(B64, 64) for _ in range(4)]
        + ["=" + p(B64, 4), "-----END PGP PRIVATE KEY BLOCK-----"]
    )
    visa = g.card("4", 16)
    master = g.card("55", 16)
    amex = g.card("37", 15)
    discover = g.card("6011", 16)
    b32 = UPPER + "234567"
    cases = [
        # Cloud and code hosts
        ("aws-access-key-id", v := "AKIA" + p(b32, 16), f"Backup job runs as {v} in eu-west-1"),
        ("aws-sts-key-id", v := "ASIA" + p(b32, 16), f"the session creds begin with {v}"),
        (
            "aws-secret-key-named",
            v := p(B64, 40),
            f'terraform.tfvars has aws_secret_access_key = "{v}"',
        ),
        ("github-fine-grained-pat", v := "github_pat_" + p(ALNUM + "_", 82), f"bot uses {v}"),
        ("github-user-to-server", v := "ghu_" + p(ALNUM, 36), f"OAuth app handed back {v}"),
        ("github-refresh", v := "ghr_" + p(ALNUM, 36), f"refresh with {v} when it lapses"),
        ("gitlab-runner", v := "glrt-" + p(URLSAFE, 20), f"registered runner with {v}"),
        ("gitlab-trigger", v := "glptt-" + p(HEX, 40), f"pipeline trigger {v}"),
        ("gitlab-deploy", v := "gldt-" + p(URLSAFE, 20), f"read-only deploy token {v}"),
        ("google-api-key", v := "AIza" + p(URLSAFE, 35), f"Firebase web config apiKey {v}"),
        ("google-oauth-secret", v := "GOCSPX-" + p(URLSAFE, 28), f"OAuth client secret {v}"),
        ("azure-storage", v := p(B64, 86) + "==", f"AccountName=logs;AccountKey={v};Endpoint"),
        ("azure-ad-secret", v := p(ALNUM, 3) + "8Q~" + p(ALNUM + "_~.-", 34), f"AAD app {v}"),
        ("digitalocean-pat", v := "dop_v1_" + p(HEX, 64), f"doctl auth init with {v}"),
        ("heroku-key", v := "HRKU-AA" + p(URLSAFE, 58), f"HEROKU_API_KEY is {v}"),
        ("flyio-token", v := "fo1_" + p(URLSAFE, 43), f"fly deploy token {v}"),
        ("cloudflare-origin-ca", v := "v1.0-" + p(HEX, 24) + "-" + p(HEX, 146), f"CF {v}"),
        ("vault-service-token", v := "hvs." + p(URLSAFE, 95), f"VAULT_TOKEN={v} for the migration"),
        ("vault-batch-token", v := "hvb." + p(URLSAFE, 140), f"batch token {v} for CI"),
        (
            "terraform-cloud",
            v := p(ALNUM, 14) + ".atlasv1." + p(URLSAFE, 67),
            f"TFC token {v} in ~/.terraformrc",
        ),
        ("pulumi-token", v := "pul-" + p(HEX, 40), f"pulumi login with {v}"),
        ("doppler-token", v := "dp.pt." + p(ALNUM, 43), f"doppler service token {v}"),
        ("databricks-token", v := "dapi" + p(HEX, 32), f"Databricks PAT {v}"),
        ("docker-hub-pat", v := "dckr_pat_" + p(URLSAFE, 27), f"docker login -p {v}"),
        ("npm-token", v := "npm_" + p(ALNUM, 36), f".npmrc authToken {v}"),
        ("pypi-token", v := "pypi-AgEIcHlwaS5vcmc" + p(URLSAFE, 70), f"upload with {v}"),
        ("rubygems-key", v := "rubygems_" + p(HEX, 48), f"gem push key {v}"),
        # AI providers
        ("anthropic-admin-key", v := "sk-ant-admin01-" + p(URLSAFE, 93) + "AA", f"admin {v}"),
        ("anthropic-key-short", v := "sk-ant-api03-" + p(URLSAFE, 40), f"test key {v} (clip)"),
        (
            "openai-project-key",
            v := "sk-proj-" + p(URLSAFE, 58) + "T3BlbkFJ" + p(URLSAFE, 58),
            f"OPENAI_API_KEY={v}",
        ),
        ("openai-legacy-key", v := "sk-" + p(ALNUM, 20) + "T3BlbkFJ" + p(ALNUM, 20), f"old {v}"),
        ("huggingface-token", v := "hf_" + p(UPPER + LOWER, 34), f"model pulls use {v}"),
        ("perplexity-key", v := "pplx-" + p(ALNUM, 48), f"search fallback key {v}"),
        ("groq-key", v := "gsk_" + p(ALNUM, 52), f"GROQ_API_KEY={v}"),
        # Chat, mail, payments, SaaS
        (
            "slack-app-token",
            v := "xapp-1-A" + p(UPPER + DIGITS, 10) + "-" + p(DIGITS, 13) + "-" + p(HEX, 64),
            f"socket mode app token {v}",
        ),
        (
            "slack-webhook",
            v := "https://hooks.slack.com/services/T"
            + p(UPPER + DIGITS, 8)
            + "/B"
            + p(UPPER + DIGITS, 10)
            + "/"
            + p(ALNUM, 24),
            f"deploy alerts post to {v}",
        ),
        (
            "discord-webhook",
            v := "https://discord.com/api/webhooks/" + p(DIGITS, 18) + "/" + p(URLSAFE, 68),
            f"release notes go to {v}",
        ),
        (
            "teams-webhook",
            v := "https://acme.webhook.office.com/webhookb2/"
            + str(uuid.UUID(int=g.rng.getrandbits(128)))
            + "@"
            + str(uuid.UUID(int=g.rng.getrandbits(128)))
            + "/IncomingWebhook/"
            + p(HEX, 32)
            + "/"
            + str(uuid.UUID(int=g.rng.getrandbits(128))),
            f"Teams channel hook {v}",
        ),
        ("telegram-bot", v := p(DIGITS, 10) + ":AA" + p(URLSAFE, 33), f"alerts bot {v}"),
        ("stripe-restricted", v := "rk_live_" + p(ALNUM, 99), f"reporting key {v}"),
        ("stripe-webhook", v := "whsec_" + p(ALNUM, 32), f"webhook signing secret {v}"),
        ("shopify-access", v := "shpat_" + p(HEX, 32), f"Shopify admin token {v}"),
        ("shopify-shared-secret", v := "shpss_" + p(HEX, 32), f"app shared secret {v}"),
        ("sendgrid-key", v := "SG." + p(URLSAFE, 22) + "." + p(URLSAFE, 43), f"mail via {v}"),
        ("mailgun-key", v := "key-" + p(HEX, 32), f"mailgun api key {v}"),
        ("twilio-key", v := "SK" + p(HEX, 32), f"Twilio API key SID {v}"),
        ("linear-key", v := "lin_api_" + p(ALNUM, 40), f"Linear sync uses {v}"),
        ("notion-token", v := "ntn_" + p(DIGITS, 11) + p(ALNUM, 35), f"Notion integration {v}"),
        ("postman-key", v := "PMAK-" + p(HEX, 24) + "-" + p(HEX, 34), f"collection runs {v}"),
        ("grafana-service-account", v := "glsa_" + p(ALNUM, 32) + "_" + p(HEX, 8), f"graf {v}"),
        ("new-relic-user-key", v := "NRAK-" + p(UPPER + DIGITS, 27), f"NR key {v}"),
        (
            "atlassian-token",
            v := "ATATT3xFfGF0" + p(URLSAFE, 171) + "=" + p(HEX.upper(), 8),
            f"Jira API token {v}",
        ),
        ("sentry-dsn", v := p(HEX, 32), f"SENTRY_DSN=https://{v}@o4505.ingest.sentry.io/4506"),
        ("sentry-user-token", v := "sntryu_" + p(HEX, 64), f"sentry-cli token {v}"),
        ("1password-service", v := "ops_eyJ" + p(B64, 250), f"op service account {v}"),
        (
            "age-key",
            v := "AGE-SECRET-KEY-1" + p("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
            f"sops {v}",
        ),
        # Structured secrets
        ("jwt-rs256", jwt, f"the gateway accepted {jwt} for an hour"),
        ("ec-private-key", ec_key, f"signing key for the webhook:\n{ec_key}\nkeep it in vault"),
        ("pgp-private-key", pgp_key, f"release signing key\n{pgp_key}"),
        (
            "basic-auth-header",
            v := base64.b64encode(f"deploy:{p(ALNUM, 14)}".encode()).decode(),
            f"curl -H 'Authorization: Basic {v}' https://ci.internal/job",
        ),
        ("rediss-url-password", v := p(ALNUM, 18), f"REDIS_URL=rediss://default:{v}@cache:6380"),
        # Cards (Luhn-valid, never issued)
        ("card-visa-spaces", v := _group(visa, (4, 4, 4, 4), " "), f"paid with card {v} exp 09/28"),
        ("card-mastercard-dashes", v := _group(master, (4, 4, 4, 4), "-"), f"Card: {v}, CVC 123"),
        ("card-amex-spaces", v := _group(amex, (4, 6, 5), " "), f"corporate Amex {v} for travel"),
        ("card-discover-plain", v := discover, f"customer's card number is {v}"),
        # Passwords and passphrases in prose
        (
            "password-sentence",
            v := p(LOWER, 7) + p(DIGITS, 2) + "!",
            f"my password for the router admin page is {v}",
        ),
        (
            "passphrase-words",
            v := "-".join(g.rng.choice(_WORDS) for _ in range(4)),
            f"the wifi passphrase is {v}",
        ),
        (
            "passphrase-spaces",
            v := " ".join(g.rng.choice(_WORDS) for _ in range(4)),
            f"The passphrase for my ssh key is {v}.",
        ),
        ("user-slash-password", v := p(ALNUM, 12) + "#", f"NAS login: admin / {v}"),
        ("creds-colon", v := p(LOWER, 5) + p(DIGITS, 3) + "$", f"creds for the VPN are ada:{v}"),
        (
            "env-db-password",
            v := p(ALNUM, 16),
            f"added DB_PASSWORD={v} to .env.production by mistake",
        ),
        ("pin-prose", v := p(DIGITS, 6), f"the door code / PIN for the office is {v}"),
        # Issue 36: kinds no rule named, in places no rule looked (own values)
        ("xai-key", v := "xai-" + p(ALNUM, 80), f"switched the grok calls to {v} yesterday"),
        ("replicate-token", v := "r8_" + p(ALNUM, 37), f"image runs on replicate use {v}"),
        (
            "circleci-pat",
            v := "CCIPAT_" + p(ALNUM, 22) + "_" + p(HEX, 40),
            f"pipelines get triggered with {v}",
        ),
        ("buildkite-token", v := "bkua_" + p(HEX, 40), f"the agent pulls jobs with {v}"),
        (
            "tailscale-auth-key",
            v := "tskey-auth-" + p(ALNUM, 11) + "CNTRL-" + p(ALNUM, 33),
            f"joined the tailnet using {v}",
        ),
        ("supabase-secret", v := "sb_secret_" + p(URLSAFE, 31), f"edge functions use {v}"),
        (
            "base64-stripe-key",
            v := base64.b64encode(f"sk_live_{p(ALNUM, 24)}".encode()).decode(),
            f"the config map holds {v} for billing",
        ),
        (
            "base64-github-token",
            v := base64.b64encode(f"ghp_{p(ALNUM, 36)}".encode()).decode(),
            f"ci secret blob {v}",
        ),
        (
            "base64-aws-pair",
            v := base64.b64encode(
                f"aws_access_key_id=AKIA{p(b32, 16)}\naws_secret_access_key={p(B64, 40)}".encode()
            ).decode(),
            f"kubectl get secret aws -o yaml showed data: {v}",
        ),
        (
            "azure-sas-sig",
            v := p(B64, 43) + "%3D",
            "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
            f"&se=2026-01-01&sig={v}",
        ),
        (
            "s3-presigned-signature",
            v := p(HEX, 64),
            f"shared https://b.s3.amazonaws.com/k?X-Amz-Expires=900&X-Amz-Signature={v}",
        ),
        ("unnamed-prefix-key", v := "acme_live_" + p(ALNUM, 32), f"the widget api wants {v}"),
        ("unnamed-short-prefix", v := "zz9-" + p(ALNUM, 36), f"ran the import with {v} today"),
        ("unnamed-hex-prefix", v := "wpk_" + p(HEX, 40), f"deploy used {v} from the vault"),
        ("unnamed-env-value", v := p(ALNUM, 34), f"WIDGET_CONN={v}"),
        ("unnamed-json-value", v := p(ALNUM, 32), f'settings.json has "upstream": "{v}"'),
        ("unnamed-header-value", v := p(ALNUM, 32), f"x-signing: {v}"),
        ("openrouter-key", v := "sk-or-v1-" + p(HEX, 64), f"models via openrouter {v}"),
        ("langsmith-key", v := "lsv2_pt_" + p(HEX, 32) + "_" + p(HEX, 10), f"tracing {v}"),
        ("tavily-key", v := "tvly-" + p(ALNUM, 32), f"web search through {v}"),
        ("nvidia-key", v := "nvapi-" + p(URLSAFE, 64), f"NIM endpoint with {v}"),
        ("hubspot-pat", v := "pat-na1-" + str(uuid.UUID(int=g.rng.getrandbits(128))), f"crm {v}"),
        (
            "password-english-told",
            v := p(LOWER, 6) + p(DIGITS, 1) + "-" + p(UPPER, 1) + p(LOWER, 3) + p(DIGITS, 2),
            f"I told Tom the wifi password, it's {v}",
        ),
        (
            "password-english-bank",
            v := p(UPPER, 1) + p(LOWER, 5) + "-" + p(UPPER, 1) + p(LOWER, 4) + "-" + p(DIGITS, 2),
            f"my login for the bank is ada.lovelace and the password I use there is {v}",
        ),
        (
            "password-german",
            v := p(UPPER, 1) + p(LOWER, 9) + p(DIGITS, 2),
            f"Das Passwort für den Router ist {v} und sonst nichts.",
        ),
        (
            "password-japanese",
            v := p(LOWER, 5) + "-" + p(UPPER, 1) + p(LOWER, 3) + p(DIGITS, 2),
            f"ルーターのパスワードは {v} です。",
        ),
        (
            "password-french",
            v := p(UPPER, 1) + p(LOWER, 5) + "-" + p(UPPER, 1) + p(LOWER, 4) + p(DIGITS, 2),
            f"Le mot de passe du wifi est {v}, ne le partage pas.",
        ),
        (
            "password-spanish",
            v := p(UPPER, 1) + p(LOWER, 6) + "-" + p(DIGITS, 4) + "x",
            f"La contraseña del correo es {v}",
        ),
        (
            "password-portuguese",
            v := p(UPPER, 1) + p(LOWER, 6) + "-" + p(DIGITS, 2) + "kz",
            f"A senha do banco é {v}.",
        ),
        (
            "password-italian",
            v := p(UPPER, 1) + p(LOWER, 4) + "-" + p(UPPER, 1) + p(LOWER, 3) + "-" + p(DIGITS, 2),
            f"La password del router è {v}",
        ),
        (
            "password-dutch",
            v := p(UPPER, 1) + p(LOWER, 3) + "-" + p(UPPER, 1) + p(LOWER, 3) + "-" + p(DIGITS, 2),
            f"Het wachtwoord van de server is {v}",
        ),
        (
            "password-polish",
            v := p(UPPER, 1) + p(LOWER, 4) + "-" + p(DIGITS, 2) + p(UPPER, 1) + p(LOWER, 2),
            f"Hasło do poczty to {v}",
        ),
        (
            "password-russian",
            v := p(UPPER, 1) + p(LOWER, 5) + "-" + p(DIGITS, 2) + "x",
            f"Пароль от почты — {v}",
        ),
        (
            "password-chinese",
            v := p(UPPER, 1) + p(LOWER, 5) + "-" + p(DIGITS, 2) + "q",
            f"我的邮箱密码是 {v}",
        ),
        (
            "password-korean",
            v := p(UPPER, 1) + p(LOWER, 6) + "-" + p(DIGITS, 2) + "x",
            f"와이파이 비밀번호는 {v} 입니다",
        ),
    ]
    return [Case(kind, value, note) for kind, value, note in cases]


_WORDS = (
    "copper lantern orbit meadow falcon velvet harbor cinder maple quartz tundra willow "
    "saffron ember glacier pebble thistle comet raven lagoon"
).split()


def ordinary() -> list[str]:
    """300 notes an agent writes that hold no secret."""
    g = _Gen(7)
    notes = list(_ORDINARY)
    for i in range(200 - len(notes)):
        sha = hashlib.sha1(f"commit {i}".encode()).hexdigest()
        ident = uuid.UUID(int=g.rng.getrandbits(128))
        form = i % 10
        if form == 0:
            notes.append(f"Merged {sha} after review; CI run {g.rng.randint(10000, 99999)} green.")
        elif form == 1:
            notes.append(f"Crystal {ident} archived; {g.rng.randint(2, 40)} notes consumed.")
        elif form == 2:
            notes.append(f"git show {sha[:7]} -- dreamer/store/sqlite.py touched the WAL pragma.")
        elif form == 3:
            notes.append(
                f"Image sha256:{hashlib.sha256(sha.encode()).hexdigest()} pinned for worker."
            )
        elif form == 4:
            notes.append(
                f"Release v{g.rng.randint(1, 4)}.{g.rng.randint(0, 30)}.{g.rng.randint(0, 9)} "
                f"tagged on 2026-0{g.rng.randint(1, 9)}-1{g.rng.randint(0, 9)}."
            )
        elif form == 5:
            notes.append(
                f"Order {g.rng.randint(10**7, 10**8)} shipped; "
                f"invoice INV-{g.rng.randint(1000, 9999)}."
            )
        elif form == 6:
            notes.append(f"Saved screenshot_{sha[:12]}.png and diagram-{ident.hex[:8]}.svg.")
        elif form == 7:
            notes.append(
                f"Request id req_{sha[:24]} timed out after {g.rng.randint(2, 30)} s on /v1/search."
            )
        elif form == 8:
            notes.append(f"Trace {ident.hex} shows the lock wait in scratch.append.")
        else:
            notes.append(
                f"Build {g.rng.randint(100, 999)} took {g.rng.randint(30, 600)} s; "
                f"cache key deps-{sha[:16]}."
            )
    return notes + _look_alikes(g) + _ISSUE_36


_ORDINARY = [
    # Code the agent read or wrote, placeholders and names, never values
    "token='placeholder' is what the fixture passes to the client",
    "api_key = 'your-api-key-here' in README example",
    "password = '<password>' in the sample config",
    "Set token=None in the tests so the client never calls out.",
    "client = Anthropic(api_key=os.environ['ANTHROPIC_API_KEY'])",
    "def refresh(self, token: str) -> Token: returns a new access token",
    "headers['Authorization'] = f'Bearer {self.token}'",
    "SECRET_KEY = env('DJANGO_SECRET_KEY') in settings/base.py",
    "assert check_password(user, 'wrong') is False",
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "const token = await getToken({ req });",
    "export GITHUB_TOKEN=$(gh auth token) before running the release script",
    "kubectl create secret generic db --from-env-file=.env (values not in the repo)",
    "The fixture uses FAKE_KEY = 'test' and never reaches the network.",
    "OPENAI_API_KEY=sk-... in .env.example shows the shape only.",
    "aws configure set aws_access_key_id $AWS_ACCESS_KEY_ID in the CI step",
    "Use --token-file ~/.config/dreamer/token instead of --token on the command line.",
    "password: ${{ secrets.DB_PASSWORD }} in the workflow",
    "if not api_key: raise ConfigError('set ANTHROPIC_API_KEY')",
    "token_count = len(encoder.encode(text)) for the budget",
    "max_tokens=1024, stop_sequences=['</state>'] for the dream call",
    "tokens_used: 18234 of 200000 context",
    "key = (crystal.id, crystal.hash) is the cache key",
    "primary key (id) and a unique index on hash",
    "for key, value in sorted(settings.items()): print(key, value)",
    "The secret sauce is the rotation: the scratch never grows past 10 MB.",
    "PasswordHasher().hash(raw) with argon2id defaults",
    "reset_password_token is cleared after use",
    "grep -r 'password' src/ found only the login form labels",
    "The login form has fields username and password and a remember-me box.",
    # Prose about secrets, no value
    "The password for the staging box is in the team vault under 'staging'.",
    "Rotated the GitHub token today; the new one is in 1Password.",
    "Maya asked me to never paste API keys into notes.",
    "Password resets now require the second factor.",
    "The API key expired yesterday, so the sync failed with 401.",
    "The passphrase is required at every boot; the user types it.",
    "Forgot the wifi password again; asked the front desk.",
    "The token is short-lived, 15 minutes, refreshed by the SDK.",
    "user / password login is disabled; SSO only since March.",
    "credentials: see the shared vault entry 'billing-prod'",
    "login: via SSO / no password needed",
    "the door code is on the sticky note at reception",
    "His PIN for the phone is required after every reboot.",
    # Ids, numbers, hashes, URLs, versions
    "Tracking number 1Z999AA10123456784 for the replacement laptop.",
    "ISBN 978-3-16-148410-0 is the book Maya recommended.",
    "Phone +44 20 7946 0958, ask for the night desk.",
    "IBAN-free transfer ref 2026031200451 booked.",
    "Timestamp 1741790400000 is 2025-03-12 in ms.",
    "Build number 4111 passed; 4112 is flaky on arm64.",
    "Ticket numbers 5500 0000 and 5500 0001 were merged.",
    "The meeting ID is 845 2291 3307 (no passcode).",
    "Account number ends in 4242 per the customer's email.",
    "Ports 5432, 6379 and 8080 open on the dev box.",
    "https://github.com/acme/dreamer/pull/812#discussion_r1523456789",
    "https://docs.anthropic.com/en/api/messages#body-max-tokens",
    "https://grafana.internal/d/b7e4a1/dreams?from=now-24h&var-ws=ada",
    "https://user@example.com/path is a URL with a user and no password",
    "git@github.com:acme/dreamer.git is the SSH remote",
    "Download from https://files.example.com/v2/exports/2026-03-12/memory.tar.gz",
    "pip install dreamer-memory==0.9.3 --index-url https://pypi.org/simple",
    "Python 3.11.7, SQLite 3.45.1, numpy 2.1.3, onnxruntime 1.20.1",
    "node v22.11.0 and pnpm 9.12.3 on the runner",
    "Chrome 131.0.6778.85 on macOS 15.1.1",
    "sha512-9Zk4uX0rW is a truncated integrity prefix, not a key",
    "Base64 of 'hello world' is aGVsbG8gd29ybGQ=",
    "The PNG starts with iVBORw0KGgo and is 48 KB.",
    "Uploaded logo@2x.png, logo-dark.svg and favicon-32x32.png.",
    "Renamed IMG_20260312_143012.jpg to whiteboard-sketch.jpg.",
    "Docker image ghcr.io/acme/dreamer:0.9.3-slim pushed.",
    "Cron expression 0 */6 * * * runs the dream every six hours.",
    "Regex ^[A-Z]{2}\\d{6}$ validates the order ids.",
    "CSS grid-template-columns: repeat(auto-fill, minmax(240px, 1fr))",
    "SQL: UPDATE crystals SET lifecycle = 'archived' WHERE id IN (12, 15, 19);",
    "The JSON schema requires 'note' and allows 'importance' between 0 and 1.",
    "Error code E1102: lock held by pid 48211 on host ada-mbp.",
    "AWS region eu-central-1, bucket dreamer-backups-ada, prefix 2026/03/",
    "arn:aws:s3:::dreamer-backups-ada/2026/03/12/crystals.db",
    "Lambda function dreamer-nightly, memory 512 MB, timeout 900 s.",
    "Kubernetes namespace agents, deployment dream-worker, 2 replicas.",
    "The UUID v7 0190b4e2-7c3a-7d4e-9f12-3a4b5c6d7e8f sorts by time.",
    "MAC address 3c:22:fb:9a:41:0e belongs to the office printer.",
    "IPv6 2001:db8:85a3::8a2e:370:7334 is the test range.",
    "ULID 01HRZ8ZQ2N6K5X4W3V2T1S0R9P for the import batch.",
    "The Stripe customer cus_PQR123abc456 upgraded to the team plan.",
    "Price id price_1OaBcDeFgHiJkLmN is the monthly plan.",
    "Sentry issue DREAMER-4F2 shows the regression.",
    "Slack channel C04ABCD1234 is #dream-alerts.",
    "Linear issue ENG-1423 tracks the flaky test.",
    "Google Doc id 1A2b3C4d5E6f7G8h9I0j is the roadmap.",
    "YouTube video dQw4w9WgXcQ was the example in the talk.",
    "Figma file key aBcD1234EfGh5678 holds the new report design.",
    # Agent life
    "User prefers answers with the code first, then a short why.",
    "Maya is out until Monday; Tom reviews in the meantime.",
    "Decided to keep the offline synthesizer as the default.",
    "Spent two hours on the flaky lock test; the cause was a stale pid file.",
    "Next: write the migration guide and ping Tom about the schema.",
    "The report page renders in 180 ms on the 10k workspace.",
    "Cortisol stayed high after three failed deploys in a row.",
    "User said 'thanks, that worked' after the index fix.",
    "Learned: sqlite's WAL needs a checkpoint before the purge.",
    "Open question: should forgotten crystals keep their hash?",
]


def _look_alikes(g: _Gen) -> list[str]:
    """60 notes of hashes, ids, digests and generated names that look like keys and are not."""
    notes = []
    for i in range(60):
        sha = hashlib.sha1(f"look-alike {i}".encode()).hexdigest()
        digest = hashlib.sha256(sha.encode()).hexdigest()
        ident = uuid.UUID(int=g.rng.getrandbits(128))
        integrity = base64.b64encode(hashlib.sha512(sha.encode()).digest()).decode()
        form = i % 12
        if form == 0:
            notes.append(f"git rev-parse HEAD gave {sha} on the release branch.")
        elif form == 1:
            notes.append(f"sha256sum dist/dreamer-0.9.{i}.tar.gz: {digest}")
        elif form == 2:
            notes.append(f"docker pull ghcr.io/acme/dreamer@sha256:{digest}")
        elif form == 3:
            notes.append(f'package-lock: "integrity": "sha512-{integrity}"')
        elif form == 4:
            notes.append(f"run-{ident} finished; crystal_{ident.hex} consumed.")
        elif form == 5:
            notes.append(f"Anthropic request msg_01{g.pick(ALNUM, 22)} took {i} s.")
        elif form == 6:
            notes.append(f"tool call toolu_01{g.pick(ALNUM, 22)} returned an error.")
        elif form == 7:
            notes.append(f"Stripe event evt_1{g.pick(ALNUM, 23)} replayed on staging.")
        elif form == 8:
            notes.append(f"OpenAI answered chatcmpl-{g.pick(ALNUM, 29)} after retries.")
        elif form == 9:
            notes.append(f"commit_{sha} is the squash of the forget branch.")
        elif form == 10:
            notes.append(f"Bundle https://cdn.example.com/assets/app-{g.pick(ALNUM, 20)}.js")
        else:
            text = f"a longer harmless text number {i} for the encoder test"
            notes.append(f"base64 of the fixture: {base64.b64encode(text.encode()).decode()}")
    return notes


# Issue 36: IBANs quoted from documentation, passwords talked about in many languages (no
# value), and code and names that look like values.
_ISSUE_36 = [
    "The docs use DE89 3704 0044 0532 0130 00 as the example IBAN.",
    "IBAN format example from the spec: GB82 WEST 1234 5698 7654 32",
    "Validator test: the Wikipedia example IBAN FR14 2004 1010 0505 0001 3M02 606 passes.",
    "The password policy changed in v2.14.0-rc.1 last week.",
    "password hashing uses argon2id, not sha256 or PBKDF2-SHA256",
    "Das Passwort muss mindestens 12 Zeichen lang sein.",
    "Das Kennwort wird im Tresor verwaltet.",
    "Le mot de passe est stocké dans le coffre.",
    "La contraseña está en el gestor de contraseñas.",
    "A senha fica no cofre da equipe.",
    "La password è nel gestore delle password.",
    "Het wachtwoord staat in de kluis.",
    "Hasło jest w menedżerze haseł.",
    "Пароль хранится в менеджере паролей.",
    "パスワードは1Passwordに保存しています。",
    "密码保存在密码管理器里。",
    "비밀번호는 금고에 있습니다.",
    "BetaAsyncComputerToolset20260801 is the class name in the SDK",
    "sessionStorage.setItem('token_count', String(n)) in app.js",
    "https://docs.google.com/document/d/1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz/edit",
    "The wifi at the cafe has no password; the network is CafeGuest-5G.",
    "Reset the password with `dream secrets rotate --user ada` (no value printed).",
    "Set PASSWORD_MIN_LENGTH=12 and TOKEN_TTL_SECONDS=900 in settings.",
    "cache_key = f'{user_id}:{crystal_hash}' keeps the lookups cheap",
    "Renamed test_secrets_boundary_v2.py to test_secrets_boundary.py.",
    'ETag: W/"5e8f0c2a9b7d41c3a6f2e1d0b9c8a7f6" on the export endpoint',
    "X-Request-Id: 7c9e6679-7425-40de-944b-e07fc1f90ae7 in the failing call",
    "The SSH key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@mbp",
    "Feature flag new-report-ui-2026q1 is on for 10% of users.",
    "Model id claude-sonnet-4-5-20250929 in the settings file.",
    "The build artefact dreamer-0.9.3-py3-none-any.whl is 412 KB.",
    "npm run build:prod -- --env=staging --sourcemap",
    "Query ?page=2&per_page=50&sort=created_at&order=desc on /v1/crystals",
    "SELECT id, text FROM crystals WHERE hash = :hash LIMIT 1;",
    "Tailscale node ada-mbp has IP 100.101.102.103 on the tailnet.",
    "Replicate model stability-ai/sdxl:"
    "39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b",
    "CircleCI pipeline 4f2e9a1 passed on the main branch.",
    "Buildkite build #1423 on the dreamer pipeline went green.",
    "The Supabase project ref is abcdefghijklmnopqrst (not a secret).",
]
