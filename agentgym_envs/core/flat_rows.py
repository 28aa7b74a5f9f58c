"""The order in which an episode offers its entity rows to the flat admissible action layout,
for a scenario that holds some rows back (:attr:`~agentgym_envs.core.Scenario.flat_holds`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .entities import EntityTable

if TYPE_CHECKING:
    from .scenario import Scenario


class FlatRows:
    """The rows :class:`~agentgym_envs.wrappers.FlatDiscreteAction`'s admissible layout numbers
    calls over, in the order it takes them in: every initial row the scenario does not hold
    back (:meth:`~agentgym_envs.core.Scenario.flat_held`; the first :attr:`start` of
    :attr:`rows`), then each row a call's result reveals, and a held row once a text of the
    episode names it (the request, or a result: :meth:`~agentgym_envs.core.Scenario.flat_names`).

    A large enumeration the episode starts with (every airport by every date) would otherwise
    fill a tool's block with calls no task of the episode needs before the rows it does need
    come in. Offered rows stay offered, so a call keeps its number for the whole episode.
    """

    def __init__(self, scenario: Scenario, entities: EntityTable, request: str) -> None:
        self._scenario, self._entities = scenario, entities
        self.rows = [r for r, row in enumerate(entities.rows) if not scenario.flat_held(row.kind, row.value)]
        self.start = len(self.rows)
        self._offered = set(self.rows)
        self.name(request, None)

    def offer(self, row: int | None) -> None:
        """Offer ``row`` (a row a result revealed; None: none), if it is not offered yet."""
        if row is not None and row not in self._offered:
            self._offered.add(row)
            self.rows.append(row)

    def name(self, text: str, tool: str | None) -> None:
        """Offer the rows ``text`` names: the request (``tool`` None) or the result of ``tool``."""
        for kind, value in self._scenario.flat_names(text, tool):
            self.offer(self._entities.find(kind, value))
