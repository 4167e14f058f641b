"""Settings: seed defaults, precedence flag > env > dreamer.toml > default, one-line errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dreamer import Workspace
from dreamer.cli import main
from dreamer.config import Settings, describe, load_settings
from dreamer.errors import InvalidSetting


def write_toml(tmp_path, text: str):
    path = tmp_path / "dreamer.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_seeds(tmp_path):
    settings = load_settings(tmp_path / "missing.toml", environ={})
    assert settings.dream_enabled is True
    assert settings.dream_interval_minutes == 120
    assert settings.consolidation_interval_minutes == 30
    assert settings.min_chunks_for_dream == 5
    assert settings.search_sources == ["memory", "sessions"]
    assert settings.session_memory is True
    assert settings.sessions_searchable()
    assert settings.api_key is None and settings.synthesis()[0] != "claude"
    assert set(settings.sources.values()) == {"default"}
    assert Settings() == load_settings(None, environ={})


def test_toml_keys_use_the_seed_names(tmp_path):
    path = write_toml(
        tmp_path,
        """
        [memory.dream]
        enabled = false
        intervalMinutes = 60
        minChunksForDream = 3
        [memory.consolidation]
        intervalMinutes = 15
        [memory.search]
        sources = ["memory"]
        experimental.sessionMemory = false
        [memory.hormones.cortisol]
        rest = 0.1
        halfLifeMinutes = 90
        """,
    )
    settings = load_settings(path, environ={})
    assert (
        settings.dream_enabled,
        settings.dream_interval_minutes,
        settings.min_chunks_for_dream,
        settings.consolidation_interval_minutes,
    ) == (False, 60, 3, 15)
    assert settings.search_sources == ["memory"] and not settings.sessions_searchable()
    assert settings.session_memory is False
    assert settings.hormone_rest["cortisol"] == 0.1
    assert settings.hormone_half_life_minutes["cortisol"] == 90
    assert settings.hormone_rest["dopamine"] == 0.15  # untouched siblings keep their defaults
    assert settings.sources["dream_interval_minutes"] == "dreamer.toml"
    assert settings.sources["max_revisions"] == "default"


def test_dotted_keys_work_as_well(tmp_path):
    path = write_toml(tmp_path, '"memory.dream.intervalMinutes" = 45\n')
    assert load_settings(path, environ={}).dream_interval_minutes == 45


def test_precedence_flag_over_env_over_toml_over_default(tmp_path):
    path = write_toml(
        tmp_path,
        """
        [memory.dream]
        intervalMinutes = 60
        minChunksForDream = 3
        [memory.consolidation]
        intervalMinutes = 10
        """,
    )
    environ = {"DREAM_DREAM_INTERVAL_MINUTES": "90", "DREAM_MIN_CHUNKS_FOR_DREAM": "7"}
    settings = load_settings(
        path, environ=environ, overrides={"dream_interval_minutes": 200, "max_revisions": None}
    )
    assert settings.dream_interval_minutes == 200  # flag beats env and toml
    assert settings.min_chunks_for_dream == 7  # env beats toml
    assert settings.consolidation_interval_minutes == 10  # toml beats default
    assert settings.max_revisions == 2  # an unset flag (None) changes nothing
    assert settings.sources["dream_interval_minutes"] == "flag"
    assert settings.sources["min_chunks_for_dream"] == "env"
    assert settings.sources["consolidation_interval_minutes"] == "dreamer.toml"
    rows = {row["key"]: row for row in describe(settings)}
    assert rows["memory.dream.intervalMinutes"]["source"] == "flag"
    assert rows["memory.dream.minChunksForDream"]["env"] == "DREAM_MIN_CHUNKS_FOR_DREAM"


def test_environment_values_are_parsed(tmp_path):
    settings = load_settings(
        None,
        environ={
            "DREAM_DREAM_ENABLED": "no",
            "DREAM_SEARCH_SOURCES": "memory, sessions",
            "DREAM_SESSION_MEMORY": "0",
            "DREAM_DOPAMINE_REST": "0.3",
            "DREAM_SYNTHESIZER": "offline",
            "ANTHROPIC_API_KEY": "sk-ant-secret",
            "DREAM_DREAM_INTERVAL_MINUTES": "",
        },
    )
    assert settings.dream_enabled is False
    assert settings.search_sources == ["memory", "sessions"]
    assert settings.session_memory is False and not settings.sessions_searchable()
    assert settings.hormone_rest["dopamine"] == 0.3
    assert settings.synthesizer == "offline" and settings.synthesis()[0] != "claude"
    assert settings.dream_interval_minutes == 120  # an empty variable counts as unset
    masked = {row["key"]: row["value"] for row in describe(settings)}["memory.dream.apiKey"]
    assert "secret" not in masked


def test_workspace_open_reads_toml_env_and_overrides(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    write_toml(root, "[memory.dream]\nminChunksForDream = 9\nintervalMinutes = 50\n")
    ws = Workspace.open(
        root, environ={"DREAM_DREAM_INTERVAL_MINUTES": "70"}, overrides={"synthesizer": "offline"}
    )
    assert (
        ws.settings.min_chunks_for_dream,
        ws.settings.dream_interval_minutes,
        ws.settings.synthesizer,
    ) == (9, 70, "offline")
    ws.close()


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[memory.dream]\nintervalMinute = 60\n", "did you mean 'memory.dream.intervalMinutes'"),
        ("[memory]\nfoo = 1\n", "unknown setting 'memory.foo'"),
        ("[memory.dream]\nintervalMinutes = -5\n", "above 0"),
        ("[memory.dream]\nintervalMinutes = nan\n", "above 0"),
        ("[memory.dream]\nintervalMinutes = inf\n", "above 0"),
        ('[memory.dream]\nintervalMinutes = "soon"\n', "must be a number"),
        ("[memory.dream]\nminChunksForDream = 2.5\n", "whole number"),
        ("[memory.dream]\nminChunksForDream = inf\n", "whole number"),
        ("[memory.dream]\nminChunksForDream = true\n", "whole number"),
        ('[memory.dream]\nenabled = "perhaps"\n', "true or false"),
        ('[memory.dream]\nsynthesizer = "gpt"\n', "auto, offline, claude"),
        ('[memory.search]\nsources = ["memory", "web"]\n', "unknown source 'web'"),
        ("[memory.search]\nsources = 3\n", "must be a list"),
        ("[memory.hormones.dopamine]\nrest = 1.5\n", "from 0 to 1"),
        ("[memory.dream\nintervalMinutes = 60\n", "not valid TOML"),
        ("memory.dream.intervalMinutes = \n", "not valid TOML"),
    ],
)
def test_bad_toml_is_a_one_line_invalid_setting(tmp_path, toml, message):
    path = write_toml(tmp_path, toml)
    with pytest.raises(InvalidSetting) as caught:
        load_settings(path, environ={})
    text = str(caught.value)
    assert message in text
    assert "\n" not in text
    assert "dreamer.toml" in text  # it says which file to fix


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("DREAM_DREAM_INTERVAL_MINUTES", "nan"),
        ("DREAM_MIN_CHUNKS_FOR_DREAM", "five"),
        ("DREAM_DREAM_ENABLED", "maybe"),
        ("DREAM_SEARCH_SOURCES", "memory,web"),
        ("DREAM_CORTISOL_REST", "-0.1"),
        ("DREAM_MODEL", "  "),
    ],
)
def test_bad_environment_names_the_variable(env, value):
    with pytest.raises(InvalidSetting, match=env):
        load_settings(None, environ={env: value})


def test_unknown_override_is_rejected():
    with pytest.raises(InvalidSetting, match="unknown setting override"):
        load_settings(None, environ={}, overrides={"dream_intervl": 5})


def test_toml_that_is_not_utf8(tmp_path):
    path = tmp_path / "dreamer.toml"
    path.write_bytes(b'[memory.dream]\nmodel = "caf\xe9"\n')
    with pytest.raises(InvalidSetting, match="not UTF-8"):
        load_settings(path, environ={})


def test_bad_toml_through_the_cli_is_one_line(tmp_path, runner):
    root = tmp_path / "ws"
    runner.invoke(main, ["init", "-w", str(root)], catch_exceptions=False)
    write_toml(root, "[memory.dream]\nintervalMinute = 60\n")
    result = runner.invoke(main, ["config", "-w", str(root)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith("Error: ") and "intervalMinutes" in result.output


# --- -w/--workspace ------------------------------------------------------------------------


def test_dream_workspace_is_the_default_workspace(tmp_path, monkeypatch, runner):
    target = tmp_path / "from-env"
    monkeypatch.setenv("DREAM_WORKSPACE", str(target))
    result = runner.invoke(main, ["init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (target / "memory" / "crystals.db").exists()
    ws = Workspace.open()
    assert ws.root == target
    ws.close()
    # A flag beats the variable.
    flagged = tmp_path / "from-flag"
    result = runner.invoke(main, ["init", "-w", str(flagged)], catch_exceptions=False)
    assert result.exit_code == 0
    assert (flagged / "memory").is_dir()


def test_never_memory_in_the_current_repository_by_surprise(tmp_path, monkeypatch, runner):
    import os

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    result = runner.invoke(main, ["note", "deploys go out on Tuesdays"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not (repo / "memory").exists() and not (repo / "src" / "memory").exists()
    data = Path(os.environ["XDG_DATA_HOME"]) / "dreamer" / "workspaces"
    [made] = list(data.iterdir())
    assert made.name.startswith("repo-") and (made / "memory" / "scratch.md").exists()
    # A linked worktree of the same repository shares that memory.
    worktree = tmp_path / "wt"
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True)
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo}/.git/worktrees/wt\n")
    monkeypatch.chdir(worktree)
    found = runner.invoke(main, ["search", "deploys"], catch_exceptions=False)
    assert "deploys go out on Tuesdays" in found.output


def test_a_pointer_in_the_project_names_the_workspace(tmp_path, monkeypatch, runner):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".dreamer").mkdir()
    (repo / ".dreamer" / "workspace").write_text("../shared-memory\n")
    (repo / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(repo / "deep" / "er")
    assert runner.invoke(main, ["note", "pointer note"]).exit_code == 0
    assert (tmp_path / "shared-memory" / "memory" / "scratch.md").exists()


def test_reading_commands_never_create_a_workspace(tmp_path, monkeypatch, runner):
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "agnets" / "ada"
    for command in (["search", "x"], ["status"], ["log"], ["bootstrap"], ["get", "1"]):
        result = runner.invoke(main, [*command, "-w", str(typo)])
        assert result.exit_code == 1, (command, result.output)
        assert result.output.startswith("Error: no dreamer workspace at"), result.output
    assert not typo.exists()


def _git(*args: str, cwd) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "PATH": os.environ["PATH"],
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org",
        },
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_real_worktrees_share_the_memory_of_their_repository(tmp_path):
    from dreamer.memory import location

    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", "-b", "main", ".", cwd=repo)
    _git("commit", "-q", "--allow-empty", "-m", "start", cwd=repo)
    _git("worktree", "add", "-q", str(tmp_path / "elsewhere" / "wt"), cwd=repo)
    (repo / "sub").mkdir()
    main = location.resolve(None, environ={}, cwd=repo / "sub")
    linked = location.resolve(None, environ={}, cwd=tmp_path / "elsewhere" / "wt")
    assert main == linked and main[1] == "default" and main[0].name.startswith("repo-")
    # A bare repository's worktrees share one memory too, keyed by the bare folder.
    bare = tmp_path / "store.git"
    _git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    _git("worktree", "add", "-q", str(tmp_path / "b1"), "main", cwd=bare)
    _git("worktree", "add", "-q", "-b", "other", str(tmp_path / "b2"), cwd=bare)
    first = location.resolve(None, environ={}, cwd=tmp_path / "b1")[0]
    assert first == location.resolve(None, environ={}, cwd=tmp_path / "b2")[0]
    assert first.name.startswith("store.git-") and first != main[0]


def test_a_workspace_made_by_a_write_is_announced_so_a_typo_is_seen(tmp_path, runner):
    typo = tmp_path / "agnets" / "ada"
    result = runner.invoke(main, ["note", "first note", "-w", str(typo)], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout == "1\n"  # the id alone on stdout, for scripts
    assert f"Created a new dreamer workspace at {typo} (from -w)" in result.stderr
    again = runner.invoke(main, ["note", "second note", "-w", str(typo)], catch_exceptions=False)
    assert again.stderr == ""


def test_settings_compare_copy_and_show_no_key():
    # Settings.replace copies the lists and dicts that dataclasses.replace would share.
    settings = Settings(api_key="sk-ant-secret", store_url="postgresql://u:pw@h/db")
    assert settings.dream_interval_minutes == 120 and settings.api_key == "sk-ant-secret"
    other = settings.replace(model="m")
    assert other.model == "m" and settings.model != "m"
    other.hormone_rest["dopamine"] = 0.9  # the copy's dicts and lists are its own
    assert settings.hormone_rest["dopamine"] == 0.15
    assert settings.replace() == settings and other != settings
    assert (
        Settings(sources={"model": "flag"}) == Settings()
    )  # where a value came from: not compared
    shown = repr(settings)
    assert "sk-ant-secret" not in shown and "pw" not in shown and "dream_enabled=True" in shown
    with pytest.raises(TypeError, match="dream_intervall"):
        Settings(dream_intervall=5)
    assert Settings().search_sources is not Settings().search_sources


def test_a_project_default_workspace_is_announced_for_any_agent(tmp_path, runner, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["note", "first note"], catch_exceptions=False)
    assert result.exit_code == 0
    said = result.stderr
    assert "Created a new dreamer workspace at" in said and "this project's default" in said
    assert "claude" not in said  # a Codex user (or any other) is not sent to Claude's commands
    assert "-w or $DREAM_WORKSPACE picks another" in said


def test_a_bad_value_in_dreamer_toml_names_the_file_by_its_path(tmp_path):
    path = write_toml(tmp_path, '[memory.dream]\nintervalMinutes = "soon"\n')
    with pytest.raises(InvalidSetting) as caught:
        load_settings(path, environ={})
    assert str(caught.value).startswith(f"{path}: memory.dream.intervalMinutes must be a number")


@pytest.mark.parametrize("content", [b"\xff\xfe\x00/srv/x\n", b"\xc3("])
def test_an_unreadable_workspace_pointer_is_one_line_naming_it(
    tmp_path, monkeypatch, runner, content
):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".dreamer").mkdir()
    pointer = repo / ".dreamer" / "workspace"
    pointer.write_bytes(content)
    monkeypatch.chdir(repo)
    result = runner.invoke(main, ["status"])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"Error: cannot read the workspace pointer {pointer} (not UTF-8, byte 0); write the "
        "workspace's path in it, or remove it\n"
    )
    assert pointer.read_bytes() == content
