"""The port of tau2-bench's retail, airline and telecom domains (upstream ``tau2``), one module per
upstream concept: records and their JSON schema (``records``), the copy-on-write database and
its hash (``store``), the data files (``files``), tasks (``tasks``), the toolkit and how a tool
call runs (``toolkit``, ``arguments``, ``generic_tools``), the domains (``domain``) with their
models and tools per domain folder (``retail/``, ``airline/``, ``telecom/``: dual control, with
the customer's phone, its tools and the sync between the two sides), and scoring (``scoring``).
Nothing here knows gymnasium or agentgym's adapter.

Typical use::

    domain = get_domain("retail")                     # or RETAIL / AIRLINE / TELECOM
    tasks = domain.load_tasks("train", data_dir)      # data_dir or $TAU2_DATA_DIR
    world = domain.new_world(data_dir, task=task)     # per episode: copy-on-write DB, task set-up
    outcome = domain.call(world, name, arguments)     # ToolOutcome(output, error); requestor="user": the phone
    score = score_episode(task, calls, agent_messages, data_dir=data_dir)

``world.db.to_dict()`` is the live database in upstream's schema and ``world.db.hash()``
its hash as upstream's evaluator computes it.
"""

from .domain import AIRLINE, DOMAINS, RETAIL, TELECOM, Tau2Domain, get_domain
from .errors import Tau2DataError, Tau2FormatError, Tau2MissingDataError, Tau2SplitError, Tau2TaskError
from .files import DATA_DIR_ENV
from .scoring import CommunicateCheck, Tau2Score, gold_changes, gold_state, replay_writes, score_episode
from .store import Tau2DB, dict_hash
from .tasks import EnvCall, EvaluationCriteria, Tau2Action, Tau2Task
from .toolkit import Tau2World, ToolOutcome, run_tool

__all__ = [
    "AIRLINE",
    "DATA_DIR_ENV",
    "DOMAINS",
    "RETAIL",
    "TELECOM",
    "CommunicateCheck",
    "EnvCall",
    "EvaluationCriteria",
    "Tau2Action",
    "Tau2DB",
    "Tau2DataError",
    "Tau2Domain",
    "Tau2FormatError",
    "Tau2MissingDataError",
    "Tau2Score",
    "Tau2SplitError",
    "Tau2Task",
    "Tau2TaskError",
    "Tau2World",
    "ToolOutcome",
    "dict_hash",
    "get_domain",
    "gold_changes",
    "gold_state",
    "replay_writes",
    "run_tool",
    "score_episode",
]
