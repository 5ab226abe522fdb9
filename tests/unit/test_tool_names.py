"""A notebook tool named like any built-in is the one offered: the built-in steps aside, and
only the kernel's own built-ins carry ``Tool.builtin`` (what the page chooses a form by)."""

from __future__ import annotations

import pytest

from jupyter_turns import tool
from jupyter_turns.kernel.threads import namespace_tools, stepped_aside, user_tools
from jupyter_turns.kernel_tools.builtin import BUILTINS, DEFAULT


def _mine(name: str) -> object:
    @tool(name=name, run="ask")
    def mine(code: str) -> str:
        """The user's own."""
        return code

    return mine


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_notebook_tool_with_a_built_ins_name_is_offered_and_the_built_in_steps_aside(
    name: str,
) -> None:
    namespace = {name: _mine(name)}
    enabled = {name, *DEFAULT}
    tools = {t.name: t for t in namespace_tools(namespace, None, enabled)}
    assert tools[name] is namespace[name]
    assert not tools[name].builtin and tools[name].description == "The user's own."
    assert all(t.builtin for n, t in tools.items() if n != name)  # the other built-ins
    assert set(tools) == enabled
    assert stepped_aside(tools.values(), enabled) == [name]
    assert stepped_aside(user_tools(namespace).values(), enabled) == [name]  # %chat settings
    assert stepped_aside(tools.values(), enabled - {name}) == []  # not enabled: nothing aside


def test_with_use_the_built_in_steps_aside_only_for_a_tool_used() -> None:
    namespace = {"run_cell": _mine("run_cell"), "other": _mine("other")}
    used = {t.name: t for t in namespace_tools(namespace, ["other"], {"run_cell"})}
    assert used["run_cell"].builtin and not used["other"].builtin
