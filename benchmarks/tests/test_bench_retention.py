"""dream bench retention: a LoCoMo-shaped conversation dreamed session by session, what
MEMORY.md keeps of the answers beside a same-size window of recent turns and the summaries."""

from __future__ import annotations

import json

import pytest
from dreamer_bench import retention

from dreamer.cli import main


def _file(tmp_path):
    first = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound called Biscuit."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Where did you find him?"},
        {
            "speaker": "Ana",
            "dia_id": "D1:3",
            "text": "At the Leeds rescue centre on Kirkstall Road.",
        },
    ]
    second = [
        {"speaker": "Ben", "dia_id": f"D2:{i}", "text": f"Chatting about the weather, part {i}."}
        for i in range(1, 30)
    ]
    sample = {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1": first,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_2": second,
            "session_2_date_time": "1:14 pm on 25 May, 2023",
        },
        "qa": [
            {
                "question": "What is Ana's dog called?",
                "answer": "Biscuit",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Where did Ana adopt her dog?",
                "answer": "Kirkstall Road",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {"question": "Who?", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
        ],
        "session_summary": {
            "session_1_summary": "Ana adopted a greyhound.",
            "session_2_summary": "Ben talked about the weather.",
        },
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "answer, text, kept",
    [
        ("Biscuit", "her dog biscuit", True),
        ("Kirkstall Road", "kirkstall lane", False),  # a two-word answer needs both words
        ("7 May 2023", "on 7 may", True),  # a longer one needs half
        ("7 May 2023", "in 2023", False),
    ],
)
def test_an_answer_is_kept_by_its_content_words(answer, text, kept):
    assert retention.keeps(retention.content(text), answer) is kept


def test_a_window_keeps_the_most_recent_turns_that_fit(tmp_path):
    from dreamer_bench.locomo import load

    [conversation], _ = load(_file(tmp_path))
    text = retention.window(conversation.turns, 200)
    assert len(text) <= 200 and "part 29" in text and "Biscuit" not in text


def test_the_dreams_keep_what_a_same_size_window_of_recent_turns_lost(tmp_path, runner):
    result = runner.invoke(
        main,
        [
            "bench",
            "retention",
            str(_file(tmp_path)),
            "--conversations",
            "0",
            "--json",
            "-w",
            str(tmp_path),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    [conv] = json.loads(result.output)["conversations"]
    assert conv["questions"] == 2 and conv["dreams"] == 2 and conv["failed_dreams"] == 0
    assert conv["memory"]["dreamed"] > conv["memory"]["window"]


def test_a_conversation_that_is_not_there_is_one_clear_error(tmp_path, runner):
    result = runner.invoke(
        main, ["bench", "retention", str(_file(tmp_path)), "--conversations", "3"]
    )
    assert result.exit_code == 2
    assert "Error: no conversation 3" in result.output
