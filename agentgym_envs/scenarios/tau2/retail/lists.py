"""The retail list builder: item id lists (``item_ids``, ``new_item_ids``)."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core.tools import Arg

from ..episode_tools import ListBuilder


def _same(**arguments: Any) -> Any:
    (value,) = arguments.values()
    return value


ITEM_LIST = ListBuilder(
    "item", "item_ids", (Arg("item_id", "string", "item_id", "An item id, such as '1008292230'."),), _same
)
BUILDERS = (ITEM_LIST,)
