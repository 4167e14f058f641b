"""The edges of what a harness adds to a session: markup out of the words, machine paths made
relative, a tool's output reduced to its outcome, promises told from what was established."""

from __future__ import annotations

import pytest

from dreamer.agents import harness

CWD = "/home/mara/code/atlas"


@pytest.fixture
def home(monkeypatch):
    """The user's home is /srv/mara: a folder no home pattern knows, only Path.home()."""
    monkeypatch.setenv("HOME", "/srv/mara")
    return "/srv/mara"


def test_a_prompt_keeps_only_the_persons_words():
    prompt = (
        f"<ide_opened_file>The user opened {CWD}/src/lib.rs.</ide_opened_file>"
        "<system-reminder>Remember the todo list.</system-reminder>\n"
        "<command-name>/review</command-name> Why does "
        f"{CWD}/src/lib.rs panic?<bash-stdout>ok</bash-stdout>\n"
        "<user-prompt-submit-hook>hook said hi</user-prompt-submit-hook>  "
    )
    assert harness.clean(prompt, CWD) == "/review Why does src/lib.rs panic?"


def test_a_tag_left_without_its_pair_goes_and_its_words_stay():
    text = "<ide_selection>see line 4</ide_selection_end> <system-reminder>and </bash-input>x"
    cleaned = harness.clean(text)
    assert cleaned == "see line 4 and x"
    for tag in ("<ide_", "<system-reminder>", "</bash-input>"):
        assert tag not in cleaned


def test_clean_makes_the_project_folder_relative():
    assert harness.clean(f"  Edited {CWD}/README.md.  ", CWD) == "Edited README.md."
    assert harness.clean(f"Edited {CWD}/README.md.") == "Edited ~/code/atlas/README.md."


@pytest.mark.parametrize(
    ("cwd", "text", "relative"),
    [
        (CWD, f"{CWD}/src/main.rs", "src/main.rs"),
        (CWD + "/", f"{CWD}/src/main.rs", "src/main.rs"),
        (CWD, f"cd {CWD} && make", "cd . && make"),
        ("C:\\work\\atlas", "C:\\work\\atlas\\src\\main.rs", "src\\main.rs"),
        ("C:\\work\\atlas\\", "type C:\\work\\atlas\\src\\main.rs", "type src\\main.rs"),
        ("C:\\work\\atlas\\", "type C:\\work\\atlas", "type ."),
        ("/w", "/w/src/main.rs in /w", "src/main.rs in ."),  # a two-character folder
        ("/", "/etc/hosts and /var/log", "/etc/hosts and /var/log"),  # the root is no project
        ("", "/etc/hosts", "/etc/hosts"),
        (None, "/etc/hosts", "/etc/hosts"),
    ],
    ids=[
        "posix",
        "posix-trailing-slash",
        "the-folder-itself",
        "windows",
        "windows-trailing-backslash",
        "windows-the-folder-itself",
        "two-characters",
        "root",
        "empty",
        "none",
    ],
)
def test_the_project_folder_is_made_relative(cwd, text, relative):
    assert harness.relative(text, cwd) == relative


def test_the_users_home_is_written_as_a_tilde(home):
    text = f"{home}/notes/todo.md and {home}. Then {home}"
    assert harness.relative(text) == "~/notes/todo.md and ~. Then ~"


def test_a_folder_is_made_relative_only_where_it_stands_whole(home):
    """A sibling whose name starts with the folder's is another folder, left as it is."""
    text = f"{home}-old/a, {home}_2/b, {home}.d/c, {home}x/d"
    assert harness.relative(text) == text
    siblings = f"{CWD}-old/a.py, {CWD}_v2/b.py, {CWD}.git/c, {CWD}2/d, and {CWD}."
    assert harness.relative(siblings, CWD) == (
        "~/code/atlas-old/a.py, ~/code/atlas_v2/b.py, ~/code/atlas.git/c, ~/code/atlas2/d, and .."
    )


@pytest.mark.parametrize(
    ("home", "text", "relative"),
    [
        ("/", "cd / && cat /etc/hosts", "cd / && cat /etc/hosts"),  # "/" is no home
        ("/m", "/m/notes.md in /m", "~/notes.md in ~"),  # two characters: a home
    ],
    ids=["one-character", "two-characters"],
)
def test_a_home_of_one_character_is_left_alone(monkeypatch, home, text, relative):
    monkeypatch.setenv("HOME", home)
    assert harness.relative(text) == relative


@pytest.mark.parametrize(
    ("text", "relative"),
    [
        ("/home/ana/x.py", "~/x.py"),
        ("/Users/ana/x.py", "~/x.py"),
        ("C:\\Users\\ana\\x.py", "~\\x.py"),
        ("/var/home/ana/x.py", "/var/home/ana/x.py"),
    ],
    ids=["linux", "macos", "windows", "not-a-home"],
)
def test_anyones_home_folder_is_written_as_a_tilde(text, relative):
    assert harness.relative(text) == relative


@pytest.mark.parametrize(
    ("output", "found"),
    [
        ("=== 3 FAILED, 41 passed, 2 Warnings in 4s ===", "3 failed, 41 passed, 2 warnings"),
        ("1 failed\n...\n1 failed", "1 failed"),
        ("Ran 12 tests\n12 tests passed", "12 tests passed"),
        ("Traceback (most recent call last):\n  File x", "Traceback (most recent call last):"),
        ("compiling...\nerror: expected `;`  \nmore", "error: expected `;`"),
        ("fatal: not a git repository", "fatal: not a git repository"),
        ("no error here\nall fine", None),
        ("README.md\nsrc", None),
        ("", None),
    ],
    ids=[
        "counts",
        "counts-once",
        "tests-passed",
        "traceback",
        "error-line",
        "fatal",
        "error-mid-line",
        "listing",
        "empty",
    ],
)
def test_a_tools_output_becomes_its_outcome(output, found):
    assert harness.outcome(output) == found


def test_an_error_the_tool_reports_is_its_first_line():
    assert harness.outcome("\n   \n  No such file: x.toml  \nat line 3", True) == (
        "error: No such file: x.toml"
    )
    assert harness.outcome("", True) == "error"
    assert harness.outcome("\n  \n", True) == "error"
    assert harness.outcome("2 failed", True) == "2 failed"  # the counts say more


@pytest.mark.parametrize("length", [120, 121], ids=["at-the-limit", "one-over"])
def test_an_outcome_is_cut_at_a_hundred_and_twenty_characters(length):
    line = "y" * length
    assert harness.outcome(line, True) == "error: " + "y" * min(length, harness.OUTCOME_CHARS)
    counts = ", ".join(f"{n} passed" for n in range(100, 140))
    assert harness.outcome(counts) == counts[: harness.OUTCOME_CHARS]


@pytest.mark.parametrize("length", [100, 101], ids=["at-the-limit", "one-over"])
def test_a_failure_line_keeps_a_hundred_characters_after_its_first_word(length):
    line = "FAILED " + "z" * (length - 1)
    assert harness.outcome(f"collected 3 items\n{line}\nmore") == line[: len("FAILED") + 100]


@pytest.mark.parametrize(
    "sentence",
    [
        "I'll look at the rounding next.",
        "  Let me check the loader.",
        "I’m going to rerun the suite.",
        "Would you like me to open a PR?",
        "SHALL I push it?",
    ],
    ids=["ill", "let-me-indented", "curly-apostrophe", "would-you-like", "upper-case"],
)
def test_a_promise_or_an_offer_establishes_nothing(sentence):
    assert harness.promise(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["The cart tests fail on rounding.", "Letters are escaped twice.", "Illness aside, it works."],
    ids=["a-finding", "let-inside-a-word", "ill-inside-a-word"],
)
def test_a_finding_is_no_promise(sentence):
    assert not harness.promise(sentence)
