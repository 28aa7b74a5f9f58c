"""``tau2_airline``: the airline domain as a scenario."""

from __future__ import annotations

from ..episode_tools import episode_tools
from ..scenario import Tau2Scenario
from ..upstream.domain import AIRLINE
from . import flat
from .generator import AirlineTaskGenerator
from .lists import BUILDERS
from .reads import airline_reads
from .reveal import reveal_airline

_COUNTS = tuple(("count", n) for n in range(21))


class Tau2AirlineScenario(Tau2Scenario):
    """tau2-bench airline: bookings, changes, cancellations, compensation."""

    name = "tau2_airline"
    env_id = "AgentGym/Tau2Airline-v0"
    description = "tau2-bench airline customer service (real tau2 tasks or seeded ones), with a simulated user."
    domain = AIRLINE
    builders = BUILDERS
    tools = episode_tools(AIRLINE.tools, reveal_airline, BUILDERS, AIRLINE.toolkit)
    enum_entities = (
        *(("cabin", c) for c in ("basic_economy", "economy", "business")),
        *(("flight_type", t) for t in ("one_way", "round_trip")),
        *(("insurance", i) for i in ("yes", "no")),
        *_COUNTS,
        *(("amount", 50 * k) for k in range(1, 11)),
        *(("airport", code) for code in ("ATL", "BOS", "CLT", "DEN", "DFW", "DTW", "EWR", "IAH", "JFK", "LAS",
                                         "LAX", "LGA", "MCO", "MIA", "MSP", "ORD", "PHL", "PHX", "SEA", "SFO")),
        *(("date", f"2024-05-{day:02d}") for day in range(1, 31)),
    )
    revealing_reads = staticmethod(airline_reads)
    generator_class = AirlineTaskGenerator
    # from v1, 512 calls a tool: at 64 a bag change's or certificate's write (retail: an item change's) lies past
    # its tool's 64th admissible call (benchmarks/results/admissible_actions.md)
    flat_capacities = {1: 512}
    # from v1, the airports, dates, counts and empty lists every episode starts with come into the flat layout as the
    # episode names them (.flat): at 512 the first airports' searches and the empty lists' bookings filled the blocks
    flat_holds_from = 1
    flat_held = staticmethod(flat.held)
    flat_names = staticmethod(flat.names)
