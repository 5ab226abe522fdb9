"""What a rewind takes out of what is sent (``window.rewound``), and what a fork starts with
(``window.fork_history``): whole turns, from their request up to the next one, with the undo
and review events of their calls; the rewind event itself stays for readers, but a fork never
had it."""

from __future__ import annotations

from jupyter_turns.engine.window import fork_history, rewound, to_send
from jupyter_turns.model.events import (
    ChatRequest,
    ConversationEvent,
    Message,
    Review,
    Rewind,
    ToolCallRequest,
    ToolCallResponse,
    Undo,
)


def _turn(n: int, call: bool = False) -> list[ConversationEvent]:
    """Turn ``n``: a request, maybe a python call and its response, an answer."""
    events: list[ConversationEvent] = [ChatRequest(id=f"q{n}", content=f"turn {n}")]
    if call:
        events += [
            ToolCallRequest(id=f"c{n}", call_id=f"call{n}", name="python", arguments={}),
            ToolCallResponse(id=f"r{n}", call_id=f"call{n}", content="ok"),
        ]
    return [*events, Message(id=f"m{n}", content=f"answer {n}")]


def _ids(events: list[ConversationEvent]) -> list[str]:
    return [e.id for e in events]


def test_nothing_is_rewound_without_a_rewind_event() -> None:
    events = [*_turn(1), *_turn(2, call=True)]
    assert rewound(events) == set()
    assert fork_history(events, None) == events


def test_a_rewind_takes_whole_turns_and_the_undo_and_review_events_of_their_calls() -> None:
    # the user undid and kept turn 2's changes while turn 3 was the last, then rewound turn 2
    undo = Undo(id="u2", call_id="call2", tool="python", done=["removed x"])
    kept, kept_1 = Review(id="k2", kept=["call2"]), Review(id="k1", kept=["call1"])
    rewind = Rewind(id="rw", requests=["q2"], turn=2)
    events = [*_turn(1, call=True), *_turn(2, call=True), *_turn(3), undo, kept, kept_1, rewind,
              *_turn(4)]  # fmt: skip
    assert rewound(events) == {"q2", "c2", "r2", "m2", "u2", "k2"}
    # the rewind event itself is kept (a reader-only kind: the wire sends none of those)
    assert _ids(to_send(events)) == ["q1", "c1", "r1", "m1", "q3", "m3", "k1", "rw", "q4", "m4"]


def test_two_turns_rewound_at_once() -> None:
    rewind = Rewind(id="rw", requests=["q2", "q3"], turn=2)
    events = [*_turn(1), *_turn(2, call=True), *_turn(3), rewind, *_turn(4)]
    assert rewound(events) == {"q2", "c2", "r2", "m2", "q3", "m3"}


def test_an_undo_of_a_turn_that_is_not_rewound_stays() -> None:
    undo = Undo(id="u1", call_id="call1", tool="python")
    events = [*_turn(1, call=True), undo, *_turn(2), Rewind(id="rw", requests=["q2"], turn=2)]
    assert rewound(events) == {"q2", "m2"}


def test_a_fork_starts_with_what_was_sent_before_its_turn_without_rewinds() -> None:
    rewind = Rewind(id="rw", requests=["q2"], turn=2)
    events = [*_turn(1), *_turn(2, call=True), rewind, *_turn(3), *_turn(4)]
    # before turn 4: turn 1 and turn 3; turn 2 was rewound and the rewind event is not kept
    assert _ids(fork_history(events, "q4")) == ["q1", "m1", "q3", "m3"]
    # None: after the last turn
    assert _ids(fork_history(events, None)) == ["q1", "m1", "q3", "m3", "q4", "m4"]
    # before the first turn: nothing
    assert fork_history(events, "q1") == []


def test_the_rewind_confirmation_agrees_in_number() -> None:
    """ "turn 4 stays …", "turns 4–6 stay …": the card's confirmation reads as English."""
    from jupyter_turns.editing.rewinding import RewindPlan
    from jupyter_turns.model.conversation import Conversation

    def first_line(requests: list[str]) -> str:
        plan = RewindPlan("main", Conversation([]), 4, requests, [], [])
        return plan.lines()[0]

    assert first_line(["q4"]) == (
        "Rewind thread 'main' to before turn 4: turn 4 stays in the notebook, marked rewound, "
        "and is no longer sent to the model."
    )
    assert "turns 4–6 stay in the notebook, marked rewound, and are no longer sent" in (
        first_line(["q4", "q5", "q6"])
    )
