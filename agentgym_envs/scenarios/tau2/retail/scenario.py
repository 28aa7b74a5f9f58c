"""``tau2_retail``: the retail domain as a scenario."""

from __future__ import annotations

from ..episode_tools import episode_tools
from ..scenario import Tau2Scenario
from ..upstream.domain import RETAIL
from .generator import RetailTaskGenerator
from .lists import BUILDERS
from .reads import retail_reads
from .reveal import reveal_retail


class Tau2RetailScenario(Tau2Scenario):
    """tau2-bench retail: orders, exchanges, returns, cancellations."""

    name = "tau2_retail"
    env_id = "AgentGym/Tau2Retail-v0"
    description = "tau2-bench retail customer service (real tau2 tasks or seeded ones), with a simulated user."
    domain = RETAIL
    builders = BUILDERS
    tools = episode_tools(RETAIL.tools, reveal_retail, BUILDERS, RETAIL.toolkit)
    enum_entities = (("reason", "no longer needed"), ("reason", "ordered by mistake"))
    revealing_reads = staticmethod(retail_reads)
    generator_class = RetailTaskGenerator
    # from v1, 512 calls a tool: at 64 a bag change's or certificate's write (retail: an item change's) lies past
    # its tool's 64th admissible call (benchmarks/results/admissible_actions.md)
    flat_capacities = {1: 512}
