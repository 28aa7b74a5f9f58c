"""The server depends on OpenEnv's public API only (what a release may keep), so that the
``serve`` extra can admit a range of OpenEnv releases; OpenEnv's own clients of the installed
release play it (tests/external_trainers/openenv/test_serve_parity.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentgym_envs.external_trainers.openenv

SERVE = Path(agentgym_envs.external_trainers.openenv.__file__).parent


def openenv_imports() -> list[tuple[str, str, str]]:
    """``(file, module, name)`` of every name the serve package imports from OpenEnv."""
    found = []
    for path in sorted(SERVE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "openenv":
                found += [(path.name, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(path.name, alias.name, "") for alias in node.names if alias.name.startswith("openenv")]
    return found


def test_the_server_imports_only_public_openenv_names_and_not_its_server_class():
    imports = openenv_imports()
    assert imports, "the serve package speaks OpenEnv's protocol with OpenEnv's types"
    private = [i for i in imports if any(part.startswith("_") for part in [*i[1].split("."), i[2]] if part)]
    assert private == []
    assert [i for i in imports if i[1].endswith("http_server") or i[2] in ("HTTPEnvServer", "create_app")] == []


def test_no_private_member_of_an_openenv_object_is_touched():
    """The old server subclassed OpenEnv's ``HTTPEnvServer`` and called its ``_sessions``,
    ``_create_session``, ``_destroy_session``: none of these names appear any more."""
    for path in sorted(SERVE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in ("_create_session", "_destroy_session", "_update_session_activity", "_session_info",
                     "_session_lock", "_reap_idle_sessions"):
            assert name not in text, (path.name, name)


def test_the_wire_payload_is_what_openenvs_serialization_makes_of_the_observation():
    from openenv.core.env_server.serialization import serialize_observation

    from agentgym_envs.evaluation.agents import expert_action
    from agentgym_envs.external_trainers.openenv.models import AgentGymAction
    from agentgym_envs.external_trainers.openenv.sessions import AgentGymEnvironment, ServeConfig

    config = ServeConfig("AgentGym/CustomerSupport-v0", inline=True)
    typed, wire = AgentGymEnvironment(config), AgentGymEnvironment(config)
    assert serialize_observation(typed.reset(seed=2)) == wire.reset_payload(seed=2)
    done = False
    while not done:
        action = AgentGymAction(text=expert_action(typed._env.unwrapped.episode, "text"))
        payload = wire.step_payload(action)
        assert serialize_observation(typed.step(action)) == payload
        done = payload["done"]
    assert payload["observation"]["metrics"] and typed.state == wire.state
    typed.close()
    wire.close()
