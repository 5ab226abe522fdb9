"""Every move the turn's table lists is taken by a real turn, and no other move is.

Each scenario below drives a turn (ScriptedProvider, interrupts at gates, a cancelled cell) and
records the states its sink reports; together they must take exactly the moves of
``TRANSITIONS``. A move added to the table that no turn takes, or a turn taking a move the table
does not list, fails here.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import pytest

from jupyter_turns import Chat, PolicyPrompter, ProviderError, RecordingSink, tool
from jupyter_turns.engine.turn import TRANSITIONS, TurnState
from jupyter_turns.model.budget import BudgetAnswer, BudgetPrompt, Ledger
from jupyter_turns.model.events import Usage
from jupyter_turns.model.interrupt import InterruptAction, InterruptChoice, InterruptContext
from jupyter_turns.model.sink import StateChanged
from jupyter_turns.providers.scripted import Fail, Gate, ScriptedProvider, cycle, message, tool_call

from .helpers import PricedProvider, until

Move = tuple[str, str]


def _moves(sink: RecordingSink) -> set[Move]:
    states = ["idle", *(u.state for u in sink.updates if isinstance(u, StateChanged))]
    return set(itertools.pairwise(states))


def _choose(*actions: InterruptAction) -> PolicyPrompter:
    """A prompter whose interrupt menu answers ``actions`` in order."""
    queue = list(actions)

    def menu(context: InterruptContext) -> InterruptChoice:
        action = queue.pop(0)
        return InterruptChoice(action, "shorter, please" if action is InterruptAction.REPLY else "")

    return PolicyPrompter("allow", interrupt=menu)


@tool(run="unattended")
def lookup(q: str) -> str:
    """Looks up."""
    return q


def _broken(text: str) -> list[object]:
    return [*cycle(message(text))[:2], Fail(ProviderError("reset", kind="connection"))]


async def _interrupted(
    items: list[object], at: int, *more: object, **chat: object
) -> RecordingSink:
    """Run a turn whose first cycle is held at ``at`` and interrupted there (the menu opens)."""
    gate = Gate()
    sink = RecordingSink()
    kind = chat.pop("provider", ScriptedProvider)
    provider = kind([[*items[:at], gate, *items[at:]], *more])  # type: ignore[operator]
    turn = Chat(provider=provider, sink=sink, **chat)  # type: ignore[arg-type]
    task = asyncio.create_task(turn.send("go"))
    await until(lambda: gate.reached)
    turn.interrupt()
    await until(lambda: not turn.interrupts.pending)
    gate.open()
    await asyncio.wait_for(task, 10)
    return sink


async def _cancelled(
    provider: ScriptedProvider, when: Callable[[Chat], bool], **kw: object
) -> RecordingSink:
    """Run a turn and cancel it (a second kernel interrupt) once ``when(chat)`` holds."""
    sink = RecordingSink()
    chat = Chat(provider=provider, sink=sink, **kw)  # type: ignore[arg-type]
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: when(chat))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return sink


async def _plain(*cycles: object, **kw: object) -> RecordingSink:
    sink = RecordingSink()
    kind = kw.pop("provider", ScriptedProvider)
    provider = kind(list(cycles))  # type: ignore[operator]
    await Chat(provider=provider, sink=sink, **kw).send("go")  # type: ignore[arg-type]
    return sink


def _state(chat: Chat, state: TurnState) -> bool:
    return chat.turn is not None and chat.turn.state is state


@tool(run="unattended")
async def wait_forever(q: str) -> str:
    """Never returns by itself."""
    await asyncio.Event().wait()
    return q


SCENARIOS: dict[str, Callable[[], Awaitable[RecordingSink]]] = {
    "answer": lambda: _plain(cycle(message("hi"))),
    "tools then answer": lambda: _plain(
        cycle(tool_call("lookup", {"q": "x"})), cycle(message("ok")), tools=[lookup]
    ),
    "pause_turn": lambda: _plain(cycle(message("a"), finish="pause_turn"), cycle(message("b"))),
    "max_tokens then stop": lambda: _plain(cycle(message("a"), finish="max_tokens")),
    "max cycles after tools": lambda: _plain(
        cycle(tool_call("lookup", {"q": "x"})), tools=[lookup], max_cycles=1
    ),
    "a failure before any text": lambda: _plain(Fail(ProviderError("bad", kind="bad_request"))),
    "continue a live stream": lambda: _interrupted(
        cycle(message("one two three")), 2, prompter=_choose(InterruptAction.CONTINUE)
    ),
    "stop while streaming": lambda: _interrupted(
        cycle(message("one two three")), 2, prompter=_choose(InterruptAction.STOP)
    ),
    "abort while streaming": lambda: _interrupted(
        cycle(message("one two three")), 2, prompter=_choose(InterruptAction.ABORT)
    ),
    "reply while streaming": lambda: _interrupted(
        cycle(message("one two three")),
        2,
        cycle(message("ok")),
        prompter=_choose(InterruptAction.REPLY),
    ),
    "continue a dead stream": lambda: _plain(
        _broken("one two three"),
        cycle(message("three")),
        prompter=_choose(InterruptAction.CONTINUE),
    ),
    "continue with a call in hand": lambda: _plain(
        [*cycle(tool_call("lookup", {"q": "x"}), message("and"))[:2], Fail(ProviderError("x"))],
        cycle(message("done")),
        tools=[lookup],
        prompter=_choose(InterruptAction.CONTINUE),
    ),
    "tools: continue then stop": lambda: _tools_interrupted(
        InterruptAction.CONTINUE, InterruptAction.STOP
    ),
    "cancelled while streaming": lambda: _cancelled(
        ScriptedProvider([[*cycle(message("a b"))[:1], Gate()]]),
        lambda chat: _state(chat, TurnState.STREAMING) and bool(chat.conversation.events),
    ),
    "cancelled while tools run": lambda: _cancelled(
        ScriptedProvider([cycle(tool_call("wait_forever", {"q": "x"}))]),
        lambda chat: _state(chat, TurnState.EXECUTING),
        tools=[wait_forever],
    ),
    "cancelled at the tool menu": lambda: _cancelled_at_tool_menu(),
    "budget spent before the turn: stop": lambda: _over_budget_at_start(),
    "budget passed after tools: continue": lambda: _plain(
        cycle(tool_call("lookup", {"q": "x"}), usage=_DOLLAR),
        cycle(message("ok")),
        tools=[lookup],
        provider=PricedProvider,
        budget_usd=1.5,
        prompter=PolicyPrompter("allow", budget="continue"),
    ),
    "budget passed after a reply: stop": lambda: _reply_then_budget(),
    "cancelled at the budget prompt": lambda: _cancelled_at_budget(),
}

_DOLLAR = Usage(input_tokens=1000)  # $1.00 on PricedProvider


async def _over_budget_at_start() -> RecordingSink:
    ledger = Ledger()
    ledger.add("main", _DOLLAR, 1.0)
    return await _plain(cycle(message("never")), session_budget_usd=0.5, ledger=ledger)


async def _reply_then_budget() -> RecordingSink:
    """Tools cost $1; the next request passes the $0.50 budget (Continue: up to $1); a reply
    while it streams would pass that too (Stop)."""
    answers = iter(["continue", "stop"])
    gate = Gate()
    second = cycle(message("one two three"))
    provider = PricedProvider(
        [cycle(tool_call("lookup", {"q": "x"}), usage=_DOLLAR), [*second[:2], gate, *second[2:]]]
    )
    prompter = PolicyPrompter(
        "allow",
        interrupt=lambda context: InterruptChoice(InterruptAction.REPLY, "shorter"),
        budget=lambda prompt: BudgetAnswer(next(answers)),  # type: ignore[arg-type]
    )
    sink = RecordingSink()
    chat = Chat(provider=provider, sink=sink, tools=[lookup], prompter=prompter, budget_usd=0.5)
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: gate.reached)
    chat.interrupt()
    await until(lambda: not chat.interrupts.pending)
    gate.open()
    await asyncio.wait_for(task, 10)
    return sink


async def _cancelled_at_budget() -> RecordingSink:
    async def never(prompt: BudgetPrompt) -> BudgetAnswer:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    ledger = Ledger()
    ledger.add("main", _DOLLAR, 1.0)
    return await _cancelled(
        ScriptedProvider([cycle(message("never"))]),
        lambda chat: _state(chat, TurnState.BUDGET_PAUSED),
        session_budget_usd=0.5,
        ledger=ledger,
        prompter=PolicyPrompter(budget=never),
    )


async def _tools_interrupted(*actions: InterruptAction) -> RecordingSink:
    sink = RecordingSink()
    provider = ScriptedProvider([cycle(tool_call("wait_forever", {"q": "x"}))])
    chat = Chat(provider=provider, sink=sink, tools=[wait_forever], prompter=_choose(*actions))
    task = asyncio.create_task(chat.send("go"))
    for _ in actions:
        await until(lambda: _state(chat, TurnState.EXECUTING))
        chat.interrupt()
        await until(lambda: not chat.interrupts.pending)
    await asyncio.wait_for(task, 10)
    return sink


async def _cancelled_at_tool_menu() -> RecordingSink:
    async def never(context: InterruptContext) -> InterruptChoice:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    sink = RecordingSink()
    provider = ScriptedProvider([cycle(tool_call("wait_forever", {"q": "x"}))])
    chat = Chat(
        provider=provider, sink=sink, tools=[wait_forever], prompter=PolicyPrompter(interrupt=never)
    )
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: _state(chat, TurnState.EXECUTING))
    chat.interrupt()
    await until(lambda: _state(chat, TurnState.INTERRUPTED_TOOL))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return sink


async def test_every_listed_move_is_taken_and_no_other() -> None:
    taken: dict[Move, list[str]] = {}
    for name, scenario in SCENARIOS.items():
        for move in _moves(await scenario()):
            taken.setdefault(move, []).append(name)
    listed = {(a.value, b.value) for a, targets in TRANSITIONS.items() for b in targets}
    assert sorted(set(taken) - listed) == [], "moves the table does not list"
    assert sorted(listed - set(taken)) == [], "listed moves no turn takes"
